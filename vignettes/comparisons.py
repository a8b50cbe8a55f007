# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Comparisons: NORDIC and its competitors
#
# The paper compares NORDIC with four other ordinal classifiers, all with the
# Gaussian kernel except the ordered logit:
#
# - **SVR**: epsilon-support-vector regression on the class numbers 1..K, cut at k + 1/2;
# - **OLR**: the ordered logit (proportional odds) model, linear;
# - **DR**: data replication (Cardoso & Pinto da Costa, 2007);
# - **CK**: support vector ordinal regression with explicit threshold
#   constraints (Chu & Keerthi, 2005).
#
# This vignette reruns the paper's two simulated designs (Section 6: the
# nonlinear three-class example and the high-dimensional donut) and the
# balance-scale study (Section 7) with `nordicstats.experiments.run_study`, and
# draws the error, weighted-error and confusion figures with
# `nordicstats.plotting`.  Each method is tuned on a separate tuning set over
# the paper's grid (C in 2^-4..2^4 and kernel widths at the 10/50/90%
# quantiles of pairwise distances); the small size uses one grid point and
# fewer replications, so its numbers are a smoke test, not a result; the full
# size (the paper's grid, 5 replications; the paper used 100) runs for tens of
# minutes on two cores.

# %%
import os
import warnings

from nordicstats.experiments import (
    balance_scale_design,
    confusion_summary,
    run_study,
    simulation_design,
    summarize,
)
from nordicstats.metrics import BALANCE_COSTS, DONUT_COSTS, paper_confusion
from nordicstats.plotting import plot_confusion_grid, plot_error_by_dimension, plot_error_by_n

SMALL = os.environ.get("NORDICSTATS_VIGNETTE_SIZE") == "small"
if SMALL:
    DIMS, N_REPS, N_TRAIN, N_TEST = (2, 6), 1, 50, 1000
    GRID = {"C_grid": (1.0,), "width_quantiles": (0.5,)}
    BALANCE_N, BALANCE_REPS = (52, 79), 2
    N_JOBS = 1
else:
    DIMS, N_REPS, N_TRAIN, N_TEST = (2, 6, 10), 5, 100, 10000
    GRID = {}                                   # the paper's grid
    BALANCE_N, BALANCE_REPS = (52, 79, 125, 208), 5
    N_JOBS = 2                                  # joblib workers; the full size takes a while
METHODS = {"NORDIC-1": "nordic1", "SVR": "svr", "OLR": "ologit", "DR": "dr", "CK": "ck"}
print(f"size: {'small' if SMALL else 'full'}; d in {DIMS}, {N_REPS} replications, "
      f"balance-scale n in {BALANCE_N} x {BALANCE_REPS}; methods {list(METHODS)}")

# %% [markdown]
# ## The nonlinear example (Section 6.1)
#
# Three classes whose log-odds are nonlinear in the first two covariates;
# the remaining d - 2 covariates are noise, so the problem gets harder as d
# grows.  `simulation_design` draws a training, a tuning and a test set per
# replication; every method sees the same data in a replication.

# %%
nonlinear_designs = [simulation_design("nonlinear", d, 1.0, n_train=N_TRAIN, n_tune=N_TRAIN,
                                       n_test=N_TEST) for d in DIMS]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    nonlinear = run_study(nonlinear_designs, METHODS, N_REPS, seed=1, progress=not SMALL,
                          n_jobs=N_JOBS, **GRID)
print(f"{(nonlinear['status'] == 'ok').sum()} of {len(nonlinear)} fits succeeded")
summarize(nonlinear, "error").unstack("method")["mean"].round(4)

# %%
fig = plot_error_by_dimension(nonlinear, metric="error", x="d", panel="sigma")
fig.suptitle("Nonlinear example: test error", y=1.02)

