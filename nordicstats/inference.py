"""Large-sample inference for linear NORDIC: the Bahadur sandwich and Wald tests.

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
rows exactly on the margin, |r_ik| <= MARGIN_TOL, count 1/2 there), and
H^_k = (n h_k)^{-1} sum_i kappa(r_ik / h_k) x~_i x~_i' with a smoothing kernel kappa
and bandwidth h_k = c * min(sd(r_k), IQR(r_k) / 1.34) * n^(-1/3) (the Hall-Sheather
rate used for the same job in quantile regression; c = 1 by default).  This choice
was checked by Monte Carlo (see ``benchmarks/mc_coverage.py`` and the tests).

Parameters are stacked boundary-major: the vector is ``params.T.ravel()`` for a
``params`` array of shape (1 + d, K-1) whose row 0 is the intercept.

Use through the model: ``NORDIC(..., kernel="linear").fit(cov_type=..., cov_kwds=...)``

* ``cov_type="auto"`` (default for linear fits): per boundary, the Bahadur sandwich
  where the validity diagnostics of :mod:`nordicstats.diagnostics` pass, the bootstrap
  where they fail, nothing on lattice designs (:mod:`nordicstats.auto_covariance`;
  evidence in ``docs/notes/inference-validity.md``); ``cov_kwds`` those of both below;
* ``cov_type="bahadur"``: NaN plus a warning on boundaries failing the diagnostics;
  ``cov_kwds`` ``bandwidth``
  ("hall-sheather" or a positive number, or one per boundary), ``kernel``
  ("gaussian" or "epanechnikov", both scaled to unit variance), ``constant`` (1.0);
* ``cov_type="bootstrap"``: case resampling and a refit per replicate, ``cov_kwds``
  ``n_boot`` (200), ``random_state``, ``n_jobs`` (joblib), ``disable`` (True hides the
  tqdm bar; the default None shows it on a terminal only);
* ``cov_type="none"``: no covariance (e.g. inside tuning loops).

Guards: a boundary failing the diagnostics (degenerate unconstrained fit, constraints
moving the estimate, lattice design, fewer than :data:`MIN_SIDE_COUNT` observations on a
side, near-singular H^_k) gets bootstrap or no standard errors, always with an
:class:`~nordicstats.exceptions.InferenceWarning` naming it and the reason; under
``"bahadur"`` active noncrossing constraints add a warning.  Non-linear kernels raise
``ValueError``.
"""

from __future__ import annotations

import importlib.util
import warnings
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd
from scipy import optimize, stats

from nordicstats.auto_covariance import (
    BoundaryChoice,
    boundary_diagnostics,
    per_boundary_covariance,
)
from nordicstats.bootstrap import BootstrapCovariance, bootstrap_replicates
from nordicstats.data import binary_signs
from nordicstats.diagnostics import THRESHOLDS
from nordicstats.exceptions import InferenceWarning

