"""Run, resume and report the paper's three studies (Sections 6.1, 6.2 and 7).

Studies (:data:`studies.replication.STUDIES`):

* ``nonlinear`` (Section 6.1): sigma in {0.5, 1, 1.5} x d in {10, 20, 30, 40, 50};
  100 training, 100 tuning and 10,000 test points; NORDIC-0/1/2, BSVM, DR, CK;
  tuned and scored by the test error; 100 replications.
* ``donut`` (Section 6.2): sigma in {0.2, 0.4, 0.6} x d in {10, 25, 40, 55, 75}; the same
  sizes and methods; tuned by the error, the weighted error (DONUT_COSTS) also recorded.
* ``balance`` (Section 7): n in {52, 79, 125, 208}, 100 stratified splits, the six methods
  plus SVR and the ordered logit; tuned and scored by the weighted error (BALANCE_COSTS).

Deviation studies (:data:`studies.replication.DEVIATION_STUDIES`; same seeds as the main
studies, so their rows pair with the main rows): ``donut_variance`` (the donut's noise read as a
variance), ``donut_weighted_tuning`` (the donut tuned by its weighted error),
``balance_error_tuning`` (the balance scale tuned by the plain error), ``balance_svr_scaled``
(SVR with e1071's default scaling), and ``ties`` (balance splits refit
with ties of the tuning criterion broken to the largest instead of the smallest C; rows to
``deviation_ties.csv``).  The report's "Deviations from the paper" reads them::

    nice -n 19 python -m benchmarks.paper_studies donut_variance --reps 30 --n-jobs 1
    nice -n 19 python -m benchmarks.paper_studies donut_weighted_tuning --reps 30 --n-jobs 1
    nice -n 19 python -m benchmarks.paper_studies balance_error_tuning --reps 30 --n-jobs 2
    nice -n 19 python -m benchmarks.paper_studies balance_svr_scaled --reps 100 --n-jobs 1
    nice -n 19 python -m benchmarks.paper_studies ties --reps 50 --n-jobs 1

Every method is tuned on the tuning set over C in 2^-4..2^4 and the widths at the 10/50/90%
pairwise-distance quantiles.  Rows are appended to ``benchmarks/results/<study>.jsonl`` as they
finish; rerunning the same command resumes (finished rows are skipped; failed rows are
retried and keep their row until then).  Tasks run replication by replication, cheapest
designs first; the methods in ``--defer`` (default none) run after all the other methods'
rows, so those accumulate first.

Run from the repository root::

    nice -n 19 python -m benchmarks.paper_studies balance --reps 100 --n-jobs 2
    python -m benchmarks.paper_studies report        # figures + REPLICATION.md from the rows

Prints the wall time, the task seconds per method and the load average, and appends one
row per invocation to ``<results>/runs.csv`` (date, study, replications, workers, rows
before and after, wall seconds, load before and after, whether every cell is complete);
``report`` lists the from-scratch complete runs as end-to-end timings.  To measure a
protocol, run it into an empty folder and copy its ``runs.csv`` row into
``benchmarks/results/runs.csv``::

    python -m benchmarks.paper_studies balance --reps 100 --n-jobs 2 --results /tmp/b \
        --no-figures --no-progress
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from nordicstats import metrics  # noqa: E402
from nordicstats.tuning import (  # noqa: E402
    PAPER_C_GRID,
    PAPER_WIDTH_QUANTILES,
    default_grid,
    tune,
)
from studies.experiments import (  # noqa: E402
    balance_scale_design,
    load_results,
    read_rows,
    replication_seeds,
    run_study,
    simulation_design,
)
from studies.replication import (  # noqa: E402
    DEVIATION_STUDIES,
    STUDIES,
    draw_figures,
    replication_report,
    study_spec,
    timing_summary,
)

RESULTS = Path(__file__).resolve().parent / "results"
RUNS_FILE = "runs.csv"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", choices=[*STUDIES, *DEVIATION_STUDIES, "ties", "report"],
                        help="study to run (a paper study, a deviation study or 'ties', the "
                             "tie-breaking measurement), or 'report' (figures and "
                             "REPLICATION.md only)")
    parser.add_argument("--reps", type=int, default=100, help="replications (paper: 100)")
    parser.add_argument("--methods", nargs="+", default=None, help="subset of the methods")
    parser.add_argument("--defer", nargs="*", default=[],
                        help="methods run after all rows of the others")
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="balance: n values")
    parser.add_argument("--dims", type=int, nargs="+", default=None, help="simulations: d")
    parser.add_argument("--sigmas", type=float, nargs="+", default=None)
    parser.add_argument("--n-train", type=int, default=100)
    parser.add_argument("--n-tune", type=int, default=100)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--c-exponents", type=int, nargs="+", default=None,
                        help="C grid as powers of 2 (default -4..4)")
    parser.add_argument("--quantiles", type=float, nargs="+", default=None,
                        help="width quantiles (default 0.1 0.5 0.9)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--minutes", type=float, default=None,
                        help="start no new task after this many minutes (resume later)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of the rows")
    parser.add_argument("--no-figures", action="store_true")
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args(argv)


def _designs(spec, args):
    designs = spec.designs(args.n_train, args.n_tune, args.n_test)
    if spec.kind == "balance":
        return designs if args.sizes is None else replace(
            spec, axis=tuple(sorted(args.sizes))).designs()
    if args.dims or args.sigmas:  # other grids than the paper's (smoke tests)
        dims = args.dims or sorted({d for d, _ in spec.axis})
        sigmas = args.sigmas or sorted({s for _, s in spec.axis})
        return [simulation_design(spec.kind, d, s, args.n_train, args.n_tune, args.n_test)
                for d in dims for s in sigmas]
    return designs


def run(args):
    """Run or resume one study; returns its rows."""
    spec = study_spec(args.study)
    methods = [m for m in spec.methods if args.methods is None or m in args.methods]
    designs = _designs(spec, args)
    path = args.results / spec.file
    path.parent.mkdir(parents=True, exist_ok=True)
    options = dict(seed=spec.seed, path=path, n_jobs=args.n_jobs,
                   scoring=spec.scoring_value(), costs=spec.cost_matrix(),
                   C_grid=PAPER_C_GRID if args.c_exponents is None
                   else tuple(2.0 ** e for e in args.c_exponents),
                   width_quantiles=tuple(args.quantiles or PAPER_WIDTH_QUANTILES),
                   progress=not args.no_progress)
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    deferred = [m for m in methods if m in args.defer]
    phases = [[(d.name, m) for d in designs for m in deferred]] if deferred else []
    table = None
    for exclude in [*phases, []]:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            break
        table = run_study(designs, spec.method_objects(methods), args.reps, exclude=exclude,
                          time_limit=left, **options)
    return table


def print_summary(table, spec, start, load_before, run_rows):
    methods = list(spec.methods)
    ok = table[table["status"] == "ok"]
    print(f"\n{len(table)} rows ({len(ok)} ok); wall time of this run "
          f"{time.perf_counter() - start:.0f} s; load average before {load_before}, "
          f"after {tuple(round(x, 2) for x in os.getloadavg())}")
    failed = table.assign(failed=table["status"] != "ok").pivot_table(
        index="design", columns="method", values="failed", aggfunc="sum", sort=False)
    if failed.to_numpy().sum():
        print("\nFailed rows per cell:")
        print(failed.reindex(columns=methods).to_string())
    if run_rows is not None and len(run_rows):
        per = run_rows.groupby("method")["total_time"].agg(["count", "sum", "mean"])
        print("\nTask seconds per method in this run (count, total, mean per task):")
        print(per.reindex(methods).dropna().round(2).to_string())
    timing = timing_summary(table, spec)
    print(f"\nOne replication of every cell: {timing['per_replication']:.0f} task-seconds "
          f"({timing['cpu_per_replication']:.0f} CPU seconds); 100 replications on 2 workers: "
          f"~{timing['wall_minutes']:.0f} min wall at the load above, ~"
          f"{timing['idle_minutes']:.0f} min on idle cores (target "
          f"{timing['target_minutes']:g} min)")
    print("\nMean task seconds per design and method (all rows):")
    print(ok.pivot_table(index="design", columns="method", values="total_time", sort=False)
          .reindex(columns=methods).round(2).to_string())


def _rows(path):
    return load_results(path) if path.exists() and path.stat().st_size else None


def build_report(results, figures=False):
    """REPLICATION.md's text from the rows in the folder ``results`` (figures saved there)."""
    tables = {}
    for name, spec in STUDIES.items():
        tables[name] = _rows(results / spec.file)
        if tables[name] is not None and figures:
            draw_figures(name, tables[name], results)
    deviations = {name: _rows(results / spec.file) for name, spec in DEVIATION_STUDIES.items()}
    paired, runs, ties = (results / "weights_paired.csv", results / RUNS_FILE,
                          results / TIES_FILE)
    return replication_report(tables, pd.read_csv(paired) if paired.exists() else None,
                              pd.read_csv(runs) if runs.exists() else None, deviations,
                              pd.read_csv(ties) if ties.exists() else None)


