"""Performance measures for ordinal classifiers (paper, Sections 6 and 7).

Conventions
-----------
* Labels are put in order once, by :func:`ordinal_codes`: an ordered
  ``pandas.Categorical`` gives its categories, ``labels=`` gives an explicit
  order, and plain numbers are sorted.  Strings without an order are refused
  where the order matters (mean absolute error), because sorting ``L, B, R``
  alphabetically would silently give ``B < L < R``.
* Cost matrices are indexed ``cost[true, predicted]``: row = true class,
  column = predicted class.  The paper's costs are shipped here:
  :data:`DONUT_COSTS` (Section 6.2) and :data:`BALANCE_COSTS` (Section 7).
* :func:`confusion_matrix` gives rows = true class, columns = predicted class
  by default; ``view="paper"`` gives the paper's layout (Section 6.2): entry
  ``(k, l)`` is the proportion of class-``l`` observations classified to class
  ``k``, so rows are predicted classes and every column sums to one.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from nordicstats.costs import check_cost_matrix
from nordicstats.weighting import check_case_weights

__all__ = [
    "ordinal_codes",
    "error_rate",
    "mean_absolute_error",
    "weighted_error",
    "confusion_matrix",
    "paper_confusion",
    "DONUT_COSTS",
    "BALANCE_COSTS",
]

#: Donut costs (Section 6.2), ``cost[true, predicted]`` for classes 1, 2, 3:
#: a misclassified class-1 point costs 1; class 2 -> 1 or 3 costs 2;
#: class 3 -> 2 costs 1 and 3 -> 1 costs 3.
DONUT_COSTS = pd.DataFrame(
    [[0.0, 1.0, 1.0], [2.0, 0.0, 2.0], [3.0, 1.0, 0.0]],
    index=pd.Index([1, 2, 3], name="true"),
    columns=pd.Index([1, 2, 3], name="predicted"),
)

#: Balance-scale costs (Section 7), ``cost[true, predicted]`` for L < B < R:
#: 2 for L <-> R, 1 for any other error.
BALANCE_COSTS = pd.DataFrame(
    [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]],
    index=pd.Index(["L", "B", "R"], name="true"),
    columns=pd.Index(["L", "B", "R"], name="predicted"),
)

_NORMALIZE = (None, "true", "pred", "all")
_VIEWS = ("standard", "paper")


def ordinal_codes(y_true, y_pred, labels=None, need_order=True):
    """Code true and predicted labels as 0..K-1 on a common, ordered set of levels.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Labels; ordered ``pandas.Categorical`` (or Series of one) carry their order.
    labels : sequence, optional
        All K levels, lowest first.  Overrides the categoricals' order.
    need_order : bool, default=True
        If False, unordered string labels are allowed and sorted (fine for
        measures that ignore the order, such as the error rate).

    Returns
    -------
    true_codes, pred_codes : ndarray of int
    levels : list

    Raises
    ------
    ValueError
        Different lengths, missing values, labels outside ``labels``, or
        unordered non-numeric labels when the order matters.

    Examples
    --------
    >>> t, p, lev = ordinal_codes([1, 2, 3], [1, 3, 3])
    >>> t.tolist(), p.tolist(), lev
    ([0, 1, 2], [0, 2, 2], [1, 2, 3])
    """
    true_values, pred_values = _values(y_true, "y_true"), _values(y_pred, "y_pred")
    if len(true_values) != len(pred_values):
        raise ValueError(f"y_true has {len(true_values)} labels but y_pred has "
                         f"{len(pred_values)}; they must describe the same observations.")
    if len(true_values) == 0:
        raise ValueError("y_true and y_pred are empty; there is nothing to score.")
    levels = _levels(true_values, pred_values, labels, need_order)
    index = {level: code for code, level in enumerate(levels)}
    codes = []
    for values, name in ((true_values, "y_true"), (pred_values, "y_pred")):
        objects = np.asarray(values, dtype=object)
        unknown = sorted({str(v) for v in objects.tolist() if v not in index})
        if unknown:
            raise ValueError(f"{name} has labels {unknown} that are not among the levels "
                             f"{levels}; pass labels=[...] listing every level in order.")
        codes.append(np.fromiter((index[v] for v in objects.tolist()), dtype=int,
                                 count=objects.size))
    return codes[0], codes[1], levels


def error_rate(y_true, y_pred, sample_weight=None):
    """Proportion of misclassified observations, ``mean(y_pred != y_true)``.

    ``sample_weight`` makes it the weighted mean (case weights as frequencies).

    Examples
    --------
    >>> error_rate(["a", "b", "b", "c"], ["a", "c", "b", "a"])
    0.5
    """
    t, p, _ = ordinal_codes(y_true, y_pred, need_order=False)
    return _mean(t != p, sample_weight)


def mean_absolute_error(y_true, y_pred, labels=None, sample_weight=None):
    """Mean absolute difference of level codes, ``mean(|code(y_pred) - code(y_true)|)``.

    Distances are counted in levels (adjacent levels are 1 apart), whatever
    the labels are.  The order comes from ordered categoricals, ``labels=``, or
    sorting numeric labels.

    Examples
    --------
    >>> mean_absolute_error(["L", "B", "R"], ["R", "B", "B"], labels=["L", "B", "R"])
    1.0
    """
    t, p, _ = ordinal_codes(y_true, y_pred, labels)
    return _mean(np.abs(t - p), sample_weight)


def weighted_error(y_true, y_pred, cost_matrix, labels=None, sample_weight=None):
    """Mean misclassification cost per observation, ``mean(cost[y_true, y_pred])``.

    With ``sample_weight`` the mean is weighted: sum_i w_i cost[y_i, yhat_i] / sum_i w_i.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
    cost_matrix : array-like of shape (K, K) or pandas.DataFrame
        ``cost[true, predicted]``: row = true class, column = predicted class,
        nonnegative and finite (checked by
        :func:`nordicstats.costs.check_cost_matrix` with ``ordinal=False``: a
        scoring table need not be zero on the diagonal or grow away from it).  A
        DataFrame is matched to the labels by its index (true) and columns
        (predicted) and, if ``labels`` is not given, its index gives the order of
        the levels.  A plain array follows the order of ``labels`` (or of the
        categoricals / sorted numbers).
    labels : sequence, optional

    Returns
    -------
    float

    Examples
    --------
    >>> weighted_error(["L", "B", "R", "R"], ["R", "B", "L", "B"], BALANCE_COSTS)
    1.25
    """
    if isinstance(cost_matrix, pd.DataFrame) and labels is None:
        labels = list(cost_matrix.index)
    t, p, levels = ordinal_codes(y_true, y_pred, labels)
    cost = check_cost_matrix(cost_matrix, name="cost_matrix", levels=levels, ordinal=False)
    return _mean(cost[t, p], sample_weight)


def _mean(values, sample_weight):
    """Plain or case-weighted mean (weights: nonnegative, one per observation)."""
    if sample_weight is None:
        return float(np.mean(values))
    w = check_case_weights(sample_weight, np.size(values), owner="the metric",
                           name="sample_weight")
    if w.sum() == 0:
        raise ValueError("The 'sample_weight' of the metric sums to 0; nothing to score.")
    return float(np.average(values, weights=w))


def confusion_matrix(y_true, y_pred, labels=None, normalize=None, view="standard"):
    """Confusion matrix as a labelled DataFrame.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
    labels : sequence, optional
        Levels in order; all of them get a row and a column, observed or not.
    normalize : {None, "true", "pred", "all"}, default=None
        ``None``: counts.  ``"true"``: proportions within each true class
        (each true class sums to 1).  ``"pred"``: within each predicted class.
        ``"all"``: of all observations.  A class with no observations gives NaN.
    view : {"standard", "paper"}, default="standard"
        ``"standard"``: rows = true class, columns = predicted class.
        ``"paper"``: the transpose, rows = predicted class ``k``, columns =
        true class ``l`` (Section 6.2); with ``normalize="true"`` entry
        ``(k, l)`` is the proportion of class-``l`` observations classified to
        class ``k`` and every column sums to 1 (see :func:`paper_confusion`).

    Returns
    -------
    pandas.DataFrame
        Index and columns named ``"true"`` / ``"predicted"`` as appropriate.

    Examples
    --------
    >>> confusion_matrix([1, 1, 2, 3], [1, 2, 2, 2]).values.tolist()
    [[1, 1, 0], [0, 1, 0], [0, 1, 0]]
    """
    if normalize not in _NORMALIZE:
        raise ValueError(f"The 'normalize' parameter must be one of {list(_NORMALIZE)}. "
                         f"Got {normalize!r} instead.")
    if view not in _VIEWS:
        raise ValueError(f"The 'view' parameter must be one of {list(_VIEWS)}. "
                         f"Got {view!r} instead.")
    t, p, levels = ordinal_codes(y_true, y_pred, labels, need_order=False)
    K = len(levels)
    counts = np.zeros((K, K), dtype=int)
    np.add.at(counts, (t, p), 1)
    table = counts if normalize is None else _normalise(counts, normalize)
    frame = pd.DataFrame(table, index=pd.Index(levels, name="true"),
                         columns=pd.Index(levels, name="predicted"))
    return frame.T if view == "paper" else frame


def paper_confusion(y_true, y_pred, labels=None):
    """The paper's confusion matrix (Section 6.2): rows predicted, columns true, columns sum to 1.

    Same as ``confusion_matrix(y_true, y_pred, labels, normalize="true", view="paper")``.

    Examples
    --------
    >>> paper_confusion([1, 1, 2, 2], [1, 2, 2, 2]).values.tolist()
    [[0.5, 0.0], [0.5, 1.0]]
    """
    return confusion_matrix(y_true, y_pred, labels, normalize="true", view="paper")


def _normalise(counts, how):
    counts = counts.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if how == "true":
            return counts / counts.sum(axis=1, keepdims=True)
        if how == "pred":
            return counts / counts.sum(axis=0, keepdims=True)
        return counts / counts.sum()


def _values(y, name):
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise ValueError(f"{name} must be one column; got a DataFrame with {y.shape[1]}.")
        y = y.iloc[:, 0]
    values = y.array if isinstance(y, pd.Series) else y
    if not isinstance(values, pd.Categorical):
        values = np.asarray(values)
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {values.shape}.")
    if pd.isna(np.asarray(values, dtype=object)).any():
        raise ValueError(f"{name} has missing values; drop them before scoring.")
    return values


def _levels(true_values, pred_values, labels, need_order):
    if labels is not None:
        levels = list(labels)
        if len(set(levels)) != len(levels):
            raise ValueError(f"labels has repeated levels: {levels}. List each level once.")
        return levels
    for values in (true_values, pred_values):
        if isinstance(values, pd.Categorical) and values.ordered:
            return list(values.categories)
    observed = set(np.asarray(true_values, dtype=object).tolist())
    observed |= set(np.asarray(pred_values, dtype=object).tolist())
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in observed)
    if not numeric and need_order:
        raise ValueError(
            f"the order of the labels {sorted(map(str, observed))} is not known; pass "
            "ordered categoricals or labels=[...] from lowest to highest."
        )
    try:
        return sorted(observed)
    except TypeError as exc:
        raise ValueError("labels of mixed types cannot be sorted; pass labels=[...].") from exc
