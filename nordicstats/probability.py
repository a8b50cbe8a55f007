"""Class probabilities from ordinal decision values, valid by construction.

An ordinal classifier with K levels gives K-1 decision values per row,
``f_k(x) > 0`` meaning "above boundary k" (between levels k and k+1, codes
0..K-1).  A *calibration map* turns them into cumulative probabilities

    P_k(x) = P(Y > k | x),    k = 0, ..., K-2,

which must be nonincreasing in k, so that the class probabilities

    p_0 = 1 - P_0,   p_j = P_{j-1} - P_j,   p_{K-1} = P_{K-2}

are never negative and sum to one.  NORDIC keeps ``f_k(x_i) >= f_{k+1}(x_i)`` at the
training rows only; at new x kernel boundaries may cross, so every map here is
monotone in k *whatever the decision values* (docs/notes/probabilities.md):

* ``"logistic"`` (default): one increasing link with ordered offsets on the
  rearranged decision values f_(0) >= ... >= f_(K-2) (each row sorted decreasingly,
  which leaves noncrossing rows unchanged),

      P_k(x) = expit(a f_(k)(x) + c_k),    a >= 0,  c_0 >= c_1 >= ... >= c_{K-2};

* ``"pooled"``: the same with the row mean fbar(x) = mean_j f_j(x) as a second
  predictor shared by the boundaries,

      P_k(x) = expit(a f_(k)(x) + b fbar(x) + c_k),    a, b >= 0,  c ordered;

* ``"platt"``: Platt's map fitted per boundary, P_k = expit(a_k f_k + c_k), then
  projected row by row onto the monotone set (least squares, :func:`project_monotone`);
* ``"isotonic"``: a nondecreasing step map of f_k per boundary (isotonic regression of
  the indicator 1{y > k} on f_k), then projected the same way.

The maps are fitted on *held-out* decision values (cross-fitting, as Platt recommends:
the training fit's own values are too confident); :func:`cross_fit_decision` makes them
from a refit function.  :func:`cost_bayes_codes` turns probabilities into decisions
under a cost matrix.  Arrays in, arrays out: nothing here knows models or results.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special
from sklearn.isotonic import IsotonicRegression
from sklearn.model_selection import StratifiedKFold

from nordicstats._validation import check_choice, check_int

__all__ = [
    "CALIBRATION_METHODS",
    "CALIBRATION_TARGETS",
    "LINK_BASES",
    "Calibration",
    "check_probability_kwds",
    "cross_fit_decision",
    "fit_calibration",
    "fit_shared_link",
    "own_value",
    "own_value_and_mean",
    "rearrange",
    "project_monotone",
    "cumulative_to_class",
    "expected_cost_minimisers",
    "cost_bayes_codes",
    "TIE_TOL",
]

#: Calibration maps from decision values to cumulative probabilities.
CALIBRATION_METHODS = ("logistic", "platt", "isotonic", "pooled")

#: Targets of the logistic fits: Platt's smoothed ones, or the 0/1 indicators.
CALIBRATION_TARGETS = ("platt", "indicator")

#: Defaults of ``probability_kwds`` (see :func:`check_probability_kwds`).
PROBABILITY_DEFAULTS = {"method": "logistic", "n_folds": 5, "random_state": 0}

#: Tolerance below which two expected costs count as tied (lowest level wins).
TIE_TOL = 1e-12


# --- options -------------------------------------------------------------------------------
def check_probability_kwds(kwds, owner="NORDIC"):
    """Validate ``probability_kwds`` and fill in the defaults.

    Parameters
    ----------
    kwds : dict or None
        ``method`` (one of :data:`CALIBRATION_METHODS`, default ``"logistic"``),
        ``n_folds`` (int >= 2, default 5): folds of the cross-fitting,
        ``random_state`` (int >= 0, default 0): seed of the fold assignment.

    Returns
    -------
    dict

    Examples
    --------
    >>> check_probability_kwds({"n_folds": 3})
    {'method': 'logistic', 'n_folds': 3, 'random_state': 0}
    """
    kwds = {} if kwds is None else kwds
    if not isinstance(kwds, dict):
        raise TypeError(f"The 'probability_kwds' parameter of {owner} must be a dict of "
                        f"options {sorted(PROBABILITY_DEFAULTS)}. Got {kwds!r} instead.")
    unknown = sorted(set(kwds) - set(PROBABILITY_DEFAULTS))
    if unknown:
        raise ValueError(f"Unknown probability_kwds option(s) {unknown}; the options are "
                         f"{sorted(PROBABILITY_DEFAULTS)}.")
    out = {**PROBABILITY_DEFAULTS, **kwds}
    out["method"] = check_choice(out["method"], "probability_kwds['method']",
                                 CALIBRATION_METHODS, owner)
    out["n_folds"] = check_int(out["n_folds"], "probability_kwds['n_folds']", 2)
    out["random_state"] = check_int(out["random_state"], "probability_kwds['random_state']", 0)
    return out


# --- cross-fitting -------------------------------------------------------------------------
def cross_fit_decision(refit_decision, codes, levels, n_folds=5, random_state=0):
    """Held-out decision values of every training row (stratified K-fold cross-fitting).

    Parameters
    ----------
    refit_decision : callable
        ``refit_decision(train_rows, test_rows) -> ndarray (len(test_rows), K-1)``: fit
        the model on ``train_rows`` and return its decision values at ``test_rows``.
    codes : ndarray of int, shape (n,)
        Level codes 0..K-1 (the folds are stratified by level).
    levels : sequence
        The K levels (named in the error message).
    n_folds : int, default=5
    random_state : int, default=0
        Seed of the fold assignment (rows are shuffled within levels).

    Returns
    -------
    ndarray of shape (n, K-1)

    Notes
    -----
    A level with fewer rows than folds is spread over as many folds as it has rows, so
    every fold's fit still sees it when it has at least two rows.

    Raises
    ------
    ValueError
        A level has a single row (the fit without its fold would miss the level).
    """
    codes = np.asarray(codes)
    counts = np.bincount(codes, minlength=len(levels))
    if counts.min() < 2:
        rare = int(np.argmin(counts))
        raise ValueError(
            f"probability=True fits the calibration on held-out folds, but level "
            f"{levels[rare]!r} has only {int(counts[rare])} row(s); every level needs at least "
            "2 rows so that each fold's fit sees it. Drop or merge the level, or fit without "
            "probability=True.")
    folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    held_out = np.full((codes.size, len(levels) - 1), np.nan)
    with warnings.catch_warnings():  # "The least populated class in y has only ... members"
        warnings.filterwarnings("ignore", "The least populated class", UserWarning)
        splits = list(folds.split(np.zeros((codes.size, 1)), codes))
    for train, test in splits:
        held_out[test] = refit_decision(train, test)
    return held_out


# --- the monotone set ----------------------------------------------------------------------
def rearrange(F):
    """Sort every row decreasingly: f_(0) >= f_(1) >= ... (rows already ordered are unchanged).

    The rearrangement of Chernozhukov, Fernandez-Val & Galichon (2009) turns crossing
    decision values into noncrossing ones and never moves them further from a
    monotone target.

    Examples
    --------
    >>> rearrange(np.array([[1.0, 2.0, -1.0]])).tolist()
    [[2.0, 1.0, -1.0]]
    """
    return -np.sort(-np.asarray(F, dtype=float), axis=1)


def project_monotone(P):
    """Least-squares projection of each row onto nonincreasing sequences in [0, 1].

    The antitonic regression of a row p_0, ..., p_{m-1} (equal weights) is the min-max
    formula

    .. math:: \\hat p_k = \\min_{i \\le k} \\max_{j \\ge k} \\operatorname{mean}(p_i, ..., p_j),

    evaluated for all rows at once (m = K-1 is small); a final running minimum removes
    rounding differences, so the output is nonincreasing exactly.

    Examples
    --------
    >>> project_monotone(np.array([[0.6, 0.8, 0.1]])).round(12).tolist()
    [[0.7, 0.7, 0.1]]
    """
    P = np.clip(np.asarray(P, dtype=float), 0.0, 1.0)
    m = P.shape[1]
    csum = np.concatenate([np.zeros((P.shape[0], 1)), np.cumsum(P, axis=1)], axis=1)
    out = np.empty_like(P)
    for k in range(m):
        lows = []
        for i in range(k + 1):
            spans = np.arange(k, m) + 1 - i
            means = (csum[:, k + 1:m + 1] - csum[:, [i]]) / spans
            lows.append(means.max(axis=1))
        out[:, k] = np.min(lows, axis=0)
    return np.minimum.accumulate(out, axis=1)


def cumulative_to_class(P):
    """Class probabilities (m, K) from nonincreasing cumulative P(Y > k) (m, K-1).

    Examples
    --------
    >>> cumulative_to_class(np.array([[0.8, 0.5]])).round(12).tolist()
    [[0.2, 0.3, 0.5]]
    """
    P = np.asarray(P, dtype=float)
    ones, zeros = np.ones((P.shape[0], 1)), np.zeros((P.shape[0], 1))
    return -np.diff(np.hstack([ones, P, zeros]), axis=1)


# --- the maps ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Calibration:
    """A fitted map from decision values (m, K-1) to cumulative probabilities P(Y > k | x).

    Attributes
    ----------
    method : str
        One of :data:`CALIBRATION_METHODS`.
    slope : ndarray
        ``"logistic"``: the shared slope a (shape (1,)); ``"pooled"``: (a, b);
        ``"platt"``: a_k (shape (K-1,)); ``"isotonic"``: empty.
    offset : ndarray
        ``"logistic"``, ``"pooled"``: c_0 >= ... >= c_{K-2}; ``"platt"``: c_k;
        ``"isotonic"``: empty.
    knots : tuple of (x, y) ndarray pairs
        ``"isotonic"``: the step map of each boundary (linear interpolation between knots,
        constant outside); empty otherwise.
    basis : callable or None
        The shared-link maps' basis (:data:`LINK_BASES`, :func:`fit_shared_link`);
        None for ``"platt"`` and ``"isotonic"``.
    held_out : ndarray of shape (n, K-1) or None
        The held-out decision values the map was fitted on.
    options : dict
        ``probability_kwds`` used (method, n_folds, random_state).
    """

    method: str
    slope: np.ndarray
    offset: np.ndarray
    knots: tuple = ()
    basis: Callable | None = None
    held_out: np.ndarray | None = None
    options: dict | None = None

    def cumulative(self, F):
        """P(Y > k | x), nonincreasing in k for every row whatever F, shape (m, K-1)."""
        F = np.asarray(F, dtype=float)
        # maps pickled before ``basis`` existed have None there and a method name
        basis = self.basis if self.basis is not None else LINK_BASES.get(self.method)
        if basis is not None:
            P = special.expit(basis(rearrange(F)) @ self.slope + self.offset[None, :])
            return np.minimum.accumulate(P, axis=1)
        if self.method == "platt":
            return project_monotone(special.expit(F * self.slope + self.offset))
        steps = [np.interp(F[:, k], x, y) for k, (x, y) in enumerate(self.knots)]
        return project_monotone(np.column_stack(steps))

    def class_probabilities(self, F):
        """P(Y = j | x), shape (m, K): nonnegative rows that sum to one."""
        return cumulative_to_class(self.cumulative(F))


def fit_calibration(F, codes, weights=None, method="logistic", targets="platt"):
    """Fit a calibration map on (held-out) decision values.

    The logistic maps minimise the weighted binary log loss summed over boundaries,

    .. math:: -\\sum_i w_i \\sum_k [t_{ik} \\log P_k(x_i) + (1 - t_{ik}) \\log(1 - P_k(x_i))],

    with Platt's targets ``t = (N+ + 1)/(N+ + 2)`` for y > k and ``1/(N- + 2)`` otherwise
    (N+ and N-: the weighted counts above and below boundary k), which keeps the slope
    finite on separable data (``targets="indicator"``: t = 1{y > k}).  ``"logistic"``
    and ``"pooled"`` share the link and order the offsets (:func:`fit_shared_link`);
    ``"platt"`` fits (a_k, c_k) per boundary (a_k >= 0).  ``"isotonic"`` fits a
    nondecreasing map of f_k to 1{y > k} per boundary (pool adjacent violators).

    Parameters
    ----------
    F : ndarray of shape (n, K-1)
        Decision values (positive = above boundary k).
    codes : ndarray of int, shape (n,)
        Level codes 0..K-1.
    weights : ndarray of shape (n,), optional
        Case weights.
    method : {"logistic", "platt", "isotonic", "pooled"}, default="logistic"
    targets : {"platt", "indicator"}, default="platt"
        Targets of the logistic fits (ignored by ``"isotonic"``).

    Returns
    -------
    Calibration

    Examples
    --------
    >>> F = np.array([[2.0, 1.0], [1.0, -1.0], [-1.0, -2.0], [0.5, -0.5], [-0.5, -1.5]])
    >>> cal = fit_calibration(F, np.array([2, 1, 0, 1, 0]))
    >>> bool(np.all(np.diff(cal.cumulative(F), axis=1) <= 0))
    True
    """
    method = check_choice(method, "method", CALIBRATION_METHODS, owner="fit_calibration")
    if method in LINK_BASES:
        return fit_shared_link(F, codes, LINK_BASES[method], weights, targets, method)
    F, codes, w, above = _check_fit_input(F, codes, weights)
    if method == "isotonic":
        knots = tuple(_isotonic_knots(F[:, k], above[:, k], w) for k in range(F.shape[1]))
        return Calibration(method, np.empty(0), np.empty(0), knots)
    T = _targets(above, w, targets)
    fits = [_fit_shared_link(F[:, [k], None], T[:, [k]], w) for k in range(F.shape[1])]
    return Calibration(method, np.concatenate([s for s, _ in fits]),
                       np.concatenate([c for _, c in fits]))


def own_value(S):
    """Basis of the ``"logistic"`` link: h(x) = f_(k)(x), shape (n, m, 1)."""
    return np.asarray(S, dtype=float)[:, :, None]


def own_value_and_mean(S):
    """Basis of the ``"pooled"`` link: (f_(k)(x), mean_j f_j(x)), shape (n, m, 2).

    The row mean is the same for every boundary, so a nonnegative coefficient on it
    keeps the link decreasing in k; it pools the K-1 noisy decision values into one
    index, as the cumulative logit's single linear predictor does.
    """
    S = np.asarray(S, dtype=float)
    return np.stack([S, np.broadcast_to(S.mean(axis=1, keepdims=True), S.shape)], axis=2)


#: Increasing basis functions of the shared-link maps: sorted rows (n, m) -> (n, m, p).
LINK_BASES = {"logistic": own_value, "pooled": own_value_and_mean}


def fit_shared_link(F, codes, basis, weights=None, targets="platt", method="custom"):
    """Fit P_k(x) = expit(sum_j a_j h_j(x, k) + c_k) with a >= 0 and ordered offsets.

    h = ``basis(rearrange(F))`` holds p functions that are nondecreasing in every decision
    value and nonincreasing in k (the rows are sorted decreasingly first); with a >= 0
    and c_0 >= c_1 >= ... >= c_{K-2} the map is increasing in the decision values and
    P_0 >= P_1 >= ... by construction.  The weighted binary log loss summed over the
    boundaries (:func:`fit_calibration`) is convex in (a, c_0, d_1, ..., d_{K-2}),
    c_k = c_0 - d_1 - ... - d_k, under the bounds a >= 0, d >= 0 (L-BFGS-B).
    ``"logistic"`` is h = f_(k) (one slope); ``"pooled"`` is h = (f_(k), fbar) with
    fbar(x) the row mean of the decision values:

    .. math:: P_k(x) = \\operatorname{expit}(a f_{(k)}(x) + b \\bar f(x) + c_k).

    Parameters
    ----------
    F : ndarray of shape (n, K-1)
        Decision values.
    codes : ndarray of int, shape (n,)
        Level codes 0..K-1.
    basis : callable
        ``basis(S) -> ndarray (n, K-1, p)`` of the sorted decision values S; a
        module-level function, so that the fitted map can be pickled.
    weights : ndarray of shape (n,), optional
    targets : {"platt", "indicator"}, default="platt"
    method : str, default="custom"
        Name stored in the :class:`Calibration`.

    Returns
    -------
    Calibration
        ``slope`` holds a (p,), ``offset`` c, ``basis`` the basis.

    Examples
    --------
    >>> F = np.array([[2.0, 1.0], [1.0, -1.0], [-1.0, -2.0], [0.5, -0.5], [-0.5, -1.5]])
    >>> cal = fit_shared_link(F, np.array([2, 1, 0, 1, 0]), own_value_and_mean)
    >>> cal.slope.shape, bool(np.all(cal.slope >= 0))
    ((2,), True)
    """
    F, codes, w, above = _check_fit_input(F, codes, weights)
    slope, offset = _fit_shared_link(basis(rearrange(F)), _targets(above, w, targets), w)
    return Calibration(method, slope, offset, basis=basis)


def _check_fit_input(F, codes, weights):
    """(F, codes, weights, above) checked: finite F (n, K-1), n codes; above[i, k] = y_i > k."""
    F = np.asarray(F, dtype=float)
    codes = np.asarray(codes)
    if F.ndim != 2 or codes.shape != (F.shape[0],) or not np.all(np.isfinite(F)):
        raise ValueError(f"fit_calibration needs finite decision values of shape (n, K-1) and "
                         f"n level codes; got shapes {F.shape} and {codes.shape}.")
    w = np.ones(codes.size) if weights is None else np.asarray(weights, dtype=float)
    return F, codes, w, codes[:, None] > np.arange(F.shape[1])[None, :]


def _targets(above, w, targets):
    """Targets t_ik of the logistic fits (see :func:`fit_calibration`)."""
    targets = check_choice(targets, "targets", CALIBRATION_TARGETS, owner="fit_calibration")
    return _platt_targets(above, w) if targets == "platt" else above.astype(float)


def _platt_targets(above, w):
    """Platt's smoothed 0/1 targets per boundary (his 1999 paper, Section 2.2)."""
    n_plus = (w[:, None] * above).sum(axis=0)
    n_minus = w.sum() - n_plus
    return np.where(above, (n_plus + 1) / (n_plus + 2), 1 / (n_minus + 2))


