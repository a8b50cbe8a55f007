"""Cost-sensitive NORDIC: does training with the scoring cost lower the weighted error?

Not a timed test: run ``nice python -m benchmarks.bench_weights [--reps 50] [--n-jobs 1]``.

Part 1 (paired comparison).  On the paper's donut (sigma = 0.4, d = 10 and 50; n = 100
training, 100 tuning, 10,000 test points; cost matrix ``DONUT_COSTS``) and the balance
scale (n = 79 and 208 training and tuning rows, the rest for testing; ``BALANCE_COSTS``),
NORDIC-1 and NORDIC-2 are tuned on the tuning set by the weighted error and scored by the
weighted error on the test set, once with unit costs and once trained with the scoring
cost (``run_study(..., cost="train")``).  Both runs use the same replication seeds, so
the per-replication differences (cost-trained minus unit-cost) are paired; their mean,
standard error sd / sqrt(R) and t = mean / SE are reported.  To fit the run into a
shared two-core machine the tuning grid is smaller than the paper's: C in 2^-4, 2^-2,
..., 2^4 (every other point) with the RBF width fixed at the median pairwise distance
(the paper's default rule), and the donut's test sets have 2,000 points (``--test-size``;
the paper: 10,000).  Both arms use the same grid, so the comparison stays paired and fair.

Note: ``BALANCE_COSTS`` (2 for L <-> R, 1 otherwise) is the absolute-error matrix
|l - j|, whose increments are all 1, so cost training is exactly the unit-cost fit there:
the balance-scale differences must be 0 and are a check of the machinery.

Part 2 (coverage).  Linear NORDIC-1 (joint constraints, C = 1) trained with a cost matrix
on the ``parallel`` Gaussian design of ``benchmarks/mc_coverage.py``.  Boundary k's
target is the minimiser of the weighted hinge risk E[c_k(Y) (1 - Y^(k) x~'beta)_+],
c_k(l) = |cost[l, k+1] - cost[l, k]|, i.e. the population SVM of the mixture with
component weights p_l c_k(l) (``nordicstats.theory.population_svm``).  Coverage of
the 95% Bahadur intervals is reported for that target and, for contrast, for the
unweighted population SVM (which the intervals are not about).

Results: ``benchmarks/results/weights_{donut,balance}_{unit,cost}.jsonl`` (study rows,
resumable),
``weights_paired.csv``, ``weights_coverage.csv`` and ``weights_summary.txt``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from nordicstats.costs import cost_to_boundary_weights  # noqa: E402
from nordicstats.metrics import BALANCE_COSTS, DONUT_COSTS  # noqa: E402
from nordicstats.theory import population_svm  # noqa: E402
from studies.experiments import (  # noqa: E402
    Method,
    balance_scale_design,
    run_study,
    simulation_design,
)

RESULTS = Path(__file__).parent / "results"
C_GRID = tuple(2.0 ** np.arange(-4, 5, 2))
METHODS = [Method("NORDIC-1", "nordic1"), Method("NORDIC-2", "nordic2")]
COVERAGE_COST = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 1.0], [4.0, 2.0, 0.0]])
S = np.array([[1.0, 0.4], [0.4, 1.0]])
PRIORS = (0.3, 0.4, 0.3)
MEANS = np.array([[-1.5, -0.5], [0.0, 0.0], [1.5, 0.5]])


def study(reps, n_jobs, test_size, balance_reps):
    """Unit-cost and cost-trained runs of every (design, method); returns the paired table."""
    groups = [
        ("donut", [simulation_design("donut", d, 0.4, n_test=test_size) for d in (10, 50)],
         DONUT_COSTS, reps),
        ("balance", [balance_scale_design(n) for n in (79, 208)], BALANCE_COSTS, balance_reps),
    ]
    frames = []
    for group, designs, costs, n_reps in groups:
        for label, cost in (("unit", None), ("cost", "train")):
            rows = run_study(designs, METHODS, n_reps, seed=2026, n_jobs=n_jobs, scoring=costs,
                             costs=costs, C_grid=C_GRID, width_quantiles=(0.5,), cost=cost,
                             path=RESULTS / f"weights_{group}_{label}.jsonl",
                             progress=False)
            frames.append(rows.assign(training=label))
    table = pd.concat(frames, ignore_index=True)
    failed = table[table["status"] != "ok"]
    if len(failed):
        print(f"{len(failed)} failed tasks; first: {failed['message'].iloc[0]}")
    wide = table[table["status"] == "ok"].pivot_table(
        index=["design", "method", "rep"], columns="training", values="weighted_error")
    diff = (wide["cost"] - wide["unit"]).rename("diff").reset_index()
    out = []
    for (design, method), g in diff.groupby(["design", "method"], sort=False):
        d = g["diff"].to_numpy()
        base = wide.loc[(design, method)]
        se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.nan
        out.append({"design": design, "method": method, "reps": d.size,
                    "unit": base["unit"].mean(), "cost_trained": base["cost"].mean(),
                    "mean_diff": d.mean(), "se": se,
                    "t": d.mean() / se if se > 0 else np.nan,
                    "share_better": np.mean(d < 0), "share_worse": np.mean(d > 0)})
    return pd.DataFrame(out)


def weighted_truths(cost):
    """beta_k* of the cost-weighted hinge risk and of the unweighted one, (1 + d, K-1) each."""
    K = len(PRIORS)
    inc = cost_to_boundary_weights(cost)  # inc[l, k] = c_k(l)
    weighted, plain = [], []
    for k in range(K - 1):
        sign = [1.0 if c > k else -1.0 for c in range(K)]
        comps = [(PRIORS[c] * inc[c, k], MEANS[c], S, sign[c]) for c in range(K) if inc[c, k]]
        weighted.append(population_svm(comps)["beta"])
        plain.append(population_svm([(PRIORS[c], MEANS[c], S, sign[c])
                                     for c in range(K)])["beta"])
    return np.column_stack(weighted), np.column_stack(plain)


def coverage(sizes, reps, seed=7):
    """Coverage of 95% Bahadur intervals of cost-trained linear NORDIC-1."""
    from nordicstats.model import NORDIC

    target, plain = weighted_truths(COVERAGE_COST)
    z = stats.norm.ppf(0.975)
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        hit_w, hit_p, done = 0.0, 0.0, 0
        for _ in range(reps):
            codes = rng.choice(len(PRIORS), size=n, p=PRIORS)
            X = rng.normal(size=(n, 2)) @ np.linalg.cholesky(S).T + MEANS[codes]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = NORDIC(codes, X, kernel="linear", C=1.0, cost=COVERAGE_COST).fit()
            est, se = res.params.to_numpy(), res.bse.to_numpy()
            if not np.all(np.isfinite(se)):
                continue
            hit_w = hit_w + (np.abs(est - target) <= z * se)
            hit_p = hit_p + (np.abs(est - plain) <= z * se)
            done += 1
        for k in range(target.shape[1]):
            for j, term in enumerate(["intercept", "x1", "x2"]):
                rows.append({"n": n, "boundary": k, "term": term, "reps": done,
                             "target": target[j, k], "unweighted_svm": plain[j, k],
                             "coverage_weighted_target": hit_w[j, k] / done,
                             "coverage_unweighted_svm": hit_p[j, k] / done})
    return pd.DataFrame(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--coverage-reps", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--test-size", type=int, default=2000)
    parser.add_argument("--balance-reps", type=int, default=None,
                        help="replications of the balance scale (default --reps); its cost "
                             "matrix is |l - j|, so both arms are the same fit there")
    parser.add_argument("--skip-study", action="store_true")
    parser.add_argument("--skip-coverage", action="store_true",
                        help="reuse weights_coverage.csv (e.g. computed by another run)")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    lines = [f"bench_weights.py  reps={args.reps} (balance {args.balance_reps or args.reps})  "
             f"coverage reps={args.coverage_reps}  "
             f"load average at start {os.getloadavg()[0]:.2f}"]
    if not args.skip_study:
        start = time.perf_counter()
        paired = study(args.reps, args.n_jobs, args.test_size,
                       args.reps if args.balance_reps is None else args.balance_reps)
        paired.to_csv(RESULTS / "weights_paired.csv", index=False)
        lines += ["", "Weighted test error, cost-trained minus unit-cost (paired over reps):",
                  paired.to_string(index=False, float_format=lambda v: f"{v:.4f}"),
                  f"({time.perf_counter() - start:.0f} s, load {os.getloadavg()[0]:.2f})"]
    start = time.perf_counter()
    if args.skip_coverage:
        cov = pd.read_csv(RESULTS / "weights_coverage.csv")
        args.coverage_reps = int(cov["reps"].max())
    else:
        cov = coverage(args.sizes, args.coverage_reps)
        cov.to_csv(RESULTS / "weights_coverage.csv", index=False)
    sd = np.sqrt(0.95 * 0.05 / args.coverage_reps)
    lines += ["", f"Coverage of 95% Bahadur intervals, cost-trained linear NORDIC-1, cost "
                  f"{COVERAGE_COST.tolist()} (binomial sd {sd:.3f}):",
              cov.to_string(index=False, float_format=lambda v: f"{v:.3f}"),
              f"({time.perf_counter() - start:.0f} s, load {os.getloadavg()[0]:.2f})"]
    text = "\n".join(lines)
    name = "weights_coverage.txt" if args.skip_study else "weights_summary.txt"
    (RESULTS / name).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
