"""Where NORDIC-1's polishing takes its kernel rows from, one way against another.

For each design (:func:`bench_scale.make_design`), K and C, the SMO solver fits NORDIC-1
with the Gram matrix as a :class:`~nordicstats.kernels.KernelMatrix` (rows on demand,
what the model passes above ``DENSE_GRAM_MAX_ROWS`` rows) in this process, alternating
the two settings of a switch (``--repeats`` pairs):

* ``--switch kept``: the rows kept between rounds and steps by
  :class:`~nordicstats.solvers.kernel_rows.KernelRows`, off (``kernel_rows.KEPT_ROWS_MB`` 0) / on;
* ``--switch shared``: the rows kept apart (``kernel_rows.READ_ROW_CACHE`` False,
  :class:`~nordicstats.solvers.kernel_rows.KernelRows`) / read from the SMO loop's row cache
  (:class:`~nordicstats.solvers.kernel_rows.SharedKernelRows`);
* ``--switch inplace``: the cached rows read by numpy's gathers (``np.ix_``) and BLAS
  products of the gathered rows (``kernel_rows.COMPILED_READS`` False) / by compiled
  loops: K_SS copied, K[:, R] D and K[S, R] D summed where the rows lie
  (:mod:`~nordicstats.solvers.cached_products`).

Printed: the SMO steps and polishing rounds of both (``same path`` when equal), the
largest difference of the decision values, both certificates' gaps, the CPU seconds of
the polishing steps and of the whole fit (the smallest of the runs of each setting),
their ratios first / second, the faces, the kernel rows the polishing computed and read
from the SMO cache with the second setting, and the SMO cache's misses of both.  Times
are CPU seconds of this process (the machine is shared; wall-clock times varied 2-fold
under others' load).

Run ``python benchmarks/bench_polish_rows.py --n 1000 5000``; the outputs are kept in
``benchmarks/results/polish_kernel_rows.txt`` (``kept``),
``benchmarks/results/polish_shared_rows.txt`` (``shared``) and
``benchmarks/results/polish_products_in_place.txt`` (``inplace``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_scale import GAMMA, make_design

from nordicstats.data import binary_signs
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import kernel_rows, smo
from nordicstats.solvers.cached_products import cached_block, cached_rows_product
from nordicstats.solvers.problem import NordicProblem

CASES = {1000: [(design, K, C) for design in ("likert", "rare", "overlap") for K in (5, 7)
                for C in (4.0, 16.0)],
         5000: [("likert", 7, 1.0), ("likert", 5, 16.0), ("rare", 5, 16.0),
                ("overlap", 3, 1.0), ("overlap", 5, 1.0)],
         20000: [("likert", 5, 16.0), ("likert", 7, 16.0)]}
# the module setting each switch turns, with its two values (first, second)
SWITCHES = {"kept": ("KEPT_ROWS_MB", 0.0, kernel_rows.KEPT_ROWS_MB),
            "shared": ("READ_ROW_CACHE", False, True),
            "inplace": ("COMPILED_READS", False, True)}


class PolishClock:
    """Sums the CPU seconds of ``smo.polish_step`` while it is entered: wraps the
    function in place at entry (whatever it is then, e.g. a patched revision) and puts
    it back at exit.  Also used by ``bench_polish_proximal.py``."""

    def __init__(self):
        self.seconds, self.inner = 0.0, None

    def __enter__(self):
        self.inner, smo.polish_step = smo.polish_step, self
        return self

    def __exit__(self, *exc_info):
        smo.polish_step = self.inner

    def __call__(self, *args, **kwargs):
        clock = time.process_time()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.process_time() - clock


def fit(problem, name, value, clock):
    """(fit CPU s, polishing CPU s, SolverResult) with ``kernel_rows.<name> = value``."""
    default = getattr(kernel_rows, name)
    setattr(kernel_rows, name, value)
    clock.seconds = 0.0
    start = time.process_time()
    try:
        result = smo.solve_smo(problem)
    finally:
        setattr(kernel_rows, name, default)
    return time.process_time() - start, clock.seconds, result


def compare(design, n, K, C, switch, repeats, clock, seed=0):
    X, y = make_design(design, n, K, seed)
    problem = NordicProblem(gram=KernelMatrix(make_kernel("rbf", gamma=GAMMA), X),
                            signs=binary_signs(y, K), C=C, method="nordic1")
    name, first, second = SWITCHES[switch]
    runs = [fit(problem, name, value, clock) for _ in range(repeats)
            for value in (first, second)]
    off, on = runs[0][2], runs[1][2]
    rounds = [[s["rounds"] for s in r.info["polish"]] for r in (off, on)]
    same = off.iterations == on.iterations and rounds[0] == rounds[1]
    diff = np.max(np.abs(problem.decision_values(off.dual_coef, off.intercept)
                         - problem.decision_values(on.dual_coef, on.intercept)))
    fit_off, fit_on = (min(r[0] for r in runs[side::2]) for side in (0, 1))
    pol_off, pol_on = (min(r[1] for r in runs[side::2]) for side in (0, 1))
    parts = [f"{design:8s} n={n:5d} K={K} C={C:<4g} steps {off.iterations:>9,d} / "
             f"{on.iterations:>9,d} rounds {rounds[0]} / {rounds[1]} same path {same} "
             f"max|f_1 - f_2| {diff:.0e} gaps {off.gap:.0e} / {on.gap:.0e}",
             f"polishing CPU {pol_off:6.3f} / {pol_on:6.3f} s = {pol_off / pol_on:4.2f}x",
             f"fit CPU {fit_off:6.2f} / {fit_on:6.2f} s = {fit_off / fit_on:4.2f}x",
             f"faces {[s['size'] for s in on.info['polish']]}, rows computed "
             f"{on.info['polish_kernel_rows']}, read {on.info['polish_rows_read']}",
             f"SMO cache misses {off.info['cache_misses']:,} / {on.info['cache_misses']:,}",
             f"{off.status}, {on.status}"]
    print(" | ".join(parts), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", nargs="+", type=int, default=[1000, 5000], choices=sorted(CASES))
    parser.add_argument("--switch", choices=sorted(SWITCHES), default="kept")
    parser.add_argument("--repeats", type=int, default=2, help="alternating pairs of fits")
    parser.add_argument("--K", nargs="+", type=int, help="only these numbers of classes")
    args = parser.parse_args()
    X, y = make_design("likert", 60, 3, 0)  # load the compiled loop before timing
    smo.solve_smo(NordicProblem(gram=make_kernel("rbf", gamma=GAMMA)(X, X),
                                signs=binary_signs(y, 3), C=1.0, method="nordic1"))
    cached_rows_product(np.ones((2, 3)), np.arange(2), np.ones((2, 1)), np.arange(2))
    cached_block(np.ones((2, 3)), np.arange(2), np.arange(2))
    with PolishClock() as clock:
        for n in args.n:
            for design, K, C in CASES[n]:
                if args.K and K not in args.K:
                    continue
                compare(design, n, K, C, args.switch, args.repeats, clock)


if __name__ == "__main__":
    main()