def _fit_shared_link(H, T, w):
    """(coefficients (p,), offsets (m,)) minimising the weighted log loss of expit(H a + c).

    ``H`` (n, m, p) holds p increasing basis functions of each decision value; with
    a >= 0 the link H a is increasing.  Parameters theta = (a, c_0, d_1, ..., d_{m-1})
    with c_k = c_0 - sum_{j<=k} d_j, bounds a >= 0, d >= 0; the loss is convex in theta
    (a linear map of (a, c)).
    """
    m, p = H.shape[1], H.shape[2]
    # c = B @ theta[p:]: c_k = theta_p - theta_{p+1} - ... - theta_{p+k}
    B = np.tril(-np.ones((m, m)))
    B[:, 0] = 1.0
    scale = w.sum() * m

    def loss(theta):
        z = H @ theta[:p] + (B @ theta[p:])[None, :]
        # -[t log s(z) + (1 - t) log(1 - s(z))] = log(1 + e^z) - t z
        value = np.sum(w[:, None] * (np.logaddexp(0.0, z) - T * z)) / scale
        r = w[:, None] * (special.expit(z) - T) / scale
        return value, np.r_[np.einsum("nm,nmp->p", r, H), B.T @ r.sum(axis=0)]

    start = np.r_[np.full(p, 1.0 / p), special.logit(np.clip(T.mean(axis=0)[0], 1e-6, 1 - 1e-6)),
                  np.full(m - 1, 0.5)]
    bounds = [(0.0, None)] * p + [(None, None)] + [(0.0, None)] * (m - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        opt = optimize.minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds,
                                options={"maxiter": 2000, "ftol": 1e-13, "gtol": 1e-9})
    return opt.x[:p].copy(), B @ opt.x[p:]


