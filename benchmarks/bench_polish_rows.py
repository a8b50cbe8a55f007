"""Kernel rows kept by NORDIC-1's polishing between rounds and steps, on against off.

For each design (:func:`bench_scale.make_design`), K and C, the SMO solver fits NORDIC-1
with the Gram matrix as a :class:`~nordicstats.kernels.KernelMatrix` (rows on demand,
what the model passes above ``DENSE_GRAM_MAX_ROWS`` rows) four times in this process:
kept rows off, on, off, on (``polish.KEPT_ROWS_MB`` 0 and its default).  Printed: the
SMO steps and polishing rounds of both (the path must be the same), the largest
difference of the decision values, the CPU seconds of the polishing steps and of the
whole fit (the smaller of the two runs each), their ratios off / on, the faces and the
kernel rows the polishing computed with reuse.  Times are CPU seconds of this process
(the machine is shared; wall-clock times varied 2-fold under others' load).

Run ``python benchmarks/bench_polish_rows.py --n 1000 5000``; the output is kept in
``benchmarks/results/polish_kernel_rows.txt``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_scale import GAMMA, make_design

from nordicstats.data import binary_signs
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import polish, smo
from nordicstats.solvers.problem import NordicProblem

CASES = {1000: [(design, K, C) for design in ("likert", "rare", "overlap") for K in (5, 7)
                for C in (4.0, 16.0)],
         5000: [("likert", 7, 1.0), ("likert", 5, 16.0), ("rare", 5, 16.0),
                ("overlap", 3, 1.0), ("overlap", 5, 1.0)]}


class PolishClock:
    """Wraps ``smo.polish_step`` and sums its CPU seconds."""

    def __init__(self):
        self.seconds, self.inner = 0.0, smo.polish_step
        smo.polish_step = self

    def __call__(self, *args, **kwargs):
        clock = time.process_time()
        out = self.inner(*args, **kwargs)
        self.seconds += time.process_time() - clock
        return out


def fit(problem, kept, clock):
    """(fit CPU s, polishing CPU s, SolverResult) with the kept rows on or off."""
    polish.KEPT_ROWS_MB = kept
    clock.seconds = 0.0
    start = time.process_time()
    result = smo.solve_smo(problem)
    return time.process_time() - start, clock.seconds, result


def compare(design, n, K, C, clock, seed=0):
    X, y = make_design(design, n, K, seed)
    problem = NordicProblem(gram=KernelMatrix(make_kernel("rbf", gamma=GAMMA), X),
                            signs=binary_signs(y, K), C=C, method="nordic1")
    default = polish.KEPT_ROWS_MB
    runs = [fit(problem, mb, clock) for mb in (0.0, default, 0.0, default)]
    polish.KEPT_ROWS_MB = default
    off, on = runs[0][2], runs[1][2]
    rounds = [[s["rounds"] for s in r.info["polish"]] for r in (off, on)]
    same = off.iterations == on.iterations and rounds[0] == rounds[1]
    diff = np.max(np.abs(problem.decision_values(off.dual_coef, off.intercept)
                         - problem.decision_values(on.dual_coef, on.intercept)))
    fit_off, fit_on = min(runs[0][0], runs[2][0]), min(runs[1][0], runs[3][0])
    pol_off, pol_on = min(runs[0][1], runs[2][1]), min(runs[1][1], runs[3][1])
    parts = [f"{design:8s} n={n:5d} K={K} C={C:<4g} steps {on.iterations:>9,d} same path "
             f"{same} max|f_off - f_on| {diff:.0e}",
             f"polishing CPU off / on {pol_off:6.3f} / {pol_on:6.3f} s = {pol_off / pol_on:4.2f}x",
             f"fit CPU {fit_off:6.2f} / {fit_on:6.2f} s = {fit_off / fit_on:4.2f}x",
             f"faces {[s['size'] for s in on.info['polish']]}, rows computed "
             f"{on.info['polish_kernel_rows']}", f"{off.status}, {on.status}"]
    print(" | ".join(parts), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", nargs="+", type=int, default=[1000, 5000], choices=sorted(CASES))
    args = parser.parse_args()
    clock = PolishClock()
    X, y = make_design("likert", 60, 3, 0)  # load the compiled loop before timing
    smo.solve_smo(NordicProblem(gram=make_kernel("rbf", gamma=GAMMA)(X, X),
                                signs=binary_signs(y, 3), C=1.0, method="nordic1"))
    for n in args.n:
        for design, K, C in CASES[n]:
            compare(design, n, K, C, clock)


if __name__ == "__main__":
    main()
