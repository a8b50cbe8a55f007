"""Shrinking in NORDIC-0's SMO loop, on against off, in one process.

For each design (``likert``, ``overlap`` of :func:`bench_scale.make_design`), K and C,
NORDIC-0 is fitted twice, with ``solver_options={"shrinking": True}`` and ``False``
(the order alternates between cases), and the K-1 libsvm fits once; printed are the
seconds, the SMO steps, the entries dropped and restores, the ratio of the times
on / off and each against libsvm, the CPU microseconds per step, the entries scanned
and rows of G updated per step (averages), and the difference of the two objectives.

``--constant NAME A B`` compares two values of a constant of
:mod:`nordicstats.solvers.nordic0_smo` instead (e.g. ``SHRINK_EVERY 1000 100`` or
``SHRINK_EACH_ROUND False True``), both fits with the default shrinking; the columns
"on" and "off" are then the fits with A and B.  Times are CPU seconds of this process
(the machine is shared; wall-clock times varied 3-fold under others' load).

Run ``python benchmarks/bench_nordic0_shrinking.py --n 1000 5000``; the outputs are kept
in ``benchmarks/results/nordic0_shrinking.txt`` (on / off) and
``benchmarks/results/nordic0_shrink_rounds.txt`` (``--constant`` runs); the patient
shrink's cost per step in ``nordic0_shrink_cost.txt``, ``nordic0_shrink_every50.txt``,
``nordic0_gather_rows.txt`` and ``nordic0_patience_steps.txt`` there.
"""

from __future__ import annotations

import argparse
import ast
import time

from bench_scale import GAMMA, baseline, make_design

from nordicstats import NORDIC
from nordicstats.solvers import nordic0_smo


def fit(X, y, C, shrinking, constant=None):
    """(CPU seconds, SolverResult) of one NORDIC-0 fit; ``constant`` = (name, value) of
    :mod:`~nordicstats.solvers.nordic0_smo` set for this fit (shrinking then default)."""
    options = {"shrinking": shrinking}
    if constant is not None:
        setattr(nordic0_smo, *constant)
        options = {}
    model = NORDIC(y, X, method="nordic0", kernel="rbf", gamma=GAMMA, C=C,
                   solver_options=options)
    clock = time.process_time()
    result = model.fit(cov_type="none").solver_result
    return time.process_time() - clock, result


def compare(design, n, K, C, order, seed=0, constant=None):
    """One line: libsvm, shrinking on and off (in ``order``), ratios; with ``constant``
    (name, A, B) the fits with A ("on") and B ("off")."""
    X, y = make_design(design, n, K, seed)
    libsvm = baseline(X, y, K, C)[2]
    if constant is None:
        runs = {flag: fit(X, y, C, flag) for flag in order}
    else:
        name, values = constant[0], dict(zip((True, False), constant[1:], strict=True))
        runs = {flag: fit(X, y, C, None, (name, values[flag])) for flag in order}
    (t_on, on), (t_off, off) = runs[True], runs[False]
    shrunk = on.info["shrinking"]
    certified = on.certificate.certified and off.certificate.certified
    print(f"{design:8s} n={n:5d} K={K} C={C:<7g} libsvm {libsvm:6.2f}s | on {t_on:7.2f}s "
          f"({t_on / libsvm:5.1f}x) {on.iterations:>9,d} steps, {shrunk['dropped']:,} dropped, "
          f"{shrunk['restores']} restores | off {t_off:7.2f}s ({t_off / libsvm:5.1f}x) "
          f"{off.iterations:>9,d} steps | on/off {t_on / t_off:4.2f} | "
          f"us/step {1e6 * t_on / on.iterations:.0f} / {1e6 * t_off / off.iterations:.0f}, "
          f"entries scanned / rows updated per step {_load(on)} / {_load(off)} | "
          f"dobj {abs(on.objective - off.objective) / max(1.0, abs(off.objective)):.1e} "
          f"certified {certified}", flush=True)


def _load(result):
    shrinking = result.info["shrinking"]
    return (f"{shrinking['entries_scanned_per_step']:,.0f}, "
            f"{shrinking['rows_updated_per_step']:,.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--K", type=int, nargs="*", default=[3, 5, 7])
    parser.add_argument("--C", type=float, nargs="*", default=[1.0, 16.0])
    parser.add_argument("--designs", nargs="*", default=["likert", "overlap"])
    parser.add_argument("--constant", nargs=3, metavar=("NAME", "A", "B"),
                        help="compare two values of a nordic0_smo constant")
    args = parser.parse_args()
    constant = None
    if args.constant:
        name = args.constant[0]
        if not hasattr(nordic0_smo, name):
            raise SystemExit(f"nordic0_smo has no constant {name!r}")
        constant = (name, *(ast.literal_eval(v) for v in args.constant[1:]))
    # compile the loop before the first timed fit
    fit(*make_design("likert", 200, 3, 1), 1.0, True)
    case = 0
    for n in args.n:
        for C in args.C:
            for design in args.designs:
                for K in args.K:
                    order = (True, False) if case % 2 == 0 else (False, True)
                    compare(design, n, K, C, order, constant=constant)
                    case += 1


if __name__ == "__main__":
    main()
