"""The paper's three studies (Sections 6.1, 6.2 and 7): specifications, figures, verdicts.

One :class:`StudySpec` per study fixes the designs, the methods, the tuning
criterion, the recorded cost matrix and the study seed, so the script that runs
a study (``benchmarks/paper_studies.py``), the figures and the replication
report all read the same definition.

The paper's claims are tested on the stored rows by
:mod:`studies.replication_claims` (paired differences per cell, equivalence by two
one-sided tests with stated margins, pooled verdicts by replication); the report lists
every claim sentence of Sections 6.1, 6.2 and 7 with its per-cell verdicts.  The
deviations of this replication from the paper are listed with their measured effects
(:data:`DEVIATION_STUDIES`, small studies whose rows pair with the main studies').

The report also states, per study, how far the rows are from the paper's 100
replications, the solver certificates (refits not certified optimal, grid fits
that stopped with a :class:`~nordicstats.exceptions.SolverLimitWarning`) and the
timing: the task seconds of one replication of every cell, the projected wall
time of 100 replications on two workers and the study's target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nordicstats import metrics
from studies.experiments import (
    PAPER_METHODS,
    Design,
    Method,
    Split,
    balance_scale_design,
    simulation_design,
    summarize,
)
from studies.plotting import plot_confusion_grid, plot_error_by_dimension, plot_error_by_n
from studies.replication_claims import (
    NOT_MEASURED,
    SECTION6,
    SECTION7,
    ClaimTest,
    study_claims,
    verdict,
)
from studies.replication_deviations import deviation_lines

__all__ = ["STUDIES", "DEVIATION_STUDIES", "StudySpec", "study_spec", "evaluate_claims",
           "replication_report", "timing_summary", "draw_figures", "measured_runs"]

EIGHT = (*SECTION7, "OLR")
#: The donut's five dimensions (the paper: "d range from 10 to 75").
DONUT_DIMENSIONS = (10, 25, 40, 55, 75)
NONLINEAR_DIMENSIONS = (10, 20, 30, 40, 50)
PAPER_REPLICATIONS = 100
WORKERS = 2  # the machine the wall-time targets refer to


@dataclass(frozen=True)
class StudySpec:
    """One of the paper's studies: grid of designs, methods and criteria."""

    name: str
    kind: str  # "nonlinear", "donut" or "balance"
    axis: tuple  # the design values: sizes n, or (d, sigma) pairs
    methods: tuple
    costs: str | None  # name in nordicstats.metrics of the recorded cost matrix
    scoring: str  # "error" or the cost-matrix name
    seed: int
    file: str
    target_minutes: float  # wall-time target of the full study on 2 cores
    standardize: bool = False  # balance: covariates standardised by the training moments

    def designs(self, n_train=100, n_tune=100, n_test=10000):
        """The designs, cheapest first (small n; small d)."""
        if self.kind == "balance" and self.standardize:
            return [Design(f"n={int(n)}", standardized_balance_split, {"n": int(n)})
                    for n in self.axis]
        if self.kind == "balance":
            return [balance_scale_design(n) for n in self.axis]
        return [simulation_design(self.kind, d, sigma, n_train, n_tune, n_test)
                for d, sigma in sorted(self.axis)]

    def method_objects(self, methods=None):
        return [EXTRA_METHODS.get(m) or Method(m, PAPER_METHODS[m])
                for m in (methods or self.methods)]

    def cost_matrix(self):
        return None if self.costs is None else getattr(metrics, self.costs)

    def scoring_value(self):
        return "error" if self.scoring == "error" else self.cost_matrix()


STUDIES = {
    "nonlinear": StudySpec("nonlinear", "nonlinear",
                           tuple((d, s) for s in (0.5, 1.0, 1.5) for d in NONLINEAR_DIMENSIONS),
                           tuple(SECTION6), None, "error", 20170601, "nonlinear_study.jsonl", 60),
    "donut": StudySpec("donut", "donut",
                       tuple((d, s) for s in (0.2, 0.4, 0.6) for d in DONUT_DIMENSIONS),
                       tuple(SECTION6), "DONUT_COSTS", "error", 20170602, "donut_study.jsonl", 60),
    "balance": StudySpec("balance", "balance", (52, 79, 125, 208), tuple(EIGHT),
                         "BALANCE_COSTS", "BALANCE_COSTS", 20170622,
                         "balance_scale_study.jsonl", 15),
}


