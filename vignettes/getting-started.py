# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Getting started with nordicstats
#
# An ordinal response has K ordered classes.  NORDIC (noncrossing ordinal
# classification, X. Qiao) handles it with K-1 binary large-margin classifiers,
# boundary k separating "class <= k" from "class > k", trained *jointly* with
# constraints that stop the boundaries from crossing.  Trained separately (the
# paper's BSVM), the K-1 boundaries can cross, and where they cross no class is
# consistent with all of them.
#
# This vignette
#
# 1. fits NORDIC-1 and NORDIC-2 to the balance-scale data and reads `summary()`;
# 2. predicts new data and scores the predictions;
# 3. builds a two-covariate example where separate SVMs cross and draws the
#    boundaries of BSVM and NORDIC with the ambiguous region shaded.
#
# Set `NORDICSTATS_VIGNETTE_SIZE=small` (or render with `--small`) for a quick run.

# %%
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from nordicstats import NORDIC
from nordicstats.datasets import load_balance_scale, stratified_split
from nordicstats.metrics import BALANCE_COSTS, confusion_matrix, error_rate, weighted_error
from nordicstats.plotting import plot_boundaries

SMALL = os.environ.get("NORDICSTATS_VIGNETTE_SIZE") == "small"
N_TRAIN = 80 if SMALL else 125       # balance-scale training rows (the paper: 52 ... 208)
N_TOY = 100 if SMALL else 160        # rows of the two-covariate example
print(f"size: {'small' if SMALL else 'full'}; balance-scale n = {N_TRAIN}, example n = {N_TOY}")

# %% [markdown]
# ## The balance-scale data
#
# 625 configurations of a balance scale (Siegler, 1976): the weight and the
# distance on each side, and whether the scale tips left (`L`), balances (`B`)
# or tips right (`R`).  The response is an ordered categorical `L < B < R`, and
# the balanced class is rare (49 rows).  We keep a stratified training set and
# test on the rest.

# %%
data = load_balance_scale()
print(data["balance"].value_counts().reindex(["L", "B", "R"]))
train_idx, test_idx = stratified_split(data["balance"], [N_TRAIN], random_state=2026)
train, test = data.iloc[train_idx], data.iloc[test_idx]
features = ["left_weight", "left_distance", "right_weight", "right_distance"]
data.head()

# %% [markdown]
# ## NORDIC-1 with a Gaussian kernel
#
# `NORDIC.from_formula` takes a patsy formula whose response is an ordered
# categorical column.  The default method is NORDIC-1, the default kernel the
# Gaussian (RBF) kernel with the paper's width rule (median pairwise distance),
# and `C` weights the hinge loss.  The summary reports the solver, the class
# counts, one intercept per boundary, the training crossing rate (0 by
# construction) and the *price of noncrossing*: how much the objective rose over
# the unconstrained BSVM fit on the same data.

# %%
formula = "balance ~ left_weight + left_distance + right_weight + right_distance"
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    nordic1 = NORDIC.from_formula(formula, train, method="nordic1", C=1.0).fit()
nordic1.summary()  # a statsmodels Summary: HTML tables in a notebook, text with print()

# %% [markdown]
# ## NORDIC-2
#
# NORDIC-2 (paper, Section 4) asks only that no training point falls on the
# wrong side of two boundaries at once, a set of logical constraints solved
# exactly as a mixed-integer program (branch and bound on the few points where
# the separate L1-SVMs cross, SCIP when that does not suffice); by default it
# uses the l1 penalty.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    nordic2 = NORDIC.from_formula(formula, train, method="nordic2", C=1.0).fit()
nordic2.summary()

# %% [markdown]
# ## Prediction
#
# `predict` returns the user's labels (a categorical Series indexed like the
# new data); `which="decision"` returns the K-1 decision values f_k(x).  The
# paper scores the balance scale by a weighted error that charges 2 for
# confusing `L` with `R` and 1 for any other mistake (`BALANCE_COSTS`).

# %%
rows = []
for label, res in [("NORDIC-1", nordic1), ("NORDIC-2", nordic2)]:
    pred = res.predict(test)
    rows.append({"method": label, "error": error_rate(test["balance"], pred),
                 "weighted error": weighted_error(test["balance"], pred, BALANCE_COSTS),
                 "test crossing rate": res.crossing_rate(test)})
scores = pd.DataFrame(rows).set_index("method")
print(scores.round(4))
print(nordic1.predict(test.head(), which="decision").round(3))
confusion_matrix(test["balance"], nordic1.predict(test))

