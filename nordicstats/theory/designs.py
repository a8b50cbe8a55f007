"""True class probabilities of the paper's simulation designs given the *observed* covariates.

Both designs (paper, Section 6; simulated by :func:`nordicstats.datasets.make_nonlinear`
and :func:`nordicstats.datasets.make_donut`, whose conventions are used here)
draw latent coordinates ``x~``, labels from ``x~``, and observe
``X = x~ + sigma * N(0, I)`` with ``sigma`` the noise **standard deviation**.
Only the first two columns of X carry information about the class (the other
columns are independent of the label), so the Bayes rule given the observed X is
based on

    eta_k(x) = P(Y = k | X = x) = E[ P(Y = k | x~) | X = x ]
             = int P(Y = k | t) pi(t) phi_sigma(x - t) dt / int pi(t) phi_sigma(x - t) dt,

with ``pi`` the uniform prior of ``x~`` and ``phi_sigma`` the N(0, sigma^2 I_2)
density of the noise.  Class codes are 0..K-1 (the datasets' labels 1..K).

* Nonlinear design (Section 6.1): ``x~1 ~ U(-3, 3)``, ``x~2 ~ U(-6, 6)``,
  ``P(Y = k | x~)`` proportional to ``exp(f_k(x~))``
  (:func:`nordicstats.datasets.nonlinear_probabilities`).  The posterior of
  ``x~`` factorises into two truncated normals ``N(x_j, sigma^2)`` on the
  support; the 2-D integral is a tensor Gauss-Legendre rule on
  ``support ∩ [x_j - 8 sigma, x_j + 8 sigma]`` (tail mass beyond 8 sigma is
  below 1e-15) with log-space weights.
* Donut design (Section 6.2): ``x~`` uniform on the disc of radius 4, class 3
  inside the circle C3 (centre ``(sqrt 3 + 0.1, 0)``, radius ``sqrt 3``),
  class 2 inside C2 (centre ``(1.9, 0)``, radius 2) but not C3, class 1
  elsewhere.  For a disc D with centre c and radius r,
  ``int_D phi_sigma(x - t) dt = P(chi'^2_2(|x - c|^2 / sigma^2) <= r^2 / sigma^2)``,
  a noncentral chi-square distribution function, so the posterior is exact:
  ``eta_3 = m(C3) / m(disc)``, ``eta_2 = (m(C2) - m(C3)) / m(disc)``,
  ``eta_1 = 1 - eta_2 - eta_3``.  Points more than about 34 sigma outside the
  disc (probability below 1e-250 under the design), where these masses
  underflow, are integrated on a log-weighted grid around the nearest disc point.

With ``sigma = 0`` the posterior is the noise-free one: the softmax of the
scores, or the indicator of the donut region containing x.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp
from scipy.stats import ncx2

from nordicstats._validation import check_int
from nordicstats.datasets import (
    _DONUT_CIRCLE2,
    _DONUT_CIRCLE3,
    _DONUT_RADIUS,
    donut_labels,
    make_donut,
    make_nonlinear,
    nonlinear_probabilities,
)
from nordicstats.theory.bayes import (
    bayes_rule_multiclass,
    bayes_rule_ordinal,
    check_class_codes,
    loss_matrix,
    prediction_risks,
)

__all__ = ["nonlinear_observed_probabilities", "donut_probabilities", "design_probabilities",
           "bayes_error", "excess_risk", "BayesErrorResult", "DESIGNS"]

DESIGNS = ("nonlinear", "donut")
_DEFAULT_SIGMA = {"nonlinear": 1.0, "donut": 0.4}
_WIDTH = 8.0
_UNDERFLOW = 1e-250


def nonlinear_observed_probabilities(X, sigma=1.0, K=3, n_nodes=32, chunk=256):
    """P(Y = k | X = x) in the nonlinear design, integrating out the measurement error.

    Parameters
    ----------
    X : array-like of shape (n, d), d >= 2
        Observed covariates; columns 0 and 1 are ``X1 = x~1 + sigma e1`` and
        ``X2 = x~2 + sigma e2`` (as in :func:`~nordicstats.datasets.make_nonlinear`).
    sigma : float, default=1.0
        Noise standard deviation (the paper: 0.5, 1, 1.5); 0 gives the softmax.
    K : int, default=3
        Number of classes (K = 3 is the paper's design).
    n_nodes : int, default=32
        Gauss-Legendre nodes per coordinate.  Doubling them changes the answer by
        less than 1e-6 for sigma in [0.05, 2] (checked in the tests).
    chunk : int, default=256
        Rows integrated at once (memory ~ chunk * n_nodes^2 * K floats).

    Returns
    -------
    ndarray of shape (n, K)

    Examples
    --------
    >>> eta = nonlinear_observed_probabilities([[0.0, 0.0]], sigma=1.0)
    >>> eta.shape, bool(abs(eta.sum() - 1) < 1e-12)
    ((1, 3), True)
    """
    x = _observed(X)
    sigma = _check_sigma(sigma)
    if sigma == 0.0:
        return nonlinear_probabilities(x[:, 0], x[:, 1], K)
    nodes, weights = np.polynomial.legendre.leggauss(check_int(n_nodes, "n_nodes", 4))
    out = np.empty((x.shape[0], K))
    for start in range(0, x.shape[0], chunk):
        rows = slice(start, start + chunk)
        t1, w1 = _truncated_normal_rule(x[rows, 0], sigma, 3.0, nodes, weights)
        t2, w2 = _truncated_normal_rule(x[rows, 1], sigma, 6.0, nodes, weights)
        m = nodes.size
        probs = nonlinear_probabilities(np.repeat(t1, m, axis=1).ravel(),
                                        np.tile(t2, (1, m)).ravel(), K)
        weight = (w1[:, :, None] * w2[:, None, :]).reshape(-1, m * m, 1)
        out[rows] = (probs.reshape(-1, m * m, K) * weight).sum(axis=1)
    return out / out.sum(axis=1, keepdims=True)


def _truncated_normal_rule(centre, sigma, half_width, nodes, weights):
    """Nodes and normalised weights for E[h(T)], T ~ N(centre, sigma^2) truncated to [-a, a]."""
    anchor = np.clip(centre, -half_width, half_width)
    lo = np.maximum(-half_width, anchor - _WIDTH * sigma)[:, None]
    hi = np.minimum(half_width, anchor + _WIDTH * sigma)[:, None]
    t = 0.5 * (hi + lo) + 0.5 * (hi - lo) * nodes[None, :]
    logw = np.log(weights)[None, :] - 0.5 * ((t - centre[:, None]) / sigma) ** 2
    return t, np.exp(logw - logsumexp(logw, axis=1, keepdims=True))


def donut_probabilities(X, sigma=0.4):
    """P(Y = k | X = x) in the donut design (Section 6.2), exact via noncentral chi-square.

    Parameters
    ----------
    X : array-like of shape (n, d), d >= 2
        Observed covariates (as in :func:`~nordicstats.datasets.make_donut`);
        only columns 0 and 1 inform the class.
    sigma : float, default=0.4
        Noise standard deviation (the paper's ``N_d(0, sigma I)`` read with sigma
        as the standard deviation, as in ``make_donut``).  With 0 the class of
        the region containing x is returned with probability 1.

    Returns
    -------
    ndarray of shape (n, 3)

    Examples
    --------
    >>> donut_probabilities([[2.0, 0.0], [-3.0, 0.0]], sigma=0.0).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    x = _observed(X)
    sigma = _check_sigma(sigma)
    if sigma == 0.0:
        return np.eye(3)[donut_labels(x) - 1]
    disc = _disc_mass(x, (0.0, _DONUT_RADIUS), sigma)
    c2 = np.minimum(_disc_mass(x, _DONUT_CIRCLE2, sigma), disc)
    c3 = np.minimum(_disc_mass(x, _DONUT_CIRCLE3, sigma), c2)
    out = np.column_stack([disc - c2, c2 - c3, c3])
    ok = disc > _UNDERFLOW
    out[ok] /= disc[ok, None]
    for i in np.flatnonzero(~ok):
        out[i] = _donut_far(x[i], sigma)
    return out


def _disc_mass(x, circle, sigma):
    """P(|x + sigma Z - c| <= r) for Z ~ N(0, I_2): a noncentral chi-square cdf."""
    centre, radius = circle
    nc = ((x[:, 0] - centre) ** 2 + x[:, 1] ** 2) / sigma**2
    return ncx2.cdf(radius**2 / sigma**2, 2, nc)


def _donut_far(x, sigma, n_grid=801):
    """Log-weighted grid posterior near the disc point closest to a far-away x."""
    norm = np.hypot(x[0], x[1])
    near = x * (_DONUT_RADIUS / norm)
    half = min(_DONUT_RADIUS, 12.0 * sigma)
    axis = np.linspace(-half, half, n_grid)
    t = (near[None, :] + np.stack(np.meshgrid(axis, axis), axis=-1).reshape(-1, 2))
    t = t[np.hypot(t[:, 0], t[:, 1]) <= _DONUT_RADIUS]
    logw = -0.5 * np.sum((t - x) ** 2, axis=1) / sigma**2
    w = np.exp(logw - logw.max())
    return np.bincount(donut_labels(t) - 1, weights=w, minlength=3) / w.sum()


def design_probabilities(design, X, sigma=None, **options):
    """Dispatch to :func:`nonlinear_observed_probabilities` or :func:`donut_probabilities`.

    ``sigma=None`` uses the ``make_*`` default (1.0 nonlinear, 0.4 donut).

    Examples
    --------
    >>> design_probabilities("donut", [[0.0, 0.0]], sigma=0.0).tolist()
    [[0.0, 1.0, 0.0]]
    """
    design = _check_design(design)
    sigma = _DEFAULT_SIGMA[design] if sigma is None else sigma
    if design == "nonlinear":
        return nonlinear_observed_probabilities(X, sigma, **options)
    if options:
        raise TypeError(f"donut_probabilities takes no options; got {sorted(options)}.")
    return donut_probabilities(X, sigma)


@dataclass(frozen=True)
class BayesErrorResult:
    """Monte Carlo Bayes risk of a simulation design.

    Attributes
    ----------
    design : str
    sigma : float
    loss : str
        ``"zero_one"``, ``"absolute"`` or ``"cost_matrix"``.
    rule : str
        ``"bayes"`` (the risk minimiser of ``loss``), ``"ordinal"`` or ``"multiclass"``.
    error : float
        Mean conditional risk ``mean_i R(phi(X_i) | X_i)`` (Rao-Blackwellised, the estimate).
    se : float
        Its Monte Carlo standard error.
    error_empirical : float
        Mean realised loss ``mean_i L(Y_i, phi(X_i))`` on the same draws (a check).
    n : int
    random_state : int or None
    """

    design: str
    sigma: float
    loss: str
    rule: str
    error: float
    se: float
    error_empirical: float
    n: int
    random_state: object


def bayes_error(design, sigma=None, loss="zero_one", rule=None, n=100_000, random_state=0,
                K=3, **options):
    """Bayes risk of a design by Monte Carlo over the observed covariates.

    Draws ``(X, Y)`` with :func:`~nordicstats.datasets.make_nonlinear` or
    :func:`~nordicstats.datasets.make_donut` (``d = 2``; further noise columns
    do not change the Bayes rule), computes ``eta(X)``, applies the rule and
    averages the conditional risk ``sum_k eta_k(X) L(k, phi(X))``.

    Parameters
    ----------
    design : {"nonlinear", "donut"}
    sigma : float, optional
        Noise standard deviation; default as in ``make_*``.
    loss : {"zero_one", "absolute"} or array-like of shape (K, K), default="zero_one"
        ``cost[true, predicted]`` for a matrix (e.g. ``metrics.DONUT_COSTS``).
    rule : {None, "ordinal", "multiclass"}, default=None
        None: the Bayes rule of ``loss`` (risk minimiser, lowest code on ties);
        ``"ordinal"`` (median) or ``"multiclass"`` (mode) to score that rule
        under ``loss`` instead (then the result is that rule's risk, not the
        minimum).
    n : int, default=100_000
    random_state : int, Generator or None, default=0
    K : int, default=3
        Classes of the nonlinear design (ignored for the donut).
    **options
        Passed to :func:`nonlinear_observed_probabilities` (``n_nodes``).

    Returns
    -------
    BayesErrorResult

    Examples
    --------
    >>> res = bayes_error("donut", sigma=0.4, n=2000, random_state=1)
    >>> 0.0 < res.error < 0.25
    True
    """
    design = _check_design(design)
    sigma = _check_sigma(_DEFAULT_SIGMA[design] if sigma is None else sigma)
    if design == "nonlinear":
        X, y = make_nonlinear(n, d=2, sigma=sigma, random_state=random_state, K=K)
    else:
        X, y = make_donut(n, d=2, sigma=sigma, random_state=random_state)
    eta = design_probabilities(design, X, sigma, **options)
    L = loss_matrix(loss, eta.shape[1])
    codes = _rule_codes(eta, loss, rule)
    cond = (eta @ L)[np.arange(n), codes]
    realised = L[np.asarray(y.cat.codes), codes]
    return BayesErrorResult(
        design=design, sigma=sigma, loss=loss if isinstance(loss, str) else "cost_matrix",
        rule="bayes" if rule is None else rule, error=float(cond.mean()),
        se=float(cond.std(ddof=1) / np.sqrt(n)), error_empirical=float(realised.mean()), n=n,
        random_state=random_state if isinstance(random_state, (int, type(None))) else "generator")


def excess_risk(predictions, X, design, sigma=None, loss="zero_one", **options):
    """Mean conditional excess risk of predictions over the Bayes rule at points X.

    ``mean_i [R(phi_hat(x_i) | x_i) - min_c R(c | x_i)]`` with
    ``R(c | x) = sum_k eta_k(x) L(k, c)``: an unbiased, low-variance estimate of
    the excess risk of a fitted classifier when X is a fresh test sample.

    Parameters
    ----------
    predictions : array-like of shape (n,)
        Predicted class codes 0..K-1, or a pandas Categorical / categorical
        Series (its codes are used, so labels 1..K map to 0..K-1).  Plain
        integer labels 1..K must be shifted by one first.
    X : array-like of shape (n, d)
    design, sigma, loss, **options
        As in :func:`bayes_error`.

    Returns
    -------
    float

    Examples
    --------
    >>> X = [[2.0, 0.0], [-3.0, 0.0]]
    >>> excess_risk([2, 0], X, "donut", sigma=0.0)
    0.0
    """
    eta = design_probabilities(design, X, sigma, **options)
    codes = check_class_codes(predictions, *eta.shape)
    risks = eta @ loss_matrix(loss, eta.shape[1])
    return float(np.mean(risks[np.arange(eta.shape[0]), codes] - risks.min(axis=1)))


def _rule_codes(eta, loss, rule):
    if rule is None:
        return prediction_risks(eta, loss)[1]
    if rule == "ordinal":
        return bayes_rule_ordinal(eta)
    if rule == "multiclass":
        return bayes_rule_multiclass(eta)
    raise ValueError(f"The 'rule' parameter must be None, 'ordinal' or 'multiclass'. "
                     f"Got {rule!r} instead.")


def _observed(X):
    x = np.asarray(X, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] == 0:
        raise ValueError(f"X must have shape (n, d) with d >= 2 (columns x1, x2 first); got "
                         f"shape {x.shape}.")
    if not np.all(np.isfinite(x[:, :2])):
        raise ValueError("X has NaN or infinite values in its first two columns.")
    return x[:, :2]


def _check_design(design):
    if design not in DESIGNS:
        raise ValueError(f"The 'design' parameter must be one of {list(DESIGNS)}. "
                         f"Got {design!r} instead.")
    return design


def _check_sigma(sigma):
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real) or not np.isfinite(sigma) \
            or sigma < 0:
        raise ValueError(f"The 'sigma' parameter must be a finite float >= 0 (the noise standard "
                         f"deviation). Got {sigma!r} instead.")
    return float(sigma)


