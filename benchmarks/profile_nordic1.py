"""Where kernel NORDIC-1's SMO solver spends its steps under heavy class overlap.

Two views of one fit (a design of :func:`bench_scale.make_design`, rows on demand as the
model passes them above ``DENSE_GRAM_MAX_ROWS``):

* ``--mode tiers`` (default): the solver as it is.  Printed: the SMO steps of each run
  of the loop (pair tolerance, noncrossing tolerance, interior face size after it), each
  polishing step (face, rounds, the variables fixed or released after each round, why
  it stopped) and the CPU seconds of the SMO loop and of the polishing.
* ``--mode probe``: the loop at each tolerance of the polished path, stopped every
  ``--chunk`` steps; at each stop the variables whose interior status (0 < alpha < U,
  phi > 0, gamma > 0) changed since the last stop are counted and a polishing step is
  tried as a probe (never taken: the SMO path is the one without probes).  It says how
  many steps before the tolerance's end the face could have been polished.
* ``--mode revisits``: the loop to the first pair tolerance (1e-2) without shrinking,
  stopped every ``--chunk`` steps; printed: the alphas, phis and rows that moved per
  chunk.  If the cross-boundary and phi steps zig-zagged on few variables, a working set
  of those variables solved at once would replace many steps; the counts say how many
  distinct variables a run of steps moves.
* ``--mode zigzag``: the loop to the first pair tolerance (1e-2) without shrinking, one
  step per call (the same path as one run), each step's kind and rows recorded.
  Printed: the steps by kind, how often a phi step at row i is followed within 1, 3, 10
  steps by another phi step at row i, how often a phi step's row has another
  noncrossing multiplier positive or violated (where a step over all the phis of the
  row differs from one phi step), and how often a cross pair at rows i, j is followed
  within 3 steps by a phi step at i or j.

Run ``python benchmarks/profile_nordic1.py --design overlap --n 5000 --K 5 --C 16``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_scale import GAMMA, make_design

from nordicstats.data import binary_signs
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import polish, smo
from nordicstats.solvers.decomposition import intercepts_by_pooling
from nordicstats.solvers.kernel_rows import KernelRows, SharedKernelRows
from nordicstats.solvers.polish import polish_step
from nordicstats.solvers.problem import NordicProblem


class CpuClock:
    """Wraps a function of module ``owner`` and sums its CPU seconds."""

    def __init__(self, owner, name):
        self.owner, self.name, self.inner, self.seconds = owner, name, getattr(owner, name), 0.0
        setattr(owner, name, self)

    def __call__(self, *args, **kwargs):
        clock = time.process_time()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.process_time() - clock


class PolishRowsCount:
    """Counts the kernel rows the polishing asks :class:`KernelRows` for, and how many of
    them the SMO loop's row cache held at that moment (the cache is caught when
    ``smo._row_cache`` builds it), with the CPU seconds of those requests."""

    def __init__(self):
        self.cache, self.requested, self.in_cache, self.seconds = None, 0, 0, 0.0
        self.depth = 0  # square_and_product calls square_and_beside: the outer request only
        self.inner_cache = smo._row_cache
        smo._row_cache = self._catch
        for owner in (KernelRows, SharedKernelRows):
            for name in ("block", "square_and_beside", "square_and_product", "product"):
                setattr(owner, name, self._counted(owner.__dict__[name]))

    def _catch(self, *args, **kwargs):
        self.cache = self.inner_cache(*args, **kwargs)
        return self.cache

    def _counted(self, method):
        def wrapper(rows_owner, rows, *args):
            if self.depth:
                return method(rows_owner, rows, *args)
            wanted = np.unique(np.r_[rows, args[0]] if method.__name__ != "product"
                               else rows).astype(np.int64)
            self.requested += wanted.size
            if self.cache is not None and self.cache.kind:
                self.in_cache += int(np.sum(self.cache.slot_of[wanted] >= 0))
            clock, self.depth = time.process_time(), 1
            try:
                return method(rows_owner, rows, *args)
            finally:
                self.seconds, self.depth = self.seconds + time.process_time() - clock, 0
        return wrapper


def make_problem(design, n, K, C, seed=0):
    X, y = make_design(design, n, K, seed)
    return NordicProblem(gram=KernelMatrix(make_kernel("rbf", gamma=GAMMA), X),
                         signs=binary_signs(y, K), C=C, method="nordic1")


def show_tiers(problem):
    loop, polishing = CpuClock(smo, "smo_loop"), CpuClock(smo, "polish_step")
    rows = PolishRowsCount()
    start = time.process_time()
    res = smo.solve_smo(problem)
    total = time.process_time() - start
    print(f"status {res.status}, gap {res.gap:.1e}, {res.iterations:,} steps, CPU {total:.1f} s: "
          f"SMO loop {loop.seconds:.1f} s, polishing {polishing.seconds:.1f} s")
    info = res.info
    print(f"  SMO row cache: {info['cache_hits']:,} hits, {info['cache_misses']:,} misses, "
          f"{info['cache_bytes'] / 2 ** 20:,.0f} MiB; steps {info['steps']}; shrinking "
          f"{info['shrinking']}")
    print(f"  polishing's kernel requests: {rows.seconds:.1f} s CPU, {rows.requested:,} rows "
          f"asked for, {rows.in_cache:,} of them in the SMO cache; rows computed from X "
          f"{info['polish_kernel_rows']:,}, read from the SMO cache {info['polish_rows_read']:,}")
    for tol, tol_phi, it, size in res.info["tiers"]:
        print(f"  tol {tol:.1e} (phi {tol_phi:.1e}): {it:>9,} steps, interior face {size:,}")
    for step in res.info["polish"]:
        print(f"  polish: face {step['size']:,}, rounds {step['rounds']}, changes "
              f"{list(step['changes'])}, converged {step['converged']}, "
              f"taken {step['accepted']}, {step['seconds']:.2f} s")


def interior(U, alpha, phi, gamma):
    """Masks of the variables strictly inside their bounds (boundary-major arrays)."""
    return (alpha > 0.0) & (alpha < U), phi > 0.0, gamma > 0.0


def zero_start(problem):
    """The SMO loop's arrays at alpha = 0 (boundary-major) and its row cache."""
    n, m = problem.signs.shape
    Y = np.ascontiguousarray(problem.signs.T, dtype=float)
    U = np.ascontiguousarray(problem.upper_bounds.T, dtype=float)
    alpha, phi, gamma = np.zeros((m, n)), np.zeros((m - 1, n)), np.zeros(m - 1)
    G = np.zeros((m, n))
    return Y, U, alpha, phi, gamma, G, smo._row_cache(problem.gram, smo.default_cache_mb(n))


