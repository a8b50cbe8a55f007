"""NORDIC-2 with SCIP: time to proven optimality, next to NORDIC-1, and the formulations.

Data: the paper's nonlinear design (Section 6.1; d = 10, sigma = 1) from
:func:`nordicstats.datasets.make_nonlinear`; K = 5 uses that function's documented
K-class extension of the scores (equally spaced t_k in f_k = 2 t_k x1 + (3 t_k^2 - 2) g).
RBF kernel with the median-distance width.  C = 1 is the design of
docs/notes/solvers.md; C = 10 gives more crossings in the relaxation, so
SCIP has more to do.

For every (K, n, C) it prints, per seed:

* NORDIC-2 (default options, formulation="disjunction"): wall and CPU seconds to
  proven optimality (mip_gap 1e-6), how the answer was proven (``relaxation``: the
  K-1 L1-SVM LPs had no crossing, so no branch-and-bound was needed) and nodes;
* NORDIC-1 with the package's automatic solver on the same data;
* when SCIP ran: the same solve with warm_start="repair" (the repaired relaxation
  as SCIP's start) and with formulation="indicator" and "bigm" (M proven from the
  data, see nordicstats/solvers/milp.py), and their time ratios to the default.

Run with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_nordic2.py``
(``--quick`` for n = 100, 200 only; ``--seeds 3`` for more replications).  The machine
has 2 cores shared with other jobs: wall time depends on the load printed at the top;
CPU time (``time.process_time``; SCIP runs in-process on one thread) is the steadier figure.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from nordicstats.data import binary_signs
from nordicstats.datasets import make_nonlinear
from nordicstats.kernels import make_kernel
from nordicstats.solvers import NordicProblem, solve
from nordicstats.solvers.milp import solve_nordic2_scip

TIME_LIMIT = 300.0  # NORDIC-2 default
COMPARE_LIMIT = 120.0  # the slower formulations; a hit prints the ratio as a lower bound


def problems(n, K, C, seed):
    X, y = make_nonlinear(n, d=10, sigma=1.0, random_state=seed, K=K)
    X = X.to_numpy()
    gram = make_kernel("rbf", X)(X, X)
    signs = binary_signs(y.cat.codes.to_numpy(), K)
    return (NordicProblem(gram, signs, C, method="nordic2", penalty="l1"),
            NordicProblem(gram, signs, C, method="nordic1"))


def timed(function, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = function(*args, **kwargs)
    for warning in caught:
        print(f"    [{warning.category.__name__}] {str(warning.message)[:110]}")
    return out, time.perf_counter() - wall, time.process_time() - cpu


def run_case(n, K, C, seed):
    nordic2, nordic1 = problems(n, K, C, seed)
    res, wall, cpu = timed(solve_nordic2_scip, nordic2, time_limit=TIME_LIMIT)
    _, wall1, cpu1 = timed(solve, nordic1)
    row = {"n": n, "K": K, "C": C, "seed": seed, "status": res.status, "wall": wall, "cpu": cpu,
           "nodes": res.iterations, "origin": res.info["solution_origin"], "gap": res.gap,
           "objective": res.objective, "nordic1_wall": wall1, "nordic1_cpu": cpu1}
    if res.info["solution_origin"] != "relaxation":
        _, _, row["repair_cpu"] = timed(solve_nordic2_scip, nordic2, time_limit=TIME_LIMIT,
                                        warm_start="repair")
        for formulation in ("indicator", "bigm"):
            other, w, c = timed(solve_nordic2_scip, nordic2, time_limit=COMPARE_LIMIT,
                                formulation=formulation)
            row[formulation] = (c, other.status, other.objective, other.gap)
    return row


def print_row(row):
    line = (f"K={row['K']} n={row['n']:4d} C={row['C']:<4g} seed={row['seed']}  NORDIC-2 "
            f"{row['status']:<10s} wall {row['wall']:7.2f}s cpu {row['cpu']:7.2f}s "
            f"nodes {row['nodes']:4d} via {row['origin']:<11s}| NORDIC-1 wall "
            f"{row['nordic1_wall']:7.2f}s cpu {row['nordic1_cpu']:7.2f}s "
            f"(NORDIC-2/NORDIC-1 cpu {row['cpu'] / row['nordic1_cpu']:5.2f})")
    if "repair_cpu" in row:
        line += (f"\n{'':>34s}warm_start='repair' cpu {row['repair_cpu']:7.2f}s "
                 f"{row['repair_cpu'] / row['cpu']:5.2f} x default start")
    for formulation in ("indicator", "bigm"):
        if formulation in row:
            cpu, status, objective, gap = row[formulation]
            same = abs(objective - row["objective"]) <= 1e-6 * abs(row["objective"])
            bound = ">=" if status == "time_limit" else "  "
            line += (f"\n{'':>34s}{formulation:<9s} cpu {cpu:7.2f}s {status:<10s} gap {gap:8.1e} "
                     f"{bound}{cpu / row['cpu']:5.1f} x disjunction"
                     f"{'' if same else '  (different objective!)'}")
    print(line, flush=True)


def summary(rows):
    print("\nmedian CPU seconds (NORDIC-2 default | NORDIC-1):")
    for K in sorted({r["K"] for r in rows}):
        for n in sorted({r["n"] for r in rows}):
            sel = [r for r in rows if r["K"] == K and r["n"] == n]
            if sel:
                print(f"  K={K} n={n:4d}: {np.median([r['cpu'] for r in sel]):7.2f} | "
                      f"{np.median([r['nordic1_cpu'] for r in sel]):7.2f}   (max NORDIC-2 wall "
                      f"{max(r['wall'] for r in sel):.2f}s, statuses "
                      f"{sorted({r['status'] for r in sel})})")
    ratios = [r["repair_cpu"] / r["cpu"] for r in rows if "repair_cpu" in r]
    if ratios:
        print(f"warm_start='repair' / default CPU time over {len(ratios)} SCIP solves: median "
              f"{np.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f}x")
    for formulation in ("indicator", "bigm"):
        ratios = [r[formulation][0] / r["cpu"] for r in rows if formulation in r]
        if ratios:
            limited = sum(r[formulation][1] == "time_limit" for r in rows if formulation in r)
            print(f"{formulation} / disjunction CPU time over {len(ratios)} SCIP solves: median "
                  f"{np.median(ratios):.1f}x, range {min(ratios):.1f}-{max(ratios):.1f}x "
                  f"({limited} stopped at the {COMPARE_LIMIT:.0f} s limit: ratio a lower bound)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 100, 200 only")
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    sizes = (100, 200) if args.quick else (100, 200, 400)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (shared machine); "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    rows = []
    for K in (3, 5):
        for C in (1.0, 10.0):
            for n in sizes:
                for seed in range(args.seeds):
                    rows.append(run_case(n, K, C, seed))
                    print_row(rows[-1])
    summary(rows)


if __name__ == "__main__":
    main()
