"""The K-1 boundaries of a fitted two-covariate model, with the ambiguous region shaded.

Boundary k is the zero set {x : f_k(x) = 0} of the k-th decision function.  At
a point x the prediction set of boundary k is {1..k} when f_k(x) < 0 and
{k+1..K} otherwise (paper, Section 2.2); when the boundaries cross, some x has
f_k(x) < 0 <= f_{k+1}(x), the K-1 prediction sets have an empty intersection and
no class is consistent with all of them.  :func:`plot_boundaries` draws the
boundaries over a grid and shades that *ambiguous* (crossing) region, which is
empty for NORDIC-0 everywhere and for NORDIC-1 at the training points.
"""

from __future__ import annotations

import numbers

import numpy as np

from nordicstats.class_rule import count_crossings

__all__ = ["plot_boundaries", "boundary_grid"]


def boundary_grid(results, X=None, grid=200, margin=0.05):
    """Grid over the range of the covariates and the decision values on it.

    Parameters
    ----------
    results : NORDICResults
        A fit with exactly two covariates.
    X : array-like of shape (n, 2), optional
        Points whose range (padded by ``margin`` of its width on every side)
        spans the grid; default the training covariates.
    grid : int, default=200
        Grid points per axis.
    margin : float, default=0.05

    Returns
    -------
    xx, yy : ndarray of shape (grid, grid)
        Grid coordinates.
    F : ndarray of shape (grid, grid, K-1)
        f_k at each grid point.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from nordicstats import NORDIC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.digitize(X[:, 0], [-0.5, 0.5])
    >>> res = NORDIC(y, X, kernel="linear").fit()
    >>> xx, yy, F = boundary_grid(res, grid=20)
    >>> F.shape
    (20, 20, 2)
    """
    points = _two_columns(results, X)
    if isinstance(grid, bool) or not isinstance(grid, numbers.Integral) or grid < 10:
        raise ValueError(f"The 'grid' parameter of plot_boundaries must be an int >= 10. "
                         f"Got {grid!r} instead.")
    lo, hi = points.min(axis=0), points.max(axis=0)
    pad = margin * np.where(hi > lo, hi - lo, 1.0)
    xs = np.linspace(lo[0] - pad[0], hi[0] + pad[0], int(grid))
    ys = np.linspace(lo[1] - pad[1], hi[1] + pad[1], int(grid))
    xx, yy = np.meshgrid(xs, ys)
    flat = np.column_stack([xx.ravel(), yy.ravel()])
    F = results.decision_function(flat)
    return xx, yy, np.asarray(F).reshape(int(grid), int(grid), -1)


