"""Per-boundary choice between the Bahadur sandwich and the bootstrap (``cov_type="auto"``).

Works on arrays and on the estimates of :mod:`nordicstats.covariance` (anything with
``cov``, ``degenerate`` and ``describe()``), without importing them.  For every
boundary the diagnostics of :mod:`nordicstats.diagnostics` decide whether the Bahadur
representation of Koo et al. (2008), transferred to the constrained fit by the paper's
Theorem 1, applies.  Where it does, the boundary's block of the covariance is the
sandwich H_k^{-1} G_kk H_k^{-1} / n; where it does not, the rows and columns of that
boundary come from the case-resampling bootstrap (the validity study measured the
naive n-out-of-n bootstrap at constrained boundaries against the Monte Carlo SD).
Boundaries on a lattice design (no continuous covariate) get no standard errors at
all: the study found the bootstrap unreliable there too.  A boundary whose
unconstrained fit is (nearly) constant, or not distinguishable from the constant
classifier, is set by the noncrossing constraints at the sample's extreme rows; its
estimates drift with n toward a limit that the constraints
over the whole support define, so it gets bootstrap
standard errors -- right for the spread at this n -- but no z values, p-values or
intervals (``BoundaryChoice.intervals`` is False).  Cross blocks between a
sandwich boundary and a bootstrap boundary come from the bootstrap, shrunk toward 0
just enough for the joint matrix to be positive semi-definite; the variances, hence
the standard errors, are exactly those of the two estimators.

The measurements behind these choices are in ``docs/notes/inference-validity.md``, whose
tables ``benchmarks/validity_study.py --summarise`` writes; numbers live there, not here.

``cov_type="bahadur"`` runs the same diagnostics and returns NaN for the failing
boundaries (:func:`bahadur_only`; the caller warns, naming boundary and reason).
"""

from __future__ import annotations

import numpy as np

from nordicstats.diagnostics import CONSTANT_W

__all__ = ["BoundaryChoice", "choose_estimator", "PerBoundaryCovariance", "bahadur_only",
           "per_boundary_covariance", "blank_boundaries", "CONSTANT_W", "NO_INTERVALS"]


class BoundaryChoice:
    """Which estimator a boundary's standard errors come from, and why.

    Attributes
    ----------
    estimator : {"bahadur", "bootstrap", "none"}
        ``"none"``: no valid standard errors (NaN).
    reason : str
        Empty when the estimator's conditions hold.
    intervals : bool
        False where the standard errors describe the spread of the estimates at this n
        but the estimates have no fixed limit to test or cover (a boundary set by the
        noncrossing constraints): z values, p-values and intervals are then withheld.
    """

    __slots__ = ("estimator", "reason", "intervals")

    def __init__(self, estimator, reason="", intervals=True):
        self.estimator, self.reason = estimator, reason
        self.intervals = bool(intervals) and estimator != "none"

    def __repr__(self):
        extra = "" if self.intervals or self.estimator == "none" else ", intervals=False"
        return f"BoundaryChoice({self.estimator!r}, {self.reason!r}{extra})"


class PerBoundaryCovariance:
    """A joint covariance assembled boundary by boundary, with its sources.

    Attributes
    ----------
    cov : ndarray
    sources : tuple of BoundaryChoice
    degenerate : dict
        Boundary -> reason, for the boundaries without standard errors.
    """

    def __init__(self, cov, sources, parts):
        self.cov, self.sources, self._parts = cov, tuple(sources), parts
        self.degenerate = {k: c.reason for k, c in enumerate(self.sources)
                           if c.estimator == "none"}

    def describe(self, names=None):
        """"auto: <Bahadur description> for 0|1, 1|2; <bootstrap description> for 2|3"."""
        names = [str(k) for k in range(len(self.sources))] if names is None else list(names)
        parts = []
        for estimator, est in self._parts.items():
            which = [n for n, c in zip(names, self.sources, strict=True)
                     if c.estimator == estimator]
            if which:
                parts.append(f"{est.describe()} for {', '.join(which)}")
        return "; ".join(parts) or "no valid standard errors"


def blank_boundaries(cov, boundaries, p):
    """A copy of the boundary-major ``cov`` with NaN rows and columns for ``boundaries``
    (``p`` parameters per boundary)."""
    cov = np.array(cov, dtype=float)
    for k in boundaries:
        cov[k * p:(k + 1) * p, :] = np.nan
        cov[:, k * p:(k + 1) * p] = np.nan
    return cov


def bahadur_only(bahadur, diagnostics):
    """The sandwich with NaN rows and columns for the boundaries failing the diagnostics."""
    p = bahadur.params.shape[0]
    sources = [BoundaryChoice("bahadur") if d.ok else BoundaryChoice("none", "; ".join(d.reasons))
               for d in diagnostics]
    failing = [d.boundary for d in diagnostics if not d.ok]
    return PerBoundaryCovariance(blank_boundaries(bahadur.cov, failing, p), sources,
                                 {"bahadur": bahadur})


