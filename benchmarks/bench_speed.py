"""Speed and memory of the NORDIC solvers against K-1 libsvm fits.

On the paper's nonlinear design (Section 6.1: d = 10, sigma = 1, RBF kernel with
the median-distance width, C = 1) this times, on the same data in one run:

* BSVM: K-1 separate libsvm fits (scikit-learn ``SVC``, precomputed kernel,
  default ``tol``) -- the baseline every ratio is relative to;
* NORDIC-1 with quadprog on the dense dual (only while n(K-1) <= --quadprog-rows);
* NORDIC-1 with the decomposition solver (``solver="decomposition"``);
* linear NORDIC (joint form) in the primal with PIQP (``solver="primal"``);
* NORDIC-0 with the exact active-set solver (``solver="active_set"``), its time
  printed next to its certificate (relative duality gap, largest violation).

and, separately, linear NORDIC at n = 100,000, d = 20, K = 3 with its Bahadur
standard errors (``nordicstats.covariance.BahadurCovariance``).

Peak memory of each step is the larger of the growth of the process's peak
resident set (Linux VmHWM, reset through /proc/self/clear_refs; it includes what
libsvm, quadprog and PIQP allocate in C) and tracemalloc's peak (numpy arrays);
the n x n Gram matrix is built before the steps and is not counted in them (its
size is printed).

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_speed.py
      (--quick for n <= 2,000).  Targets: NORDIC-1 RBF, K = 3, n = 2,000
within 10x of the libsvm time; n = 10,000 under 60 s; linear n = 100,000 fit + SEs
under 10 s.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from nordicstats.data import binary_signs, encode_ordinal  # noqa: E402
from nordicstats.datasets import make_nonlinear  # noqa: E402
from nordicstats.kernels import make_kernel  # noqa: E402
from nordicstats.solvers.problem import NordicProblem  # noqa: E402


def _rss_kib(field):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def measured(fn, *args, **kwargs):
    """(result, seconds, extra peak MB) of one call.

    Memory is the larger of the growth of the peak resident set (counts C
    allocations, but misses memory the allocator reuses) and tracemalloc's peak
    (numpy and Python allocations, traced exactly).
    """
    tracemalloc.start()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset the peak-RSS counter
    except OSError:
        pass
    before = _rss_kib("VmRSS:")
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    seconds = time.perf_counter() - start
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    peak = _rss_kib("VmHWM:")
    extra = (peak - before) / 1024 if (peak is not None and before is not None) else 0.0
    return out, seconds, max(extra, traced)


def libsvm_bsvm(problem):
    """K-1 separate libsvm fits, default tolerance (what a user of SVC gets)."""
    from sklearn.svm import SVC

    for k in range(problem.n_boundaries):
        SVC(C=problem.C, kernel="precomputed").fit(problem.gram, problem.signs[:, k])


def build(n, K, seed):
    X, y = make_nonlinear(n, d=10, sigma=1.0, random_state=seed, K=K)
    X = X.to_numpy()
    codes = encode_ordinal(y).codes
    kernel = make_kernel("rbf", X)
    gram, t_gram, _ = measured(kernel, X, X)
    signs = binary_signs(codes, K)
    rbf = NordicProblem(gram=gram, signs=signs, C=1.0, method="nordic1")
    linear = NordicProblem(gram=None, signs=signs, C=1.0, method="nordic1",
                           noncrossing="joint", X=X)
    return rbf, linear, t_gram


def run_row(n, K, quadprog_rows):
    from nordicstats.solvers.decomposition import solve_dual_decomposition
    from nordicstats.solvers.linear_primal import solve_linear_primal
    from nordicstats.solvers.nordic0 import solve_nordic0_active_set
    from nordicstats.solvers.qp import solve_quadprog

    rbf, linear, t_gram = build(n, K, seed=1000 * K + n)
    _, t_svm, m_svm = measured(libsvm_bsvm, rbf)
    qp, t_qp, m_qp = (None, float("nan"), float("nan"))
    if n * (K - 1) <= quadprog_rows:
        qp, t_qp, m_qp = measured(solve_quadprog, rbf)
    dec, t_dec, m_dec = measured(solve_dual_decomposition, rbf)
    lin, t_lin, m_lin = measured(solve_linear_primal, linear)
    zero, t_zero, _ = measured(solve_nordic0_active_set, dataclasses.replace(rbf,
                                                                             method="nordic0"))
    agree = abs(dec.objective - qp.objective) / abs(qp.objective) if qp is not None else np.nan
    print(f"{n:>6} {K:>2} | {t_gram:7.2f} {8 * n * n / 2**20:7.0f} | {t_svm:7.3f} {m_svm:6.0f} | "
          f"{t_qp:8.2f} {t_qp / t_svm:7.1f} {m_qp:6.0f} | {t_dec:7.2f} {t_dec / t_svm:6.1f} "
          f"{m_dec:6.0f} {dec.iterations:5d} {dec.info['active_noncrossing']:4d} "
          f"{dec.kkt_residual:8.1e} {agree:8.1e} | {t_lin:6.2f} {t_lin / t_svm:6.1f} {m_lin:6.0f} "
          f"{lin.info['rows_added']:5d} | {t_zero:7.2f} {t_zero / t_svm:6.1f} "
          f"{zero.gap:8.1e} {zero.max_violation:8.1e}", flush=True)
    return {"n": n, "K": K, "libsvm": t_svm, "quadprog": t_qp, "decomposition": t_dec,
            "linear": t_lin, "nordic0": t_zero}


def linear_large(n, d, K):
    """Linear NORDIC fit + Bahadur standard errors at large n."""
    from nordicstats.solvers.linear_primal import solve_linear_primal

    X, y = make_nonlinear(n, d=d, sigma=1.0, random_state=7, K=K)
    X = X.to_numpy()
    signs = binary_signs(encode_ordinal(y).codes, K)
    problem = NordicProblem(gram=None, signs=signs, C=1.0, method="nordic1",
                            noncrossing="joint", X=X)
    res, t_fit, m_fit = measured(solve_linear_primal, problem)
    line = (f"linear NORDIC n={n} d={d} K={K}: fit {t_fit:.2f} s (peak +{m_fit:.0f} MB, "
            f"{res.info['rounds']} solve(s), {res.info['rows_added']} noncrossing rows added, "
            f"{res.info['active_noncrossing']} active, gap {res.kkt_residual:.1e})")
    try:
        from nordicstats.covariance import BahadurCovariance
    except ImportError:
        print(line + "; nordicstats.covariance not available", flush=True)
        return
    params = np.vstack([res.intercept[None, :], res.coef])
    cov, t_se, m_se = measured(lambda: BahadurCovariance(X, signs, params).cov)
    total = t_fit + t_se
    print(line + f"; Bahadur SEs {t_se:.2f} s (peak +{m_se:.0f} MB); total {total:.2f} s "
          f"[target < 10 s: {'met' if total < 10 else 'MISSED'}]", flush=True)


def warm_up():
    """Import scikit-learn, quadprog and PIQP and run each once, outside the timings."""
    from nordicstats.solvers.decomposition import solve_dual_decomposition
    from nordicstats.solvers.linear_primal import solve_linear_primal

    rbf, linear, _ = build(60, 3, seed=0)
    libsvm_bsvm(rbf)
    solve_dual_decomposition(rbf)
    solve_linear_primal(linear)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[200, 400, 1000, 2000, 5000, 10000])
    parser.add_argument("--K", type=int, nargs="+", default=[3, 5])
    parser.add_argument("--quadprog-rows", type=int, default=800,
                        help="run quadprog while n(K-1) is at most this (default 800)")
    parser.add_argument("--linear-n", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="n <= 2,000 and linear n = 20,000")
    args = parser.parse_args()
    sizes = [n for n in args.sizes if n <= 2000] if args.quick else args.sizes
    print(f"nordicstats bench_speed on {platform.node()} ({os.cpu_count()} cores, shared with "
          f"other jobs; BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}); paper's nonlinear "
          "design d=10, sigma=1, RBF median width, C=1. Times in s, memory = extra peak MB.")
    print(f"{'n':>6} {'K':>2} | {'gram s':>7} {'gramMB':>7} | {'libsvm':>7} {'MB':>6} | "
          f"{'quadprog':>8} {'ratio':>7} {'MB':>6} | {'decomp':>7} {'ratio':>6} {'MB':>6} "
          f"{'iters':>5} {'phi+':>4} {'gap':>8} {'vs qp':>8} | {'linear':>6} {'ratio':>6} "
          f"{'MB':>6} {'rows':>5} | {'nordic0':>7} {'ratio':>6} {'gap':>8} {'viol':>8}")
    warm_up()
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        for K in args.K:
            for n in sizes:
                rows.append(run_row(n, K, args.quadprog_rows))
    for row in rows:
        if row["K"] == 3 and row["n"] == 2000:
            ratio = row["decomposition"] / row["libsvm"]
            print(f"target NORDIC-1 K=3 n=2000 within 10x of libsvm: ratio {ratio:.1f} "
                  f"[{'met' if ratio <= 10 else 'MISSED'}]")
            ratio0 = row["nordic0"] / row["libsvm"]
            print(f"target NORDIC-0 K=3 n=2000 within 30x of libsvm: ratio {ratio0:.1f} "
                  f"[{'met' if ratio0 <= 30 else 'MISSED'}]")
        if row["K"] == 3 and row["n"] == 10000:
            print(f"target NORDIC-1 K=3 n=10000 under 60 s: {row['decomposition']:.1f} s "
                  f"[{'met' if row['decomposition'] < 60 else 'MISSED'}]")
    linear_large(20_000 if args.quick else args.linear_n, 20, 3)


if __name__ == "__main__":
    main()
