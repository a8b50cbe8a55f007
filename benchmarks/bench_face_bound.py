"""Whether NORDIC-1's polishing should admit larger faces: whole fits, two bounds, one run.

For each case (a design of :func:`bench_scale.make_design`, n, K, C) NORDIC-1 is fitted by
the SMO solver with the Gram matrix as a :class:`~nordicstats.kernels.KernelMatrix` (rows
on demand, what the model passes above ``DENSE_GRAM_MAX_ROWS``) with
``polish.MAX_FACE_SIZE`` (the face bound of :attr:`polish._Face.too_large`: rows of K_SS and
entries of the blocks of H) at each value of ``--bounds``, alternating, each fit in a
forked child of its own (:func:`bench_scale.isolated`) so that its peak memory is its own.

Printed and stored (``--out``, JSON lines in ``benchmarks/results/``) per fit: the CPU
seconds of the fit and of its polishing steps, the SMO steps, the gap, the growth of the
child's peak resident set (``VmHWM``, :func:`bench_scale.peak_mb_of`; the SMO row cache is
most of it at n = 20,000), and for each polishing step its face (variables, rows, entries
of the blocks of H), rounds, whether it converged and was taken, and the peak of the
memory numpy allocated during it above what was allocated when it started
(``tracemalloc``, on during the polishing steps only).

``--synthetic ROWS ...``: the memory of polishing faces of given rows alone, at
``likert``, n = 20,000, K = 7, C = 16 (the SMO solver's row cache of 2 GiB, the face's rows
read from it): a point with a free alpha on each of ROWS rows (boundary k on the rows of
class k or k + 1) and a second on 28% of them (as the faces met at 1e-2: 6,968 variables
on 5,444 rows), two rounds of the active set (the blocks of H kept from the first),
none released after the first (the second face within the first), traced and
``VmHWM`` peaks in a child of its own.

Run ``python benchmarks/bench_face_bound.py --bounds 5000 7500``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import tracemalloc
from pathlib import Path

import numpy as np
from bench_polish_rows import PolishClock
from bench_scale import GAMMA, isolated, make_design, peak_mb_of

from nordicstats.data import binary_signs
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import kernel_rows, polish, smo
from nordicstats.solvers.cached_products import cached_block, cached_rows_product
from nordicstats.solvers.problem import NordicProblem

CASES = [("likert", 20000, 7, 16.0), ("likert", 20000, 5, 16.0), ("overlap", 5000, 7, 0.0625),
         ("overlap", 5000, 7, 16.0), ("likert", 5000, 7, 16.0)]
RESULTS = Path(__file__).resolve().parent / "results"


class PolishMemory(PolishClock):
    """:class:`bench_polish_rows.PolishClock` (the CPU seconds of ``smo.polish_step``
    while entered) that also keeps, per step, its first face and the peak of the memory
    traced during the step above the memory traced at its start (MB)."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def __call__(self, problem, alpha, phi, gamma, *args, **kwargs):
        rows, sizes = first_face(problem, alpha, phi, gamma)
        entries = sum(b * b for b in sizes) + 2 * sum(a * b for a, b in zip(sizes, sizes[1:]))
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        try:
            step, candidate = super().__call__(problem, alpha, phi, gamma, *args, **kwargs)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        self.steps.append({"size": int(sum(sizes)), "rows": rows, "entries": int(entries),
                           "refused": step.rounds == 0,
                           "rounds": step.rounds, "converged": step.converged,
                           "polish_peak_mb": (peak - start) / 2 ** 20})
        return step, candidate


def first_face(problem, alpha, phi, gamma):
    """(rows, sizes of the boundary blocks) of the first face ``polish_step`` builds: the
    variables strictly inside their bounds, in the polishing's own blocks."""
    U = problem.upper_bounds
    face = polish._Face(problem.signs, U, *polish._interior_masks(U, alpha, phi, gamma))
    return int(face.rows.size), [int(block.size) for block in face.blocks()]


def fit_task(design, n, K, C, bound):
    def task():
        X, y = make_design(design, n, K, 0)
        problem = NordicProblem(gram=KernelMatrix(make_kernel("rbf", gamma=GAMMA), X),
                                signs=binary_signs(y, K), C=C, method="nordic1")
        polish.MAX_FACE_SIZE = bound
        with PolishMemory() as memory:
            res, seconds, peak_mb, cpu = peak_mb_of(lambda: smo.solve_smo(problem))
        for step, info in zip(memory.steps, res.info["polish"], strict=True):
            step["accepted"] = info["accepted"]
        return {"design": design, "n": n, "K": K, "C": C, "bound": bound,
                "cpu_seconds": cpu, "seconds": seconds, "polish_cpu_seconds": memory.seconds,
                "iterations": int(res.iterations), "status": res.status, "gap": float(res.gap),
                "peak_mb": peak_mb, "cache_mb": res.info["cache_bytes"] / 2 ** 20,
                "steps": memory.steps, "load": os.getloadavg()[0]}
    return task


