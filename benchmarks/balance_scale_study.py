"""The paper's balance-scale study (Section 7) reproduced with the experiment runner.

Protocol (paper, Section 7): from the 625 balance-scale rows draw n for training, n for
tuning and keep the remaining 625 - 2n for testing, class proportions preserved
(:func:`nordicstats.datasets.stratified_split`); n = 52, 79, 125, 208; repeat over random
splits (the paper: 100).  Every method uses the Gaussian kernel and is tuned on the tuning
set over C in 2^-4..2^4 and the widths at the 10/50/90% quantiles of the training pairwise
distances, by the weighted error with cost 2 for L <-> R and 1 for any other error
(:data:`nordicstats.metrics.BALANCE_COSTS`), which is also the reported test measure.
Methods: NORDIC-0, NORDIC-1, NORDIC-2, BSVM, DR, CK, SVR (cut-offs 1.5, 2.5) and the
ordered logit (OLR, no tuning parameter).

Prints the mean and standard error of the weighted error per n and method, the paired
differences to NORDIC-2, the paper's confusion view (share of class-l test points classified
to class k), the rows that failed, the time per task, and saves two figures.

Rows go to a JSON-lines file as they finish; running the script again with the same seed
resumes.  ``--minutes`` stops starting new tasks after that much wall time; every summary
cell uses the replications finished for it (the counts are printed).  Tasks run
replication by replication, largest n first, so long fits start early.

Run:  ``python benchmarks/balance_scale_study.py --reps 100 --n-jobs 2``
(defaults: 10 replications, 2 workers).  One-thread BLAS is set below; the machine has 2
cores shared with other jobs, so wall times depend on the load printed at the top.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from nordicstats.experiments import (  # noqa: E402
    PAPER_METHODS,
    Method,
    balance_scale_design,
    confusion_summary,
    load_results,
    run_study,
    summarize,
)
from nordicstats.metrics import BALANCE_COSTS  # noqa: E402

SIZES = (52, 79, 125, 208)
METHOD_ORDER = ["NORDIC-0", "NORDIC-1", "NORDIC-2", "BSVM", "DR", "CK", "SVR", "OLR"]
HERE = Path(__file__).resolve().parent


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="random splits (paper: 100)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--methods", nargs="+", default=METHOD_ORDER, choices=METHOD_ORDER)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20170622)
    parser.add_argument("--minutes", type=float, default=None,
                        help="start no new task after this many minutes (resume later)")
    parser.add_argument("--results", type=Path,
                        default=HERE / "results" / "balance_scale_study.jsonl")
    parser.add_argument("--figures", type=Path, default=HERE / "results",
                        help="folder for balance_scale_weighted_error.png and _confusion.png")
    parser.add_argument("--exclude", nargs="*", default=[], metavar="METHOD:N",
                        help="cells not to run, e.g. NORDIC-0:208 (slowest cell)")
    parser.add_argument("--fresh", action="store_true", help="delete earlier rows first")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--report-only", action="store_true",
                        help="summarise the rows already in --results; run nothing")
    return parser.parse_args()


def print_weighted_error(table, methods):
    summary = summarize(table, "weighted_error", by=("n", "method"))
    cells = summary.apply(lambda r: f"{r['mean']:.4f} ({r['se']:.4f})", axis=1).unstack()
    cells = cells.sort_index()
    print("\nWeighted test error, mean (standard error) over splits; cost 2 for L<->R, 1 else")
    print(cells.reindex(columns=methods).to_string())
    means = summary["mean"].unstack().reindex(columns=methods).sort_index()
    print("\nRank of the mean weighted error within each n (1 = best):")
    print(means.rank(axis=1).astype("Int64").to_string())
    return means


def print_paired_differences(table, methods, reference="NORDIC-2"):
    if reference not in methods:
        return
    wide = table.pivot_table(index=["n", "rep"], columns="method", values="weighted_error")
    print(f"\nPaired difference (method - {reference}) in weighted error: mean (se); "
          "positive = worse than " + reference)
    out = {}
    for method in methods:
        if method == reference:
            continue
        diff = (wide[method] - wide[reference]).dropna().groupby(level="n")
        out[method] = diff.apply(
            lambda d: f"{d.mean():+.4f} ({d.std(ddof=1) / np.sqrt(d.size):.4f})")
    print(pd.DataFrame(out).to_string())


def print_confusion(table, methods):
    conf = confusion_summary(table, by=("n", "method"))
    conf["cell"] = conf["true"] + "->" + conf["predicted"]
    wide = conf.pivot_table(index=["n", "method"], columns="cell", values="proportion")
    order = [f"{t}->{p}" for t in "LBR" for p in "LBR"]
    wide = wide[order].sort_index(level="n").reindex(methods, level="method")
    print("\nConfusion (paper's view): share of class-l test points classified to class k, "
          "'l->k'; each true class sums to 1")
    print(wide.round(3).to_string())
    pooled = conf.groupby(["method", "cell"])["proportion"].mean().unstack()[order]
    print("\nAveraged over n:")
    print(pooled.reindex(methods).round(3).to_string())


def print_timing(table, methods):
    timing = table.pivot_table(index="n", columns="method", values="total_time",
                               aggfunc="mean").reindex(columns=methods)
    print("\nMean wall seconds per task (tuning over the 27-point grid + refit + test):")
    print(timing.round(2).to_string())


def save_figures(table, methods, folder):
    import matplotlib

    matplotlib.use("Agg")
    from nordicstats.plotting import plot_confusion_grid, plot_error_by_n

    folder.mkdir(parents=True, exist_ok=True)
    ax = plot_error_by_n(table, metric="weighted_error", x="n", methods=methods)
    ax.set_title("Balance scale: weighted test error over random splits")
    ax.figure.tight_layout()
    ax.figure.savefig(folder / "balance_scale_weighted_error.png", dpi=120)
    fig = plot_confusion_grid(table, x="n", methods=methods)
    fig.suptitle("Balance scale: P(classified k | class l); rows k = L, B, R; columns l")
    fig.tight_layout()
    fig.savefig(folder / "balance_scale_confusion.png", dpi=120)
    return [folder / "balance_scale_weighted_error.png", folder / "balance_scale_confusion.png"]


def main():
    args = parse_args()
    print(f"load average {os.getloadavg()}; {os.cpu_count()} cores shared with other jobs; "
          f"OMP/OPENBLAS threads = {os.environ['OMP_NUM_THREADS']}; n_jobs = {args.n_jobs}")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and args.results.exists():
        args.results.unlink()
    methods = [m for m in METHOD_ORDER if m in args.methods]
    designs = [balance_scale_design(n) for n in sorted(args.sizes, reverse=True)]
    exclude = [(f"n={int(cell.split(':')[1])}", cell.split(":")[0]) for cell in args.exclude]
    if exclude:
        print(f"not run (by --exclude): {args.exclude}")
    start = time.perf_counter()
    if args.report_only:
        table = load_results(args.results)
        wanted = (table["n"].isin(args.sizes) & table["method"].isin(methods)
                  & (table["rep"] < args.reps)
                  & ~pd.Series(list(zip(table["design"], table["method"], strict=True)),
                               index=table.index).isin(exclude))
        table = table[wanted]
    else:
        table = run_study(designs, [Method(m, PAPER_METHODS[m]) for m in methods], args.reps,
                          seed=args.seed, path=args.results, n_jobs=args.n_jobs,
                          scoring=BALANCE_COSTS, costs=BALANCE_COSTS,
                          exclude=exclude,
                          time_limit=None if args.minutes is None else 60 * args.minutes,
                          progress=not args.no_progress)
    wall = time.perf_counter() - start
    if table.empty:
        print("no rows yet")
        return
    print(f"\n{len(table)} rows in {args.results} ({wall:.0f} s wall in this run)")
    failed = table[table["status"] != "ok"]
    if len(failed):
        print(f"\n{len(failed)} failed row(s) (left out of the summaries):")
        print(failed[["n", "method", "rep", "message"]].to_string(index=False))
    counts = table[table["status"] == "ok"].pivot_table(index="n", columns="method",
                                                        values="rep", aggfunc="count")
    print("\nFinished replications per cell (each cell uses all of its own; paired differences "
          "use the replications two methods share):")
    print(counts.reindex(columns=methods).astype("Int64").to_string())
    print_weighted_error(table, methods)
    print_paired_differences(table, methods)
    print_confusion(table, methods)
    print_timing(table, methods)
    for path in save_figures(table, methods, args.figures):
        print(f"saved {path}")
    print(f"\nTotal wall time of this run: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
