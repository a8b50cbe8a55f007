"""Cost matrices of ordinal classification and the hinge weights they induce.

A cost matrix ``cost`` of K ordered levels holds ``cost[l, j]``, the cost of
predicting level j for a case of level l (row = true level, column =
predicted level, levels coded 0, ..., K-1 lowest first).  NORDIC accepts a cost
matrix that is zero on the diagonal and nondecreasing away from it along every
row::

    0 = cost[l, l] <= cost[l, l+1] <= ... <= cost[l, K-1],
    0 = cost[l, l] <= cost[l, l-1] <= ... <= cost[l, 0],

so that predicting further from the truth never costs less.  Such a row is the
sum of its increments across the K-1 boundaries between adjacent levels
(boundary k lies between levels k and k+1, k = 0, ..., K-2)::

    c_{l,k} = |cost[l, k+1] - cost[l, k]|,
    cost[l, j] = sum of c_{l,k} over the boundaries k between l and j.

:func:`cost_to_boundary_weights` returns the (K, K-1) array of these
increments; a case of level l then weights its hinge term for boundary k by
c_{l,k}.  The absolute-error matrix ``|l - j|`` gives all weights 1, the
unweighted problem.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["check_cost_matrix", "cost_to_boundary_weights", "absolute_cost"]


def absolute_cost(n_levels):
    """Absolute-error cost matrix ``cost[l, j] = |l - j|`` of ``n_levels`` levels.

    Examples
    --------
    >>> absolute_cost(3)
    array([[0., 1., 2.],
           [1., 0., 1.],
           [2., 1., 0.]])
    """
    codes = np.arange(int(n_levels))
    return np.abs(codes[:, None] - codes[None, :]).astype(float)


def _row_names(cost):
    """Labels used to name rows in error messages: the DataFrame index, else codes."""
    if isinstance(cost, pd.DataFrame):
        return [f"row {i} (level {label!r})" for i, label in enumerate(cost.index)]
    return [f"row {i}" for i in range(np.shape(cost)[0])] if np.ndim(cost) == 2 else []


def check_cost_matrix(cost, name="cost", n_levels=None):
    """Validate an ordinal cost matrix and return it as a float array.

    Parameters
    ----------
    cost : array-like of shape (K, K) or pandas.DataFrame
        ``cost[l, j]``: cost of predicting level j for a case of level l, levels
        lowest first.  A DataFrame must list the same levels in the same order
        in its index (true) and columns (predicted); its values are used in that
        order (align it to the model's levels before calling).
    name : str, default="cost"
        Argument name used in error messages.
    n_levels : int, optional
        Required number of levels K.

    Returns
    -------
    ndarray of shape (K, K)

    Raises
    ------
    ValueError
        Not numeric, not square, fewer than 2 levels, not ``n_levels`` levels,
        non-finite or negative
        entries, a nonzero diagonal, or a row that decreases away from the
        diagonal (the message names the offending row and its values).

    Examples
    --------
    >>> check_cost_matrix([[0, 1], [3, 0]])
    array([[0., 1.],
           [3., 0.]])
    >>> check_cost_matrix([[0, 2, 1], [1, 0, 1], [2, 1, 0]])
    Traceback (most recent call last):
    ...
    ValueError: cost row 0 decreases away from the diagonal: [0.0, 2.0, 1.0]. ...
    """
    if isinstance(cost, pd.DataFrame) and list(cost.index) != list(cost.columns):
        raise ValueError(f"{name} must list the same levels in the same order in its index "
                         f"(true level) and columns (predicted level); got index "
                         f"{list(cost.index)} and columns {list(cost.columns)}.")
    try:
        matrix = np.asarray(cost, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric K x K matrix ({exc}).") from exc
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise ValueError(f"{name} must be a square K x K matrix with K >= 2 levels "
                         f"(row = true level, column = predicted level); got shape "
                         f"{matrix.shape}.")
    if n_levels is not None and matrix.shape[0] != n_levels:
        raise ValueError(f"{name} must be ({n_levels}, {n_levels}), one row and column per "
                         f"level; got shape {matrix.shape}.")
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise ValueError(f"{name} must hold finite nonnegative costs; got {matrix.tolist()}.")
    rows = _row_names(cost)
    diagonal = np.flatnonzero(np.diag(matrix) != 0)
    if diagonal.size:
        row = int(diagonal[0])
        raise ValueError(f"{name} must be zero on the diagonal (a correct prediction costs "
                         f"nothing); {rows[row]} has cost {float(matrix[row, row])!r} at its "
                         "own level. "
                         "Subtract the diagonal from each row.")
    for level, row in enumerate(matrix):
        if np.any(np.diff(row[level:]) < 0) or np.any(np.diff(row[: level + 1]) > 0):
            raise ValueError(f"{name} {rows[level]} decreases away from the diagonal: "
                             f"{row.tolist()}. Every row must be nondecreasing from its "
                             "diagonal entry towards both ends (predicting further from the "
                             "truth must not cost less).")
    return matrix


def cost_to_boundary_weights(cost):
    """Per-(level, boundary) hinge weights of a cost matrix: its row increments.

    For a case of level l and boundary k (between levels k and k+1,
    k = 0, ..., K-2),

    .. math:: c_{l,k} = |\\mathrm{cost}[l, k+1] - \\mathrm{cost}[l, k]|,

    so that ``cost[l, j]`` is the sum of ``c[l, k]`` over the boundaries
    between l and j.  The weighted hinge loss of a case of level l is
    :math:`\\sum_k c_{l,k} (1 - y^{(k)} f_k)_+` with :math:`y^{(k)} = +1` if
    l > k, else -1.

    Parameters
    ----------
    cost : array-like of shape (K, K) or pandas.DataFrame
        Validated by :func:`check_cost_matrix`.

    Returns
    -------
    ndarray of shape (K, K-1)
        Row l holds the weights of a case of level l; all nonnegative.

    Examples
    --------
    >>> cost_to_boundary_weights(absolute_cost(3))
    array([[1., 1.],
           [1., 1.],
           [1., 1.]])
    >>> cost_to_boundary_weights([[0, 1, 1], [2, 0, 2], [3, 1, 0]])
    array([[1., 0.],
           [2., 2.],
           [2., 1.]])
    """
    return np.abs(np.diff(check_cost_matrix(cost), axis=1))