def synthetic_face_task(rows, n=20000, K=7, C=16.0, seed=0, profile=False):
    def task():
        X, y = make_design("likert", n, K, seed)
        problem = NordicProblem(gram=KernelMatrix(make_kernel("rbf", gamma=GAMMA), X),
                                signs=binary_signs(y, K), C=C, method="nordic1")
        rng = np.random.default_rng(seed)
        U = problem.upper_bounds
        alpha = np.zeros_like(U)
        chosen = rng.choice(n, rows, replace=False)
        first = np.clip(y[chosen] - rng.integers(0, 2, rows), 0, K - 2)
        alpha[chosen, first] = 0.5 * U[chosen, first]
        second = chosen[rng.random(rows) < 0.28]
        alpha[second, (first[np.isin(chosen, second)] + 1) % (K - 1)] = 0.25 * U[second, 0]
        phi, gamma = np.zeros((n, K - 2)), np.zeros(K - 2)
        G = problem.gram @ (problem.signs * alpha)
        cache = smo._row_cache(problem.gram, smo.default_cache_mb(n))
        shared = kernel_rows.kernel_rows_for(problem.gram, cache)
        cache.fetch(np.sort(chosen))  # the face's rows cached, as in a fit
        polish.ACTIVE_SET_ROUNDS, polish.PROXIMAL_STEPS, polish.MAX_FACE_SIZE = 2, 0, 10 ** 6
        # two rounds whatever changes, none released (the second face within the first)
        polish.FIRST_ROUND_CHANGES, polish.SETTLING, polish.RELEASE_TOL = None, np.inf, np.inf
        profiler = cProfile.Profile() if profile else None
        if profiler:
            profiler.enable()
        with PolishMemory() as memory:
            step, seconds, peak_mb, cpu = peak_mb_of(lambda: smo.polish_step(
                problem, alpha, phi, gamma, G, np.zeros(K - 1), shared)[0])
        if profiler:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(12)
        return {"synthetic_rows": rows, "status": "done", "cpu_seconds": cpu,
                "peak_mb": peak_mb, "cache_mb": cache.nbytes / 2 ** 20,
                "steps": memory.steps, "load": os.getloadavg()[0]}
    return task


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bounds", nargs=2, type=int, default=[5000, 7500])
    parser.add_argument("--cases", nargs="+", type=int, default=list(range(len(CASES))),
                        help="indices into CASES")
    parser.add_argument("--repeats", type=int, default=1, help="alternating pairs of fits")
    parser.add_argument("--limit", type=float, default=1800.0, help="seconds per fit")
    parser.add_argument("--out", default="face_bound.jsonl")
    parser.add_argument("--synthetic", nargs="+", type=int, default=[],
                        help="rows of faces polished alone (their memory)")
    parser.add_argument("--profile", action="store_true",
                        help="with --synthetic: cProfile of the polishing step (not stored)")
    args = parser.parse_args()
    # load the compiled reads before forking: not in a polishing step's traced memory
    cached_rows_product(np.ones((2, 3)), np.arange(2), np.ones((2, 1)), np.arange(2))
    cached_block(np.ones((2, 3)), np.arange(2), np.arange(2))
    for rows in args.synthetic:
        row = isolated(synthetic_face_task(rows, profile=args.profile), args.limit, 8000.0)
        with open(RESULTS / args.out, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        traced = [(s["size"], s["rows"], s["entries"], round(s["polish_peak_mb"]))
                  for s in row.get("steps", [])]
        print(f"synthetic face on {rows:,} rows: {row.get('status')}, peak "
              f"{row.get('peak_mb', 0):,.0f} MB above the start (row cache "
              f"{row.get('cache_mb', 0):,.0f} MB, the face's rows in it before), traced "
              f"(size, rows, entries, MB) {traced}, CPU {row.get('cpu_seconds', 0):.1f} s",
              flush=True)
    if args.synthetic:
        return
    for index in args.cases:
        for _ in range(args.repeats):
            for bound in args.bounds:
                row = {"case": list(CASES[index]), "bound": bound,
                       **isolated(fit_task(*CASES[index], bound), args.limit, 8000.0)}
                with open(RESULTS / args.out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
                faces = [(s["size"], s["rows"], s["rounds"], s["converged"], s["refused"],
                          round(s["polish_peak_mb"])) for s in row.get("steps", [])]
                print(f"{index} {CASES[index]} bound {bound}: {row.get('status')}, "
                      f"{row.get('iterations', 0):,} steps, CPU {row.get('cpu_seconds', 0):.1f} s "
                      f"(polishing {row.get('polish_cpu_seconds', 0):.1f} s), gap "
                      f"{row.get('gap', float('nan')):.0e}, peak {row.get('peak_mb', 0):,.0f} MB; "
                      f"faces (size, rows, rounds, converged, refused, peak MB) {faces}",
                      flush=True)


if __name__ == "__main__":
    main()