__all__ = [
    "BahadurCovariance",
    "CovarianceResult",
    "bandwidth",
    "check_cov_kwds",
    "compute_covariance",
    "margin_residuals",
    "population_svm",
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
        rule).  ``"bootstrap"``: ``n_boot`` (int >= 20), ``random_state``, ``n_jobs``,
        ``disable`` (hide the tqdm progress bar; the
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


def bandwidth(residuals, rule="hall-sheather", constant=1.0):
    """Bandwidth for the kernel estimate of H, one per column of ``residuals``.

    h = constant * min(sd(r), IQR(r) / 1.34) * n^(-1/3).

    Parameters
    ----------
    residuals : ndarray of shape (n,) or (n, K-1)
    rule : "hall-sheather" or float or array of K-1 floats
        A number is used as the bandwidth itself (``constant`` is then ignored).
    constant : float, default=1.0
        Constants 1 to 1.5 gave 93-96% coverage in the notes' Monte Carlo; 0.5 under-covers.

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
    q75, q25 = np.percentile(r, [75, 25], axis=0)
    scale = np.minimum(r.std(axis=0, ddof=1), (q75 - q25) / 1.34)
    return constant * scale * r.shape[0] ** (-1.0 / 3.0)


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
                 constant=1.0):
        self.X = augment(X)
        self.signs = np.asarray(signs, dtype=float).reshape(self.X.shape[0], -1)
        self.params = np.asarray(params, dtype=float).reshape(self.X.shape[1], -1)
        self.kernel = kernel
        self.residuals = 1.0 - self.signs * (self.X @ self.params)
        self.bandwidths = globals()["bandwidth"](self.residuals, bandwidth, constant)
        self.degenerate = {}
        self.hessians = [self._hessian(k) for k in range(self.n_boundaries)]
        self._check()

    @property
    def nobs(self):
        return self.X.shape[0]

    @property
    def n_boundaries(self):
        return self.signs.shape[1]

    def _hessian(self, k):
        h = self.bandwidths[k]
        weights = KERNELS[self.kernel](self.residuals[:, k] / h) / h
        return (self.X * weights[:, None]).T @ self.X / self.nobs

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
        """s_ik = 1{r_ik >= 0} y_i^(k) x~_i, stacked boundary-major: shape (n, (K-1)(1+d)).

        Rows on the margin (|r_ik| <= MARGIN_TOL) get the indicator 1/2.
        """
        r = self.residuals
        indicator = np.where(np.abs(r) <= MARGIN_TOL, 0.5, (r > 0).astype(float))
        active = indicator * self.signs
        return np.concatenate([self.X * active[:, [k]] for k in range(self.n_boundaries)], axis=1)

    @property
    def meat(self):
        """G^ = n^{-1} S'S with blocks G^_kl."""
        S = self.scores
        return S.T @ S / self.nobs

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


# --- covariance of a fitted model (used by NORDICResults) -------------------------------------
@dataclass(frozen=True, eq=False)
class CovarianceResult:
    """The covariance attached to a :class:`~nordicstats.results.NORDICResults`.

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
    sources: tuple = field(default_factory=tuple)


def _nonlinear_error(model, cov_type):
    return ValueError(
        f"cov_type={cov_type!r} needs kernel='linear'. Wald inference (bse, z-tests, conf_int) "
        "is for the coefficients b_k, w_k of linear NORDIC (the paper's Theorem 1, Section 5.2); "
        f"this fit uses the {model.kernel.describe()} kernel, whose boundaries have no finite "
        "coefficient vector, so cov_type='bootstrap' has no coefficients to resample either. "
        "Refit with kernel='linear', or fit with cov_type=None."
    )


def compute_covariance(results, cov_type=None, cov_kwds=None, stacklevel=5):
    """Covariance of the coefficients of a fitted linear NORDIC, with its guards.

    Parameters
    ----------
    results : NORDICResults
    cov_type : {None, "auto", "bahadur", "bootstrap", "none"}
        ``None`` means ``"auto"`` for linear fits and no covariance for kernel fits;
        ``"none"`` skips the covariance (bootstrap refits use it).
    cov_kwds : dict, optional
        See :func:`check_cov_kwds`.

    Returns
    -------
    CovarianceResult or None

    Raises
    ------
    ValueError
        A covariance requested for a non-linear kernel, or invalid options.

    Warns
    -----
    InferenceWarning
        Boundaries with a constant classifier or a near-singular H (their standard
        errors are NaN); fewer than :data:`MIN_SIDE_COUNT` observations on a side of a
        boundary; noncrossing constraints active at the solution.
    """
    model = results.model
    if cov_type is None:
        if not model.kernel.is_linear:
            if cov_kwds:
                raise _nonlinear_error(model, "auto")
            return None
        cov_type = "auto"
    if cov_type == "none":
        return None
    kwds = check_cov_kwds(cov_type, cov_kwds)
    if not model.kernel.is_linear:
        raise _nonlinear_error(model, cov_type)
    names = list(results.boundary_names)
    if cov_type == "bootstrap":
        est = BootstrapCovariance(*_bootstrap_reps(model, kwds), kwds["random_state"])
        cov, bandwidths, notes = est.cov, None, []
        sources = [BoundaryChoice("none", est.degenerate[k]) if k in est.degenerate
                   else BoundaryChoice("bootstrap") for k in range(len(names))]
        description = est.describe()
    else:
        cov, bandwidths, sources, description = _diagnosed_covariance(results, cov_type, kwds)
        notes = [n for n in (_active_note(results),) if n and cov_type == "bahadur"]
    notes = [_source_note(names[k], cov_type, c) for k, c in enumerate(sources)
             if c.reason] + notes
    for note in notes:
        warnings.warn(note, InferenceWarning, stacklevel=stacklevel)
    return CovarianceResult(cov=cov, cov_type=cov_type, cov_kwds=dict(kwds),
                            description=description, bandwidths=bandwidths,
                            notes=tuple(notes), sources=tuple(sources))


def _source_note(name, cov_type, choice):
    if choice.estimator == "bootstrap":
        return (f"Boundary {name}: bootstrap standard errors (the Bahadur sandwich does not "
                f"apply: {choice.reason}).")
    fix = " Use cov_type='auto' or 'bootstrap'." if cov_type == "bahadur" else ""
    return f"Boundary {name} has no standard errors: {choice.reason}.{fix}"


def _bootstrap_reps(model, kwds):
    refit = partial(_refit_params, _refit_spec(model), model.exog, model.response.codes)
    return bootstrap_replicates(
        refit, model.response.codes, n_boot=kwds["n_boot"], random_state=kwds["random_state"],
        n_jobs=kwds["n_jobs"], disable=kwds["disable"])


def _diagnosed_covariance(results, cov_type, kwds):
    """Bahadur sandwich checked boundary by boundary; "auto" bootstraps the failing ones."""
    model = results.model
    signs = binary_signs(model.response.codes, model.response.n_levels)
    bah_kwds = {k: kwds[k] for k in _COV_KWDS}
    est = BahadurCovariance(model.exog, signs, results.params.to_numpy(), **bah_kwds)
    params_u = _unconstrained_params(results)
    est_u = est if params_u is None else BahadurCovariance(model.exog, signs, params_u,
                                                           **bah_kwds)
    thresholds = ({"max_gap": np.inf} if model.method == "nordic2" and model.penalty == "l1"
                  else None)
    diags = boundary_diagnostics(est, model.exog, signs, est.params if params_u is None
                                 else params_u, est_u, thresholds)
    bandwidths = tuple(float(h) for h in est.bandwidths)
    if cov_type == "bahadur":
        cov = est.cov
        for d in diags:
            if not d.ok:
                p = est.params.shape[0]
                cov[d.boundary * p:(d.boundary + 1) * p, :] = np.nan
                cov[:, d.boundary * p:(d.boundary + 1) * p] = np.nan
        sources = [BoundaryChoice("bahadur") if d.ok else
                   BoundaryChoice("none", "; ".join(d.reasons)) for d in diags]
        return cov, bandwidths, sources, est.describe()
    boot_kwds = {k: kwds[k] for k in _BOOT_KWDS}
    refit = partial(_refit_params, _refit_spec(model), model.exog, model.response.codes)
    cov, sources, boot = per_boundary_covariance(est, diags, refit, model.response.codes,
                                                 boot_kwds)
    return cov, bandwidths, sources, _auto_description(results.boundary_names, sources, est,
                                                       boot)


def _auto_description(names, sources, est, boot):
    used = {c.estimator for c in sources}
    parts = []
    if "bahadur" in used:
        which = ", ".join(n for n, c in zip(names, sources, strict=True)
                          if c.estimator == "bahadur")
        parts.append(f"{est.describe()} for {which}")
    if boot is not None:
        which = ", ".join(n for n, c in zip(names, sources, strict=True)
                          if c.estimator != "bahadur")
        parts.append(f"{boot.describe()} for {which}")
    return "auto: " + "; ".join(parts)


def _unconstrained_params(results):
    """BSVM coefficients on the same data and C (None when the fit is BSVM itself)."""
    from nordicstats.model import NORDIC

    model = results.model
    if model.method == "bsvm":
        return None
    spec = {**_refit_spec(model), "method": "bsvm", "penalty": "l2"}
    return NORDIC(model.response.codes, model.exog, kernel="linear",
                  **spec).fit(cov_type="none").params.to_numpy()


def _refit_spec(model):
    """Model options for refits.  Linear fits left on solver="auto" are refitted with the
    sparse primal solver when PIQP is installed (same optimum; ~0.05 s at n = 1,500, K = 4,
    where the decomposition solver takes minutes)."""
    solver = model.solver
    if (solver == "auto" and model.method in ("bsvm", "nordic1")
            and importlib.util.find_spec("piqp") is not None):
        solver = "primal"
    return {"method": model.method, "C": model.C, "noncrossing": model.noncrossing,
            "penalty": model.penalty, "solver": solver,
            "solver_options": dict(model.solver_options)}


def _refit_params(spec, X, codes, idx):
    """Refit linear NORDIC on the rows idx and return its (1 + d, K-1) coefficients."""
    from nordicstats.model import NORDIC

    res = NORDIC(codes[idx], X[idx], kernel="linear", **spec).fit(cov_type="none")
    return res.params.to_numpy()


def _active_note(results, tol=1e-8):
    """InferenceWarning text when noncrossing constraints bind at the solution, else None."""
    model, sr = results.model, results.solver_result
    if model.method == "bsvm" or model.response.n_levels < 3:
        return None
    count = sr.info.get("active_noncrossing")
    if count is None and "phi" in sr.multipliers:
        scale = tol * max(1.0, model.C)
        count = int(np.sum(np.asarray(sr.multipliers["phi"]) > scale)
                    + np.sum(np.asarray(sr.multipliers.get("gamma", [])) > scale))
    if count is None:
        price = results.price_of_noncrossing
        if not price:
            return ("whether the noncrossing constraints bind could not be checked for this "
                    "solver; if they do, Theorem 1 (same limit law as the unconstrained SVM) is "
                    "only asymptotic and the intervals may be distorted.")
        count = int(price["bsvm_crossing_rate"] > 0
                    or price["objective_increase"] > 1e-6 * max(1.0, abs(price["bsvm_objective"])))
    if not count:
        return None
    return (f"{count} noncrossing constraint(s) are active at the solution. Theorem 1 (the "
            "constrained fit has the unconstrained SVM's limit law) is asymptotic, so at this "
            "sample size the Bahadur intervals may be distorted, and test_parallel() tends to "
            "be conservative (binding constraints pull the boundaries together); compare with "
            "cov_type='bootstrap'.")


# --- pandas views and summary pieces ---------------------------------------------------------
def param_index(results):
    """MultiIndex (boundary, term) of the boundary-major parameter vector."""
    return pd.MultiIndex.from_product([list(results.boundary_names), list(results.params.index)],
                                      names=["boundary", "term"])


def param_labels(results):
    """``term@boundary`` labels used by the restriction parser."""
    return [f"{term}@{boundary}" for boundary, term in param_index(results)]


def as_table(results, vector):
    """Boundary-major vector -> DataFrame shaped like ``results.params``."""
    params = results.params
    return pd.DataFrame(np.asarray(vector).reshape(params.shape[1], params.shape[0]).T,
                        index=params.index, columns=params.columns)


def sources_text(names, cov):
    """"Bahadur for 0|1, 1|2; bootstrap for 2|3": which estimator each boundary uses."""
    groups = {}
    for name, c in zip(names, cov.sources or (), strict=False):
        groups.setdefault(c.estimator, []).append(name)
    if not groups:
        return cov.cov_type
    label = {"bahadur": "Bahadur", "bootstrap": "bootstrap", "none": "none (withheld)"}
    return "; ".join(f"{label[e]} for {', '.join(n)}" for e, n in groups.items())


def summary_frame(results, alpha=0.05):
    """One row per (boundary, term): coef, std err, z, P>|z|, the interval and the source
    of the standard error ("bahadur", "bootstrap" or "none")."""
    lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    ci = results.conf_int(alpha)
    frame = pd.DataFrame({
        "coef": results.params.to_numpy().T.ravel(),
        "std err": results.bse.to_numpy().T.ravel(),
        "z": results.tvalues.to_numpy().T.ravel(),
        "P>|z|": results.pvalues.to_numpy().T.ravel(),
    }, index=param_index(results))
    frame[lo], frame[hi] = ci["lower"].to_numpy(), ci["upper"].to_numpy()
    sources = results.cov_sources["estimator"]
    frame["se source"] = np.repeat(sources.to_numpy(), results.params.shape[0])
    return frame


def coefficient_tables(results, alpha=0.05):
    """One statsmodels parameter table per boundary (coef, std err, z, P>|z|, interval)."""
    from statsmodels.iolib.summary import summary_params

    terms = list(results.params.index)
    ci = results.conf_int(alpha).to_numpy()
    tables = []
    for k, name in enumerate(results.boundary_names):
        rows = slice(k * len(terms), (k + 1) * len(terms))
        cols = (results.params.iloc[:, k], results.bse.iloc[:, k], results.tvalues.iloc[:, k],
                results.pvalues.iloc[:, k])
        parts = (results, *[c.to_numpy() for c in cols], ci[rows])
        source = _source_title(results, k)
        tables.append(summary_params(parts, yname=f"boundary {name}", xname=terms, alpha=alpha,
                                     use_t=False, title=f"Boundary {name}{source}"))
    return tables


def _source_title(results, k):
    sources = results._cov.sources
    if not sources or results._cov.cov_type != "auto":
        return ""
    return {"bahadur": " (std err: Bahadur)", "bootstrap": " (std err: bootstrap)",
            "none": " (std err: none)"}[sources[k].estimator]


def header_rows(results):
    """("Cov. Type:", ...) and ("Bandwidth:", ...) rows for the summary header."""
    cov = getattr(results, "_cov", None)
    if cov is None:
        return []
    rows = [("Cov. Type:", [cov.cov_type])]
    if cov.bandwidths is not None:
        rows.append(("Bandwidth:", [", ".join(f"{h:.4g}" for h in cov.bandwidths)]))
    if cov.cov_type == "bootstrap" or any(c.estimator == "bootstrap" for c in cov.sources):
        rows.append(("Replicates:", [str(cov.cov_kwds["n_boot"])]))
    return rows


def summary_notes(results):
    """Covariance description, the parallel-boundaries test and the inference warnings."""
    cov = getattr(results, "_cov", None)
    if cov is None:
        return []
    lines = [f"Covariance: {cov.description}."]
    if cov.cov_type != "bootstrap":
        lines.append(f"Standard errors by boundary: {sources_text(results.boundary_names, cov)}.")
    if len(results.boundary_names) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InferenceWarning)
            test = results.test_parallel()
        lines.append(f"Parallel boundaries (H0: w_1 = ... = w_K-1): chi2({test.df}) = "
                     f"{test.statistic:.4g}, p-value = {test.pvalue:.4g}.")
    lines += [f"WARNING: {note}" for note in cov.notes]
    return lines


# --- population quantities for Gaussian-mixture designs ---------------------------------------
def _component_moments(beta, weight, mean, cov, sign):
    """Pieces of risk, gradient, G and H for one Gaussian component with label sign."""
    mean_a = np.concatenate([[1.0], mean])
    cov_a = np.zeros((mean_a.size,) * 2)
    cov_a[1:, 1:] = cov
    a = sign * beta
    m, v = float(a @ mean_a), float(a @ cov_a @ a)
    sd = np.sqrt(v)
    t = (1.0 - m) / sd
    Phi, phi = stats.norm.cdf(t), stats.norm.pdf(t)
    risk = weight * ((1.0 - m) * Phi + sd * phi)
    Sa = cov_a @ a
    grad = -weight * sign * (Phi * mean_a - Sa * phi / sd)
    cond_cov = cov_a - np.outer(Sa, Sa) / v
    at_one = mean_a + Sa * (1.0 - m) / v
    hess = weight * phi / sd * (cond_cov + np.outer(at_one, at_one))
    # E[1{M <= 1} x~x~'] with x~ = mean + Sa Z / sd + independent part
    e0, e1, e2 = Phi, -phi, Phi - t * phi
    u = Sa / sd
    gmat = weight * (e0 * (cond_cov + np.outer(mean_a, mean_a))
                     + e1 * (np.outer(mean_a, u) + np.outer(u, mean_a)) + e2 * np.outer(u, u))
    return risk, grad, hess, gmat


def population_svm(components, start=None):
    """Population linear SVM for a Gaussian-mixture design, in closed form.

    Minimises the hinge risk E[(1 - Y x~'beta)_+] over beta = (b, w')' when X given
    its mixture component is N(mu_c, S_c) and Y = s_c.  With M = Y x~'beta ~ N(m, v)
    in a component, E[(1 - M)_+] = (1 - m) Phi(u) + sqrt(v) phi(u), u = (1 - m)/sqrt(v)
    (shared notes, "Designs with a known truth"); G and H follow from truncated-normal
    moments.

    Parameters
    ----------
    components : sequence of (weight, mean, cov, sign)
    start : ndarray, optional
        Starting beta; defaults to (0, difference of the signed means).

    Returns
    -------
    dict
        ``beta`` (1 + d,), ``risk``, ``G``, ``H`` and ``avar = H^{-1} G H^{-1}`` (the
        covariance of sqrt(n)(beta^ - beta*)).

    Examples
    --------
    >>> comps = [(0.5, np.array([1.0]), np.eye(1), 1.0), (0.5, np.array([-1.0]), np.eye(1), -1.0)]
    >>> out = population_svm(comps)
    >>> round(float(out["risk"]), 6) == round(float(out["G"][0, 0]), 6)
    True
    """
    comps = [(float(w), np.asarray(mu, float), np.asarray(S, float), float(s))
             for w, mu, S, s in components]

    def parts(beta):
        return [_component_moments(beta, *c) for c in comps]

    def fun(beta):
        p = parts(beta)
        return sum(x[0] for x in p), sum(x[1] for x in p)

    if start is None:
        start = np.concatenate([[0.0], sum(w * s * mu for w, mu, _, s in comps)])
    sol = optimize.minimize(fun, start, jac=True, method="trust-exact",
                            hess=lambda b: sum(x[2] for x in parts(b)),
                            options={"gtol": 1e-12})
    p = parts(sol.x)
    G, H = sum(x[3] for x in p), sum(x[2] for x in p)
    Hinv = np.linalg.inv(H)
    return {"beta": sol.x, "risk": sum(x[0] for x in p), "G": G, "H": H,
            "avar": Hinv @ G @ Hinv, "converged": bool(sol.success)}
