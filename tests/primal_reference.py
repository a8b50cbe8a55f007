"""Independent primal solves of the NORDIC QPs with cvxpy + Clarabel (test-only).

The problems are written from the paper's primal statements, not from the dual
code under test:

* eq. (primal_problem): min sum_k 1/2 omega_k' K omega_k + C sum xi_k (weighted:
  C sum_{k,i} c_{i,k} xi_{k,i}),
* hinge constraints (primal_constraint1-2),
* NORDIC-0: b_k >= b_{k+1}, omega_k >= omega_{k+1} (constraint_b, constraint_omega),
  handed to Clarabel directly (:func:`_nordic0_clarabel`);
* NORDIC-1 separate: b_k >= b_{k+1}, K omega_k >= K omega_{k+1} (primal_constraint3-4);
* NORDIC-1 joint / linear NORDIC: f_k(x_i) >= f_{k+1}(x_i) (Section 5.2).
"""

import clarabel
import cvxpy as cp
import numpy as np
from scipy import sparse


def solve_primal(problem):
    """Optimal objective value of the problem's primal, solved by Clarabel."""
    n, m = problem.n, problem.n_boundaries
    if problem.method == "nordic0":
        return _nordic0_clarabel(problem)
    b = cp.Variable(m)
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


def _nordic0_clarabel(problem):
    """NORDIC-0 primal in (omega, b, xi) handed to Clarabel directly.

    min sum_k 1/2 omega_k' K omega_k + U' xi  s.t.  y (K omega_k + b_k) + xi >= 1, xi >= 0,
    omega_k >= omega_{k+1}, b_k >= b_{k+1}.  Written with K itself (no eigen-root) it
    stays accurate for Gram matrices with condition numbers of 1e14, where cvxpy's
    formulation stops at "optimal_inaccurate".
    """
    n, m = problem.n, problem.n_boundaries
    K, Y = problem.gram, problem.signs
    nw = n * m
    P = sparse.block_diag([sparse.csc_matrix(np.triu(K))] * m
                          + [sparse.csc_matrix((m + nw, m + nw))], format="csc")
    q = np.concatenate([np.zeros(nw + m), problem.upper_bounds.T.ravel()])
    hinge = sparse.hstack([
        sparse.block_diag([sparse.csr_matrix(-Y[:, [k]] * K) for k in range(m)]),
        sparse.csr_matrix((-Y.T.ravel(), (np.arange(nw), np.repeat(np.arange(m), n))),
                          shape=(nw, m)),
        -sparse.identity(nw)])
    slack = sparse.hstack([sparse.csr_matrix((nw, nw + m)), -sparse.identity(nw)])
    d_w = sparse.diags([-np.ones(n * (m - 1)), np.ones(n * (m - 1))], [0, n],
                       shape=(n * (m - 1), nw))
    d_b = sparse.diags([-np.ones(m - 1), np.ones(m - 1)], [0, 1], shape=(m - 1, m))
    order = sparse.vstack([
        sparse.hstack([d_w, sparse.csr_matrix((n * (m - 1), m + nw))]),
        sparse.hstack([sparse.csr_matrix((m - 1, nw)), d_b, sparse.csr_matrix((m - 1, nw))])])
    A = sparse.vstack([hinge, slack, order], format="csc")
    rhs = np.concatenate([-np.ones(nw), np.zeros(A.shape[0] - nw)])
    for tol in (1e-10, 1e-9, 1e-8):  # the tightest tolerance Clarabel reaches ("Solved")
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
        sol = clarabel.DefaultSolver(P, q, A, rhs, [clarabel.NonnegativeConeT(A.shape[0])],
                                     settings).solve()
        if str(sol.status) == "Solved":
            return float(sol.obj_val)
    # "AlmostSolved" at 1e-8: its point is feasible to ~1e-8; report its objective
    assert str(sol.status) == "AlmostSolved", sol.status
    return float(sol.obj_val)
