"""Covariance of the linear NORDIC coefficients: the Bahadur sandwich and the bootstrap.

This module works on arrays (:class:`FitArrays`) and knows neither the model nor its
results; :class:`~nordicstats.results.NORDICResults` builds the arrays, passes a refit
function for the bootstrap, and attaches the :class:`CovarianceResult`.

For boundary k write x~ = (1, x')', beta_k = (b_k, w_k')' and the margin residual
R_k = 1 - Y^(k) x~' beta_k*.  Koo, Lee, Kim & Park (2008, JMLR 9:1343-1368) give the
Bahadur representation of the linear SVM,

    sqrt(n) (beta^_k - beta_k*) = H_k^{-1} n^{-1/2} sum_i 1{R_ik >= 0} Y_i^(k) x~_i + o_P(1),

with H_k = E[delta(R_k) x~ x~'] (the Hessian of the population hinge risk) and
G_k = E[1{R_k >= 0} x~ x~'].  The paper's Theorem 1 (Section 5.2, eq. linearNORDIC)
shows that the noncrossing-constrained solution has the same limit law as the
unconstrained one, so the same representation holds for linear NORDIC-1/2 and BSVM.
Stacking the K-1 representations gives the joint covariance

    Cov(beta^_k, beta^_l) = H_k^{-1} G_kl H_l^{-1} / n,
    G_kl = E[1{R_k >= 0} 1{R_l >= 0} Y^(k) Y^(l) x~ x~'],

which is what Wald tests across boundaries (e.g. parallel boundaries) need.

Plug-in estimator (:class:`BahadurCovariance`): r_ik = 1 - y_i^(k) x~_i' beta^_k,
G^_kl = n^{-1} sum_i s_ik s_il' with scores s_ik = 1{r_ik >= 0} y_i^(k) x~_i (the ~d+1
rows exactly on the margin, ``|r_ik| <= MARGIN_TOL``, count 1/2 there), and
H^_k = (n h_k)^{-1} sum_i kappa(r_ik / h_k) x~_i x~_i' with a smoothing kernel kappa
and bandwidth h_k = c * min(sd(r_k), IQR(r_k) / 1.34) * n^(-1/3) (the Hall-Sheather
rate used for the same job in quantile regression; c = 1 by default).  This choice
was checked by Monte Carlo (see ``benchmarks/mc_coverage.py`` and the tests).

Parameters are stacked boundary-major: the vector is ``params.T.ravel()`` for a
``params`` array of shape (1 + d, K-1) whose row 0 is the intercept.

Entry point :func:`estimate_covariance`; use through the model:
``NORDIC(..., kernel="linear").fit(cov_type=..., cov_kwds=...)``

* ``cov_type="auto"`` (default for linear fits): per boundary, the Bahadur sandwich
  where the validity diagnostics of :mod:`nordicstats.diagnostics` pass, the bootstrap
  where they fail, nothing on lattice designs (:mod:`nordicstats.auto_covariance`;
  evidence in ``docs/notes/inference-validity.md``); ``cov_kwds`` those of both below
  (``random_state`` defaults to 0 so that default summaries are reproducible);
* ``cov_type="bahadur"``: NaN for the boundaries failing the diagnostics;
  ``cov_kwds`` ``bandwidth`` ("hall-sheather" or a positive number, or one per boundary), ``kernel``
  ("gaussian" or "epanechnikov", both scaled to unit variance), ``constant`` (1.0);
* ``cov_type="bootstrap"``: case resampling and a refit per replicate, ``cov_kwds``
  ``n_boot`` (200), ``random_state``, ``n_jobs`` (joblib), ``disable`` (True hides the
  tqdm bar; the default None shows it on a terminal only);
* ``cov_type="none"``: no covariance (e.g. inside tuning loops).

Weighted fits.  Case weights w_i are treated as frequencies: every average above is
a w-weighted average, n is N = sum_i w_i (in H^, G^, the 1/n of the covariance and
the bandwidth, whose sd and IQR are those of the residuals repeated w_i times), so
integer weights give exactly the sandwich of the data with row i repeated w_i
times; the bootstrap resamples those N rows.  A cost matrix makes boundary k's
loss c_k(Y) (1 - Y^(k) f_k)_+ with c_k(l) = ``|cost[l, k+1] - cost[l, k]|``; the
estimand is then the population minimiser of that weighted hinge risk (not the
unweighted SVM's limit), with H_k = E[c_k delta(R_k) x~ x~'] and scores
c_k 1{R_k >= 0} Y^(k) x~, i.e. the same sandwich with the cost increments inside
H^ and the scores (coverage checked by Monte Carlo in ``benchmarks/bench_weights.py``).

Guards: a boundary failing the diagnostics (constant or nearly constant unconstrained
fit, constraints moving the estimate, lattice design, fewer than :data:`MIN_SIDE_COUNT`
observations on a side, near-singular H^_k) gets bootstrap standard errors under
``"auto"`` and none under ``"bahadur"``; ``notes`` name the boundary and the reason
(the results raise them as :class:`~nordicstats.exceptions.InferenceWarning`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nordicstats.auto_covariance import BoundaryChoice, bahadur_only, per_boundary_covariance
from nordicstats.bootstrap import BootstrapCovariance, bootstrap_replicates
from nordicstats.data import binary_signs
from nordicstats.diagnostics import THRESHOLDS, check_boundaries
from nordicstats.kernels import weighted_quantile

__all__ = [
    "BahadurCovariance",
    "CovarianceResult",
    "ESTIMATORS",
    "FitArrays",
    "estimate_covariance",
    "bandwidth",
    "check_cov_kwds",
    "margin_residuals",
    "diagnose",
    "COND_MAX",
    "MIN_SIDE_COUNT",
    "KERNELS",
]

#: Largest condition number of the scaled Hessian D^{-1/2} H^ D^{-1/2} (D = diag H^)
#: for which Wald standard errors are reported; above it the boundary's are NaN.
COND_MAX = THRESHOLDS["cond_max"]
#: Fewer observations than this on either side of a boundary fail the validity diagnostics
#: (Monte Carlo: at ~100 per side the slopes are biased upward and even the true SD
#: under-covers; docs/notes/inference-validity.md).
MIN_SIDE_COUNT = THRESHOLDS["min_side"]
#: Residuals within this distance of 0 or 2 for every row mean a constant classifier (w = 0).
CONSTANT_TOL = 1e-7
#: Rows with |r_ik| <= MARGIN_TOL lie on the margin; they enter G^ with weight 1/2 so that
#: solver round-off (r = +-1e-9 for the ~d+1 margin points) cannot flip them in or out.
MARGIN_TOL = 1e-5

_SQRT5 = np.sqrt(5.0)


def _gaussian(u):
    return np.exp(-0.5 * u * u) / np.sqrt(2.0 * np.pi)


def _epanechnikov(u):
    # Scaled to unit variance (support |u| <= sqrt 5) so that one bandwidth rule serves both.
    return np.where(np.abs(u) <= _SQRT5, 0.75 / _SQRT5 * (1.0 - u * u / 5.0), 0.0)


#: Smoothing kernels for H^, each a density with mean 0 and variance 1.
KERNELS = {"gaussian": _gaussian, "epanechnikov": _epanechnikov}
_COV_KWDS = {"bandwidth": "hall-sheather", "kernel": "gaussian", "constant": 1.0}
_BOOT_KWDS = {"n_boot": 200, "random_state": None, "n_jobs": 1, "disable": None}


def check_cov_kwds(cov_type, cov_kwds):
    """Validate ``cov_type`` and ``cov_kwds`` and fill in defaults.

    Parameters
    ----------
    cov_type : {"auto", "bahadur", "bootstrap"}
    cov_kwds : dict or None
        ``"auto"``: the options of both (``random_state`` defaults to 0 there so that
        default summaries are reproducible).  ``"bahadur"``: ``bandwidth``
        ("hall-sheather" or a positive float, or one per boundary), ``kernel``
        ("gaussian" or "epanechnikov"), ``constant`` (positive float multiplying the
        rule).  ``"bootstrap"``: ``n_boot`` (int >= 20),
        ``random_state``, ``n_jobs``, ``disable`` (hide the tqdm progress bar; the
        default None shows it on a terminal only).

    Returns
    -------
    dict
        All options for the chosen ``cov_type``.

    Raises
    ------
    ValueError
        Unknown ``cov_type``, unknown option names (the valid ones are listed) or
        invalid values.
    """
    defaults = {"bahadur": _COV_KWDS, "bootstrap": _BOOT_KWDS,
                "auto": {**_COV_KWDS, **_BOOT_KWDS, "random_state": 0}}
    if cov_type not in defaults:
        raise ValueError(
            f"The 'cov_type' parameter must be one of {[None, *sorted(defaults), 'none']}. "
            f"Got {cov_type!r} instead."
        )
    kwds = dict(cov_kwds or {})
    unknown = sorted(set(kwds) - set(defaults[cov_type]))
    if unknown:
        raise ValueError(
            f"cov_kwds has unknown option(s) {unknown} for cov_type={cov_type!r}; "
            f"valid options are {sorted(defaults[cov_type])}."
        )
    out = {**defaults[cov_type], **kwds}
    if cov_type in ("bahadur", "auto"):
        _check_bahadur_kwds(out)
    if cov_type in ("bootstrap", "auto"):
        # whole numbers given as floats (R's numerics through the bridge) count as integers
        for key in ("n_boot", "random_state", "n_jobs"):
            value = out[key]
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                out[key] = int(value)
        n_boot = out["n_boot"]
        if not isinstance(n_boot, (int, np.integer)) or n_boot < 20:
            raise ValueError(
                f"cov_kwds['n_boot'] must be an integer >= 20. Got {n_boot!r} instead."
            )
    return out


def _check_bahadur_kwds(kwds):
    if kwds["kernel"] not in KERNELS:
        raise ValueError(
            f"cov_kwds['kernel'] must be one of {sorted(KERNELS)}. Got {kwds['kernel']!r} instead."
        )
    constant = kwds["constant"]
    if not isinstance(constant, (int, float, np.number)) or not constant > 0:
        raise ValueError(
            f"cov_kwds['constant'] must be a positive number. Got {constant!r} instead.")
    bw = kwds["bandwidth"]
    if isinstance(bw, str):
        if bw != "hall-sheather":
            raise ValueError(
                "cov_kwds['bandwidth'] must be 'hall-sheather' or a positive number "
                f"(or one per boundary). Got {bw!r} instead."
            )
        return
    values = np.atleast_1d(np.asarray(bw, dtype=float))
    if values.ndim != 1 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(
            f"cov_kwds['bandwidth'] must be 'hall-sheather' or positive number(s). Got {bw!r}."
        )


# --- plug-in sandwich ------------------------------------------------------------------------
def augment(X):
    """x~ = (1, x')' for every row: the design with a leading column of ones."""
    X = np.asarray(X, dtype=float)
    return np.column_stack([np.ones(X.shape[0]), X])


def margin_residuals(X, signs, params):
    """r_ik = 1 - y_i^(k) (b_k + x_i' w_k), shape (n, K-1).

    Examples
    --------
    >>> margin_residuals(np.array([[1.0], [-1.0]]), np.array([[1.0], [-1.0]]),
    ...                  np.array([[0.0], [2.0]])).ravel().tolist()
    [-1.0, -1.0]
    """
    return 1.0 - np.asarray(signs, dtype=float) * (augment(X) @ np.asarray(params, dtype=float))


def bandwidth(residuals, rule="hall-sheather", constant=1.0, weights=None):
    """Bandwidth for the kernel estimate of H, one per column of ``residuals``.

    h = constant * min(sd(r), IQR(r) / 1.34) * n^(-1/3).

    Parameters
    ----------
    residuals : ndarray of shape (n,) or (n, K-1)
    rule : "hall-sheather" or float or array of K-1 floats
        A number is used as the bandwidth itself (``constant`` is then ignored).
    constant : float, default=1.0
        The coverage of the intervals for each constant is measured in
        docs/notes/inference-bandwidth.md.
    weights : ndarray of shape (n,), optional
        Frequency weights: sd, IQR and n are those of the residuals repeated w_i times.

    Returns
    -------
    ndarray of shape (K-1,)

    Examples
    --------
    >>> r = np.linspace(-1, 1, 1001)
    >>> bool(np.isclose(bandwidth(r)[0], min(r.std(ddof=1), 1.0 / 1.34) * 1001 ** (-1 / 3)))
    True
    """
    r = np.asarray(residuals, dtype=float)
    r = r[:, None] if r.ndim == 1 else r
    if not isinstance(rule, str):
        values = np.atleast_1d(np.asarray(rule, dtype=float))
        if values.size not in (1, r.shape[1]):
            raise ValueError(f"cov_kwds['bandwidth'] needs one value or one per boundary "
                             f"({r.shape[1]}); got {values.size} values.")
        return np.broadcast_to(values, (r.shape[1],)).copy()
    if weights is None:
        q75, q25 = np.percentile(r, [75, 25], axis=0)
        scale = np.minimum(r.std(axis=0, ddof=1), (q75 - q25) / 1.34)
        return constant * scale * r.shape[0] ** (-1.0 / 3.0)
    w = np.asarray(weights, dtype=float)
    N = w.sum()
    mean = w @ r / N
    sd = np.sqrt(w @ (r - mean) ** 2 / (N - 1.0))
    iqr = np.array([np.subtract(*weighted_quantile(r[:, k], w, [0.75, 0.25]))
                    for k in range(r.shape[1])])
    return constant * np.minimum(sd, iqr / 1.34) * N ** (-1.0 / 3.0)


class BahadurCovariance:
    """Plug-in Koo et al. (2008) sandwich for the K-1 linear boundaries, jointly.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    signs : ndarray of shape (n, K-1)
        y_i^(k) in {-1, +1}.
    params : ndarray of shape (1 + d, K-1)
        Row 0 the intercepts b_k, rows 1.. the weights w_k.
    bandwidth : "hall-sheather" or float or sequence of K-1 floats
    kernel : {"gaussian", "epanechnikov"}
    constant : float, default=1.0
    weights : ndarray of shape (n,), optional
        Frequency weights w_i: averages are w-weighted and n = sum w (see the module
        docstring); integer weights equal the fit on replicated rows.
    loss_weights : ndarray of shape (n, K-1), optional
        Cost increments c_ik multiplying row i's hinge on boundary k: they enter H^_k
        and the scores.

    Notes
    -----
    ``bread`` is block-diagonal with blocks H^_k^{-1}; ``meat`` is G^ with blocks
    G^_kl; ``cov = bread @ meat @ bread / n``.  A boundary whose classifier is constant
    (w^_k = 0, every r_ik in {0, 2}) or whose scaled H^_k has condition number above
    :data:`COND_MAX` has NaN rows and columns; the reason is in ``degenerate``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 1)); y = np.where(X[:, 0] + rng.normal(size=400) > 0, 1., -1.)
    >>> est = BahadurCovariance(X, y[:, None], np.array([[0.0], [1.2]]))
    >>> est.cov.shape, est.degenerate
    ((2, 2), {})
    """

    def __init__(self, X, signs, params, bandwidth="hall-sheather", kernel="gaussian",
                 constant=1.0, weights=None, loss_weights=None):
        self.X = augment(X)
        self.signs = np.asarray(signs, dtype=float).reshape(self.X.shape[0], -1)
        self.params = np.asarray(params, dtype=float).reshape(self.X.shape[1], -1)
        self.kernel = kernel
        self.weights = (np.ones(self.X.shape[0]) if weights is None
                        else np.asarray(weights, dtype=float))
        self.loss_weights = (np.ones(self.signs.shape) if loss_weights is None
                             else np.asarray(loss_weights, dtype=float))
        self.residuals = 1.0 - self.signs * (self.X @ self.params)
        self.bandwidths = globals()["bandwidth"](self.residuals, bandwidth, constant,
                                                 weights=weights)
        self.degenerate = {}
        self.hessians = [self._hessian(k) for k in range(self.n_boundaries)]
        self._check()

    @property
    def nobs(self):
        """n, or N = sum of the frequency weights."""
        return float(self.weights.sum())

    @property
    def n_boundaries(self):
        return self.signs.shape[1]

    def _hessian(self, k):
        h = self.bandwidths[k]
        return self._mean_outer(self.X, KERNELS[self.kernel](self.residuals[:, k] / h) / h
                                * self.loss_weights[:, k])

    def _mean_outer(self, A, row_scale=None):
        """N^{-1} sum_i w_i c_i a_i a_i' with N = sum_i w_i: every row average of the
        sandwich goes through here, so frequency weights enter in this one place."""
        scale = self.weights if row_scale is None else self.weights * row_scale
        return (A * scale[:, None]).T @ A / self.nobs

    def _check(self):
        for k in range(self.n_boundaries):
            r = self.residuals[:, k]
            on_margin_or_wrong = (np.abs(r) <= CONSTANT_TOL) | (np.abs(r - 2.0) <= CONSTANT_TOL)
            if np.all(on_margin_or_wrong) or not np.any(self.params[1:, k]):
                self.degenerate[k] = ("the fitted classifier is constant (w = 0: every margin "
                                      "residual is 0 or 2), so the Hessian is not identified")
                continue
            cond = scaled_condition_number(self.hessians[k])
            if not cond <= COND_MAX:
                self.degenerate[k] = (f"the estimated Hessian H is near-singular (scaled "
                                      f"condition number {cond:.3g} > {COND_MAX:.0e})")

    @property
    def scores(self):
        """s_ik = c_ik 1{r_ik >= 0} y_i^(k) x~_i (c_ik = 1 without a cost matrix).

        Stacked boundary-major: shape (n, (K-1)(1+d)).

        Rows on the margin (``|r_ik| <= MARGIN_TOL``) get the indicator 1/2.
        """
        r = self.residuals
        indicator = np.where(np.abs(r) <= MARGIN_TOL, 0.5, (r > 0).astype(float))
        active = indicator * self.signs * self.loss_weights
        return np.concatenate([self.X * active[:, [k]] for k in range(self.n_boundaries)], axis=1)

    @property
    def meat(self):
        """G^ = N^{-1} sum_i w_i s_i s_i' with blocks G^_kl."""
        return self._mean_outer(self.scores)

    @property
    def bread(self):
        """Block-diagonal matrix of H^_k^{-1} (NaN blocks for degenerate boundaries)."""
        p = self.X.shape[1]
        out = np.zeros((p * self.n_boundaries,) * 2)
        for k, H in enumerate(self.hessians):
            block = slice(k * p, (k + 1) * p)
            out[block, block] = np.nan if k in self.degenerate else np.linalg.inv(H)
        return out

    @property
    def cov(self):
        """Joint covariance of the boundary-major parameter vector, H^-1 G H^-1 / n."""
        bread = self.bread
        cov = bread @ self.meat @ bread / self.nobs
        return (cov + cov.T) / 2.0

    def describe(self):
        """Short text for summaries: kernel and bandwidth per boundary."""
        bws = ", ".join(f"{h:.4g}" for h in self.bandwidths)
        return f"Bahadur sandwich (Koo et al. 2008), {self.kernel} kernel, bandwidth {bws}"


