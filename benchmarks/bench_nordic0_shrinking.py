"""Shrinking in NORDIC-0's SMO loop, on against off, in one process.

For each design (``likert``, ``overlap`` of :func:`bench_scale.make_design`), K and C,
NORDIC-0 is fitted twice, with ``solver_options={"shrinking": True}`` and ``False``
(the order alternates between cases), and the K-1 libsvm fits once; printed are the
seconds, the SMO steps, the entries dropped and restores, the ratio of the times
on / off and each against libsvm, and the difference of the two objectives.

Run ``python benchmarks/bench_nordic0_shrinking.py --n 1000 5000``; the output of a
run is kept in ``benchmarks/results/nordic0_shrinking.txt``.
"""

from __future__ import annotations

import argparse
import time

from bench_scale import GAMMA, baseline, make_design

from nordicstats import NORDIC


def fit(X, y, C, shrinking):
    """(seconds, SolverResult) of one NORDIC-0 fit."""
    model = NORDIC(y, X, method="nordic0", kernel="rbf", gamma=GAMMA, C=C,
                   solver_options={"shrinking": shrinking})
    clock = time.perf_counter()
    result = model.fit(cov_type="none").solver_result
    return time.perf_counter() - clock, result


def compare(design, n, K, C, order, seed=0):
    """One line: libsvm, shrinking on and off (in ``order``), ratios."""
    X, y = make_design(design, n, K, seed)
    libsvm = baseline(X, y, K, C)[0]
    runs = {flag: fit(X, y, C, flag) for flag in order}
    (t_on, on), (t_off, off) = runs[True], runs[False]
    shrunk = on.info["shrinking"]
    certified = on.certificate.certified and off.certificate.certified
    print(f"{design:8s} n={n:5d} K={K} C={C:<7g} libsvm {libsvm:6.2f}s | on {t_on:7.2f}s "
          f"({t_on / libsvm:5.1f}x) {on.iterations:>9,d} steps, {shrunk['dropped']:,} dropped, "
          f"{shrunk['restores']} restores | off {t_off:7.2f}s ({t_off / libsvm:5.1f}x) "
          f"{off.iterations:>9,d} steps | on/off {t_on / t_off:4.2f} | "
          f"dobj {abs(on.objective - off.objective) / max(1.0, abs(off.objective)):.1e} "
          f"certified {certified}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--K", type=int, nargs="*", default=[3, 5, 7])
    parser.add_argument("--C", type=float, nargs="*", default=[1.0, 16.0])
    parser.add_argument("--designs", nargs="*", default=["likert", "overlap"])
    args = parser.parse_args()
    # compile the loop before the first timed fit
    fit(*make_design("likert", 200, 3, 1), 1.0, True)
    case = 0
    for n in args.n:
        for C in args.C:
            for design in args.designs:
                for K in args.K:
                    order = (True, False) if case % 2 == 0 else (False, True)
                    compare(design, n, K, C, order)
                    case += 1


if __name__ == "__main__":
    main()
