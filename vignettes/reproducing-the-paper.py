# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Reproducing the paper
#
# The paper's evidence (Sections 6.1, 6.2 and 7) is re-measured by
# `benchmarks/paper_studies.py`, which runs each study through
# `studies.experiments.run_study` at the paper's scale (100 replications,
# every method tuned on a tuning set over C in 2^-4..2^4 and the kernel widths
# at the 10/50/90% pairwise-distance quantiles) and stores one JSON line per
# (design, method, replication) in `benchmarks/results/`.  This page refits
# nothing: it loads the stored rows, draws the paper's figures and tests every
# result sentence of the three sections, exactly as
# `python -m benchmarks.paper_studies report` does for `REPLICATION.md`.
#
# How a sentence is read: each claim is a paired difference D over replications
# (every method sees the same data in a replication).  "A is better than B"
# holds when D + 2 SE < 0; B is the best of the cell among the paper's methods
# (the ordered logit, not in the paper, is reported beside).  "Comparable" and
# "about the same" are two one-sided tests (TOST, 5% each) with a stated margin:
# 0.02 for an error rate, 0.05 for a per-class accuracy.  A verdict pooled over
# cells averages the cells' differences within each replication first, and the
# table says when it hides a cell where the claim fails.
#
# The reduced size (`NORDICSTATS_VIGNETTE_SIZE=small`) uses the first few
# replications of each cell only, to stay fast.

# %%
import os
import warnings
from pathlib import Path

import pandas as pd

from studies.experiments import load_results, summarize
from studies.replication import STUDIES, draw_figures, evaluate_claims, measured_runs

COLUMNS = ["id", "tested as", "cells", "pooled by replication", "verdict",
           "cells where it fails"]

SMALL = os.environ.get("NORDICSTATS_VIGNETTE_SIZE") == "small"
HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
RESULTS = Path(os.environ.get("NORDICSTATS_RESULTS", HERE.parent / "benchmarks" / "results"))
MAX_REPS = 5 if SMALL else None


def stored_rows(study):
    """The study's stored rows (None when the study has not been run yet)."""
    path = RESULTS / STUDIES[study].file
    if not path.exists() or not path.stat().st_size:
        return None
    rows = load_results(path)
    return rows if MAX_REPS is None else rows[rows["rep"] < MAX_REPS]


tables = {name: stored_rows(name) for name in STUDIES}
for name, rows in tables.items():
    state = "not run yet" if rows is None else (
        f"{len(rows)} rows, {(rows['status'] != 'ok').sum()} failed, "
        f"replications 0..{rows['rep'].max()}")
    print(f"{name:10s} {state}")
print(f"size: {'small (first 5 replications)' if SMALL else 'full'}; rows from {RESULTS}")

# %% [markdown]
# ## The balance scale (Section 7)
#
# n points for training, n for tuning and the rest of the 625 for testing,
# stratified; weighted error with cost 2 for L <-> R.  The paper: "All three
# NORDIC methods are among the best, with NORDIC-2 having a significant
# advantage ... The SVR is the worst classifier."

# %%
balance = tables["balance"]
balance_means = None
if balance is not None:
    balance_means = summarize(balance, "weighted_error", by=("n", "method"))["mean"].unstack()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figures = draw_figures("balance", balance)
balance_means  # mean weighted error per n (rows) and method (columns)

# %% [markdown]
# Every claim sentence of Section 7, how it is tested, its verdicts per n and
# pooled by replication (the splits of one replication are drawn from one seed
# at every n, so the n values are not independent).

# %%
claims, cells = (None, None) if balance is None else evaluate_claims("balance", balance)
None if claims is None else claims[COLUMNS]

# %% [markdown]
# Per cell: "NORDIC-2 stands out ... due to its best performance on Class B"
# (7n) holds at the smaller n but not at n = 208, where CK classifies more of
# class B correctly; the pooled verdict says so.

# %%
None if cells is None else cells[cells["id"] == "7n"]

# %% [markdown]
# ## The nonlinear three-class example (Section 6.1)
#
# Error and computing time (the tasks' CPU seconds, which do not depend on the
# machine's load) against d, one panel per sigma, with standard-error bars.
# The paper: NORDIC-0 and NORDIC-1 are better for small d, NORDIC-2 for higher
# d; DR is the most costly and CK the most efficient.

# %%
nonlinear = tables["nonlinear"]
if nonlinear is not None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figures = draw_figures("nonlinear", nonlinear)
    print(evaluate_claims("nonlinear", nonlinear)[0][COLUMNS].to_string(index=False))

# %% [markdown]
# ## The donut (Section 6.2)
#
# Error and the weighted error (class 2 protected) against d in
# {10, 25, 40, 55, 75} (the paper says only "from 10 to 75"), and the confusion
# arrays at sigma = 0.4: panel (k, l) is the share of class-l test points
# classified to class k.  The paper: NORDIC-2 is the best in weighted error.
# The report's "Deviations from the paper" measures what the choices the paper
# leaves open change (the noise read as a variance, tuning by the weighted
# error, ties, SVR's scaling).

# %%
donut = tables["donut"]
if donut is not None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figures = draw_figures("donut", donut)
    print(evaluate_claims("donut", donut)[0][COLUMNS].to_string(index=False))

# %% [markdown]
# ## How long a rerun takes
#
# Every run of the study script appends a row to `runs.csv`; the runs that
# started from an empty results folder and finished every cell at 100
# replications measure the whole protocol end to end (2 workers here; the
# targets were 15 minutes for Section 7 and 60 for each of Sections 6.1, 6.2).

# %%
runs_file = RESULTS / "runs.csv"
runs = pd.read_csv(runs_file) if runs_file.exists() else None
measured = None if runs is None else pd.concat(
    [measured_runs(runs, name) for name in STUDIES]).assign(
        minutes=lambda t: (t["wall_seconds"] / 60).round(2))
None if measured is None else measured[["study", "date", "rows_after", "n_jobs", "minutes",
                                        "load_before", "load_after"]]