def probe(problem, chunk):
    """The polished path's tolerances without polishing, probes every ``chunk`` steps."""
    Y, U, alpha, phi, gamma, G, cache = zero_start(problem)
    diag, rows = cache.diagonal(), KernelRows(problem.gram)
    tol, total = smo.POLISH_FIRST_TOL, 0
    masks = interior(U, alpha, phi, gamma)
    while tol > 1e-7:
        while True:
            it, code, _ = smo.smo_loop(Y, U, alpha, phi, gamma, G, diag, True, True, tol, tol,
                                       chunk, True, *cache.arrays())
            total += it
            new = interior(U, alpha, phi, gamma)
            moved = sum(int(np.sum(a != b)) for a, b in zip(masks, new))
            masks = new
            step, _ = polish_step(problem, alpha.T, phi.T, gamma, G.T,
                                  intercepts_by_pooling(problem, G.T), rows)
            print(f"  tol {tol:.1e} step {total:>9,}: face {step.size:,}, moved {moved:,} "
                  f"since the last stop; probe rounds {step.rounds}, changes "
                  f"{list(step.changes)}, converged {step.converged}")
            if code == 0:
                break
        tol /= smo.POLISH_TOL_FACTOR
        if step.converged:
            break


def revisits(problem, chunk):
    """Distinct alphas, phis and rows moved per ``chunk`` SMO steps up to the first pair
    tolerance (no shrinking: the same path in chunks as in one run)."""
    Y, U, alpha, phi, gamma, G, cache = zero_start(problem)
    diag, total, moved = cache.diagonal(), 0, []
    tol = smo.POLISH_FIRST_TOL
    while True:
        before = alpha.copy(), phi.copy()
        it, code, _ = smo.smo_loop(Y, U, alpha, phi, gamma, G, diag, True, True, tol, tol,
                                   chunk, False, *cache.arrays())
        total += it
        alphas, phis = alpha != before[0], phi != before[1]
        rows = np.any(alphas, axis=0) | np.any(phis, axis=0)
        moved.append((int(alphas.sum()), int(phis.sum()), int(rows.sum())))
        if code == 0:
            break
    alphas, phis, rows = np.mean(moved[:-1] or moved, axis=0)
    steps = cache.counters[3:6]
    print(f"  {total:,} steps to pair tolerance {tol:.0e} (pairs {steps[0]:,}, cross pairs "
          f"{steps[1]:,}, phi steps {steps[2]:,}); per {chunk:,} steps {alphas:.1f} alphas, "
          f"{phis:.1f} phis moved, on {rows:.1f} rows")