#: Methods of the deviation studies that are not the paper's.
EXTRA_METHODS = {"SVR-scaled": Method("SVR-scaled", "svr", {"scale": True})}
#: The donut's dimensions in the deviation studies (smallest, middle, largest of the grid).
DEVIATION_DIMENSIONS = (10, 40, 75)

#: Small studies that measure the effect of a deviation from the paper.  Their seeds are
#: the main studies' seeds, so replication r draws the same uniforms and normals and
#: the rows pair with the main study's rows of the same replication.
#:
#: * ``donut_variance``: the donut's noise read as a variance (sd = sqrt(sigma)), as the
#:   paper's N_d(0, sigma I) literally says;
#: * ``donut_weighted_tuning``: the donut tuned by its weighted error instead of the error;
#: * ``balance_error_tuning``: the balance scale tuned by the error instead of its weighted
#:   error (the ordered logit, which has nothing to tune, is left out);
#: * ``balance_svr_scaled``: SVR as e1071::svm runs it by default (covariates and response
#:   standardised; the widths from the standardised covariates).
DEVIATION_STUDIES = {
    "donut_variance": StudySpec(
        "donut_variance", "donut",
        tuple((d, float(np.sqrt(s))) for s in (0.2, 0.4, 0.6) for d in DEVIATION_DIMENSIONS),
        tuple(SECTION6), "DONUT_COSTS", "error", 20170602, "deviation_donut_variance.jsonl", 60),
    "donut_weighted_tuning": StudySpec(
        "donut_weighted_tuning", "donut",
        tuple((d, s) for s in (0.2, 0.4) for d in DEVIATION_DIMENSIONS), tuple(SECTION6),
        "DONUT_COSTS", "DONUT_COSTS", 20170602, "deviation_donut_weighted_tuning.jsonl", 60),
    "balance_error_tuning": StudySpec(
        "balance_error_tuning", "balance", (52, 79, 125, 208), SECTION7, "BALANCE_COSTS",
        "error", 20170622, "deviation_balance_error_tuning.jsonl", 15),
    "balance_svr_scaled": StudySpec(
        "balance_svr_scaled", "balance", (52, 79, 125, 208), ("SVR-scaled",),
        "BALANCE_COSTS", "BALANCE_COSTS", 20170622, "deviation_balance_svr_scaled.jsonl", 15,
        standardize=True),
}


def standardized_balance_split(n, random_state=None):
    """Section 7's split with every covariate standardised by its training mean and sd.

    The same split as :func:`~studies.experiments.balance_scale_design` draws; the
    kernel-width grid is then computed on the standardised covariates, as e1071 computes
    its kernel on the data it has scaled.
    """
    split = balance_scale_design(n).sample(random_state)
    center, scale = split.X_train.mean(), split.X_train.std(ddof=1)

    def standardize(X):
        return (X - center) / scale

    return Split(standardize(split.X_train), split.y_train, standardize(split.X_tune),
                 split.y_tune, standardize(split.X_test), split.y_test)


def study_spec(name):
    """The :class:`StudySpec` called ``name`` (a paper study or a deviation study)."""
    specs = {**STUDIES, **DEVIATION_STUDIES}
    if name not in specs:
        raise ValueError(f"The 'study' parameter must be one of {sorted(specs)}. "
                         f"Got {name!r} instead.")
    return specs[name]


def _ok(table):
    return table[table["status"] == "ok"].reset_index(drop=True)


def time_column(table):
    """``"cpu_time"`` (load-independent) when every row recorded it, else ``"total_time"``."""
    if "cpu_time" in table and table["cpu_time"].notna().all():
        return "cpu_time"
    return "total_time"


def evaluate_claims(study, table):
    """The claims of ``study`` on its rows: ``(claims table, per-cell table)``.

    See :mod:`studies.replication_claims` for the tests and the pooling.
    """
    ok = _ok(table)
    if ok.empty:
        return pd.DataFrame(columns=["id", "sentence", "verdict"]), pd.DataFrame(
            columns=["id", "cell", "verdict"])
    return study_claims(study_spec(study).kind, ok)


