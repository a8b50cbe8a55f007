"""Figures of the paper's experiments, from the rows of :func:`~studies.experiments.run_study`.

* :func:`plot_error_by_dimension` -- error against d, one panel per sigma, one
  line per method (the paper's Figures for Sections 6.1 and 6.2);
* :func:`plot_confusion_grid` -- the K x K grid of confusion proportions, panel
  ``(k, l)`` showing the share of class-``l`` test points classified to class ``k``
  across d (or n), one line per method (Section 6.2 and Section 7);
* :func:`plot_error_by_n` -- weighted error against the training size for the
  balance-scale study (Section 7), as boxplots or mean +- one standard error.

Every function takes the results DataFrame and ``ax=``/``fig=`` (created when
None) and returns what it drew on; matplotlib is imported when a function is
called.  Only rows with ``status == "ok"`` are used.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from studies.experiments import confusion_summary

__all__ = ["plot_error_by_dimension", "plot_confusion_grid", "plot_error_by_n"]

_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")
_LINESTYLES = ("-", "--", "-.", ":")


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


def _ok_rows(results, columns):
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results must be the DataFrame of run_study/load_results; "
                        f"got {type(results).__name__}.")
    missing = [c for c in columns if c not in results]
    if missing:
        raise ValueError(f"results have no column(s) {missing}; columns: {list(results.columns)}.")
    ok = results[results["status"] == "ok"] if "status" in results else results
    if ok.empty:
        raise ValueError("results have no successful rows (status == 'ok') to plot.")
    return ok


def _method_order(rows, methods):
    present = list(dict.fromkeys(rows["method"]))
    if methods is None:
        return present
    unknown = [m for m in methods if m not in present]
    if unknown:
        raise ValueError(f"methods {unknown} are not in the results; available: {present}.")
    return list(methods)


def _style(i):
    return {"marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": _LINESTYLES[(i // len(_MARKERS)) % len(_LINESTYLES)]}


def _mean_se(rows, x, metric):
    grouped = rows.groupby(x)[metric]
    mean = grouped.mean()
    se = grouped.std() / np.sqrt(grouped.count())
    return mean.index.to_numpy(), mean.to_numpy(), se.fillna(0.0).to_numpy()


def plot_error_by_dimension(results, metric="error", x="d", panel="sigma", methods=None,
                            errorbars=True, fig=None, **kwargs):
    """Mean ``metric`` against ``x`` (d), one panel per ``panel`` value (sigma).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of a study (columns ``method``, ``x``, ``panel``, ``metric``).
    metric : str, default="error"
        Any numeric column (``"weighted_error"``, ``"total_time"``, ...).
    x, panel : str
        Column on the horizontal axis and column that splits the panels.
    methods : list of str, optional
        Methods to draw, in legend order (default: all, in order of appearance).
    errorbars : bool, default=True
        Draw +- one standard error over replications.
    fig : matplotlib Figure, optional
    **kwargs
        Passed to ``Axes.errorbar``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = _ok_rows(results, ["method", x, panel, metric])
    plt = _pyplot()
    panels = sorted(rows[panel].unique())
    fig = fig or plt.figure(figsize=(4.0 * len(panels), 3.4))
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, value in zip(axes, panels, strict=True):
        subset = rows[rows[panel] == value]
        for i, method in enumerate(_method_order(rows, methods)):
            xs, mean, se = _mean_se(subset[subset["method"] == method], x, metric)
            ax.errorbar(xs, mean, yerr=se if errorbars else None, label=method, capsize=2,
                        **{**_style(i), **kwargs})
        ax.set_title(f"{panel} = {value:g}" if isinstance(value, (int, float)) else str(value))
        ax.set_xlabel(x)
    axes[0].set_ylabel(metric.replace("_", " "))
    axes[-1].legend(fontsize="small")
    return fig


