"""Kernel NORDIC solvers against K-1 libsvm fits: time ratios, certificates, peak memory.

Design (the Likert-type design of docs/notes/scaling.md): X ~ N(0, I_5);
latent = X (1, .625, .25, -.125, -.5)' +
sin(2 x_1) + noise; K classes cut at the latent's quantiles; RBF kernel, gamma = 0.2.

* ``balanced``: noise 0.7 Logistic, K equally frequent classes;
* ``rare``: the same, with 5% of the rows in the top class;
* ``overlap``: heavy class overlap, logistic noise with standard deviation 3.

For each (design, n, K, C) one run times, on the same data and one after the other,

* the K-1 libsvm fits (scikit-learn ``SVC(C=C, gamma=0.2)`` on "class > k", default
  tolerance, 200 MB kernel cache) -- the baseline of every ratio;
* each method through the public API: ``NORDIC(y, X, method=..., kernel="rbf",
  gamma=0.2, C=C).fit(cov_type="none")`` (NORDIC-1 with ``solver="auto"``, i.e.
  ``smo``; ``nordic1_no_polish``: the same without its active-set polishing;
  ``nordic1_no_shrink``: without its shrinking;
  ``decomposition``: NORDIC-1 with the previous solver; ``nordic0``: the
  active-set solver, kernel rows on demand above 4,096 rows; ``nordic0_dense``: the
  same with the dense Gram matrix formed first; ``nordic0_one_pass``: the active set
  without its coarse first pass, as before), with its status, relative duality gap
  and largest violation, and the peak memory of the fit (growth of the peak resident set
  or tracemalloc's peak, whichever is larger: ``bench_speed.measured``).

``--part grid`` times the paper's 27-point grid (gamma at the 10/50/90% distance
quantiles x C = 2^-4..2^4) at one n and K: NORDIC-1 warm-started along C against 27
sets of K-1 libsvm fits.  Rows are appended to ``benchmarks/results/kernel_solvers.csv``.

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernel_solvers.py \\
          --n 1000 5000 --K 3 5 7 --C 0.0625 1 16
Targets: NORDIC-1 and NORDIC-0 <= 5x the K-1 libsvm fits (K = 3, 5, 7, C in 2^-4..2^4,
n = 1,000, 5,000, 20,000); the 27-point grid at n = 5,000, K = 5 <= 10x.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from bench_speed import measured  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from nordicstats import NORDIC  # noqa: E402
from nordicstats.data import binary_signs  # noqa: E402
from nordicstats.kernels import gamma_candidates  # noqa: E402
from nordicstats.tuning import PAPER_C_GRID, PAPER_WIDTH_QUANTILES  # noqa: E402

GAMMA = 0.2
BETA = np.array([1.0, 0.625, 0.25, -0.125, -0.5])
RESULTS = Path(__file__).parent / "results" / "kernel_solvers.csv"
FIELDS = ["date", "part", "design", "n", "K", "C", "method", "solver", "status", "seconds",
          "libsvm_seconds", "ratio", "gap", "max_violation", "iterations", "peak_mb",
          "load"]
METHODS = {"nordic1": ("nordic1", "auto"), "nordic1_no_polish": ("nordic1", "auto"),
           "nordic1_no_shrink": ("nordic1", "auto"),
           "decomposition": ("nordic1", "decomposition"),
           "nordic0": ("nordic0", "auto"), "nordic0_dense": ("nordic0", "auto"),
           "nordic0_one_pass": ("nordic0", "auto")}
# solver options per method (nordic0_one_pass: the active set without its coarse first pass;
# nordic1_no_polish: the SMO loop without its active-set polishing; nordic1_no_shrink:
# without its shrinking)
METHOD_OPTIONS = {"nordic0_one_pass": {"coarse_tol": 1e-8}, "nordic1_no_polish": {"polish": False},
                  "nordic1_no_shrink": {"shrinking": False}}
# methods fitted with the dense Gram matrix formed first, whatever n (the comparison of
# kernel rows on demand with the stored matrix)
DENSE_GRAM_METHODS = ("nordic0_dense",)


def design(name, n, K, seed=0):
    """(X, codes) of one design (module docstring)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    # a logistic of scale s has sd s pi / sqrt(3)
    scale = 3.0 * np.sqrt(3.0) / np.pi if name == "overlap" else 0.7
    latent = X @ BETA + np.sin(2 * X[:, 0]) + scale * rng.logistic(size=n)
    levels = np.linspace(0, 0.95, K)[1:] if name == "rare" else np.linspace(0, 1, K + 1)[1:-1]
    return X, np.searchsorted(np.quantile(latent, levels), latent)


