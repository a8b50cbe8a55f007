"""Optimality of an L1-SVM LP basis checked afresh, without a simplex solver.

The cost path and the margin path (:mod:`nordicstats.solvers.l1svm_path`,
:mod:`nordicstats.solvers.l1svm_margin_path`) end at a basis of one boundary's LP
(:mod:`nordicstats.solvers.l1svm_lp`; NORDIC-2's relaxation, paper Section 4, with the
sign rows of its disjunctions)::

    min  ||theta||_1 + sum_i u_i xi_i
    s.t. y_i (Z_i theta + b) + xi_i >= r_i,  xi_i >= 0   (points: r_i = 1, u_i = C c_i)
         y_i (Z_i theta + b) >= r_i                       (sign rows: y_i = s, r_i = h,
                                                           u_i = inf)

given by E (the basic multipliers, points on their margins), A (the active theta_j
with signs sigma_j) and the status of every other point (R: mu_i = 0, L: mu_i = u_i).
The path's own vertex comes from a rank-one-updated inverse, on margins perturbed
against ties; :func:`certify_basis` recomputes the vertex of that basis on the LP itself
from a fresh LU factorisation of the ``(|A| + 1)``-square basis matrix
M = [y_E'; (Y_E Z_{E,A})'] and checks the KKT conditions of the whole LP, every point
and every coordinate j = 1..p (not only those HiGHS's restricted dual holds)::

    M' (b, theta_A) = r_E                                   (E on its margins)
    M mu_E = (0, sigma) - (y_L'u_L, Z_{L,A}'Y_L u_L)        (b and A stationary)
    y_i f_i >= r_i on R,  y_i f_i <= r_i on L               (primal feasibility with
                                                             xi = (r - y f)_+ and
                                                             complementarity)
    0 <= mu_E <= u_E,  |(Z'Y mu)_j| <= 1,  sigma_j theta_j >= 0   (dual feasibility,
                                                                   complementarity)
    ||theta||_1 + u'xi = r'mu                               (no duality gap)

When they hold, (theta, b, xi) and mu are feasible for the LP and its dual with equal
objectives: the basis is optimal and its vertex the LP's optimum, which HiGHS's
confirming run (a refactorisation of the same basis and full pricing) would only
repeat.  When any fails (the perturbation moved a point across its margin, rounding in
the path's updates, an ill-conditioned basis), the caller hands the basis to HiGHS.

Tolerance (``CERTIFICATE_TOL`` = 1e-9, relative).  HiGHS confirms with primal and dual
feasibility tolerances of 1e-9 (``l1svm_lp.HIGHS_OPTIONS``) and pricing admits
``|(Z'v)_j| <= 1 + 1e-9`` (``l1svm_lp.PRICING_TOL``), so the check accepts nothing HiGHS
would reject.  Each residual is compared with 1e-9 times the size of its terms: a
margin residual with ``1 + |b| + sum_{j in A} |Z_ij theta_j|``, a multiplier's bound with
``max(1, u_i)``, ``|s_j| - 1`` with 1 (its bound), the gap with ``max(1, |objective|)``.
Rounding of a fresh solve is about cond(M) times 1e-16 of those sizes, so bases with
cond(M) up to about 1e6 pass; worse ones go to HiGHS.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

__all__ = ["Certificate", "certify_basis", "CERTIFICATE_TOL"]

#: Relative tolerance of every residual (see the module docstring for the sizes).
CERTIFICATE_TOL = 1e-9
_R, _L, _E, _OFF = 0, 1, 2, 3  # point status codes, as in l1svm_path


@dataclass(frozen=True)
class Certificate:
    """Outcome of :func:`certify_basis`.

    Attributes
    ----------
    certified : bool
        True when every check passed: ``theta``, ``b`` are the LP's optimum.
    reason : str
        The first check that failed ("" when certified).
    theta : ndarray of shape (p,)
    b : float
        The basis's vertex (recomputed; meaningful when certified).
    objective : float
        The dual objective r'mu (equal to the primal's within the tolerance).
    residual : float
        The largest scaled residual over all checks (<= ``CERTIFICATE_TOL`` when certified).
    """

    certified: bool
    reason: str
    theta: np.ndarray
    b: float
    objective: float
    residual: float


def certify_basis(Z, y, u, margins, point_status, active, sign, tol=CERTIFICATE_TOL):
    """Check that a basis of the L1-SVM LP is optimal, from a fresh factorisation.

    Parameters
    ----------
    Z : ndarray of shape (N, p)
        Rows of the points (then of the sign rows, if any): f_i = Z_i theta + b.
    y, u, margins : ndarray of shape (N,)
        Labels (s for a sign row), slack costs (inf for a sign row) and margins r_i
        (1 for a point, h for a sign row), of the LP itself (not perturbed).
    point_status : ndarray of int, shape (N,)
        0 (R: mu_i = 0), 1 (L: mu_i = u_i), 2 (E: basic), 3 (a sign row switched off:
        not in the LP).
    active, sign : array_like
        A (theta_j basic) and sigma_j = +-1; ``|E| = |A| + 1``.
    tol : float, default=CERTIFICATE_TOL
        Relative tolerance of every residual.

    Returns
    -------
    Certificate

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y, u, r = np.array([-1.0, -1.0, 1.0, 1.0]), np.full(4, 10.0), np.ones(4)
    >>> out = certify_basis(Z, y, u, r, [0, 2, 2, 0], [0], [1.0])  # theta = 2, b = -3
    >>> out.certified, out.theta.tolist(), round(out.b, 12), round(out.objective, 12)
    (True, [2.0], -3.0, 2.0)
    >>> certify_basis(Z, y, u, r, [2, 0, 2, 0], [0], [1.0]).reason    # x = 1 misclassified
    'a point with mu = 0 inside its margin'
    """
    Z = np.asarray(Z, dtype=float)
    y, u, r = (np.asarray(a, dtype=float) for a in (y, u, margins))
    status = np.asarray(point_status)
    active = np.asarray(active, dtype=np.int64)
    sign = np.asarray(sign, dtype=float)
    p = Z.shape[1]
    theta = np.zeros(p)

    def rejected(reason, residual=np.inf):
        return Certificate(False, reason, theta, np.nan, np.nan, float(residual))

    elbow = np.flatnonzero(status == _E)
    lower = np.flatnonzero(status == _L)
    if elbow.size != active.size + 1:
        return rejected("|E| differs from |A| + 1")
    if np.any(~np.isfinite(u[lower])):
        return rejected("a sign row at an upper bound")
    Z_A = Z[:, active]
    G = y[elbow, None] * np.column_stack([np.ones(elbow.size), Z_A[elbow]])
    try:  # G = M': rows E, columns (b, A)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # checked below
            factor = scipy.linalg.lu_factor(G, check_finite=True)
    except ValueError:
        return rejected("the basis matrix is not finite")
    if np.any(np.diag(factor[0]) == 0.0):
        return rejected("the basis matrix is singular")
    primal = scipy.linalg.lu_solve(factor, r[elbow])
    fixed = np.concatenate([[y[lower] @ u[lower]], (y[lower] * u[lower]) @ Z_A[lower]])
    mu_E = scipy.linalg.lu_solve(factor, np.concatenate([[0.0], sign]) - fixed, trans=1)
    if not (np.all(np.isfinite(primal)) and np.all(np.isfinite(mu_E))):
        return rejected("the basis matrix is singular")
    b, theta[active] = primal[0], primal[1:]

    checks = []
    in_lp = status != _OFF
    f = Z_A @ theta[active] + b
    size = 1.0 + abs(b) + np.abs(Z_A) @ np.abs(theta[active])
    slack = (y * f - r) / size  # scaled margin residual
    checks.append(("a point with mu = 0 inside its margin",
                   np.max(-slack[status == _R], initial=0.0)))
    checks.append(("a point with mu = u beyond its margin", np.max(slack[lower], initial=0.0)))
    checks.append(("a point of E off its margin", np.max(np.abs(slack[elbow]), initial=0.0)))

    mu = np.zeros(Z.shape[0])
    mu[lower], mu[elbow] = u[lower], mu_E
    bound_size = np.maximum(1.0, np.where(np.isfinite(u[elbow]), u[elbow], 1.0))
    checks.append(("a basic multiplier below 0", np.max(-mu_E / bound_size, initial=0.0)))
    checks.append(("a basic multiplier above its cost",
                   np.max(np.where(np.isfinite(u[elbow]), (mu_E - u[elbow]) / bound_size, 0.0),
                          initial=0.0)))
    v = np.where(in_lp, y * mu, 0.0)
    s = Z.T @ v
    checks.append(("b not stationary", abs(v.sum()) / max(1.0, np.abs(v).sum())))
    checks.append(("a coordinate's |Z'Y mu| above 1", np.max(np.abs(s) - 1.0, initial=0.0)))
    checks.append(("an active coordinate off its bound",
                   np.max(np.abs(s[active] - sign), initial=0.0)))
    checks.append(("an active coordinate against its sign",
                   np.max(-sign * theta[active], initial=0.0) / max(1.0, np.abs(theta).max())))

    points = in_lp & np.isfinite(u)
    xi = np.maximum(r - y * f, 0.0)
    primal_objective = np.abs(theta).sum() + u[points] @ xi[points]
    objective = float(r[in_lp] @ mu[in_lp])
    checks.append(("a duality gap",
                   abs(primal_objective - objective) / max(1.0, abs(primal_objective))))
    for reason, residual in checks:
        if not residual <= tol:  # also rejects NaN
            return Certificate(False, reason, theta, float(b), objective, float(residual))
    return Certificate(True, "", theta, float(b), objective,
                       float(max(residual for _, residual in checks)))