def scaled_condition_number(H):
    """Condition number of D^{-1/2} H D^{-1/2}, D = diag(H) (inf if a diagonal entry is <= 0)."""
    d = np.diag(H)
    if not np.all(np.isfinite(H)) or np.any(d <= 0):
        return np.inf
    scale = 1.0 / np.sqrt(d)
    return float(np.linalg.cond(H * np.outer(scale, scale)))


# --- one entry point on arrays ---------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CovarianceResult:
    """A covariance estimate of the boundary-major coefficients, with its diagnostics.

    Attributes
    ----------
    cov : ndarray of shape ((K-1)(1+d), (K-1)(1+d))
        Joint covariance of the boundary-major parameter vector (NaN rows/columns for
        boundaries without valid standard errors).
    cov_type : {"bahadur", "bootstrap"}
    cov_kwds : mapping
        The resolved options.
    description : str
        One line for the summary.
    bandwidths : tuple of float or None
        Bandwidth used for each boundary (``"bahadur"``).
    notes : tuple of str
        The InferenceWarnings raised when the covariance was computed.
    degenerate : mapping of int to str
        Boundaries (0-based) without valid standard errors, and why.
    sources : tuple of BoundaryChoice
        Per boundary: the estimator its standard errors come from ("bahadur",
        "bootstrap" or "none") and why (the failed validity diagnostics).
    """

    cov: np.ndarray
    cov_type: str
    cov_kwds: object
    description: str
    bandwidths: tuple | None = None
    notes: tuple = field(default_factory=tuple)
    degenerate: object = field(default_factory=dict)
    sources: tuple = field(default_factory=tuple)