def _counts(table):
    """Per cell ``"finished ok / failed"`` (failed rows are kept, never dropped)."""
    failed = table["status"] != "ok"
    grouped = table.assign(failed=failed, ok=~failed).groupby(["design", "method"], sort=False)
    cells = grouped.agg(ok=("ok", "sum"), failed=("failed", "sum"))
    text = cells["ok"].astype(int).astype(str) + " / " + cells["failed"].astype(int).astype(str)
    return text.unstack()


def _markdown(frame):
    return frame.to_markdown(floatfmt=".4f")


#: What the report says about how each study's rows were produced.
NOTES = {
    "nonlinear": "Sizes as in the paper: 100 training, 100 tuning and 10,000 test points per "
                 "replication; tuned and scored by the test error.",
    "donut": "The paper gives the donut's dimensions only as \"d from 10 to 75\"; the grid "
             "here is d in {10, 25, 40, 55, 75}.  Tuned by the error; the weighted error "
             "(DONUT_COSTS) is recorded from the same predictions.",
    "balance": "Every split was run on the current code, NORDIC-0 included at every n.  Rows "
               "from an earlier run of this study (older solvers: quadprog for the small "
               "l2 problems, no certificates, NORDIC-0 only at n <= 125 and at most 11 splits) "
               "were discarded rather than mixed in: their timings described the old code and "
               "their fits carried no certificate.",
}


def timing_summary(table, spec):
    """Seconds of one replication of every cell and the projected full-study wall time.

    ``per_replication`` is the sum over (design, method) cells of the mean task
    seconds (wall clock) of the finished rows, ``cpu_per_replication`` the same
    for the tasks' CPU seconds (rows that recorded them).  ``wall_minutes``
    spreads 100 replications over two workers at the load the rows met;
    ``idle_minutes`` does the same with the CPU seconds, i.e. on an otherwise
    idle 2-core machine (perfect parallelism in both).
    """
    ok = _ok(table)
    scale = PAPER_REPLICATIONS / WORKERS / 60.0

    def per_cell(column):
        if column not in ok:
            return pd.Series(dtype=float)
        return ok.dropna(subset=[column]).groupby(["design", "method"])[column].mean()

    wall, cpu = per_cell("total_time"), per_cell("cpu_time")
    complete = cpu.size == wall.size and cpu.size > 0
    load = ok["load"].dropna() if "load" in ok else pd.Series(dtype=float)
    return {"per_replication": float(wall.sum()),
            "by_method": wall.groupby(level="method").sum().reindex(list(spec.methods)).dropna(),
            "wall_minutes": float(wall.sum()) * scale,
            "cpu_per_replication": float(cpu.sum()) if complete else np.nan,
            "cpu_by_method": (cpu.groupby(level="method").sum().reindex(list(spec.methods))
                              .dropna() if complete else pd.Series(dtype=float)),
            "idle_minutes": float(cpu.sum()) * scale if complete else np.nan,
            "target_minutes": spec.target_minutes,
            "load": float(load.mean()) if load.size else np.nan}


def measured_runs(runs, study):
    """The end-to-end measurements of ``study`` in a runs log (``benchmarks/results/runs.csv``).

    The runner appends one row per invocation (``date``, ``study``, ``reps``, ``n_jobs``,
    ``rows_before``, ``rows_after``, ``wall_seconds``, ``load_before``, ``load_after``,
    ``complete``, ``note``); a run *measures the protocol* when it started from an empty
    results folder (``rows_before == 0``) and left every cell with the paper's 100
    replications (``complete``).
    """
    if runs is None or runs.empty:
        return runs
    mask = ((runs["study"] == study) & (runs["rows_before"] == 0) & runs["complete"].astype(bool)
            & (runs["reps"] >= PAPER_REPLICATIONS))
    return runs[mask]


