"""Per-boundary checks of whether the Bahadur sandwich applies to linear NORDIC.

The sandwich (Koo, Lee, Kim & Park 2008) rests on the hinge-loss first-order
conditions of each boundary, and the paper's Theorem 1 transfers it to the
noncrossing-constrained fit only when the constraints do not bind in the limit.
Each function below measures one way this fails, on plain arrays; the thresholds
were chosen from the validity study (``benchmarks/validity_study.py``, evidence in
``docs/notes/inference-validity.md``):

* the unconstrained (BSVM) component of the boundary is degenerate or nearly so:
  its linear part x'w~_k barely varies (:func:`unconstrained_signal`), or it is not
  distinguishable from the constant classifier (:func:`departure_from_constant`), so the
  constrained w_k is set by the noncrossing constraints, not by the hinge loss;
* the constrained and unconstrained coefficients differ by more than their
  sampling error (:func:`standardized_gap`): the constraints bind at this n;
* the covariates have no continuous part: many rows lie exactly on the margin or
  there are few distinct covariate patterns (:func:`margin_share`,
  :func:`distinct_patterns`), so the density of the margin residual at 0, which
  the Hessian H_k needs, does not exist;
* too few observations on a side of the boundary (:func:`side_counts`);
* an ill-conditioned Hessian estimate (scaled condition number above ``cond_max``).

:func:`check_boundaries` runs them all and returns one :class:`BoundaryDiagnostic`
per boundary; ``reasons`` is empty where the sandwich can be used.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "BoundaryDiagnostic",
    "CONSTANT_W",
    "check_boundaries",
    "failed_checks",
    "departure_from_constant",
    "distinct_patterns",
    "margin_share",
    "side_counts",
    "standardized_gap",
    "unconstrained_signal",
    "is_lattice",
    "is_constraint_determined",
    "THRESHOLDS",
]

#: Slopes all below this in absolute value: the fit of the boundary is the constant
#: classifier (w = 0).
CONSTANT_W = 1e-7

#: Thresholds of :func:`check_boundaries` (evidence: docs/notes/inference-validity.md).
#:
#: * ``min_signal``: sd of x'w~_k of the unconstrained fit below this is "nearly
#:   degenerate"; the hinge loss then hardly pins w_k down.
#: * ``min_departure``: the unconstrained fit's departure from the constant classifier,
#:   as a z statistic (:func:`departure_from_constant`), below this (a one-sided 5% test)
#:   means the constant classifier, hence a constraint-determined boundary, cannot be
#:   ruled out.
#: * ``max_gap``: largest ``|beta_kj - beta~_kj| / se~_kj`` (constrained minus unconstrained,
#:   in units of the unconstrained Bahadur standard error) tolerated.
#: * ``max_margin_share``: share of rows exactly on the margin (``|r_ik| <= margin_tol``) above
#:   which (and above 3 (d + 1) rows) the residuals sit on a lattice; a continuous design
#:   has at most ~(d + 1) rows there.
#: * ``min_patterns``: fewer distinct covariate rows than this (and fewer than n / 2)
#:   means no continuous part.
#: * ``min_side``: fewest observations on either side of the boundary.
#: * ``cond_max``: largest scaled condition number of the Hessian estimate.
THRESHOLDS = {
    "min_signal": 0.1,
    "min_departure": 1.645,
    "max_gap": 2.0,
    "max_margin_share": 0.02,
    "min_patterns": 50,
    "min_side": 100,
    "cond_max": 1e8,
    "margin_tol": 1e-5,
}


@dataclass(frozen=True)
class BoundaryDiagnostic:
    """Validity checks of the Bahadur sandwich for one boundary.

    Attributes
    ----------
    boundary : int
        Index k of the boundary (0-based).
    measures : dict
        ``signal``, ``departure``, ``gap``, ``margin_share``, ``patterns``, ``side``,
        ``cond``, ``n``, ``d``.
    reasons : tuple of str
        Why the sandwich does not apply (empty when every check passes).
    """

    boundary: int
    measures: dict = field(default_factory=dict)
    reasons: tuple = ()

    @property
    def ok(self):
        """True when the Bahadur sandwich may be used for this boundary."""
        return not self.reasons

    @property
    def lattice(self):
        """True when the design has no continuous part (no valid standard errors at all)."""
        return is_lattice(self.measures)

    @property
    def constraint_determined(self):
        """True when the unconstrained fit is (nearly) constant or not distinguishable
        from the constant classifier: the noncrossing constraints, not the hinge loss,
        set this boundary (no root-n limit law)."""
        return is_constraint_determined(self.measures)


def unconstrained_signal(X, slopes, weights=None):
    """sd of x_i'w~_k over the rows, one per boundary.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    slopes : ndarray of shape (d, K-1)
        Slopes w~_k of the unconstrained fit (BSVM).
    weights : ndarray of shape (n,), optional
        Frequency weights: the sd of the rows repeated w_i times.

    Returns
    -------
    ndarray of shape (K-1,)
        0 for a constant classifier (w~_k = 0).  A decision value f = b + x'w whose
        linear part moves by less than ``min_signal`` across the data cannot move
        rows across the margin band [-1, 1] (width 2): the fit is nearly constant.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> unconstrained_signal(X, np.array([[0.0, 1.0]])).tolist()
    [0.0, 1.0]
    """
    lin = np.asarray(X, dtype=float) @ np.asarray(slopes, dtype=float)
    w = np.ones(lin.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    mean = w @ lin / w.sum()
    return np.sqrt(w @ (lin - mean) ** 2 / (w.sum() - 1.0))


def departure_from_constant(X, signs, slopes, weights=None):
    """z statistic of the unconstrained fit's departure from the constant classifier.

    With w = 0 the linear SVM's best constant is f = -s (s = +1 or -1 the minority side
    of boundary k, of N_s rows), and its KKT conditions hold -- the constant classifier is
    the solution whatever C (the degenerate SVMs of Rifkin, Pontil & Verri, 1999) -- iff
    the minority's sum of x is a fractional sum of N_s majority rows:
    sum_{minority} x_i = sum_{majority} a_i x_i with 0 <= a_i <= 1 and sum a_i = N_s.
    Along a direction u that fails iff

        D(u) = mean_{minority} u'x - (mean of the N_s largest u'x of the majority) > 0,

    the rate at which the hinge risk falls when f leaves the constant along u.  Its
    population version is <= 0 in every u exactly when the population fit is the
    constant classifier, so D is a consistent test of degeneracy: for a regular boundary
    D / se(D) grows like root-n.  The statistic is taken along the fit's own direction
    u = s w~_k (the data chose u, so under degeneracy it runs high; its measured
    quantiles are in docs/notes/inference-validity.md).  se(D) adds the variance of
    the minority mean and that of the upper-tail mean, Var((u'x - q)_+) / (p^2 N_maj),
    with q the tail's threshold and p = N_s / N_maj its share of the majority.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    signs : ndarray of shape (n, K-1)
        y_i^(k) in {-1, +1}.
    slopes : ndarray of shape (d, K-1)
        Slopes w~_k of the unconstrained fit (BSVM), whose decision value is
        b~_k + x'w~_k with y^(k) f > 0 on the correct side.
    weights : ndarray of shape (n,) or (n, K-1), optional
        Frequency weights (times 0 where a cost matrix leaves the row out of boundary k's
        loss), as in :func:`side_counts`.

    Returns
    -------
    ndarray of shape (K-1,)
        0 where the fit is the constant classifier (w~_k = 0) or a side is empty.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> signs = np.array([[1], [1], [-1], [-1], [-1], [-1]])
    >>> bool(departure_from_constant(X, signs, np.array([[-1.0]]))[0] > 1.645)
    True
    """
    X, signs = np.asarray(X, dtype=float), np.asarray(signs)
    slopes = np.asarray(slopes, dtype=float)
    freq = _per_boundary(weights, signs)
    out = np.zeros(signs.shape[1])
    for k in range(signs.shape[1]):
        mass = {s: freq[signs[:, k] == s, k].sum() for s in (-1, 1)}
        minority = 1 if mass[1] < mass[-1] else -1
        if min(mass.values()) <= 0 or np.max(np.abs(slopes[:, k]), initial=0.0) <= CONSTANT_W:
            continue
        u = minority * (X @ slopes[:, k])
        low, high = signs[:, k] == minority, signs[:, k] != minority
        out[k] = _tail_mean_z(u[low], freq[low, k], u[high], freq[high, k])
    return out


def _tail_mean_z(u_min, w_min, u_maj, w_maj):
    """D / se(D) of :func:`departure_from_constant` for one boundary (weighted rows)."""
    n_min, n_maj = w_min.sum(), w_maj.sum()
    mean_min = w_min @ u_min / n_min
    var_min = w_min @ (u_min - mean_min) ** 2 / max(n_min - 1.0, 1.0)
    order = np.argsort(-u_maj, kind="stable")
    u_sorted, w_sorted = u_maj[order], w_maj[order]
    # the majority's upper tail of mass n_min (the last row in it counted fractionally)
    taken = np.clip(n_min - (np.cumsum(w_sorted) - w_sorted), 0.0, w_sorted)
    tail_mean = taken @ u_sorted / n_min
    q = u_sorted[np.flatnonzero(taken > 0)[-1]]
    excess = np.maximum(u_maj - q, 0.0)
    p = n_min / n_maj
    var_tail = w_maj @ (excess - w_maj @ excess / n_maj) ** 2 / max(n_maj - 1.0, 1.0)
    se = np.sqrt(var_min / n_min + var_tail / (p ** 2 * n_maj))
    gap = mean_min - tail_mean
    return float(gap / se) if se > 0 else (np.inf if gap > 0 else 0.0)


def standardized_gap(params, params_unconstrained, se_unconstrained):
    """``max_j |beta_kj - beta~_kj| / se~_kj`` per boundary.

    Under Theorem 1 the constrained and unconstrained estimates differ by
    o_P(n^{-1/2}), i.e. by a vanishing fraction of a standard error.

    Parameters
    ----------
    params, params_unconstrained : ndarray of shape (1 + d, K-1)
    se_unconstrained : ndarray of shape (1 + d, K-1)
        Bahadur standard errors of the unconstrained fit (NaN where unavailable).

    Returns
    -------
    ndarray of shape (K-1,)
        inf where a coefficient differs and its standard error is NaN or 0; 0 where
        the two fits agree exactly.

    Examples
    --------
    >>> standardized_gap(np.array([[1.0], [2.0]]), np.array([[1.0], [1.5]]),
    ...                  np.array([[0.1], [0.25]])).tolist()
    [2.0]
    """
    diff = np.abs(np.asarray(params, float) - np.asarray(params_unconstrained, float))
    se = np.asarray(se_unconstrained, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff <= 1e-8 * (1.0 + np.abs(params_unconstrained)), 0.0, diff / se)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    return ratio.max(axis=0)


def margin_share(residuals, tol=THRESHOLDS["margin_tol"], weights=None):
    """Share of rows exactly on the margin, ``|r_ik| <= tol``, per boundary.

    With a continuous covariate about d + 1 of n rows sit on the margin; on a lattice
    of factor levels whole cells do.  ``weights`` (frequencies) count row i w_i times.

    Examples
    --------
    >>> margin_share(np.array([[0.0], [0.0], [1.0], [-2.0]])).tolist()
    [0.5]
    """
    on = np.abs(np.asarray(residuals, dtype=float)) <= tol
    w = np.ones(on.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    return w @ on / w.sum()


def distinct_patterns(X):
    """Number of distinct covariate rows.

    Examples
    --------
    >>> distinct_patterns(np.array([[0, 1], [0, 1], [1, 0]]))
    2
    """
    return int(np.unique(np.asarray(X), axis=0).shape[0])


def side_counts(signs, weights=None):
    """Smaller of the two side counts (y^(k) = -1 and +1) per boundary.

    ``weights`` of shape (n,) or (n, K-1) count row i w_i (or w_ik) times: frequency
    weights, times 0 where a cost matrix leaves the row out of boundary k's loss.

    Examples
    --------
    >>> side_counts(np.array([[1, 1], [-1, 1], [-1, -1]])).tolist()
    [1.0, 1.0]
    """
    signs = np.asarray(signs)
    w = _per_boundary(weights, signs)
    return np.minimum((w * (signs > 0)).sum(axis=0), (w * (signs < 0)).sum(axis=0))


def _per_boundary(weights, signs):
    """Row weights of shape (n,) or (n, K-1) (None: 1) as an (n, K-1) array."""
    w = np.ones(signs.shape) if weights is None else np.asarray(weights, dtype=float)
    return np.broadcast_to(w.reshape(signs.shape[0], -1), signs.shape)


def check_boundaries(X, signs, params, params_unconstrained, se_unconstrained, residuals,
                     cond, thresholds=None, weights=None, loss_weights=None):
    """Run every check on every boundary.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    signs : ndarray of shape (n, K-1)
        y_i^(k) in {-1, +1}.
    params : ndarray of shape (1 + d, K-1)
        The fit being reported (constrained NORDIC, or BSVM itself).
    params_unconstrained : ndarray of shape (1 + d, K-1)
        The BSVM fit on the same data, weights and C.
    se_unconstrained : ndarray of shape (1 + d, K-1)
        Bahadur standard errors of the BSVM fit.
    residuals : ndarray of shape (n, K-1)
        Margin residuals r_ik = 1 - y_i^(k) f_k(x_i) of ``params``.
    cond : array-like of shape (K-1,)
        Scaled condition numbers of the Hessian estimates of ``params``.
    thresholds : dict, optional
        Overrides of :data:`THRESHOLDS`.
    weights : ndarray of shape (n,), optional
        Frequency weights: n is N = sum w_i, and the signal, margin share and side
        counts count row i w_i times.
    loss_weights : ndarray of shape (n, K-1), optional
        Cost increments c_ik: rows with c_ik = 0 are not in boundary k's loss and do
        not count on its sides.

    Returns
    -------
    list of BoundaryDiagnostic
    """
    limit = {**THRESHOLDS, **(thresholds or {})}
    X, signs = np.asarray(X, dtype=float), np.asarray(signs)
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    in_loss = 1.0 if loss_weights is None else (np.asarray(loss_weights) > 0)
    signal = unconstrained_signal(X, np.asarray(params_unconstrained)[1:], w)
    departure = departure_from_constant(X, signs, np.asarray(params_unconstrained)[1:],
                                        w[:, None] * in_loss)
    gap = standardized_gap(params, params_unconstrained, se_unconstrained)
    share = margin_share(residuals, limit["margin_tol"], w)
    patterns = distinct_patterns(X)
    side = side_counts(signs, w[:, None] * in_loss)
    out = []
    for k in range(signs.shape[1]):
        measures = {"signal": float(signal[k]), "departure": float(departure[k]),
                    "gap": float(gap[k]),
                    "margin_share": float(share[k]), "patterns": patterns,
                    "side": int(round(side[k])), "cond": float(cond[k]),
                    "n": int(round(w.sum())), "d": int(X.shape[1])}
        out.append(BoundaryDiagnostic(k, measures, failed_checks(measures, limit)))
    return out


def is_lattice(measures, thresholds=None):
    """True when the design has no continuous part (from the measures of one boundary).

    Few distinct covariate rows (fewer than ``min_patterns`` and than n / 2), or more
    than ``max_margin_share`` of the rows and more than 3 (d + 1) rows exactly on the
    margin (a continuous design has at most about d + 1 there).  The SVM estimator is
    then not asymptotically normal and the validity study found the bootstrap unreliable
    too (docs/notes/inference-validity.md), so no standard errors are given.
    """
    value, limit = measures, THRESHOLDS if thresholds is None else thresholds
    few_patterns = value["patterns"] < limit["min_patterns"] and value["patterns"] < value["n"] / 2
    on_margin = (value["margin_share"] > limit["max_margin_share"]
                 and value["margin_share"] * value["n"] > 3 * (value["d"] + 1))
    return bool(few_patterns or on_margin)


def is_constraint_determined(measures, thresholds=None):
    """True when the unconstrained (BSVM) fit of the boundary is (nearly) constant, or
    not distinguishable from the constant classifier.

    Its constrained slopes are then set by the noncrossing constraints at the sample's
    extreme rows.  With unbounded covariates noncrossing over the whole support forces
    parallel slopes, so the estimates drift with n, at the speed the extremes grow.
    A separate SVM that is not constant in the sample may still be constant in the
    population, with a signal as large as a regular boundary's, hence the test of
    :func:`departure_from_constant`.  The validity study measured both (the drift of
    logit4's boundary 2|3 and the share of constant fits at logit5rare's 0|1): see
    docs/notes/inference-validity.md, whose tables ``benchmarks/validity_study.py
    --summarise`` writes.
    """
    value, limit = measures, THRESHOLDS if thresholds is None else thresholds
    return bool(value["signal"] < limit["min_signal"]
                or value["departure"] < limit["min_departure"])


def failed_checks(measures, thresholds=None):
    """Why the sandwich does not apply to a boundary: one sentence per failed check.

    Parameters
    ----------
    measures : dict
        The measures of one boundary (:attr:`BoundaryDiagnostic.measures`).
    thresholds : dict, optional
        :data:`THRESHOLDS` by default.

    Returns
    -------
    tuple of str
        Empty when every check passes.
    """
    value, limit = measures, THRESHOLDS if thresholds is None else thresholds
    reasons = []
    if value["signal"] < limit["min_signal"]:
        reasons.append(f"the unconstrained SVM of this boundary is (nearly) constant "
                       f"(sd of x'w = {value['signal']:.3g} < {limit['min_signal']:g}), so the "
                       "noncrossing constraints, not the hinge loss, set its slopes")
    elif value["departure"] < limit["min_departure"]:
        reasons.append(f"the unconstrained SVM of this boundary is not distinguishable from "
                       f"the constant classifier (departure z = {value['departure']:.3g} < "
                       f"{limit['min_departure']:g}), so the noncrossing constraints, not the "
                       "hinge loss, may set its slopes")
    elif value["gap"] > limit["max_gap"]:
        reasons.append(f"the constrained and unconstrained coefficients differ by "
                       f"{value['gap']:.3g} standard errors (> {limit['max_gap']:g}): the "
                       "noncrossing constraints bind")
    if is_lattice(value, limit):
        reasons.append(f"the covariates have no continuous part ({value['patterns']} distinct "
                       f"rows, {100 * value['margin_share']:.1f}% of rows exactly on the "
                       "margin), so the margin residual has no density at 0")
    if value["side"] < limit["min_side"]:
        reasons.append(f"only {value['side']} observations on one side (< {limit['min_side']})")
    if not value["cond"] <= limit["cond_max"]:
        reasons.append(f"the estimated Hessian H is near-singular (scaled condition number "
                       f"{value['cond']:.3g} > {limit['cond_max']:.0e})")
    return tuple(reasons)