@dataclass(frozen=True, eq=False)
class FitArrays:
    """What a covariance estimator needs from a fit, as arrays (no model, no results).

    Attributes
    ----------
    X : ndarray of shape (n, d)
        Training covariates.
    codes : ndarray of int, shape (n,)
        Level codes 0..K-1 of the response.
    params : ndarray of shape (1 + d, K-1)
        Intercepts (row 0) and weights of the fitted boundaries.
    boundary_names : tuple of str
        Names of the K-1 boundaries (for messages).
    refit : callable, optional
        ``refit(rows) -> params`` fits the same model to the rows ``rows`` (with
        repeats); resampling estimators need it.  Picklable for ``n_jobs != 1``.
    weights : ndarray of shape (n,), optional
        Frequency (case) weights, read by :meth:`BahadurCovariance._mean_outer`, the
        bandwidth and the bootstrap's resampling.
    loss_weights : ndarray of shape (n, K-1), optional
        Cost increments c_ik of a cost-weighted fit (they enter H^ and the scores).
    params_unconstrained : ndarray of shape (1 + d, K-1), optional
        The unconstrained fit (BSVM, same data, weights, costs and C) that the validity
        diagnostics compare with; None when ``params`` is that fit.
    thresholds : dict, optional
        Overrides of :data:`nordicstats.diagnostics.THRESHOLDS` (e.g. no gap check
        where the unconstrained fit is another problem class).
    """

    X: np.ndarray
    codes: np.ndarray
    params: np.ndarray
    boundary_names: tuple
    refit: object = None
    weights: np.ndarray | None = None
    loss_weights: np.ndarray | None = None
    params_unconstrained: np.ndarray | None = None
    thresholds: dict | None = None

    @property
    def signs(self):
        """y_i^(k) in {-1, +1}, shape (n, K-1)."""
        return binary_signs(self.codes, self.params.shape[1] + 1)