def _timing_lines(table, spec, runs=None):
    t = timing_summary(table, spec)

    def met(minutes):
        return "met" if minutes <= t["target_minutes"] else "NOT met"

    def shares(series):
        return ", ".join(f"{m} {v:.1f}" for m, v in series.items())

    load = ("load not recorded" if not np.isfinite(t["load"])
            else f"mean 1-minute load average {t['load']:.1f} when the tasks finished")
    lines = [f"Target: the full study ({PAPER_REPLICATIONS} replications) in "
             f"{t['target_minutes']:g} min wall on {WORKERS} cores.", "",
             f"* Wall clock at the measured load ({load}; the machine is shared): one "
             f"replication of every cell takes {t['per_replication']:.0f} task-seconds "
             f"({shares(t['by_method'])}), so ~{t['wall_minutes']:.0f} min on {WORKERS} "
             f"workers: **{met(t['wall_minutes'])}** at that load."]
    if np.isfinite(t["idle_minutes"]):
        lines.append(f"* CPU seconds (what the tasks cost on idle cores): "
                     f"{t['cpu_per_replication']:.0f} per replication "
                     f"({shares(t['cpu_by_method'])}), so ~{t['idle_minutes']:.0f} min on "
                     f"{WORKERS} idle cores: **{met(t['idle_minutes'])}**.")
    else:
        lines.append("* CPU seconds: not recorded by every cell's rows yet (not yet measured).")
    measured = measured_runs(runs, spec.name)
    if measured is not None and len(measured):
        for run in measured.itertuples():
            minutes = run.wall_seconds / 60.0
            note = f"; {run.note}" if isinstance(run.note, str) and run.note else ""
            lines.append(f"* Measured end to end ({run.date}): the whole protocol from an empty "
                         f"results folder, {run.rows_after} rows, in {minutes:.1f} min wall on "
                         f"{run.n_jobs} workers (1-minute load {run.load_before:g} before, "
                         f"{run.load_after:g} after{note}): **{met(minutes)}**.")
    else:
        lines.append("* Measured end to end: no from-scratch run of the whole protocol logged "
                     "in runs.csv (not yet measured).")
    return [*lines, ""]


def _certificates(table):
    """Per cell ``"refits not certified / grid fits stopped by a solver limit"``."""
    if "solver_status" not in table:
        return None
    status = table["solver_status"]
    refit = status.notna() & (status != "optimal")
    grid = pd.to_numeric(table.get("solver_warnings"), errors="coerce").fillna(0)
    cells = table.assign(refit=refit, grid=grid).groupby(["design", "method"], sort=False).agg(
        refit=("refit", "sum"), grid=("grid", "sum"))
    text = cells["refit"].astype(int).astype(str) + " / " + cells["grid"].astype(int).astype(str)
    return text.unstack()


def _mean_table(ok, metric, methods):
    """Markdown table of ``mean (SE)`` of ``metric`` per design and method."""
    summary = summarize(ok, metric, by=("design", "method"))
    cells = summary.apply(lambda r: f"{r['mean']:.4f} ({r['se']:.4f})", axis=1).unstack()
    return cells.reindex(columns=list(methods)).to_markdown()


def _claims_lines(name, table):
    """The claims table (one row per claim test) and the per-cell table of a study."""
    summary, cells = evaluate_claims(name, table)
    numbers = ["difference", "se", "margin needed"]
    cells = cells.assign(**{c: [("" if pd.isna(v) else f"{v:.4f}") for v in cells[c]]
                            for c in numbers if c in cells}).astype(object).fillna("")
    return ["### Claims", "",
            "Every result sentence of the section, quoted; \"tested as\" says how the rows "
            "read it, \"cells\" counts the per-cell verdicts (table below), \"pooled by "
            "replication\" is the mean (SE) of the cells' differences averaged within each "
            "replication.", "",
            summary.drop(columns="section").to_markdown(index=False), "",
            "### Claims per cell", "",
            "D = the comparison's paired difference (mean over replications, SE); the "
            "strongest competitor is chosen per cell among the paper's methods; \"margin "
            "needed\": the smallest margin at which the equivalence (or non-inferiority) "
            "would hold.", "",
            cells.to_markdown(index=False), ""]