def _assemble(bahadur_cov, boot_cov, failing, p):
    """Bahadur covariance with the rows and columns of the failing boundaries replaced.

    Diagonal blocks: A (sandwich, passing boundaries) and B (bootstrap, failing ones);
    the cross block C comes from the bootstrap.  [[A, C], [C', B]] is PSD iff
    ||A^{-1/2} C B^{+1/2}||_2 <= 1 (and C vanishes on B's null space); otherwise C is
    shrunk by the factor that makes that norm 1.  Every variance -- hence every standard
    error -- is the one its estimator gave; only cross-boundary covariances shrink.
    """
    cov = np.array(bahadur_cov, dtype=float)
    b = np.concatenate([np.arange(k * p, (k + 1) * p) for k in failing])
    a = np.setdiff1d(np.arange(cov.shape[0]), b)
    cov[np.ix_(b, b)] = boot_cov[np.ix_(b, b)]
    cross = boot_cov[np.ix_(a, b)]
    if a.size and np.all(np.isfinite(cov)) and np.all(np.isfinite(cross)):
        cross = cross * _cross_shrinkage(cov[np.ix_(a, a)], cov[np.ix_(b, b)], cross)
    cov[np.ix_(a, b)], cov[np.ix_(b, a)] = cross, cross.T
    return (cov + cov.T) / 2.0


def _inverse_sqrt(M, tol=1e-12):
    vals, vecs = np.linalg.eigh((M + M.T) / 2.0)
    keep = vals > tol * max(vals.max(), 1e-300)
    return (vecs[:, keep] / np.sqrt(vals[keep])) @ vecs[:, keep].T, vecs[:, ~keep]


def _cross_shrinkage(A, B, C):
    """Largest t in [0, 1] with [[A, tC], [tC', B]] PSD (0 if C loads on B's null space)."""
    a_half, a_null = _inverse_sqrt(A)
    b_half, b_null = _inverse_sqrt(B)
    scale = np.abs(C).max(initial=0.0)
    if scale == 0.0:
        return 1.0
    if (b_null.size and np.abs(C @ b_null).max() > 1e-9 * scale) or (
            a_null.size and np.abs(a_null.T @ C).max() > 1e-9 * scale):
        return 0.0
    norm = np.linalg.norm(a_half @ C @ b_half, 2)
    return 1.0 if norm <= 1.0 else (1.0 - 1e-12) / norm


def per_boundary_covariance(bahadur, diagnostics, run_bootstrap):
    """Joint covariance from the sandwich where the diagnostics pass, bootstrap elsewhere.

    Parameters
    ----------
    bahadur : BahadurCovariance
    diagnostics : list of BoundaryDiagnostic
    run_bootstrap : callable
        ``run_bootstrap() -> estimate`` with ``cov`` and ``degenerate`` (the bootstrap
        estimator of :mod:`nordicstats.covariance`); called only when some boundary
        needs it, so a fit whose boundaries all pass costs no refits.

    Returns
    -------
    PerBoundaryCovariance
    """
    p = bahadur.params.shape[0]
    sources = [choose_estimator(d, bahadur.params[1:, d.boundary]) for d in diagnostics]
    boot_k = [k for k, c in enumerate(sources) if c.estimator == "bootstrap"]
    cov, parts = bahadur.cov, {"bahadur": bahadur}
    if boot_k:
        boot = run_bootstrap()
        parts["bootstrap"] = boot
        cov = _assemble(cov, boot.cov, boot_k, p)
        for k in boot_k:
            if k in boot.degenerate:
                sources[k] = BoundaryChoice("none", f"{sources[k].reason}; {boot.degenerate[k]}")
    none = [k for k, c in enumerate(sources) if c.estimator == "none"]
    return PerBoundaryCovariance(blank_boundaries(cov, none, p), sources, parts)


#: Why a constraint-determined boundary gets no z values, p-values or intervals.
NO_INTERVALS = ("its estimates follow the sample's extreme rows and drift with n (no fixed "
                "limit at rate root-n), so the bootstrap standard errors give their spread at "
                "this n and no z values, p-values or intervals are reported")


def choose_estimator(diag, slopes):
    """The covariance estimator of one boundary under ``cov_type="auto"``, and why.

    The rule, in order: the Bahadur sandwich when the boundary's validity diagnostics
    pass; none on a lattice design (neither the sandwich nor the bootstrap is valid) or
    for a constant fit, ``max_j abs(w_kj) <= CONSTANT_W`` (the bootstrap would give a
    spread of ~0 around an atom); bootstrap standard errors without intervals where the
    noncrossing constraints set the boundary; else the bootstrap.

    Parameters
    ----------
    diag : BoundaryDiagnostic
        The boundary's validity diagnostics (:func:`nordicstats.diagnostics.diagnose`);
        ``ok``, ``lattice``, ``constraint_determined`` and ``reasons`` are read.
    slopes : array_like of shape (p - 1,)
        The boundary's fitted slopes w_k (no intercept).

    Returns
    -------
    BoundaryChoice

    Examples
    --------
    >>> import numpy as np
    >>> from nordicstats.diagnostics import BoundaryDiagnostic
    >>> passing = BoundaryDiagnostic(0, {}, [])
    >>> choose_estimator(passing, np.array([0.5, -1.0])).estimator
    'bahadur'
    """
    if diag.ok:
        return BoundaryChoice("bahadur")
    reason = "; ".join(diag.reasons)
    if diag.lattice:
        return BoundaryChoice("none", f"{reason}; neither the sandwich nor the bootstrap is "
                              "valid there")
    if np.max(np.abs(slopes), initial=0.0) <= CONSTANT_W:
        return BoundaryChoice("none", f"{reason}; the fitted classifier is constant (w = 0): "
                              "its estimates sit on an atom, no Wald interval applies")
    if diag.constraint_determined:
        return BoundaryChoice("bootstrap", f"{reason}; {NO_INTERVALS}", intervals=False)
    return BoundaryChoice("bootstrap", reason)