def _sandwich(fit, params, bahadur_kwds):
    return BahadurCovariance(fit.X, fit.signs, params, weights=fit.weights,
                             loss_weights=fit.loss_weights, **bahadur_kwds)


def diagnose(fit, bahadur, bahadur_kwds):
    """Validity diagnostics of every boundary of a fitted sandwich.

    Parameters
    ----------
    fit : FitArrays
    bahadur : BahadurCovariance
        The sandwich of ``fit.params``.
    bahadur_kwds : dict
        Its options, reused for the sandwich of the unconstrained fit, whose standard
        errors scale the gap check.

    Returns
    -------
    list of BoundaryDiagnostic
        See :func:`nordicstats.diagnostics.check_boundaries`; where a check fails the
        sandwich's own guards (constant classifier, near-singular H) are not repeated,
        else they are the reason.
    """
    params_u = fit.params if fit.params_unconstrained is None else fit.params_unconstrained
    est_u = bahadur if fit.params_unconstrained is None else _sandwich(fit, params_u,
                                                                         bahadur_kwds)
    p = bahadur.params.shape[0]
    se_u = np.sqrt(np.diag(est_u.cov)).reshape(-1, p).T
    cond = [scaled_condition_number(H) for H in bahadur.hessians]
    diags = check_boundaries(fit.X, fit.signs, fit.params, params_u, se_u, bahadur.residuals,
                             cond, fit.thresholds, fit.weights, fit.loss_weights)
    for i, d in enumerate(diags):
        extra = bahadur.degenerate.get(d.boundary)
        if extra is not None and not d.reasons:
            diags[i] = type(d)(d.boundary, d.measures, (extra,))
    return diags


