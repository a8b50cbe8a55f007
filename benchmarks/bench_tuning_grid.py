"""The paper's C-by-width tuning grid on balance-scale: 27 NORDIC-1 fits.

Protocol (paper, Section 7): 208 training rows drawn stratified from the 625
balance-scale rows (:func:`nordicstats.datasets.stratified_split`); grid
C in 2^-4..2^4 (9 values) by the 10/50/90% pairwise-distance widths (3 values).
For every width the Gram matrix is built once (the dual Hessian does not depend
on C) and the 9 C values are solved in increasing order:

* ``decomposition, cold``: each C from the libsvm BSVM start;
* ``decomposition, warm``: each C from the previous C's solution rescaled by
  C_new / C_old (the dual constraints are homogeneous, so it stays feasible), along
  the solver layer's path (:func:`nordicstats.solvers.solve_path`);
* ``quadprog``: the dense dual, the exact reference (``--no-quadprog`` to skip);
* ``libsvm BSVM``: K-1 separate SVC fits per grid point, for scale.

Every warm and cold objective is checked against quadprog (relative difference
printed).  Target: the 27 fits in under 5 s.

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tuning_grid.py
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from nordicstats.data import binary_signs, encode_ordinal  # noqa: E402
from nordicstats.datasets import load_balance_scale, stratified_split  # noqa: E402
from nordicstats.kernels import gamma_candidates, make_kernel  # noqa: E402
from nordicstats.solvers import NordicProblem, solve, solve_path  # noqa: E402
from nordicstats.solvers.qp import solve_quadprog  # noqa: E402
from nordicstats.tuning import PAPER_C_GRID, PAPER_WIDTH_QUANTILES  # noqa: E402


def training_rows(random_state=0):
    frame = load_balance_scale()
    train, _, _ = stratified_split(frame["balance"], [208, 208], random_state=random_state)
    X = frame.iloc[train, 1:].to_numpy(dtype=float)
    response = encode_ordinal(frame["balance"].iloc[train])
    return X, binary_signs(response.codes, response.n_levels)


def sweep(X, signs, gamma, warm, with_quadprog):
    """Solve the 9 C values at one width; returns (seconds, objectives, reference objs)."""
    start = time.perf_counter()
    gram = make_kernel("rbf", X, gamma=gamma)(X, X)
    path = solve_path(lambda C: NordicProblem(gram=gram, signs=signs, C=C, method="nordic1"),
                      sorted(PAPER_C_GRID), solver="decomposition", warm=warm)
    objectives = [result.objective for result in path]
    seconds = time.perf_counter() - start
    reference, t_ref = [], 0.0
    if with_quadprog:
        t0 = time.perf_counter()
        for C in sorted(PAPER_C_GRID):
            problem = NordicProblem(gram=gram, signs=signs, C=C, method="nordic1")
            reference.append(solve_quadprog(problem).objective)
        t_ref = time.perf_counter() - t0
    return seconds, np.array(objectives), np.array(reference), t_ref


def libsvm_grid(X, signs, gammas):
    from sklearn.svm import SVC

    start = time.perf_counter()
    for gamma in gammas:
        for C in PAPER_C_GRID:
            for k in range(signs.shape[1]):
                SVC(C=C, kernel="rbf", gamma=gamma).fit(X, signs[:, k])
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-quadprog", action="store_true")
    parser.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args()
    X, signs = training_rows(args.random_state)
    gammas = gamma_candidates(X, PAPER_WIDTH_QUANTILES)
    solve(NordicProblem(gram=make_kernel("rbf", X, gamma=gammas[1])(X, X), signs=signs, C=1.0),
          solver="decomposition")  # imports, outside timings
    print(f"balance-scale, n = {X.shape[0]}, K = {signs.shape[1] + 1}, grid 9 C x 3 widths; "
          f"{os.cpu_count()} shared cores, BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}")
    totals = {"cold": 0.0, "warm": 0.0, "quadprog": 0.0}
    worst = {"cold": 0.0, "warm": 0.0}
    for gamma in gammas:
        for mode in ("cold", "warm"):
            ref_wanted = mode == "cold" and not args.no_quadprog
            seconds, objs, ref, t_ref = sweep(X, signs, gamma, mode == "warm", ref_wanted)
            totals[mode] += seconds
            totals["quadprog"] += t_ref
            if ref_wanted:
                reference = ref
            if not args.no_quadprog:
                worst[mode] = max(worst[mode], float(np.max(np.abs(objs - reference)
                                                            / np.abs(reference))))
    t_svm = libsvm_grid(X, signs, gammas)
    print(f"decomposition, cold start (libsvm BSVM): {totals['cold']:6.2f} s for 27 fits")
    print(f"decomposition, warm start along C:       {totals['warm']:6.2f} s for 27 fits "
          f"[target < 5 s: {'met' if totals['warm'] < 5 else 'MISSED'}]")
    if not args.no_quadprog:
        print(f"quadprog (dense dual, reference):        {totals['quadprog']:6.2f} s for 27 fits")
        print(f"largest relative objective difference to quadprog: cold {worst['cold']:.1e}, "
              f"warm {worst['warm']:.1e}")
    print(f"libsvm BSVM (2 SVC fits per point):      {t_svm:6.2f} s for 27 grid points")


if __name__ == "__main__":
    main()
