"""Speed of exact NORDIC-0 and the measurements behind solver="auto" (ratios from one run).

Parts (``--part``; default all):

* ``auto``: quadprog against the fast exact solvers on the paper's nonlinear design
  (d = 10, sigma = 1, RBF with the median width, C = 1) for n = 20 upward, K = 3
  and 5: BSVM and NORDIC-1 against ``decomposition``, NORDIC-0 against
  ``active_set``.  This table is why ``solver="auto"`` never picks quadprog
  (:func:`nordicstats.solvers.choose_solver`; ``docs/notes/solvers.md``).
* ``grid``: the 27-fit balance-scale grid (paper, Section 7: 208 stratified
  training rows, C in 2^-4..2^4 by the 10/50/90% widths) for NORDIC-0 with
  ``active_set`` (cold, and warm along C), against the same grid of libsvm BSVM
  fits (K-1 scikit-learn ``SVC`` per point).  Target: within 30x.
* ``large``: one NORDIC-0 fit at n = 2,000 (nonlinear design) against libsvm
  BSVM on the same Gram matrix.  Target: within 30x.
* ``solvers``: ``nordic0_smo`` against ``active_set`` and the K-1 libsvm fits on the
  ``likert`` design of ``bench_scale.py`` (RBF gamma = 0.2), n = 1,000, K = 3, 5, 7,
  C = 2^-4, 1, 2^4, all three in one process per case.  Target: <= 5x libsvm.
* ``small``: NORDIC-1 and BSVM 27-fit grids (solver="auto") at n = 52, 79 and 208.
  Target: the small grids no slower than n = 208.

Every NORDIC-0 time is printed next to its certificate (relative duality gap and
largest violation).  Run:
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_nordic0.py
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from nordicstats.data import binary_signs, encode_ordinal  # noqa: E402
from nordicstats.datasets import load_balance_scale, make_nonlinear, stratified_split  # noqa: E402
from nordicstats.kernels import gamma_candidates, make_kernel  # noqa: E402
from nordicstats.solvers import NordicProblem, solve  # noqa: E402
from nordicstats.tuning import PAPER_C_GRID, PAPER_WIDTH_QUANTILES  # noqa: E402


def load():
    return os.getloadavg()[0]


def nonlinear(n, K, seed=0):
    X, y = make_nonlinear(n, d=10, sigma=1.0, random_state=seed, K=K)
    X = X.to_numpy()
    response = encode_ordinal(y)
    return make_kernel("rbf", X)(X, X), binary_signs(response.codes, response.n_levels)


def timed(problem, solver, **options):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solve(problem, solver=solver, **options)
    return time.perf_counter() - start, result


def libsvm_bsvm(gram, signs, C):
    """Seconds of K-1 libsvm fits on a precomputed Gram matrix."""
    from sklearn.svm import SVC

    start = time.perf_counter()
    for k in range(signs.shape[1]):
        SVC(C=C, kernel="precomputed").fit(gram, signs[:, k])
    return time.perf_counter() - start


def cert(result):
    return f"gap {result.gap:7.1e} viol {result.max_violation:7.1e} {result.status}"


def part_auto(sizes):
    print("\n== solver='auto': quadprog vs the fast exact solvers (s; median of 3) ==")
    fast = {"bsvm": "decomposition", "nordic1": "decomposition", "nordic0": "active_set"}
    print(f"{'K':>2} {'n':>4} {'n(K-1)':>6} | " + " | ".join(
        f"{m:>7}: quadprog {fast[m][:6]:>6}" for m in fast))
    for K in (3, 5):
        for n in sizes:
            gram, signs = nonlinear(n, K)
            cells = []
            for method, name in fast.items():
                problem = NordicProblem(gram, signs, 1.0, method=method)
                tq = np.median([timed(problem, "quadprog")[0] for _ in range(3)])
                tf = np.median([timed(problem, name)[0] for _ in range(3)])
                cells.append(f"{'':>7}  {tq:8.3f} {tf:6.3f}")
            print(f"{K:>2} {n:>4} {n * (K - 1):>6} | " + " | ".join(cells), flush=True)


def balance_rows(size, random_state=0):
    frame = load_balance_scale()
    train, _, _ = stratified_split(frame["balance"], [size, size], random_state=random_state)
    X = frame.iloc[train, 1:].to_numpy(dtype=float)
    response = encode_ordinal(frame["balance"].iloc[train])
    return X, binary_signs(response.codes, response.n_levels)


def grid(X, signs, method, solver="auto", warm=False):
    """Seconds for the 27 fits (Gram matrix per width included) and the worst certificate."""
    start, worst = time.perf_counter(), (0.0, 0.0)
    for gamma in gamma_candidates(X, PAPER_WIDTH_QUANTILES):
        gram = make_kernel("rbf", X, gamma=gamma)(X, X)
        previous = None
        for C in sorted(PAPER_C_GRID):
            problem = NordicProblem(gram, signs, C, method=method)
            options = {"warm_start": previous} if warm and previous else {}
            _, res = timed(problem, solver, **options)
            previous = {**res.multipliers, "C": C}
            worst = (max(worst[0], res.gap), max(worst[1], res.max_violation))
    return time.perf_counter() - start, worst


def libsvm_grid(X, signs):
    from sklearn.svm import SVC

    start = time.perf_counter()
    for gamma in gamma_candidates(X, PAPER_WIDTH_QUANTILES):
        for C in PAPER_C_GRID:
            for k in range(signs.shape[1]):
                SVC(C=C, kernel="rbf", gamma=gamma).fit(X, signs[:, k])
    return time.perf_counter() - start


def part_grid():
    X, signs = balance_rows(208)
    print(f"\n== NORDIC-0, balance-scale 27-fit grid, n = {X.shape[0]} (load {load():.1f}) ==")
    t_svm = libsvm_grid(X, signs)
    for warm in (False, True):
        seconds, (gap, viol) = grid(X, signs, "nordic0", "active_set", warm)
        print(f"active_set {'warm along C' if warm else 'cold (libsvm start)'}: {seconds:6.2f} s"
              f" = {seconds / t_svm:5.1f}x libsvm BSVM grid ({t_svm:.3f} s) [target 30x: "
              f"{'met' if seconds <= 30 * t_svm else 'MISSED'}]; worst gap {gap:.1e}, "
              f"worst violation {viol:.1e}")


def part_large(n=2000):
    gram, signs = nonlinear(n, 3)
    problem = NordicProblem(gram, signs, 1.0, method="nordic0")
    t_svm = libsvm_bsvm(gram, signs, 1.0)
    seconds, res = timed(problem, "active_set")
    print(f"\n== NORDIC-0 single fit, nonlinear design, n = {n}, K = 3 (load {load():.1f}) ==")
    print(f"active_set {seconds:6.2f} s = {seconds / t_svm:5.1f}x libsvm BSVM ({t_svm:.3f} s) "
          f"[target 30x: {'met' if seconds <= 30 * t_svm else 'MISSED'}]; {cert(res)}; "
          f"{res.info['free_increments']} free increments, {res.info['rounds']} rounds")


def part_solvers(n=1000):
    from bench_scale import GAMMA, baseline, make_design

    print(f"\n== NORDIC-0 solvers against the K-1 libsvm fits, likert design, n = {n} "
          f"(load {load():.1f}) ==")
    for K in (3, 5, 7):
        for C in (2.0 ** -4, 1.0, 2.0 ** 4):
            X, y = make_design("likert", n, K, 0)
            t_svm = baseline(X, y, K, C)[0]
            problem = NordicProblem(make_kernel("rbf", gamma=GAMMA)(X, X), binary_signs(y, K),
                                    C, method="nordic0")
            line = f"K = {K}, C = {C:g}: libsvm {t_svm:.3f} s"
            for solver in ("nordic0_smo", "active_set"):
                seconds, res = timed(problem, solver)
                line += (f" | {solver} {seconds:.2f} s = {seconds / t_svm:.1f}x, "
                         f"{res.iterations:,} steps, {cert(res)}")
            print(line, flush=True)


def part_small():
    print(f"\n== NORDIC-1 / BSVM 27-fit grids, solver='auto' (load {load():.1f}) ==")
    times = {}
    for size in (52, 79, 208):
        X, signs = balance_rows(size)
        for method in ("nordic1", "bsvm"):
            times[method, size] = grid(X, signs, method)[0]
    for method in ("nordic1", "bsvm"):
        ref = times[method, 208]
        print(f"{method:8}: " + ", ".join(
            f"n = {s}: {times[method, s]:5.2f} s ({times[method, s] / ref:4.2f}x n = 208)"
            for s in (52, 79, 208))
              + f" [target: small no slower: "
              f"{'met' if max(times[method, 52], times[method, 79]) <= ref else 'MISSED'}]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["auto", "grid", "large", "solvers", "small", "all"],
                        default="all")
    parser.add_argument("--sizes", type=int, nargs="*", default=[20, 30, 50, 75, 100, 150])
    args = parser.parse_args()
    for solver in ("active_set", "nordic0_smo"):  # imports, and the compiled loop's load
        timed(NordicProblem(*nonlinear(30, 3), 1.0, method="nordic0"), solver)
    print(f"{os.cpu_count()} shared cores, BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}, "
          f"load {load():.1f}")
    for name, run in (("auto", lambda: part_auto(args.sizes)), ("grid", part_grid),
                      ("large", part_large), ("solvers", part_solvers),
                      ("small", part_small)):
        if args.part in (name, "all"):
            run()


if __name__ == "__main__":
    main()
