"""Population linear SVM for Gaussian-mixture designs (the truth of inference studies)."""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

__all__ = ["population_svm"]


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
    (``docs/notes/inference-bandwidth.md``, "Designs with a known truth"); G and H
    follow from truncated-normal moments.

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