# %% [markdown]
# ## Why the boundaries cross, and why NORDIC's do not
#
# Two covariates, K = 4 classes.  Classes 1 and 4 are common and sit left and
# right; the middle classes 2 and 3 are rarer and differ mostly in the *second*
# covariate (class 2 above, class 3 below).  The ordering still holds along the
# first covariate, but each separate SVM turns its boundary towards the
# classes it must split off, so boundary 2|3 is tilted while 1|2 and 3|4 are
# nearly vertical, and the three lines meet inside the data.

# %%
def make_example(n, random_state):
    """Four ordered classes in the plane, middle classes rare and split by x2."""
    rng = np.random.default_rng(random_state)
    codes = rng.choice(4, size=n, p=[0.35, 0.15, 0.15, 0.35])
    centres = np.array([[-2.0, 0.0], [0.0, 1.5], [0.0, -1.5], [2.0, 0.0]])
    X = centres[codes] + 0.7 * rng.normal(size=(n, 2))
    y = pd.Categorical(np.array(["1", "2", "3", "4"])[codes], categories=["1", "2", "3", "4"],
                       ordered=True)
    return pd.DataFrame(X, columns=["x1", "x2"]), y


X_toy, y_toy = make_example(N_TOY, random_state=2)
X_new, y_new = make_example(2000, random_state=99)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    # coefficients and crossings only: no standard errors, so no covariance is computed
    bsvm = NORDIC(y_toy, X_toy, method="bsvm", kernel="linear", C=1.0).fit(cov_type="none")
    nordic = NORDIC(y_toy, X_toy, method="nordic1", kernel="linear", C=1.0).fit(
        cov_type="none")

crossing = pd.DataFrame({
    "training rows": [bsvm.crossing_rate(), nordic.crossing_rate()],
    "new rows": [bsvm.crossing_rate(X_new), nordic.crossing_rate(X_new)],
    "test error": [error_rate(y_new, res.predict(X_new)) for res in (bsvm, nordic)],
}, index=["BSVM", "NORDIC-1"])
bsvm_crossing_rate = crossing.loc["BSVM", "training rows"]
nordic_crossing_rate = crossing.loc["NORDIC-1", "training rows"]
print(crossing.round(4))
print(f"price of noncrossing: {nordic.price_of_noncrossing['objective_increase']:.4f} "
      f"(objective {nordic.objective:.4f} vs BSVM {bsvm.objective:.4f})")

# %% [markdown]
# BSVM's boundaries cross at some training points: there the three binary
# rules disagree (e.g. "above 1|2 is false" but "above 2|3 is true") and the
# prediction `#{k : f_k(x) >= 0}` is a guess.  NORDIC-1's joint constraints
# f_k(x_i) >= f_{k+1}(x_i) rule this out at every training point, and for a
# linear kernel f_k - f_{k+1} is linear, so they hold on the whole convex hull
# of the training data.  The coefficients show the price: NORDIC-1 bends the
# slopes of the boundaries towards each other.

# %%
pd.concat({"BSVM": bsvm.params, "NORDIC-1": nordic.params}, axis=1).round(3)

# %% [markdown]
# ## The picture
#
# `nordicstats.plotting.plot_boundaries` draws the K-1 zero lines f_k(x) = 0
# and shades the ambiguous region, where the sign sequence f_1, ..., f_{K-1}
# increases and the prediction sets do not intersect.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
ax_b = plot_boundaries(bsvm, ax=axes[0], grid=120 if SMALL else 250, title="BSVM (separate SVMs)")
ax_n = plot_boundaries(nordic, ax=axes[1], grid=120 if SMALL else 250, title="NORDIC-1")
ambiguous_share = {"BSVM": ax_b.ambiguous_share, "NORDIC-1": ax_n.ambiguous_share}
fig.tight_layout()
print({k: round(v, 4) for k, v in ambiguous_share.items()})

# %% [markdown]
# The shaded wedge on the left is where BSVM has no answer.  On the right the
# NORDIC-1 boundaries keep their order over the data; linear boundaries with
# different slopes must still meet somewhere, but NORDIC-1 pushes that point
# outside the region the data occupy.
#
# ## Where next
#
# - *Inference for linear NORDIC*: coefficient tables, intervals, the test of
#   parallel boundaries.
# - *Theory*: the ordinal Bayes rule and Fisher consistency.
# - *Comparisons*: NORDIC against SVR, ordered logit, data replication and
#   Chu-Keerthi on the paper's designs.
# - *From R*: the same analysis through the R package.
