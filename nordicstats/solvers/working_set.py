"""Working-set steps for the SMO solver: one small dense QP over many coupled variables.

Under heavy class overlap and at K = 7, C = 2^4 most SMO steps of
:mod:`nordicstats.solvers.smo_core` are cross-boundary pairs and noncrossing (phi)
steps that zig-zag between coupled constraints: the intercept chain ties the
boundaries and the phis tie an alpha of one boundary to those of its neighbours.
A working-set step (SVMlight's larger working sets, Joachims 1999) moves many of
them at once: it picks W -- the ``per_boundary`` alphas of every boundary with the
largest score that can rise and as many with the smallest that can fall, the
noncrossing multipliers of their rows next to their boundaries and the most violated
ones of every column, and every gamma of the chain -- and minimises the dual of the
paper's Section 3.3 over W with the other variables fixed::

    min_d  1/2 d'H_W d + c_W'd
    s.t.   A_W d = 0,  lower_W - v_W <= d <= upper_W - v_W,

with H_W = M_W' (I (x) K_SS) M_W over the rows S of W, c_W the gradient of the dual
at the point (y_ik G_ik - 1 for alpha_ik, G_ik - G_i,k+1 for phi_ik, 0 for gamma_k)
and A_W the K-1 equality rows y_k'alpha_k + gamma_k - gamma_k-1 = 0 restricted to W.
The QP has tens of variables; it is solved exactly by quadprog (Goldfarb-Idnani)
with a ridge removed by proximal-point steps
(:func:`~nordicstats.solvers.proximal.solve_proximal_quadprog`), the new point is
clipped into the box, and it is taken only when it lowers the dual objective; then
G = K Omega is updated by the kernel columns of S.
"""

from __future__ import annotations

import numpy as np

from nordicstats.exceptions import SolverError
from nordicstats.solvers.polish import KernelRows, _cross_hessian, _Face
from nordicstats.solvers.proximal import solve_proximal_quadprog

__all__ = ["working_set_step", "select_working_set", "restricted_qp", "PER_BOUNDARY"]

#: alphas that can rise and alphas that can fall taken per boundary
PER_BOUNDARY = 4
# ridge of the restricted QP relative to the largest K_ii of W, removed by proximal steps
RIDGE = 1e-8
RIDGE_REFINEMENTS = 0
# a variable this close to a bound (relative to max U) after the QP is put on it
SNAP = 1e-12


def select_working_set(Y, U, alpha, phi, gamma, G, per_boundary=None):
    """Masks (alpha (n, K-1), phi (n, K-2), gamma (K-2,)) of the working set W.

    Per boundary k the ``per_boundary`` alphas with the largest score s_ik = y_ik - G_ik
    among those whose y alpha can rise and as many with the smallest among those that
    can fall (the ends of the maximal violating pairs); the phis next to them
    (phi_i,k-1 and phi_ik) that are positive or violated (G_ik < G_i,k+1); the
    ``per_boundary`` most violated phis of every column (natural residual
    |phi - max(phi - g, 0)|, g = G_k - G_k+1); every gamma.
    """
    n, m = Y.shape
    per_boundary = PER_BOUNDARY if per_boundary is None else int(per_boundary)
    score = Y - G
    rise = np.where(Y > 0, alpha < U, alpha > 0.0)
    fall = np.where(Y > 0, alpha > 0.0, alpha < U)
    free_alpha = np.zeros((n, m), dtype=bool)
    for k in range(m):
        for mask, sign in ((rise[:, k], 1.0), (fall[:, k], -1.0)):
            rows = np.flatnonzero(mask)
            if rows.size > per_boundary:
                rows = rows[np.argpartition(-sign * score[rows, k], per_boundary)[:per_boundary]]
            free_alpha[rows, k] = True
    free_phi = np.zeros(phi.shape, dtype=bool)
    if m > 1:
        g = G[:, :-1] - G[:, 1:]
        residual = np.where(g < 0.0, -g, np.minimum(g, phi))
        near = (phi > 0.0) | (g < 0.0)
        free_phi |= near & (free_alpha[:, :-1] | free_alpha[:, 1:])
        for k in range(m - 1):
            top = np.argpartition(-residual[:, k], min(per_boundary, n - 1))[:per_boundary]
            free_phi[top[residual[top, k] > 0.0], k] = True
    return free_alpha, free_phi, np.ones(gamma.shape, dtype=bool)


def restricted_qp(H, c, A, lower, upper):
    """argmin 1/2 d'H d + c'd  s.t.  A d = 0, lower <= d <= upper (H positive semi-definite).

    quadprog on H + rho I (rho = ``RIDGE`` times the largest diagonal) with
    ``RIDGE_REFINEMENTS`` proximal-point steps removing the ridge's bias; equality rows
    of A that are zero are dropped.  Infinite bounds give no constraint.
    """
    size = H.shape[0]
    rho = RIDGE * max(float(np.max(np.diag(H), initial=0.0)), 1.0)
    rows = A[np.any(A != 0.0, axis=1)]
    has_upper = np.isfinite(upper)
    eye = np.eye(size)
    constraints = np.hstack([rows.T, eye, -eye[:, has_upper]])
    bounds = np.r_[np.zeros(rows.shape[0]), lower, -upper[has_upper]]
    d, _, _ = solve_proximal_quadprog(H + rho * eye, -c, constraints, bounds, rows.shape[0],
                                      rho, RIDGE_REFINEMENTS, 1.0,
                                      problem_name="the working-set QP",
                                      ridge_hint="working_set.RIDGE")
    return d


def working_set_step(problem, alpha, phi, gamma, G, kernel_rows=None,
                     per_boundary=None):
    """One working-set step in place on row-major views (n, K-1) of the dual point.

    Parameters
    ----------
    problem : NordicProblem
        BSVM or NORDIC-1 with separate intercepts.
    alpha, phi, gamma, G : ndarray
        The dual point and G = K Omega, shapes (n, K-1), (n, K-2), (K-2,), (n, K-1);
        updated in place when the step lowers the dual objective.
    kernel_rows : KernelRows, optional
        Source of K_SS and of the columns K[:, S] (kept rows with a KernelMatrix).
    per_boundary : int
        See :func:`select_working_set`.

    Returns
    -------
    float
        The change of the dual objective (< 0 when taken, 0 when nothing moved).
    """
    Y, U = problem.signs, problem.upper_bounds
    kernel_rows = KernelRows(problem.gram) if kernel_rows is None else kernel_rows
    face = _Face(Y, U, *select_working_set(Y, U, alpha, phi, gamma, G, per_boundary))
    if face.size == 0:
        return 0.0
    K_SS = kernel_rows.block(face.rows, face.rows)
    H = _cross_hessian(face, face, K_SS)
    c = face.transpose_omega(G[face.rows])
    c[:face.alpha_index[0].size] -= 1.0
    v = face.values(alpha, phi, gamma)
    try:
        d = restricted_qp(H, c, face.equality_rows(Y), face.lower - v, face.upper - v)
    except SolverError:
        return 0.0
    scale = max(1.0, float(np.max(U, initial=1.0)))
    new = np.clip(v + d, face.lower, face.upper)
    new[np.abs(new - face.lower) <= SNAP * scale] = 0.0
    near_upper = np.abs(new - face.upper) <= SNAP * scale
    new[near_upper] = face.upper[near_upper]
    d = new - v
    change = 0.5 * float(d @ H @ d) + float(c @ d)
    if not change < 0.0:
        return 0.0
    face.assign(new, alpha, phi, gamma)
    G += kernel_rows.product(face.rows, face.omega(d))
    return change