def libsvm_fits(X, codes, K, C, gamma=GAMMA):
    """K-1 separate libsvm fits on "class > k" (what a user of SVC gets)."""
    signs = binary_signs(codes, K)
    for k in range(K - 1):
        SVC(C=C, gamma=gamma).fit(X, signs[:, k])


def fit_nordic(X, codes, method, solver, C, gamma=GAMMA, dense_gram=False, **options):
    model = NORDIC(codes, X, method=method, kernel="rbf", gamma=gamma, C=C, solver=solver)
    if dense_gram:
        model.gram  # noqa: B018 - a formed Gram matrix is used instead of rows on demand
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the status is reported in the row
        return model.fit(cov_type="none", **options).solver_result


def _row(part, name, n, K, C, method, result, seconds, base, peak):
    return {"date": datetime.date.today().isoformat(), "part": part, "design": name, "n": n,
            "K": K, "C": C, "method": method, "solver": result.solver, "status": result.status,
            "seconds": round(seconds, 4), "libsvm_seconds": round(base, 4),
            "ratio": round(seconds / base, 2), "gap": f"{result.gap:.2e}",
            "max_violation": f"{result.max_violation:.2e}", "iterations": result.iterations,
            "peak_mb": round(peak, 1), "load": round(os.getloadavg()[0], 2)}


def run_cases(args):
    rows = []
    for name in args.designs:
        for n in args.n:
            for K in args.K:
                X, codes = design(name, n, K)
                for C in args.C:
                    _, base, _ = measured(libsvm_fits, X, codes, K, C)
                    for method in args.methods:
                        m, solver = METHODS[method]
                        result, seconds, peak = measured(fit_nordic, X, codes, m, solver, C,
                                                         dense_gram=method in DENSE_GRAM_METHODS,
                                                         **METHOD_OPTIONS.get(method, {}))
                        row = _row("cases", name, n, K, C, method, result, seconds, base, peak)
                        rows.append(row)
                        _print(row)
    return rows


def run_grid(args):
    """The 27-point grid: NORDIC-1 warm-started along C per width, against libsvm per point."""
    name, n, K = args.designs[0], args.n[0], args.K[0]
    X, codes = design(name, n, K)
    gammas = gamma_candidates(X, PAPER_WIDTH_QUANTILES)
    base = nordic = 0.0
    worst = None
    for gamma in gammas:
        previous = None
        for C in PAPER_C_GRID:
            base += measured(libsvm_fits, X, codes, K, C, gamma)[1]
            options = {} if previous is None else {
                "warm_start": {**previous[0].multipliers, "C": previous[1]}}
            result, seconds, _ = measured(fit_nordic, X, codes, "nordic1", "auto", C, gamma,
                                          **options)
            nordic += seconds
            previous = (result, C)
            if worst is None or result.gap > worst.gap:
                worst = result
    row = _row("grid27", name, n, K, float("nan"), "nordic1", worst, nordic, base, 0.0)
    _print(row)
    return [row]


def _print(row):
    print(f"{row['part']:7s} {row['design']:8s} n={row['n']:6d} K={row['K']} C={row['C']:<7g} "
          f"{row['method']:13s} {row['seconds']:9.3f}s libsvm {row['libsvm_seconds']:8.3f}s "
          f"ratio {row['ratio']:7.2f}  {row['status']:10s} gap {row['gap']} "
          f"viol {row['max_violation']} steps {row['iterations']} peak {row['peak_mb']} MB "
          f"load {row['load']}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("cases", "grid"), default="cases")
    parser.add_argument("--designs", nargs="+", default=["balanced"],
                        choices=("balanced", "rare", "overlap"))
    parser.add_argument("--n", nargs="+", type=int, default=[1000])
    parser.add_argument("--K", nargs="+", type=int, default=[3, 5, 7])
    parser.add_argument("--C", nargs="+", type=float, default=list(PAPER_C_GRID))
    parser.add_argument("--methods", nargs="+", default=["nordic1"], choices=sorted(METHODS))
    parser.add_argument("--no-store", action="store_true", help="do not append to the CSV")
    args = parser.parse_args()
    print(f"# {platform.platform()}, python {platform.python_version()}, "
          f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")
    fit_nordic(*design("balanced", 60, 3), "nordic1", "auto", 1.0)  # compile the SMO loop
    start = time.perf_counter()
    rows = run_grid(args) if args.part == "grid" else run_cases(args)
    print(f"# {time.perf_counter() - start:.0f} s")
    if not args.no_store:
        new = not RESULTS.exists()
        with RESULTS.open("a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=FIELDS)
            if new:
                writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