def _bahadur(fit, bandwidth, kernel, constant):
    kwds = {"bandwidth": bandwidth, "kernel": kernel, "constant": constant}
    est = _sandwich(fit, fit.params, kwds)
    return (bahadur_only(est, diagnose(fit, est, kwds)),
            tuple(float(h) for h in est.bandwidths), [])


def _bootstrap(fit, n_boot, random_state, n_jobs, disable):
    if fit.refit is None:
        raise ValueError("cov_type='bootstrap' needs a refit function (FitArrays.refit).")
    reps, failed = bootstrap_replicates(fit.refit, fit.codes, n_boot=n_boot,
                                        random_state=random_state, n_jobs=n_jobs, disable=disable,
                                        weights=fit.weights)
    return BootstrapCovariance(reps, failed, random_state), None, []


def _auto(fit, bandwidth, kernel, constant, n_boot, random_state, n_jobs, disable):
    kwds = {"bandwidth": bandwidth, "kernel": kernel, "constant": constant}
    est = _sandwich(fit, fit.params, kwds)
    combined = per_boundary_covariance(
        est, diagnose(fit, est, kwds),
        lambda: _bootstrap(fit, n_boot, random_state, n_jobs, disable)[0])
    return combined, tuple(float(h) for h in est.bandwidths), []