def _isotonic_knots(f, above, w):
    """Knots (x, y) of the nondecreasing least-squares fit of 1{above} on f."""
    iso = IsotonicRegression(increasing=True, y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(f, above.astype(float), sample_weight=w)
    return np.asarray(iso.X_thresholds_, dtype=float), np.asarray(iso.y_thresholds_, dtype=float)


# --- decisions -----------------------------------------------------------------------------
def expected_cost_minimisers(probs, cost):
    """Expected costs ``probs @ cost`` (m, K) and the (m, K) mask of their tied minimisers.

    Expected costs within ``TIE_TOL * max(1, |least|)`` of the least count as tied.
    """
    risks = np.asarray(probs, dtype=float) @ np.asarray(cost, dtype=float)
    low = risks.min(axis=1, keepdims=True)
    return risks, risks - low <= TIE_TOL * np.maximum(1.0, np.abs(low))


def cost_bayes_codes(probs, cost):
    """Cost-weighted Bayes rule: argmin_j sum_l p_l cost[l, j], lowest level on ties.

    Parameters
    ----------
    probs : ndarray of shape (m, K)
        Class probabilities.
    cost : ndarray of shape (K, K)
        ``cost[true, predicted]``.

    Returns
    -------
    ndarray of int, shape (m,)

    Examples
    --------
    >>> cost_bayes_codes(np.array([[0.7, 0.05, 0.25]]), np.array([[0, 1, 1], [1, 0, 1],
    ...                                                            [3, 1, 0]])).tolist()
    [2]
    """
    return np.argmax(expected_cost_minimisers(probs, cost)[1], axis=1).astype(int)