def report(args):
    """Figures and REPLICATION.md from every study's stored rows."""
    import matplotlib

    matplotlib.use("Agg")
    text = build_report(args.results, figures=not args.no_figures)
    (args.results / "REPLICATION.md").write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.results / 'REPLICATION.md'}")
    return text


#: The tie-breaking measurement: balance-scale sizes and methods (the SVMs whose tuning
#: sets of n points leave many grid points tied on the weighted error).
TIE_SIZES = (52, 208)
TIE_METHODS = ("NORDIC-1", "NORDIC-2", "BSVM", "CK")
TIES_FILE = "deviation_ties.csv"


def largest_c_among_ties(scores, grid):
    """Row of ``scores`` chosen when ties go to the largest C (then the middle width)."""
    values = scores["score"].to_numpy(dtype=float)
    best = np.nanmin(values[np.isfinite(values)])
    tied = np.flatnonzero(values <= best + 1e-12 * max(1.0, abs(best)))
    middle = (len(grid["gamma"]) - 1) / 2

    def key(row):
        return (-float(scores["C"].iloc[row]),
                abs(grid["gamma"].index(scores["gamma"].iloc[row]) - middle))

    return int(min(tied, key=key)), int(tied.size)


def tie_row(n, label, rep):
    """One balance split tuned once, refit with ties to the smallest and to the largest C.

    The split and the tuning are those of the stored balance row (same seed), so the
    smallest-C refit reproduces the stored weighted error.
    """
    spec = STUDIES["balance"]
    split = balance_scale_design(n).sample(replication_seeds(spec.seed, rep)[0])
    method = spec.method_objects([label])[0]
    grid = default_grid(method.factory, split.X_train)
    costs = spec.cost_matrix()
    res = tune(method.factory, split.X_train, split.y_train, param_grid=grid,
               X_tune=split.X_tune, y_tune=split.y_tune, scoring=costs, refit=False)
    largest, tied = largest_c_among_ties(res.scores, grid)
    row = {"design": f"n={n}", "n": n, "method": label, "rep": rep, "tied": tied}
    for rule, index in (("smallest", res.best_index), ("largest", largest)):
        params = {name: res.scores[name].iloc[index] for name in grid}
        pred = method.factory(**params).fit(split.X_train, split.y_train).predict(split.X_test)
        row[f"C_{rule}"] = float(params["C"])
        row[f"weighted_error_{rule}"] = metrics.weighted_error(split.y_test, pred, costs)
    return row