def step_trace(problem):
    """(kind, rows, phi row context) of each SMO step to the first pair tolerance: one
    step per call of the loop, without shrinking (the path of one run without it)."""
    Y, U, alpha, phi, gamma, G, cache = zero_start(problem)
    diag, trace, tol = cache.diagonal(), [], smo.POLISH_FIRST_TOL
    while True:
        kinds, before_alpha, before_phi = cache.counters[3:6].copy(), alpha.copy(), phi.copy()
        it, code, _ = smo.smo_loop(Y, U, alpha, phi, gamma, G, diag, True, True, tol, tol, 1,
                                   False, *cache.arrays())
        if it == 0:
            return trace
        kind = int(np.argmax(cache.counters[3:6] - kinds))  # 0 pair, 1 cross pair, 2 phi
        if kind == 2:
            k, i = (int(v[0]) for v in np.nonzero(phi != before_phi)) if np.any(
                phi != before_phi) else (-1, -1)
            row = phi[:, i] if i >= 0 else phi[:, 0]
            gaps = G[:-1, i] - G[1:, i] if i >= 0 else row
            # other multipliers of the row positive or violated after the step
            others = int(np.sum((row > 0.0) | (gaps < -tol))) - int(row[k] > 0.0 if i >= 0
                                                                      else 0)
            trace.append((kind, (i,), others))
        else:
            rows = tuple(int(r) for r in np.unique(np.nonzero(alpha != before_alpha)[1]))
            trace.append((kind, rows, 0))


def zigzag(problem):
    """Step kinds and the repeats of phi steps at one row (:func:`step_trace`)."""
    trace = step_trace(problem)
    kinds = np.bincount([t[0] for t in trace], minlength=3)
    print(f"  {len(trace):,} steps to pair tolerance {smo.POLISH_FIRST_TOL:.0e}: pairs "
          f"{kinds[0]:,}, cross pairs {kinds[1]:,}, phi steps {kinds[2]:,}")
    phi_at = [(s, t[1][0]) for s, t in enumerate(trace) if t[0] == 2]
    for window in (1, 3, 10):
        again = sum(any(trace[s2][0] == 2 and trace[s2][1][0] == i
                        for s2 in range(s + 1, min(s + 1 + window, len(trace))))
                    for s, i in phi_at)
        print(f"  phi step at row i followed within {window:>2} steps by a phi step at row i: "
              f"{again:,} of {len(phi_at):,} ({again / max(len(phi_at), 1):.0%})")
    coupled = sum(trace[s][2] > 0 for s, _ in phi_at)
    print(f"  phi steps whose row has another multiplier positive or violated after it: "
          f"{coupled:,} ({coupled / max(len(phi_at), 1):.0%})")
    cross = [(s, set(t[1])) for s, t in enumerate(trace) if t[0] == 1]
    followed = sum(any(trace[s2][0] == 2 and trace[s2][1][0] in rows
                       for s2 in range(s + 1, min(s + 4, len(trace)))) for s, rows in cross)
    print(f"  cross pairs followed within 3 steps by a phi step at one of their rows: "
          f"{followed:,} of {len(cross):,} ({followed / max(len(cross), 1):.0%})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", default="overlap")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--K", type=int, default=5)
    parser.add_argument("--C", type=float, default=16.0)
    parser.add_argument("--mode", choices=("tiers", "probe", "revisits", "zigzag"), default="tiers")
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=polish.ACTIVE_SET_ROUNDS,
                        help="active-set rounds of a probe")
    parser.add_argument("--settling", type=float, default=polish.SETTLING)
    parser.add_argument("--max-face", type=int, default=polish.MAX_FACE_SIZE,
                        help="largest face polished (variables)")
    args = parser.parse_args()
    polish.ACTIVE_SET_ROUNDS, polish.SETTLING = args.rounds, args.settling
    polish.MAX_FACE_SIZE = args.max_face
    problem = make_problem(args.design, args.n, args.K, args.C)
    print(f"{args.design}, n = {args.n:,}, K = {args.K}, C = {args.C:g}")
    if args.mode == "tiers":
        show_tiers(problem)
    elif args.mode == "revisits":
        revisits(problem, args.chunk)
    elif args.mode == "zigzag":
        zigzag(problem)
    else:
        probe(problem, args.chunk)


if __name__ == "__main__":
    main()
