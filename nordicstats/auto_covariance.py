"""Per-boundary choice between the Bahadur sandwich and the bootstrap (``cov_type="auto"``).

Works on arrays.  For every boundary the diagnostics of :mod:`nordicstats.diagnostics`
decide whether the Bahadur representation of Koo et al. (2008), transferred to the
constrained fit by the paper's Theorem 1, applies.  Where it does, the boundary's
block of the covariance is the sandwich H_k^{-1} G_kk H_k^{-1} / n; where it does not,
the rows and columns of that boundary come from the case-resampling bootstrap (the
validity study, ``docs/notes/inference-validity.md``, measured the naive n-out-of-n
bootstrap at constrained boundaries and found it in line with the Monte Carlo SD).
Boundaries on a lattice design (no continuous covariate) get no standard errors at
all: the study found the bootstrap there off by factors of 0.1 to 3.8.
Cross blocks between a sandwich boundary and a bootstrap boundary come from the
bootstrap; if the assembled matrix is not positive semi-definite it is projected onto
the PSD cone (negative eigenvalues set to 0).

``cov_type="bahadur"`` runs the same diagnostics and returns NaN for the failing
boundaries (the caller warns, naming boundary and reason).
"""

from __future__ import annotations

import numpy as np

from nordicstats.bootstrap import BootstrapCovariance, bootstrap_replicates
from nordicstats.diagnostics import check_boundaries

__all__ = ["BoundaryChoice", "per_boundary_covariance", "boundary_diagnostics", "CONSTANT_W"]

#: Slopes all below this in absolute value: the fit of the boundary is the constant
#: classifier; the bootstrap then returns (near) zero spread, which is no standard error.
CONSTANT_W = 1e-7


class BoundaryChoice:
    """Which estimator a boundary's standard errors come from, and why.

    Attributes
    ----------
    estimator : {"bahadur", "bootstrap", "none"}
        ``"none"``: no valid standard errors (NaN).
    reason : str
        Empty when the Bahadur diagnostics pass.
    """

    __slots__ = ("estimator", "reason")

    def __init__(self, estimator, reason=""):
        self.estimator, self.reason = estimator, reason

    def __repr__(self):
        return f"BoundaryChoice({self.estimator!r}, {self.reason!r})"


def boundary_diagnostics(bahadur, X, signs, params_unconstrained, bahadur_unconstrained,
                         thresholds=None):
    """Diagnostics of every boundary of a fitted sandwich (see :func:`check_boundaries`).

    Parameters
    ----------
    bahadur : BahadurCovariance
        The sandwich of the reported fit.
    X, signs : ndarray
    params_unconstrained : ndarray of shape (1 + d, K-1)
        BSVM coefficients on the same data and C.
    bahadur_unconstrained : BahadurCovariance
        The sandwich of the BSVM fit (its standard errors scale the gap check).

    Returns
    -------
    list of BoundaryDiagnostic
        The reasons also include the sandwich's own guards (constant classifier,
        near-singular H).
    """
    from nordicstats.inference import scaled_condition_number

    p = bahadur.params.shape[0]
    se_u = np.sqrt(np.diag(bahadur_unconstrained.cov)).reshape(-1, p).T
    cond = [scaled_condition_number(H) for H in bahadur.hessians]
    diags = check_boundaries(X, signs, bahadur.params, params_unconstrained, se_u,
                             bahadur.residuals, cond, thresholds)
    out = []
    for d in diags:
        extra = bahadur.degenerate.get(d.boundary)
        reasons = d.reasons if extra is None or d.reasons else (extra,)
        out.append(type(d)(d.boundary, d.measures, reasons))
    return out


def _assemble(bahadur_cov, boot_cov, failing, p):
    """Bahadur covariance with the rows and columns of the failing boundaries replaced."""
    cov = np.array(bahadur_cov, dtype=float)
    idx = np.concatenate([np.arange(k * p, (k + 1) * p) for k in failing])
    cov[idx, :] = boot_cov[idx, :]
    cov[:, idx] = boot_cov[:, idx]
    if not np.all(np.isfinite(cov)):
        return cov
    vals, vecs = np.linalg.eigh(cov)
    if vals.min() < -1e-10 * max(vals.max(), 1e-300):
        cov = (vecs * np.clip(vals, 0.0, None)) @ vecs.T
    return (cov + cov.T) / 2.0


def per_boundary_covariance(bahadur, diagnostics, refit, codes, boot_kwds):
    """Joint covariance from the sandwich where the diagnostics pass, bootstrap elsewhere.

    Parameters
    ----------
    bahadur : BahadurCovariance
    diagnostics : list of BoundaryDiagnostic
    refit : callable
        ``refit(rows) -> params`` (see :func:`~nordicstats.bootstrap.bootstrap_replicates`).
    codes : ndarray of int, shape (n,)
    boot_kwds : dict
        ``n_boot``, ``random_state``, ``n_jobs``, ``disable``.

    Returns
    -------
    cov : ndarray
    choices : list of BoundaryChoice
    bootstrap : BootstrapCovariance or None
        None when every boundary passed (no refits were run).
    """
    p = bahadur.params.shape[0]
    choices = [_choice(d, bahadur.params[1:, d.boundary]) for d in diagnostics]
    boot_k = [k for k, c in enumerate(choices) if c.estimator == "bootstrap"]
    cov, boot = bahadur.cov, None
    if boot_k:  # refits only when some boundary can use them
        reps, failed = bootstrap_replicates(refit, codes, **boot_kwds)
        boot = BootstrapCovariance(reps, failed, boot_kwds.get("random_state"))
        cov = _assemble(cov, boot.cov, boot_k, p)
        for k in boot_k:
            if k in boot.degenerate:
                choices[k] = BoundaryChoice("none", f"{choices[k].reason}; {boot.degenerate[k]}")
    for k, c in enumerate(choices):
        if c.estimator == "none":
            cov[k * p:(k + 1) * p, :] = np.nan
            cov[:, k * p:(k + 1) * p] = np.nan
    return cov, choices, boot


def _choice(diag, weights):
    """Bahadur if the diagnostics pass; none on a lattice design or for a constant fit
    (w = 0: the bootstrap would give a spread of ~0 around an atom); else bootstrap."""
    if diag.ok:
        return BoundaryChoice("bahadur")
    reason = "; ".join(diag.reasons)
    if diag.lattice:
        return BoundaryChoice("none", f"{reason}; neither the sandwich nor the bootstrap is "
                              "valid there")
    if np.max(np.abs(weights), initial=0.0) <= CONSTANT_W:
        return BoundaryChoice("none", f"{reason}; the fitted classifier is constant (w = 0): "
                              "its estimates sit on an atom, no Wald interval applies")
    return BoundaryChoice("bootstrap", reason)
