"""Bayes rules of multicategory and ordinal classification and their risks (paper, Section 5.1).

For one covariate value x let ``eta = (eta_1, ..., eta_K)`` be the conditional
class probabilities P(Y = k | X = x).  Classes are coded 0, ..., K-1 here, as in
:mod:`nordicstats.data` (class ``k`` of the paper is code ``k - 1``).

* The multicategory Bayes rule is the **mode** ``argmax_k eta_k``; it minimises
  the 0-1 risk ``sum_y eta_y 1{phi != y}``.
* The ordinal Bayes rule is the **median**: the class k with
  ``sum_{l<k} eta_l < 1/2 < sum_{l<=k} eta_l`` (Section 5.1; the block cut
  by the 0.5 line in figure fig:eta, Section 2.3).  It minimises the absolute
  (distance) risk ``sum_y eta_y |phi - y|``, which equals the aggregated 0-1 loss of the K-1
  binary subproblems, ``|phi - y| = sum_k 1{sign(phi > k) != sign(y > k)}``.

Ties.  Both rules return the *lowest-coded minimiser of their own risk*.  For
the mode that is the first maximal eta.  For the median, when a cumulative sum
``F_k = sum_{l<=k} eta_l`` equals 1/2 exactly, every class from k up to the
next class with positive probability minimises the absolute risk; we return
the lower one, the usual lower median ``min{k : F_k >= 1/2}`` (the generalised
inverse of the distribution function).  Equivalently the ordinal rule is
``#{k : P(Y > k) > 1/2}``, the number of boundaries whose Bayes sign is
strictly positive.  (:func:`nordicstats.solvers.problem.predict_codes` counts
``f_k >= 0`` as "above", so a decision value of exactly zero sits on the upper
side; at such a tie both choices have the same risk.)  Probabilities within
``1e-12`` of a tie are treated as tied, so rounding in a cumulative sum cannot
flip the answer.

Cost matrices are indexed ``cost[true, predicted]`` as in
:mod:`nordicstats.metrics`.  The **cost-Bayes rule** of a K x K cost matrix is
the level with the least expected cost,

    phi_cost(x) = argmin_j sum_l eta_l cost[l, j],

again the lowest-coded minimiser on ties (expected costs within
``TIE_TOL * max(1, min_j risk_j)`` of the least count as tied).  Under the
absolute-error matrix ``|l - j|`` it is the median rule, under the 0-1 matrix
the mode.  :func:`bayes_boundary_signs` turns the set of minimisers into the
Bayes sign of every boundary, the target of the Fisher-consistency checks of
:mod:`nordicstats.theory.consistency`.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

# TIE_TOL: tolerance below which a cumulative probability (or expected cost) counts as tied
from nordicstats.probability import TIE_TOL
from nordicstats.probability import expected_cost_minimisers as _risks_and_minimisers

__all__ = [
    "check_probabilities",
    "upper_tail",
    "bayes_rule_ordinal",
    "bayes_rule_multiclass",
    "loss_matrix",
    "conditional_risk",
    "prediction_risks",
    "bayes_rule_cost",
    "bayes_boundary_signs",
]

_RULES = ("ordinal", "median", "multiclass", "mode", "bayes")
_NAMED_LOSSES = ("zero_one", "absolute")


def check_probabilities(eta, name="eta", atol=1e-8):
    """Validate class probabilities and return them as a 2-D float array.

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)
        Conditional class probabilities, one row per covariate value.
    name : str, default="eta"
        Parameter name used in error messages.
    atol : float, default=1e-8
        Allowed deviation of a row sum from 1 and of an entry below 0.  Rows are
        renormalised to sum to one and entries in ``[-atol, 0)`` are set to 0.

    Returns
    -------
    probs : ndarray of shape (n, K)
    was_1d : bool
        Whether a single vector was given (callers return 1-D answers then).

    Raises
    ------
    ValueError
        Non-numeric, not 1-D/2-D, fewer than two classes, NaN, negative
        entries or rows that do not sum to one.

    Examples
    --------
    >>> probs, was_1d = check_probabilities([0.2, 0.3, 0.5])
    >>> probs.shape, was_1d
    ((1, 3), True)
    """
    try:
        probs = np.array(eta, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric class probabilities ({exc}).") from exc
    was_1d = probs.ndim == 1
    if was_1d:
        probs = probs[None, :]
    if probs.ndim != 2 or probs.shape[1] < 2 or probs.shape[0] == 0:
        raise ValueError(f"{name} must have shape (K,) or (n, K) with K >= 2 classes; "
                         f"got shape {np.shape(eta)}.")
    if not np.all(np.isfinite(probs)):
        raise ValueError(f"{name} has NaN or infinite entries; probabilities must be finite.")
    if np.any(probs < -atol):
        row = int(np.flatnonzero((probs < -atol).any(axis=1))[0])
        raise ValueError(f"{name} has negative probabilities (row {row}: "
                         f"{probs[row].tolist()}); every entry must be >= 0.")
    probs = np.clip(probs, 0.0, None)
    sums = probs.sum(axis=1)
    bad = np.abs(sums - 1.0) > atol
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"the rows of {name} must sum to 1 (within {atol:g}); row {row} sums "
                         f"to {sums[row]!r}. Divide by the row sums if these are weights.")
    return probs / sums[:, None], was_1d


def upper_tail(eta):
    """P(Y > k) for the K-1 boundaries k = 0, ..., K-2 (tail sums, row-wise).

    This is ``p_k = P(Y^(k) = +1)`` of the k-th binary subproblem, with the
    dummy label ``y^(k) = +1`` iff ``y > k`` (:func:`nordicstats.data.binary_signs`).

    Examples
    --------
    >>> upper_tail([0.2, 0.3, 0.5]).round(12).tolist()
    [0.8, 0.5]
    """
    probs, was_1d = check_probabilities(eta)
    tail = np.cumsum(probs[:, ::-1], axis=1)[:, ::-1][:, 1:]
    return tail[0] if was_1d else tail


def bayes_rule_ordinal(eta):
    """Ordinal Bayes rule: the conditional median (paper, Section 5.1).

    ``phi_OC(x) = k`` with ``sum_{l<k} eta_l < 1/2 < sum_{l<=k} eta_l``; a
    cumulative sum of exactly 1/2 (within ``TIE_TOL``) gives the lower class,
    the lower median ``min{k : F_k >= 1/2}`` (see the module notes).

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)

    Returns
    -------
    int or ndarray of int, shape (n,)
        Class codes 0..K-1.

    Examples
    --------
    >>> int(bayes_rule_ordinal([0.40, 0.15, 0.25, 0.20]))   # paper fig:eta, top row
    1
    >>> bayes_rule_ordinal([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]).tolist()
    [1, 0]
    """
    probs, was_1d = check_probabilities(eta)
    codes = np.sum(np.cumsum(probs, axis=1)[:, :-1] < 0.5 - TIE_TOL, axis=1).astype(int)
    return int(codes[0]) if was_1d else codes


def bayes_rule_multiclass(eta):
    """Multicategory Bayes rule: the conditional mode ``argmax_k eta_k`` (lowest code on ties).

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)

    Returns
    -------
    int or ndarray of int, shape (n,)

    Examples
    --------
    >>> int(bayes_rule_multiclass([0.40, 0.15, 0.25, 0.20]))
    0
    """
    probs, was_1d = check_probabilities(eta)
    codes = np.argmax(probs, axis=1).astype(int)
    return int(codes[0]) if was_1d else codes


def loss_matrix(loss, K):
    """The K x K loss ``L[true, predicted]`` for a named loss or a cost matrix.

    Parameters
    ----------
    loss : {"zero_one", "absolute"} or array-like / DataFrame of shape (K, K)
        ``"zero_one"``: ``1{phi != y}``; ``"absolute"``: ``|phi - y|`` (the
        distance loss, Qiao 2015); a matrix gives ``cost[true, predicted]``.
    K : int

    Returns
    -------
    ndarray of shape (K, K)

    Examples
    --------
    >>> loss_matrix("absolute", 3).tolist()
    [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]
    """
    if isinstance(loss, str):
        codes = np.arange(K)
        if loss == "zero_one":
            return (codes[:, None] != codes[None, :]).astype(float)
        if loss == "absolute":
            return np.abs(codes[:, None] - codes[None, :]).astype(float)
        raise ValueError(f"The 'loss' parameter must be one of {list(_NAMED_LOSSES)} or a "
                         f"(K, K) cost matrix cost[true, predicted]. Got {loss!r} instead.")
    try:
        cost = np.asarray(loss, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The 'loss' cost matrix must be numeric ({exc}).") from exc
    if cost.shape != (K, K) or not np.all(np.isfinite(cost)):
        raise ValueError(f"The 'loss' cost matrix must be a finite ({K}, {K}) array indexed "
                         f"cost[true, predicted]; got shape {cost.shape}.")
    return cost


def conditional_risk(eta, rule_or_predictions, loss="zero_one"):
    """Conditional risk ``R(phi | x) = sum_y eta_y(x) L(y, phi(x))`` of a rule.

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)
    rule_or_predictions : {"ordinal", "median", "multiclass", "mode", "bayes"}, callable, ints
        A named Bayes rule (``"bayes"``: the Bayes rule of ``loss`` itself,
        :func:`bayes_rule_cost`), a callable mapping an ``(n, K)`` probability
        matrix to ``n`` class codes, or the predicted codes themselves (one
        per row, or one int for all rows).
    loss : {"zero_one", "absolute"} or array-like of shape (K, K), default="zero_one"
        See :func:`loss_matrix`.

    Returns
    -------
    float or ndarray of shape (n,)

    Examples
    --------
    >>> eta = [0.40, 0.15, 0.25, 0.20]
    >>> round(conditional_risk(eta, "median", "absolute"), 12)
    1.05
    >>> round(conditional_risk(eta, "mode", "absolute"), 12)
    1.25
    >>> from nordicstats.metrics import DONUT_COSTS
    >>> round(conditional_risk([0.7, 0.05, 0.25], "bayes", DONUT_COSTS), 12)
    0.8
    """
    probs, was_1d = check_probabilities(eta)
    cost = loss_matrix(loss, probs.shape[1])
    codes = _predictions(probs, rule_or_predictions, cost)
    risk = (probs @ cost)[np.arange(probs.shape[0]), codes]
    return float(risk[0]) if was_1d else risk


def prediction_risks(eta, loss="zero_one"):
    """Risk of every possible prediction and the risk-minimising class.

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)
    loss : {"zero_one", "absolute"} or array-like of shape (K, K), default="zero_one"

    Returns
    -------
    risks : pandas.DataFrame of shape (n, K)
        ``risks.iloc[i, c] = sum_y eta_{iy} L(y, c)``; columns are the codes.
    best : ndarray of int, shape (n,)
        Lowest-coded minimiser per row.  Under ``"zero_one"`` it equals
        :func:`bayes_rule_multiclass`, under ``"absolute"``
        :func:`bayes_rule_ordinal` (the demonstration of Section 5.1).

    Examples
    --------
    >>> risks, best = prediction_risks([0.40, 0.15, 0.25, 0.20], "absolute")
    >>> risks.round(12).iloc[0].tolist(), best.tolist()
    ([1.25, 1.05, 1.15, 1.75], [1])
    """
    probs, _ = check_probabilities(eta)
    risks, minimisers = _risks_and_minimisers(probs, loss_matrix(loss, probs.shape[1]))
    frame = pd.DataFrame(risks, columns=pd.RangeIndex(probs.shape[1], name="prediction"))
    return frame, np.argmax(minimisers, axis=1).astype(int)


def bayes_rule_cost(eta, cost):
    """Cost-Bayes rule: the level with the least expected cost (lowest level on ties).

    .. math:: \\phi_{\\mathrm{cost}}(x) = \\operatorname{argmin}_{j}
              \\sum_{l} \\eta_l(x)\\, \\mathrm{cost}[l, j].

    Expected costs within ``TIE_TOL * max(1, min risk)`` of the least are
    tied and the lowest such level is returned.  The absolute-error matrix
    gives :func:`bayes_rule_ordinal` (the median), the 0-1 matrix
    :func:`bayes_rule_multiclass` (the mode).

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)
        Class probabilities, one row per covariate value.
    cost : array-like or DataFrame of shape (K, K), or {"zero_one", "absolute"}
        ``cost[true, predicted]`` with the levels in order (see :func:`loss_matrix`).

    Returns
    -------
    int or ndarray of int, shape (n,)
        Level codes 0..K-1.

    Examples
    --------
    Donut costs (Section 6.2): the median is class 1 (code 0), but predicting
    class 3 costs least because a class-3 case predicted as class 1 costs 3.

    >>> from nordicstats.metrics import DONUT_COSTS
    >>> eta = [0.7, 0.05, 0.25]
    >>> int(bayes_rule_cost(eta, DONUT_COSTS)), int(bayes_rule_ordinal(eta))
    (2, 0)
    >>> bayes_rule_cost([[0.5, 0.0, 0.5], [0.1, 0.1, 0.8]], "absolute").tolist()  # tie -> lowest
    [0, 2]
    """
    probs, was_1d = check_probabilities(eta)
    _, best = prediction_risks(probs, cost)
    return int(best[0]) if was_1d else best


def bayes_boundary_signs(eta, cost="absolute"):
    """Bayes sign of every boundary under a cost matrix: is the Bayes level above it?

    With J(x) the set of levels of least expected cost (ties as in
    :func:`bayes_rule_cost`), boundary k (between levels k and k+1) gets

    .. math:: s_k = +1 \\text{ if } \\min J > k, \\quad -1 \\text{ if } \\max J \\le k,
              \\quad 0 \\text{ otherwise (Bayes levels on both sides)}.

    A decision function f reproduces the Bayes rule when
    ``sgn f_k = s_k`` at every boundary with ``s_k != 0``.  Under the
    absolute-error matrix ``s_k = sgn(P(Y > k) - 1/2)`` (Definition 1).

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)
    cost : array-like or DataFrame of shape (K, K), or {"zero_one", "absolute"}, default="absolute"

    Returns
    -------
    ndarray of int, shape (K-1,) or (n, K-1)

    Examples
    --------
    >>> bayes_boundary_signs([0.25, 0.25, 0.5]).tolist()   # P(Y > 1) = 1/2: levels 1, 2 tie
    [1, 0]
    >>> from nordicstats.metrics import DONUT_COSTS
    >>> bayes_boundary_signs([0.7, 0.05, 0.25], DONUT_COSTS).tolist()
    [1, 1]
    """
    probs, was_1d = check_probabilities(eta)
    _, minimisers = _risks_and_minimisers(probs, loss_matrix(cost, probs.shape[1]))
    levels = np.arange(probs.shape[1])
    lowest = np.where(minimisers, levels, probs.shape[1]).min(axis=1, keepdims=True)
    highest = np.where(minimisers, levels, -1).max(axis=1, keepdims=True)
    boundaries = levels[None, :-1]
    signs = np.where(lowest > boundaries, 1, np.where(highest <= boundaries, -1, 0))
    return signs[0] if was_1d else signs


def _predictions(probs, rule, cost):
    n, K = probs.shape
    if isinstance(rule, str):
        if rule in ("ordinal", "median"):
            return bayes_rule_ordinal(probs)
        if rule in ("multiclass", "mode"):
            return bayes_rule_multiclass(probs)
        if rule == "bayes":
            return np.argmax(_risks_and_minimisers(probs, cost)[1], axis=1)
        raise ValueError(f"The 'rule_or_predictions' parameter must be one of {list(_RULES)}, "
                         f"a callable or integer class codes. Got {rule!r} instead.")
    codes = rule(probs) if callable(rule) else rule
    if isinstance(codes, numbers.Integral):
        codes = np.full(n, int(codes))
    codes = np.asarray(codes)
    if codes.shape != (n,) or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"predictions must be {n} integer class codes in 0..{K - 1}; got "
                         f"shape {codes.shape} and dtype {codes.dtype}.")
    if codes.min() < 0 or codes.max() >= K:
        raise ValueError(f"predictions must be class codes in 0..{K - 1}; got values from "
                         f"{codes.min()} to {codes.max()}.")
    return codes.astype(int)
