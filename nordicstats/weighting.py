"""Case weights and cost matrices: the map to per-(case, boundary) hinge weights.

NORDIC's loss is C sum_{k,i} c_{i,k} xi_{k,i} (see
:class:`~nordicstats.solvers.NordicProblem`); this module computes the weights
c_{i,k} from what users bring:

* ``weights``: one nonnegative case weight w_i per row (frequencies, survey
  weights, scikit-learn's ``sample_weight``).  Row i's K-1 hinge terms are
  multiplied by w_i, so an integer w_i is the same as w_i copies of the row.
* ``cost``: a K x K matrix, cost[l, j] = the cost of predicting level j for a
  case of level l (0-based codes, lowest level first), zero on the diagonal and
  nondecreasing away from it along every row.  Boundary k (0-based, between
  levels k and k+1) gets, for a case of level l, the cost increment across it

      c_{i,k} = ``|cost[l, k+1] - cost[l, k]|``,   l = y_i.

  A case of level l predicted as j > l crosses the boundaries k = l, ..., j-1
  on their wrong side, and those increments add up to cost[l, j]
  (symmetrically for j < l), so the weighted count of wrong-side boundaries is
  exactly the misclassification cost, and the weighted hinge is its convex
  surrogate.  The absolute-error matrix ``|l - j|`` gives all ones, the unweighted fit.
  The matrix is validated by :func:`nordicstats.costs.check_cost_matrix`, the
  package's one set of rules for cost matrices.

Both together multiply: c_{i,k} = w_i ``|cost[y_i, k+1] - cost[y_i, k]|``.
"""

from __future__ import annotations

import numpy as np

from nordicstats.costs import cost_to_boundary_weights

__all__ = ["check_case_weights", "hinge_weights", "describe_weighting"]


def check_case_weights(weights, n, codes=None, levels=None, owner="NORDIC", name="weights"):
    """Return case weights as a float array of length n, or raise a ValueError naming them.

    Parameters
    ----------
    weights : array-like of shape (n,)
        Nonnegative, finite case weights.
    n : int
        Number of rows.
    codes : ndarray of int, optional
        Level codes of the rows; with them a level whose weights sum to zero raises.
    levels : sequence, optional
        Level labels used in that message.
    owner, name : str
        Estimator and argument named in the messages.

    Examples
    --------
    >>> check_case_weights([1, 2, 0], 3).tolist()
    [1.0, 2.0, 0.0]
    """
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of {owner} must be numeric case weights, one "
                         f"per row. Got {_short(weights)} instead.") from None
    if w.ndim != 1 or w.size != n:
        raise ValueError(f"The '{name}' parameter of {owner} must have one weight per row "
                         f"(length {n}). Got shape {w.shape} instead.")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise ValueError(
            f"The '{name}' parameter of {owner} must be nonnegative and finite. Got "
            f"{float(w[bad[0]])!r} at row {bad[0]} ({bad.size} bad value(s)); drop those rows "
            "or give them weight 0.")
    if codes is not None:
        sums = np.bincount(codes, weights=w, minlength=len(levels) if levels else 0)
        present = np.bincount(codes, minlength=sums.size) > 0
        empty = np.flatnonzero(present & (sums == 0))
        if empty.size:
            label = levels[empty[0]] if levels is not None else empty[0]
            raise ValueError(
                f"The '{name}' parameter of {owner} gives level {label!r} a total weight of 0, "
                "so its boundaries cannot be fitted. Give some of its rows a positive weight "
                "or drop the level.")
    return w


def hinge_weights(codes, levels, weights=None, cost=None):
    """The (n, K-1) hinge weights w_i ``|cost[y_i, k+1] - cost[y_i, k]|``, or None when unweighted.

    ``weights`` and ``cost`` must already be checked (:func:`check_case_weights`,
    :func:`nordicstats.costs.check_cost_matrix`).
    """
    if weights is None and cost is None:
        return None
    n, m = np.asarray(codes).size, len(levels) - 1
    c = np.ones((n, m)) if cost is None else cost_to_boundary_weights(cost)[np.asarray(codes)]
    if weights is not None:
        c = c * np.asarray(weights, dtype=float)[:, None]
    return c


def describe_weighting(weights, cost, levels):
    """(header label, note) describing how the hinge terms are weighted; ("", "") if unweighted.

    Examples
    --------
    >>> describe_weighting(np.array([1.0, 2.0]), None, ["a", "b"])[0]
    'case weights'
    """
    labels, notes = [], []
    if weights is not None:
        labels.append("case weights")
        notes.append(f"case weights (sum {np.sum(weights):.6g} over {np.size(weights)} rows)")
    if cost is not None:
        labels.append("cost matrix")
        rows = "; ".join(f"{level}: " + " ".join(f"{v:g}" for v in row)
                         for level, row in zip(levels, cost, strict=True))
        notes.append(f"cost matrix (rows = true level, columns = predicted) [{rows}]")
    if not labels:
        return "", ""
    carries = ("w_i |cost[l, k+1] - cost[l, k]|" if weights is not None
               else "|cost[l, k+1] - cost[l, k]|")
    if cost is None:
        return labels[0], "Hinge terms weighted by " + notes[0] + "."
    return " x ".join(labels), ("Hinge terms weighted by " + " x ".join(notes)
                                + f"; boundary k of a level-l case carries {carries}.")


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
