# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Theory: the ordinal Bayes rule and Fisher consistency
#
# Given x, let eta_k(x) = P(Y = k | X = x) for the K ordered classes.
#
# - The multicategory Bayes rule picks the **mode**, argmax_k eta_k(x): it
#   minimises the 0-1 loss and ignores the order.
# - The ordinal Bayes rule picks the **median**: the class k with
#   eta_1 + ... + eta_{k-1} < 1/2 < eta_1 + ... + eta_k (paper, Section 5.1).
#   It minimises the absolute (distance) loss |prediction - y| and the sum of
#   the K-1 binary 0-1 losses "is Y > k?", which is how NORDIC sees the
#   problem.
#
# A loss is *generalized Fisher consistent* (Definition 1) when the population
# minimiser f* of sum_k E[V(Y^(k) f_k(X))] has sgn f_k*(x) = sgn(P(Y > k | x) - 1/2)
# for every boundary k: the K-1 jointly trained functions recover the median
# rule.  This vignette draws the paper's Figure 2 and checks the definition
# numerically for a library of margin losses, with and without NORDIC's
# ordering constraint f_1 >= ... >= f_{K-1}.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from nordicstats.plotting import plot_mode_vs_median
from nordicstats.theory import (
    MARGIN_LOSSES,
    bayes_rule_multiclass,
    bayes_rule_ordinal,
    conditional_risk,
    fisher_consistency,
    fisher_consistency_report,
    get_margin_loss,
    prediction_risks,
)

SMALL = os.environ.get("NORDICSTATS_VIGNETTE_SIZE") == "small"
N_DRAWS = 4 if SMALL else 60          # eta vectors per Dirichlet concentration (and near 1/2)
N_ETA = 2000 if SMALL else 100_000    # random eta for the risk comparison
print(f"size: {'small' if SMALL else 'full'}; {N_DRAWS} draws per source, {N_ETA} random eta")

# %% [markdown]
# ## Mode versus median (the paper's Figure 2)
#
# Two points with K = 4.  Each bar stacks eta_1, ..., eta_4 from left to right;
# the dashed line at 1/2 cuts the median class, the red triangle marks the mode.
# In the top row the mode is class 1 but the median is class 2; in the bottom
# row the mode is class 4 and the median class 3.

# %%
figure2_eta = np.array([[0.40, 0.15, 0.25, 0.20],
                        [0.15, 0.10, 0.35, 0.40]])
ax = plot_mode_vs_median(figure2_eta, row_labels=["top", "bottom"])
ax.set_title("Mode (multicategory) vs median (ordinal) Bayes rule")
mode_rule = bayes_rule_multiclass(figure2_eta) + 1    # classes 1..K
median_rule = bayes_rule_ordinal(figure2_eta) + 1
pd.DataFrame({"mode (0-1 loss)": mode_rule, "median (absolute loss)": median_rule},
             index=["top", "bottom"])

# %% [markdown]
# Which rule is right depends on the loss.  `prediction_risks` gives the
# conditional risk of every possible prediction: under the absolute loss the
# median wins, under the 0-1 loss the mode.

# %%
rows = {}
for loss in ["absolute", "zero_one"]:
    risks, best = prediction_risks(figure2_eta, loss)
    risks.columns = [f"predict {c + 1}" for c in risks.columns]
    risks.index = [f"{r} ({loss})" for r in ["top", "bottom"]]
    risks["best"] = best + 1
    rows[loss] = risks
pd.concat(rows.values()).round(3)

# %% [markdown]
# How often do the rules disagree, and what does using the mode cost under the
# absolute loss?  Over eta drawn uniformly from the simplex:

