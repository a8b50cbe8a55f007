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

:func:`check_cost_matrix` is the one validator of cost matrices in the package:
``NORDIC(cost=)``, the theory helpers, :func:`~nordicstats.metrics.weighted_error`
and ``tune(scoring=)`` all call it, so the rules and messages are the same
everywhere.
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


def check_cost_matrix(cost, name="cost", n_levels=None, *, levels=None, ordinal=True):
    """Validate a cost matrix and return it as a float array: the package's one set of rules.

    Every cost matrix the package accepts -- ``NORDIC(cost=)``, the theory
    helpers, :func:`~nordicstats.metrics.weighted_error` and ``tune(scoring=)``
    -- passes through here.  The rules:

    * numeric, square K x K with K >= 2 (``n_levels`` or ``len(levels)`` when given);
    * finite and nonnegative;
    * with ``levels``, a DataFrame is matched to them by its labels (index = true
      level, columns = predicted level; string labels such as R's dimnames match
      levels of another type by their text) and reordered to them: every level must
      label a row and a column, each once, and labels of no level are ignored.  An
      array is read in the order of ``levels``.  Without ``levels``, a DataFrame
      must list the same labels in the same order in its index and columns;
    * ``ordinal=True`` (fitting and theory): zero on the diagonal and nondecreasing
      away from it along every row (see the module docstring), so that the matrix
      is the sum of its boundary increments.  ``ordinal=False`` (scoring) needs
      only the rules above: any finite nonnegative table of costs can be averaged.

    Parameters
    ----------
    cost : array-like of shape (K, K) or pandas.DataFrame
        ``cost[l, j]``: cost of predicting level j for a case of level l, levels
        lowest first.
    name : str, default="cost"
        Argument named in error messages.
    n_levels : int, optional
        Required number of levels K.
    levels : sequence, optional
        The K levels, lowest first, to align a labelled matrix to.
    ordinal : bool, default=True
        Also require the zero diagonal and rows nondecreasing away from it.

    Returns
    -------
    ndarray of shape (K, K)

    Raises
    ------
    ValueError
        Not numeric, not square, fewer than 2 levels, not K levels, labels that
        miss a level, non-finite or negative entries, a nonzero diagonal, or a row
        that decreases away from the diagonal (the message names the offending
        row, its level and its values).

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
    if levels is not None:
        n_levels = len(levels)
        cost = (_align_frame(cost, levels, name) if isinstance(cost, pd.DataFrame)
                else _label_array(cost, levels))
    elif isinstance(cost, pd.DataFrame) and list(cost.index) != list(cost.columns):
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
        named = "" if levels is None else f" of {list(levels)}"
        raise ValueError(f"{name} must be ({n_levels}, {n_levels}), one row and column per "
                         f"level{named}; got shape {matrix.shape}.")
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise ValueError(f"{name} must hold finite nonnegative costs; got {matrix.tolist()}.")
    if ordinal:
        _check_ordinal_rows(matrix, _row_names(cost), name)
    return matrix


def _check_ordinal_rows(matrix, rows, name):
    """Raise unless the matrix is zero on the diagonal and rows grow away from it."""
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


def _row_names(cost):
    """Labels used to name rows in error messages: the DataFrame index, else codes."""
    if isinstance(cost, pd.DataFrame):
        return [f"row {i} (level {label!r})" for i, label in enumerate(cost.index)]
    return [f"row {i}" for i in range(np.shape(cost)[0])]


def _label_array(cost, levels):
    """A K x K array as a DataFrame labelled by ``levels`` (so messages name the levels)."""
    try:
        square = np.shape(cost) == (len(levels), len(levels))
    except ValueError:  # ragged nested lists: the numeric check below names the problem
        square = False
    if not square:
        return cost
    return pd.DataFrame(cost, index=list(levels), columns=list(levels))


def _align_frame(cost, levels, name):
    """The DataFrame's rows and columns of ``levels``, in their order."""
    index, columns = _as_labels(cost.index, levels), _as_labels(cost.columns, levels)
    for axis, labels in (("row", index), ("column", columns)):
        missing = [level for level in levels if level not in labels]
        repeated = sorted({str(label) for label in labels if labels.count(label) > 1})
        if missing or repeated:
            problem = (f"no {axis} for level(s) {missing}" if missing
                       else f"repeated labels {repeated}")
            raise ValueError(f"{name} must be labelled by the levels {list(levels)} on both "
                             f"axes (rows = true level, columns = predicted level); its {axis} "
                             f"labels are {list(labels)}: {problem}.")
    frame = cost.copy()
    frame.index, frame.columns = index, columns
    return frame.loc[list(levels), list(levels)]


def _as_labels(labels, levels):
    """Match labels to the levels, also when one side is strings (e.g. from R's dimnames)."""
    by_str = {str(level): level for level in levels}
    return [label if label in levels else by_str.get(str(label), label) for label in labels]


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