# %% [markdown]
# ## The donut (Section 6.2)
#
# Class 1 inside a disc, class 2 a thin ring around it and class 3 outside,
# in the first two covariates, with d - 2 noise covariates.  Class 2 is rare
# (about 6%) and class 3 is 19%, so the paper scores a weighted error: a
# misclassified class-1 point costs 1, class 2 costs 2, and class 3 costs 1 if
# predicted as 2 and 3 if predicted as 1 (`DONUT_COSTS`).

# %%
print(DONUT_COSTS)
donut_designs = [simulation_design("donut", d, 0.4, n_train=N_TRAIN, n_tune=N_TRAIN,
                                   n_test=N_TEST) for d in DIMS]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    donut = run_study(donut_designs, METHODS, N_REPS, seed=2, costs=DONUT_COSTS,
                      scoring=DONUT_COSTS, progress=not SMALL, n_jobs=N_JOBS, **GRID)
summarize(donut, "weighted_error").unstack("method")["mean"].round(4)

# %%
fig = plot_error_by_dimension(donut, metric="weighted_error", x="d", panel="sigma")
fig.suptitle("Donut: weighted test error", y=1.02)

# %% [markdown]
# The paper's confusion view: panel (k, l) is the share of class-l test points
# classified to class k, averaged over replications, so each column of panels
# sums to one.  The diagonal panels are the per-class accuracies; the rare ring
# (class 2) is where the methods differ most.

# %%
fig = plot_confusion_grid(donut, x="d")
fig.suptitle("Donut: P(classified k | class l)", y=1.01)
fig.tight_layout()

# %% [markdown]
# ## The balance scale (Section 7)
#
# n training and n tuning rows (stratified), the rest for testing, for the
# paper's n = 52, 79, 125 and 208.  The weighted error charges 2 for confusing
# `L` with `R` and 1 for other mistakes (`BALANCE_COSTS`).  The balanced class
# `B` is rare: a classifier can look good by never predicting it, which the
# confusion matrix exposes.

# %%
balance_designs = [balance_scale_design(n) for n in BALANCE_N]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    balance = run_study(balance_designs, METHODS, BALANCE_REPS, seed=3, costs=BALANCE_COSTS,
                        scoring=BALANCE_COSTS, progress=not SMALL, n_jobs=N_JOBS, **GRID)
balance_summary = summarize(balance, "weighted_error")
balance_summary.unstack("method")["mean"].round(4)

# %%
ax = plot_error_by_n(balance, metric="weighted_error", x="n",
                     kind="mean" if BALANCE_REPS < 5 else "box")
ax.set_title("Balance scale: weighted test error")

# %%
fig = plot_confusion_grid(balance, x="n")
fig.suptitle("Balance scale: P(classified k | class l)", y=1.01)
fig.tight_layout()

# %% [markdown]
# The averaged confusion matrices at the largest n, in the paper's layout (rows
# predicted, columns true).  `P(B | B)` is the share of balanced
# configurations recognised as balanced.

# %%
largest = balance[balance["n"] == max(BALANCE_N)]
conf = confusion_summary(largest, by=("method",))
share_B_as_B = conf[(conf["true"] == "B") & (conf["predicted"] == "B")].set_index("method")[
    "proportion"]
print("P(classified B | class B):")
print(share_B_as_B.round(3))
conf.pivot_table(index=["method", "predicted"], columns="true", values="proportion",
                 sort=False).round(3)

# %% [markdown]
# ## One fit, by hand
#
# The study runner is a loop over `make_classifier(name, **params).fit(X, y)`;
# the same pieces work directly.  `paper_confusion` is the paper's layout for
# one fit.

# %%
from nordicstats.compare import make_classifier  # noqa: E402
from nordicstats.datasets import load_balance_scale, stratified_split  # noqa: E402

data = load_balance_scale()
train, test = stratified_split(data["balance"], [BALANCE_N[0]], random_state=0)
X, y = data.drop(columns="balance"), data["balance"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    clf = make_classifier("nordic1", C=1.0).fit(X.iloc[train], y.iloc[train])
paper_confusion(y.iloc[test], clf.predict(X.iloc[test]), labels=["L", "B", "R"]).round(3)
