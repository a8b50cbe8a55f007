"""Row block steps against single phi steps in kernel NORDIC-1's SMO loop (one process).

For each fit the solver runs with ``smo.ROW_BLOCK_VARIANT`` set to each variant in turn,
alternating, ``--repeats`` times; printed: SMO steps by kind, row block steps, CPU
seconds (the best of the repeats) and the ratio to variant 0, and the certificate.

Variants (``smo_core.smo_loop``): 0 one phi step (over-relaxed 1.8); 1 the exact row
block whenever a phi is chosen; 2 the same over-relaxed 1.8; 3 the exact block only when
another multiplier of the row is positive or violated, else the phi step; 4 that with
the relaxed block; +8 also a block at each row of a cross pair with a violated phi.

Run ``python benchmarks/bench_row_block.py --cells overlap:1000:7:16 --variants 0 3``.
"""

from __future__ import annotations

import argparse
import time

from profile_nordic1 import make_problem

from nordicstats.solvers import smo


def run(problem, variant):
    smo.ROW_BLOCK_VARIANT = variant
    clock = time.process_time()
    res = smo.solve_smo(problem)
    return time.process_time() - clock, res


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", required=True, help="design:n:K:C")
    parser.add_argument("--variants", nargs="+", type=int, default=[0, 3])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    warm = make_problem("likert", 200, 5, 1.0)
    for variant in args.variants:
        run(warm, variant)  # compile
    for cell in args.cells:
        design, n, K, C = cell.split(":")
        problem = make_problem(design, int(n), int(K), float(C))
        best, results = {}, {}
        for _ in range(args.repeats):
            for variant in args.variants:
                seconds, res = run(problem, variant)
                best[variant] = min(best.get(variant, float("inf")), seconds)
                results[variant] = res
        for variant in args.variants:
            res, steps = results[variant], results[variant].info["steps"]
            print(f"{design} n={n} K={K} C={C} v{variant}: {res.iterations:>9,} steps (pair "
                  f"{steps['pair']:,}, cross {steps['cross_pair']:,}, phi {steps['phi']:,}, "
                  f"block {steps['row_block']:,}), polish {len(res.info['polish'])}, "
                  f"CPU {best[variant]:.2f} s = {best[variant] / best[args.variants[0]]:.2f}x, "
                  f"{res.status}, gap {res.gap:.1e}, obj {res.objective:.10g}", flush=True)


if __name__ == "__main__":
    main()