def plot_confusion_grid(results, x="d", methods=None, fig=None, **kwargs):
    """The paper's K x K confusion grid: panel (k, l) = P(classified k | class l) against ``x``.

    Rows of panels are predicted classes, columns are true classes, so the
    three panels of a column add up to one at every ``x`` (Section 6.2).  Each
    value is the mean over replications of the per-replication proportion.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows with ``confusion`` counts and ``levels`` (filter to one sigma first).
    x : str, default="d"
        Design column on the horizontal axis (``"n"`` for the balance scale).
    methods : list of str, optional
    fig : matplotlib Figure, optional
    **kwargs
        Passed to ``Axes.plot``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = _ok_rows(results, ["method", x, "confusion", "levels"])
    order = _method_order(rows, methods)
    summary = confusion_summary(rows, by=(x, "method"))
    levels = list(rows["levels"].iloc[0])
    K = len(levels)
    plt = _pyplot()
    fig = fig or plt.figure(figsize=(3.2 * K, 2.8 * K))
    axes = fig.subplots(K, K, sharex=True, squeeze=False)
    for k_pred, pred in enumerate(levels):
        for l_true, true in enumerate(levels):
            ax = axes[k_pred, l_true]
            cell = summary[(summary["predicted"] == pred) & (summary["true"] == true)]
            for i, method in enumerate(order):
                line = cell[cell["method"] == method].sort_values(x)
                ax.plot(line[x], line["proportion"], label=method, **{**_style(i), **kwargs})
            ax.set_title(f"class {true} -> {pred}", fontsize="small")
            if k_pred == K - 1:
                ax.set_xlabel(x)
            if l_true == 0:
                ax.set_ylabel("proportion")
    axes[0, K - 1].legend(fontsize="x-small")
    return fig


def plot_error_by_n(results, metric="weighted_error", x="n", kind="box", methods=None,
                    ax=None, **kwargs):
    """``metric`` by training size for each method (Section 7's figure).

    Parameters
    ----------
    results : pandas.DataFrame
    metric : str, default="weighted_error"
    x : str, default="n"
    kind : {"box", "mean"}, default="box"
        ``"box"``: one boxplot per (n, method) over replications, grouped by n;
        ``"mean"``: mean +- one standard error, one line per method.
    methods : list of str, optional
    ax : matplotlib Axes, optional
    **kwargs
        Passed to ``Axes.boxplot`` or ``Axes.errorbar``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if kind not in ("box", "mean"):
        raise ValueError(f"The 'kind' parameter must be 'box' or 'mean'. Got {kind!r} instead.")
    rows = _ok_rows(results, ["method", x, metric])
    order = _method_order(rows, methods)
    plt = _pyplot()
    ax = ax or plt.figure(figsize=(2.4 + 0.25 * len(order) * rows[x].nunique(), 3.6)).gca()
    sizes = sorted(rows[x].unique())
    if kind == "mean":
        for i, method in enumerate(order):
            xs, mean, se = _mean_se(rows[rows["method"] == method], x, metric)
            ax.errorbar(xs, mean, yerr=se, label=method, capsize=2, **{**_style(i), **kwargs})
        ax.set_xticks(sizes)
    else:
        _grouped_boxes(ax, rows, x, metric, sizes, order, kwargs)
    ax.set_xlabel(x)
    ax.set_ylabel(metric.replace("_", " "))
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax


def _grouped_boxes(ax, rows, x, metric, sizes, order, kwargs):
    import matplotlib as mpl

    width = 0.8 / len(order)
    colors = mpl.colormaps["tab10"].colors
    for i, method in enumerate(order):
        data = [rows[(rows[x] == s) & (rows["method"] == method)][metric].to_numpy()
                for s in sizes]
        positions = np.arange(len(sizes)) + (i - (len(order) - 1) / 2) * width
        boxes = ax.boxplot(data, positions=positions, widths=width * 0.9, patch_artist=True,
                           manage_ticks=False, **{"medianprops": {"color": "black"}, **kwargs})
        for patch in boxes["boxes"]:
            patch.set_facecolor(colors[i % len(colors)])
        boxes["boxes"][0].set_label(method)
    ax.set_xticks(np.arange(len(sizes)), [f"{s:g}" for s in sizes])