def plot_boundaries(results, X=None, y=None, ax=None, grid=200, **kw):
    """Draw the K-1 boundaries f_k(x) = 0 of a two-covariate fit and shade where they cross.

    Parameters
    ----------
    results : NORDICResults
        A fit (any method or kernel) with exactly two covariates.
    X : array-like of shape (n, 2), optional
        Points to draw; default the training covariates.  The grid spans their range.
    y : array-like of shape (n,), optional
        Their classes (labels of the fit's levels); default the training
        response when ``X`` is None, otherwise the points are drawn in grey.
    ax : matplotlib Axes, optional
        Drawn on a new figure when None.
    grid : int, default=200
        Grid points per axis for the boundaries and the ambiguous region.
    **kw
        Passed to ``Axes.contour`` for the boundary lines (e.g. ``linewidths``),
        except these options: ``colors`` (one per boundary), ``ambiguous_color``
        (default ``"tab:red"``), ``ambiguous_alpha`` (default 0.3), ``legend``
        (default True), ``title`` and ``point_size`` (default 18).

    Returns
    -------
    matplotlib.axes.Axes
        With ``ax.ambiguous_share``: the share of grid points in the ambiguous region.

    Notes
    -----
    A grid point x is ambiguous when the sign sequence f_1(x), ..., f_{K-1}(x)
    increases somewhere, i.e. the prediction sets of the K-1 boundaries do not
    intersect (paper, Section 3, Figure 1); :meth:`NORDICResults.crossing_rate`
    counts the same event at data points.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from nordicstats import NORDIC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5])
    >>> ax = plot_boundaries(NORDIC(y, X, kernel="linear").fit(), grid=50)
    >>> 0.0 <= ax.ambiguous_share <= 1.0
    True
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    options = _options(kw)
    xx, yy, F = boundary_grid(results, X, grid)
    names = list(results.boundary_names)
    colors = options["colors"] or [plt.get_cmap("Dark2")(k % 8) for k in range(len(names))]
    if len(colors) != len(names):
        raise ValueError(f"colors must have one entry per boundary ({len(names)}); "
                         f"got {len(colors)}.")
    ax = ax or plt.figure(figsize=(5.5, 4.5)).gca()
    ambiguous = count_crossings(F.reshape(-1, F.shape[-1])).reshape(xx.shape)
    if ambiguous.any():
        ax.contourf(xx, yy, ambiguous.astype(float), levels=[0.5, 1.5],
                    colors=[options["ambiguous_color"]], alpha=options["ambiguous_alpha"])
    handles = []
    for k, name in enumerate(names):
        if F[..., k].min() < 0 < F[..., k].max():
            ax.contour(xx, yy, F[..., k], levels=[0.0], colors=[colors[k]], **kw)
        handles.append(Line2D([], [], color=colors[k], label=f"boundary {name}"))
    handles.append(Patch(color=options["ambiguous_color"], alpha=options["ambiguous_alpha"],
                         label=f"ambiguous ({ambiguous.mean():.1%} of the plot)"))
    handles += _scatter(ax, results, X, y, options["point_size"])
    ax.set_xlim(xx.min(), xx.max())
    ax.set_ylim(yy.min(), yy.max())
    names_xy = list(getattr(results.model, "exog_names", ["x1", "x2"]))[:2]
    ax.set_xlabel(names_xy[0])
    ax.set_ylabel(names_xy[1])
    if options["title"] is not None:
        ax.set_title(options["title"])
    if options["legend"]:
        ax.legend(handles=handles, fontsize="x-small", loc="upper center",
                  bbox_to_anchor=(0.5, -0.13), ncols=3, frameon=False)
    ax.ambiguous_share = float(ambiguous.mean())
    return ax


_DEFAULTS = {"colors": None, "ambiguous_color": "tab:red", "ambiguous_alpha": 0.3,
             "legend": True, "title": None, "point_size": 18}


def _options(kw):
    return {key: kw.pop(key, default) for key, default in _DEFAULTS.items()}


def _two_columns(results, X):
    model = getattr(results, "model", None)
    if model is None or not hasattr(results, "decision_function"):
        raise TypeError(f"results must be a fitted NORDICResults; got {type(results).__name__}.")
    if model.exog.shape[1] != 2:
        raise ValueError(f"plot_boundaries needs a fit with exactly 2 covariates; this one has "
                         f"{model.exog.shape[1]} ({model.exog_names}). Fit a model on two "
                         "columns to draw its boundaries.")
    if X is None:
        return model.exog
    points = np.asarray(X, dtype=float)
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2); got {points.shape}.")
    return points


def _scatter(ax, results, X, y, size):
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    model = results.model
    points = model.exog if X is None else np.asarray(X, dtype=float)
    if X is None and y is None:
        codes = model.response.codes
    elif y is None:
        ax.scatter(points[:, 0], points[:, 1], s=size, color="0.4", edgecolors="none")
        return []
    else:
        codes = _codes(y, model.levels)
        if codes.size != points.shape[0]:
            raise ValueError(f"y has {codes.size} labels but X has {points.shape[0]} rows.")
    markers = ("o", "s", "^", "D", "v", "P", "X", "*")
    shades = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(model.levels)))
    handles = []
    for c, level in enumerate(model.levels):
        rows = codes == c
        marker = markers[c % len(markers)]
        ax.scatter(points[rows, 0], points[rows, 1], s=size, marker=marker, color=shades[c],
                   edgecolors="black", linewidths=0.3)
        handles.append(Line2D([], [], linestyle="", marker=marker, color=shades[c],
                              markeredgecolor="black", label=f"class {level}"))
    return handles


def _codes(y, levels):
    values = np.asarray(y, dtype=object)
    lookup = {str(level): code for code, level in enumerate(levels)}
    unknown = sorted({str(v) for v in values} - set(lookup))
    if unknown:
        raise ValueError(f"y has labels {unknown} that are not levels of the fit ({list(levels)}).")
    return np.array([lookup[str(v)] for v in values])
