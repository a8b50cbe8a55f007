"""Independent primal solves of the NORDIC QPs with cvxpy + Clarabel (test-only).

The problems are written from the paper's primal statements, not from the dual
code under test:

* eq. (primal_problem): min sum_k 1/2 omega_k' K omega_k + C sum xi_k (weighted:
  C sum_{k,i} c_{i,k} xi_{k,i}),
* hinge constraints (primal_constraint1-2),
* NORDIC-0: b_k >= b_{k+1}, omega_k >= omega_{k+1} (constraint_b, constraint_omega);
* NORDIC-1 separate: b_k >= b_{k+1}, K omega_k >= K omega_{k+1} (primal_constraint3-4);
* NORDIC-1 joint / linear NORDIC: f_k(x_i) >= f_{k+1}(x_i) (Section 5.2).
"""

import cvxpy as cp
import numpy as np


def solve_primal(problem):
    """Optimal objective value of the problem's primal, solved by Clarabel."""
    n, m = problem.n, problem.n_boundaries
    b = cp.Variable(m)
    if problem.method == "nordic0":
        # omega itself is constrained: keep it as the variable (K nonsingular here)
        omega = cp.Variable((n, m))
        eig, vec = np.linalg.eigh(problem.gram)
        G = problem.gram @ omega
        penalty = 0.5 * cp.sum_squares((vec * np.sqrt(np.clip(eig, 0, None))).T @ omega)
        constraints = [omega[:, :-1] >= omega[:, 1:], b[:-1] >= b[1:]]
    else:
        # K omega_k = R u_k with K = R R' (R: eigenvectors times root eigenvalues), so the
        # penalty 1/2 omega' K omega is 1/2 ||u||^2; this is better conditioned than K omega.
        eig, vec = np.linalg.eigh(problem.gram)
        keep = eig > 1e-11 * eig[-1]
        root = vec[:, keep] * np.sqrt(eig[keep])
        u = cp.Variable((root.shape[1], m))
        G = root @ u
        penalty = 0.5 * cp.sum_squares(u)
        constraints = []
    F = G + np.ones((n, 1)) @ cp.reshape(b, (1, m), order="C")
    # hinge weights c_{i,k} (case weights x cost increments), written out here from the
    # weighted primal C sum_{k,i} c_{i,k} xi_{k,i}; all ones when the problem has none
    c = np.ones(problem.signs.shape) if problem.hinge_weights is None else problem.hinge_weights
    objective = penalty + problem.C * cp.sum(cp.multiply(c, cp.pos(1 - cp.multiply(problem.signs,
                                                                                   F))))
    if problem.method == "nordic1" and problem.noncrossing == "joint":
        constraints += [F[:, :-1] >= F[:, 1:]]
    elif problem.method == "nordic1":
        constraints += [G[:, :-1] >= G[:, 1:], b[:-1] >= b[1:]]
    cvx = cp.Problem(cp.Minimize(objective), constraints)
    cvx.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    if cvx.status != "optimal":
        cvx.solve(solver="CLARABEL")
    assert cvx.status == "optimal", cvx.status
    return float(cvx.value)