#: cov_type -> ``estimator(fit, **cov_kwds)`` -> (estimate, bandwidths, notes).  An estimate has
#: ``cov``, ``degenerate`` (boundary -> reason) and ``describe()``.
ESTIMATORS = {"auto": _auto, "bahadur": _bahadur, "bootstrap": _bootstrap}


def estimate_covariance(fit, cov_type, cov_kwds=None):
    """Covariance of the boundary-major coefficients of a linear fit given as arrays.

    Parameters
    ----------
    fit : FitArrays
    cov_type : {"auto", "bahadur", "bootstrap"}
    cov_kwds : dict, optional
        See :func:`check_cov_kwds`.

    Returns
    -------
    CovarianceResult
        ``sources`` says per boundary which estimator gave its standard errors;
        ``notes`` name every boundary that failed the validity diagnostics (bootstrap
        standard errors under ``"auto"``, none otherwise) with the reason; the caller
        decides how to warn.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 1)); codes = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> fit = FitArrays(X, codes, np.array([[0.0], [1.0]]), ("0|1",))
    >>> res = estimate_covariance(fit, "bahadur")
    >>> res.cov.shape, res.sources
    ((2, 2), (BoundaryChoice('bahadur', ''),))
    """
    kwds = check_cov_kwds(cov_type, cov_kwds)
    est, bandwidths, notes = ESTIMATORS[cov_type](fit, **kwds)
    names = list(fit.boundary_names)
    sources = getattr(est, "sources", None)
    if sources is None:  # one estimator for every boundary
        sources = tuple(BoundaryChoice("none", est.degenerate[k]) if k in est.degenerate
                        else BoundaryChoice(cov_type) for k in range(len(names)))
        description = est.describe()
    else:
        description = est.describe(names)
    notes = [_source_note(name, cov_type, c) for name, c in zip(names, sources, strict=True)
             if c.reason] + [n for n in notes if n]
    return CovarianceResult(cov=est.cov, cov_type=cov_type, cov_kwds=dict(kwds),
                            description=description, bandwidths=bandwidths,
                            notes=tuple(notes), degenerate=dict(est.degenerate),
                            sources=tuple(sources))


def _source_note(name, cov_type, choice):
    if choice.estimator == "bootstrap":
        return (f"Boundary {name}: bootstrap standard errors (the Bahadur sandwich does not "
                f"apply: {choice.reason}).")
    fix = " Use cov_type='auto' or 'bootstrap'." if cov_type == "bahadur" else ""
    return f"Boundary {name} has no standard errors: {choice.reason}.{fix}"