def _study_lines(name, table, runs=None):
    spec = study_spec(name)
    lines = [f"## {name} ({spec.file})", "", NOTES[spec.kind], ""]
    if table is None or table.empty:
        return [*lines, "No rows yet: not yet measured.", ""]
    ok = _ok(table)
    reps = ok.groupby(["design", "method"])["rep"].nunique()
    missing = set(spec.methods) - set(ok["method"])
    scale = ("the paper's scale" if reps.min() >= PAPER_REPLICATIONS and not missing
             else f"**REDUCED: fewer replications than the paper's {PAPER_REPLICATIONS}"
                  + (f", no rows yet for {sorted(missing)}" if missing else "") + "**")
    lines += [f"{len(table)} rows, {int((table['status'] != 'ok').sum())} failed; replications "
              f"per cell {int(reps.min())}-{int(reps.max())} ({scale}).", "",
              *_claims_lines(name, table)]
    for metric in [m for m in ("error", "weighted_error") if m in ok]:
        lines += [f"### Mean {metric} (SE)", "", _mean_table(ok, metric, spec.methods), ""]
    lines += ["### Timing", "", *_timing_lines(table, spec, runs),
              "Mean task seconds (tuning over the 27-point grid + refit + test):", "",
              _markdown(ok.pivot_table(index="design", columns="method", values="total_time",
                                       sort=False).reindex(columns=list(spec.methods))), "",
              "### Rows per cell (ok / failed)", "",
              _counts(table).reindex(columns=list(spec.methods)).to_markdown(), ""]
    certificates = _certificates(table)
    if certificates is not None:
        lines += ["### Solver certificates", "",
                  "Per cell: refits whose status is not \"optimal\" (e.g. \"gap_limit\": SCIP "
                  "stopped at the requested MIP gap) / fits of the tuning grid or refit that "
                  "stopped with a SolverLimitWarning (not certified).", "",
                  certificates.reindex(columns=list(spec.methods)).to_markdown(), ""]
    return lines


def cost_training_lines(paired):
    """Report section on training with the scoring cost (``benchmarks/bench_weights.py``).

    ``paired`` holds one row per design and method with the paired difference of the
    weighted test error, cost-trained minus unit-cost (``mean_diff``, ``se``, ``reps``);
    the claim checked is that training on the cost lowers the weighted error.
    """
    paired = paired.assign(design=[f"balance {d}" if str(d).startswith("n=") else d
                                   for d in paired["design"]])
    frame = paired.assign(verdict=[verdict(m, s, ClaimTest("smaller")) if s > 0 else
                                   ("identical fits" if m == 0 else NOT_MEASURED)
                                   for m, s in zip(paired["mean_diff"], paired["se"],
                                                   strict=True)])
    columns = ["design", "method", "reps", "unit", "cost_trained", "mean_diff", "se", "verdict"]
    return ["## Training on the scoring cost (weights_paired.csv)", "",
            "Not in the paper: NORDIC fitted with the evaluation's cost matrix as hinge "
            "weights (`NORDIC(..., cost=...)`) against the unit-cost fit, same data and "
            "tuning, scored by the weighted test error; rows from "
            "`python -m benchmarks.bench_weights`.  The claim is that cost training lowers "
            "the weighted error (difference = cost-trained - unit).  On the balance scale "
            "the cost (2 for L <-> R, |l - j| otherwise) has unit increments across every "
            "boundary, so both fits are the same problem.", "",
            frame[columns].to_markdown(index=False, floatfmt=".4f"), ""]


#: How the report reads the paper's words (the margins and thresholds, and why).
METHOD_TEXT = [
    "How the claims are tested.  Every method sees the same data in a replication, and "
    "every design of a study shares the replication's seed, so each claim is a **paired "
    "difference** D over replications (mean and SE = sd / sqrt(R)).  \"A is better than B\" "
    "*holds* when D + 2 SE < 0, *does not hold* when D - 2 SE > 0 and is *within noise* "
    "otherwise.  B, the strongest competitor, is the best method of the cell (by its mean) "
    "among **the paper's methods**; the ordered logit (OLR, not in the paper) is reported "
    "beside them, never chosen as B.  **Pooled** verdicts average the cells' differences "
    "within each replication and take the SE over replications (the cells of one "
    "replication share data), and the table says when a pooled verdict that holds hides "
    "a cell where the claim does not hold.  Equivalences between methods are not pooled "
    "(opposite signs would cancel); they are counted over the cells.",
    "",
    "Equivalence (\"comparable\", \"more or less the same\", \"about 25%\") is tested "
    "by two one-sided tests at 5% each (TOST: the 90% interval D +- 1.645 SE lies inside "
    "+-margin; *does not hold* when it lies outside, *inconclusive* otherwise); "
    "\"among the best\" by the one-sided test D + 1.645 SE < margin.  The margins:",
    "",
    "* **error rates (plain or weighted): 0.02.**  The paper calls gaps of a few points "
    "of weighted error (NORDIC-2 on the donut) an advantage and calls gaps it describes "
    "as \"a very small advantage\" (NORDIC-0/1 over CK and DR) compatible with "
    "\"comparable\"; 2 points lies between the two, and is about a tenth of a typical "
    "error rate here (0.1-0.4).  Each equivalence row also gives the margin at which it "
    "would start to hold, for a reader who prefers another margin.",
    "* **per-class accuracies: 0.05.**  The paper reads them off confusion-matrix panels "
    "to the nearest 5% (\"25%\"); 20-30% is what \"about 25%\" can mean.",
    "* **a class's share of the test set: 0.0025** (0.25 points).  The paper gives the "
    "shares to 0.01 points; a donut with another geometry (e.g. the class-2 ring's "
    "radius 1.95 instead of 2) moves the class-2 share by more than 1 point.",
    "* thresholds: \"almost all correct\" = accuracy above 95%; \"a very difficult "
    "class\" = even the best method's accuracy below 50%.",
    "",
    "Computing times are this package's Python implementation on a shared 2-core machine, "
    "not the paper's R code.",
    "",
]


