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

# %% [markdown]
# ## Class probabilities
#
# `fit(probability=True)` also fits a map from NORDIC's decision values to class
# probabilities, on held-out decision values (the model is refitted on 4 of 5 folds at
# a time).  The default map is one increasing logistic link with ordered offsets,
# P(Y > k | x) = expit(a f_(k)(x) + c_k), on the decision values sorted per row, so
# the cumulative probabilities are monotone in k at every x and the class
# probabilities are never negative.  Platt's map fitted per boundary on the separate
# SVMs of BSVM -- what `SVC(probability=True)` per boundary would give -- has no such
# guarantee: where the boundaries cross, a "class probability" comes out negative.
# The ranked probability score RPS = sum_k (P(Y <= k) - 1{y <= k})^2 / (K - 1)
# scores the cumulative probabilities (lower is better).  The full study is
# `benchmarks/bench_probabilities.py` (docs/notes/probabilities.md).

# %%
import numpy as np  # noqa: E402
from scipy import special  # noqa: E402

from nordicstats import NORDIC  # noqa: E402
from nordicstats.datasets import make_donut  # noqa: E402
from nordicstats.probability import cumulative_to_class, fit_calibration  # noqa: E402

X_train, y_train = make_donut(100 if SMALL else 200, d=2, sigma=0.4, random_state=1)
X_test, y_test = make_donut(N_TEST, d=2, sigma=0.4, random_state=2)
codes = np.asarray(y_test.cat.codes)


def rps(proba):
    cum = np.cumsum(proba, axis=1)[:, :-1]
    return np.mean(np.sum((cum - (codes[:, None] <= np.arange(2))) ** 2, axis=1)) / 2


nordic = NORDIC(y_train, X_train, C=4.0).fit(probability=True)
bsvm = NORDIC(y_train, X_train, C=4.0, method="bsvm").fit(probability=True)
platt = fit_calibration(bsvm.calibration.held_out, bsvm.model.response.codes, method="platt")
raw = cumulative_to_class(special.expit(bsvm.decision_function(X_test) * platt.slope
                                        + platt.offset))
proba = nordic.predict(X_test, which="proba")
negative = {"NORDIC-1": np.mean((proba.to_numpy() < 0).any(axis=1)),
            "BSVM + Platt": np.mean((raw < 0).any(axis=1))}
print(f"NORDIC-1 + logistic map: RPS {rps(proba.to_numpy()):.4f}, "
      f"rows with a negative probability {negative['NORDIC-1']:.1%}")
print(f"BSVM + per-boundary Platt: RPS {rps(raw):.4f}, "
      f"rows with a negative probability {negative['BSVM + Platt']:.1%}")
proba.head()

# %% [markdown]
# A reliability diagram bins the predicted probabilities of every (test point, level)
# pair and plots the observed frequency of the level in each bin: a calibrated map
# stays on the diagonal.

# %%
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(4, 4))
for name, P in [("NORDIC-1 + logistic", proba.to_numpy()), ("BSVM + Platt (raw)", raw)]:
    p, o = P.ravel(), np.eye(3)[codes].ravel()
    bins = np.clip((p * 10).astype(int), 0, 9)
    n = np.bincount(bins, minlength=10)
    used = n > 0
    ax.plot((np.bincount(bins, p, 10)[used] / n[used]), np.bincount(bins, o, 10)[used] / n[used],
            marker="o", label=name)
ax.plot([0, 1], [0, 1], ls="--", color="grey")
ax.set_xlabel("predicted probability")
ax.set_ylabel("observed frequency")
ax.legend()
plt.show()

# %% [markdown]
# Decisions from probabilities: `predict(X, cost=...)` picks the level of least
# expected cost, argmin_j sum_l p_l(x) cost[l, j].  With the donut's costs (a class-3
# case predicted as class 1 costs 3) it trades some plain errors for a lower weighted
# error.

# %%
from nordicstats.metrics import weighted_error  # noqa: E402

cost_errors = {"class rule": weighted_error(y_test, nordic.predict(X_test), DONUT_COSTS),
               "cost-Bayes rule": weighted_error(y_test, nordic.predict(X_test, cost=DONUT_COSTS),
                                                 DONUT_COSTS)}
print({rule: round(value, 4) for rule, value in cost_errors.items()})
