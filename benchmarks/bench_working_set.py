"""Working-set steps in the SMO loop (prototype): SMO steps, QPs and CPU time, one process.

``python benchmarks/bench_working_set.py overlap 1000 7 16 0,50,200 2,4,8`` runs the fit
without working-set steps (0) and with one after every 50 and 200 SMO steps, with 2, 4 and
8 alphas per boundary and direction in the working set.  Environment ``SHR=0`` switches
shrinking off.
"""

import os
import sys
import time

from profile_nordic1 import make_problem

from nordicstats.solvers import smo, working_set


def main():
    design, n, K, C = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    every = [None if a == "0" else int(a) for a in sys.argv[5].split(",")]
    sizes = [int(a) for a in sys.argv[6].split(",")] if len(sys.argv) > 6 else [4]
    shrinking = None if os.environ.get("SHR") is None else bool(int(os.environ["SHR"]))
    problem = make_problem(design, n, K, C)
    smo.solve_smo(make_problem(design, 300, K, C), working_set=50)  # compile
    for ws in every:
        for size in (sizes if ws else [0]):
            working_set.PER_BOUNDARY = size
            clock = time.process_time()
            res = smo.solve_smo(problem, working_set=ws, shrinking=shrinking)
            cpu = time.process_time() - clock
            info = res.info
            print(f"every {ws} per boundary {size}: {res.status} gap {res.gap:.1e} objective "
                  f"{res.objective:.10g} steps {res.iterations:,} {info['steps']} working-set "
                  f"steps {info['working_set_steps']} (taken {info['working_set_taken']}) "
                  f"polishing steps {len(info['polish'])} rounds "
                  f"{sum(s['rounds'] for s in info['polish'])} CPU {cpu:.2f} s", flush=True)


if __name__ == "__main__":
    main()