# %%
rng = np.random.default_rng(7)
comparison = []
for K in (3, 4, 5, 7):
    eta = rng.dirichlet(np.ones(K), size=N_ETA)
    differ = np.mean(bayes_rule_ordinal(eta) != bayes_rule_multiclass(eta))
    comparison.append({
        "K": K, "mode != median": differ,
        "absolute risk, median": conditional_risk(eta, "median", "absolute").mean(),
        "absolute risk, mode": conditional_risk(eta, "mode", "absolute").mean(),
    })
rule_comparison = pd.DataFrame(comparison).set_index("K")
rule_comparison.round(4)

# %% [markdown]
# ## Fisher consistency at one eta
#
# `fisher_consistency(loss, eta)` minimises the population risk
# sum_k [p_k V(f_k) + (1 - p_k) V(-f_k)], p_k = P(Y > k), and asks whether a
# wrong sign could be optimal (the *risk gap* is how much the risk rises when
# boundary k is forced to the wrong sign; positive means consistent).  For the
# hinge loss at the top row of Figure 2 the minimiser is f* = (+1, -1, -1), the
# median rule's signs:

# %%
hinge_top = fisher_consistency("hinge", figure2_eta[0], constrained=True)
hinge_top.to_frame().round(4)

# %% [markdown]
# ## Many losses, many eta
#
# `fisher_consistency_report` repeats the check over Dirichlet draws of eta
# (concentrations 0.3, 1 and 5: near the corners of the simplex to near
# uniform) and over adversarial eta whose cumulative sums come within 1e-3 of
# 1/2.  We run it for each loss in the library, with the NORDIC ordering
# constraint and without it.

# %%
losses = ["hinge", "squared_hinge", "logistic", "exponential", "squared", "dwd", "psi",
          "truncated_hinge", "unhinged", "perceptron", "kinked_hinge"]
records = []
for name in losses:
    for constrained in (True, False):
        report = fisher_consistency_report(name, n_draws=N_DRAWS, K=4, random_state=0,
                                           constrained=constrained)
        counts = report.counts.loc["total"]
        records.append({"loss": name, "constrained": constrained,
                        "formula": get_margin_loss(name).formula,
                        "eta checked": int(counts["n_eta"]),
                        "boundaries failing": int(counts["n_failures"]),
                        "eta failing": int(counts["n_eta_failing"])})
consistency = pd.DataFrame(records).set_index(["loss", "constrained"])
consistency

# %% [markdown]
# The convex losses that are Fisher consistent for binary classification
# (hinge, squared hinge, logistic, exponential, squared, DWD) and the bounded
# nonconvex psi and truncated hinge losses recover the median rule at every
# eta, and the ordering constraint never hurts: the Bayes signs are themselves
# ordered (P(Y > k) decreases in k), so the constrained and unconstrained
# minimisers agree in sign.  The perceptron loss max(0, -u) has no unique
# minimiser (f = 0 is always optimal) and fails everywhere.  The "kinked
# hinge" max(0, 1 - u/2, 1 - 2u) is convex and decreasing like the hinge,
# yet its unequal slopes make f = 0 optimal whenever 0.2 <= P(Y > k) <= 0.8:
# it commits to a sign only for lopsided probabilities, so it fails for most eta.

# %%
fig, ax = plt.subplots(figsize=(7, 4))
u = np.linspace(-2.5, 2.5, 401)
failing = consistency.xs(True, level="constrained")["boundaries failing"]
for name in losses:
    if name in ("unhinged", "squared"):      # unbounded below / rising again: off the scale
        continue
    style = "--" if failing[name] > 0 else "-"
    ax.plot(u, MARGIN_LOSSES[name](u), style, linewidth=3 if name == "hinge" else 1.5,
            zorder=1 if name == "hinge" else 2,
            label=f"{name}{' (fails)' if failing[name] else ''}")
ax.set_ylim(-0.2, 4)
ax.set_xlabel("margin u = y f(x)")
ax.set_ylabel("V(u)")
ax.set_title("Margin losses: solid = generalized Fisher consistent")
ax.legend(fontsize="x-small", ncols=2)
fig.tight_layout()
