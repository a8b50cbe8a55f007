"""The paper's figure fig:eta (Section 2.3): mode and median of the class probabilities.

:func:`plot_mode_vs_median` draws each eta vector as a horizontal bar of K
stacked blocks of lengths eta_1, ..., eta_K, a vertical line at 0.5 (the
block it cuts is the ordinal Bayes rule, the median; Section 2.3) and marks
the multicategory Bayes rule (the mode, the longest block).  matplotlib is
imported when the function is called.
"""

from __future__ import annotations

import numpy as np

from nordicstats.theory.bayes import bayes_rule_multiclass, bayes_rule_ordinal, check_probabilities

__all__ = ["plot_mode_vs_median"]


def plot_mode_vs_median(eta, ax=None, labels=None, row_labels=None, colors=None, **kw):
    """Stacked probability bars with the mode and the median marked (paper, fig:eta).

    Parameters
    ----------
    eta : array-like of shape (K,) or (m, K)
        Class probabilities; one bar per row, the first row at the top.
    ax : matplotlib Axes, optional
        Drawn on a new figure when None.
    labels : sequence of str, optional
        Class labels (default ``"1".."K"``), written in the blocks.
    row_labels : sequence of str, optional
        Bar labels on the y axis (default ``"x1".."xm"``).
    colors : sequence of colours, optional
        One per class (default: a sequential colormap, light to dark).
    **kw
        Passed to ``ax.barh`` (e.g. ``height``, ``edgecolor``).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_mode_vs_median([[0.40, 0.15, 0.25, 0.20], [0.15, 0.10, 0.35, 0.40]])
    >>> len(ax.patches)
    8
    """
    import matplotlib.pyplot as plt

    probs, _ = check_probabilities(eta)
    m, K = probs.shape
    labels = [str(k + 1) for k in range(K)] if labels is None else [str(v) for v in labels]
    row_labels = [f"x{i + 1}" for i in range(m)] if row_labels is None else list(row_labels)
    if len(labels) != K or len(row_labels) != m:
        raise ValueError(f"labels must have {K} entries and row_labels {m}; got "
                         f"{len(labels)} and {len(row_labels)}.")
    if colors is None:
        colors = plt.get_cmap("Blues")(np.linspace(0.25, 0.85, K))
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 1.0 + 1.1 * m))
    height = kw.pop("height", 0.5)
    kw.setdefault("edgecolor", "black")
    mode, median = bayes_rule_multiclass(probs), bayes_rule_ordinal(probs)
    left = np.hstack([np.zeros((m, 1)), np.cumsum(probs, axis=1)[:, :-1]])
    y = np.arange(m)[::-1].astype(float)
    for k in range(K):
        ax.barh(y, probs[:, k], left=left[:, k], height=height, color=colors[k], **kw)
        for i in range(m):
            if probs[i, k] > 0.03:
                ax.text(left[i, k] + probs[i, k] / 2, y[i], labels[k], ha="center",
                        va="center", fontsize=9)
    centre = left + probs / 2
    rows = np.arange(m)
    ax.scatter(centre[rows, mode], y + 0.5 * height + 0.08, marker="v", color="tab:red",
               zorder=3, label="mode (multicategory Bayes rule)")
    ax.scatter(centre[rows, median], y - 0.5 * height - 0.08, marker="^", color="tab:green",
               zorder=3, label="median (ordinal Bayes rule)")
    ax.axvline(0.5, color="black", linestyle="--", linewidth=1.2)
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(-0.8, m - 0.2)
    ax.set_yticks(y, row_labels)
    ax.set_xlabel("cumulative conditional class probability")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, frameon=False)
    return ax