def replication_report(tables, cost_training=None, runs=None, deviations=None, ties=None):
    """REPLICATION.md text from ``{study name: rows}``; every number computed from the rows.

    ``cost_training`` (optional) is the paired cost-training table of
    :func:`cost_training_lines`, appended as its own section; ``runs`` (optional) the
    runner's log of invocations, whose from-scratch complete runs are reported as
    end-to-end timings (:func:`measured_runs`); ``deviations`` (optional) the rows of
    the :data:`DEVIATION_STUDIES` by name and ``ties`` the tie-breaking rows, from which
    the "Deviations from the paper" section measures each deviation's effect.
    """
    lines = ["# Replication of the paper's Sections 6 and 7", "",
             "Generated by `python -m benchmarks.paper_studies report` from the stored rows "
             "in `benchmarks/results/*.jsonl`; do not edit by hand.  Resume or extend a study "
             "with `python -m benchmarks.paper_studies <study> --reps 100 --n-jobs 2` "
             "(finished rows are skipped).", "", *METHOD_TEXT]
    for name, table in tables.items():
        lines += _study_lines(name, table, runs)
    if deviations is not None:
        ok = {name: _ok(t) for name, t in tables.items() if t is not None and not t.empty}
        lines += deviation_lines(ok, {name: _ok(t) for name, t in deviations.items()
                                      if t is not None and not t.empty}, ties)
    if cost_training is not None:
        lines += cost_training_lines(cost_training)
    return "\n".join(lines)


def draw_figures(study, table, folder=None):
    """The paper's figures for ``study`` from its rows; returns ``{name: Figure}``.

    nonlinear: error and time against d per sigma (SE bars); donut: error and
    weighted error against d per sigma, confusion grid at sigma = 0.4; balance:
    weighted error against n and the confusion grid.  With ``folder`` the
    figures are also saved there as ``<study>_<name>.png``.
    """
    spec, ok = study_spec(study), _ok(table)
    methods = [m for m in spec.methods if m in set(ok["method"])]
    figures = {}
    if spec.kind == "balance":
        ax = plot_error_by_n(ok, metric="weighted_error", x="n", kind="mean", methods=methods)
        figures["weighted_error"] = ax.figure
        figures["confusion"] = plot_confusion_grid(ok, x="n", methods=methods)
    else:
        figures["error"] = plot_error_by_dimension(ok, "error", methods=methods)
        second = time_column(ok) if spec.kind == "nonlinear" else "weighted_error"
        figures[second] = plot_error_by_dimension(ok, second, methods=methods)
        if spec.kind == "donut" and np.isclose(ok["sigma"], 0.4).any():
            figures["confusion_sigma0.4"] = plot_confusion_grid(
                ok[np.isclose(ok["sigma"], 0.4)], x="d", methods=methods)
    for key, fig in figures.items():
        fig.suptitle(f"{study}: {key.replace('_', ' ')} (mean, +- 1 SE over replications)")
        fig.tight_layout()
        if folder is not None:
            fig.savefig(f"{folder}/{study}_{key}.png", dpi=110)
    return figures