def run_ties(args):
    """Tie-breaking measurement (``ties``): rows to ``<results>/deviation_ties.csv``."""
    from joblib import Parallel, delayed

    tasks = [(n, m, r) for r in range(args.reps) for n in (args.sizes or TIE_SIZES)
             for m in (args.methods or TIE_METHODS)]
    rows = Parallel(n_jobs=args.n_jobs)(delayed(tie_row)(*task) for task in tasks)
    table = pd.DataFrame.from_records(rows)
    args.results.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.results / TIES_FILE, index=False)
    print(table.groupby(["design", "method"])[["tied", "weighted_error_smallest",
                                                "weighted_error_largest"]].mean())
    return table


def main(argv=None):
    args = parse_args(argv)
    if args.study == "report":
        return report(args)
    if args.study == "ties":
        return run_ties(args)
    load_before = tuple(round(x, 2) for x in os.getloadavg())
    print(f"load average {load_before}; {os.cpu_count()} cores; OMP/OPENBLAS threads = "
          f"{os.environ['OMP_NUM_THREADS']}; n_jobs = {args.n_jobs}")
    spec = study_spec(args.study)
    path = args.results / spec.file
    before = len(read_rows(path))
    start = time.perf_counter()
    table = run(args)
    wall = time.perf_counter() - start
    rows = pd.DataFrame.from_records(read_rows(path)[before:])
    print_summary(table, spec, start, load_before, rows)
    log_run(args, before, table, wall, load_before[0])
    return table


def log_run(args, rows_before, table, wall_seconds, load_before):
    """Append this invocation to ``<results>/runs.csv`` (see the module docstring)."""
    ok = table[table["status"] == "ok"]
    reps = ok.groupby(["design", "method"])["rep"].nunique()
    spec = study_spec(args.study)
    methods = [m for m in spec.methods if args.methods is None or m in args.methods]
    cells = len(_designs(spec, args)) * len(methods)
    row = pd.DataFrame([{
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "study": args.study,
        "reps": args.reps, "n_jobs": args.n_jobs, "rows_before": rows_before,
        "rows_after": len(table), "wall_seconds": round(wall_seconds, 1),
        "load_before": load_before, "load_after": round(os.getloadavg()[0], 2),
        "complete": bool(len(reps) == cells and reps.min() >= args.reps), "note": ""}])
    path = args.results / RUNS_FILE
    row.to_csv(path, mode="a", header=not path.exists(), index=False)


if __name__ == "__main__":
    main()
