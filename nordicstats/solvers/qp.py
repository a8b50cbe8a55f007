"""The paper's Wolfe dual of NORDIC-0/1 and BSVM, solved with quadprog.

NORDIC-0 is solved in the primal instead (:func:`solve_primal_quadprog`): its dual
needs K^{-1}, which is numerically unusable for typical RBF Gram matrices.  That path
is kept as a reference; ``solver="active_set"`` (:mod:`nordicstats.solvers.nordic0`)
is the exact one.  Every answer carries a certificate
(:mod:`nordicstats.solvers.certificate`).

Dual variables (paper, Section 3.3): alpha (n, K-1) for the hinge constraints,
phi (n, K-2) for the noncrossing constraints on the training points and, for the
"separate" intercept ordering b_k >= b_{k+1}, gamma (K-2).  With the difference
operator D (K-1 x K-2), D[k, k] = 1, D[k+1, k] = -1, the KKT relation (eq. KKT_omega)
gives the expansion coefficients::

    NORDIC-1:  omega_k = y_k * alpha_k + phi_k - phi_{k-1}
    BSVM:      omega_k = y_k * alpha_k

and the dual problem is::

    min_theta  1/2 sum_k omega_k' K omega_k - e' alpha
    s.t.       y_k' alpha_k + (gamma_k - gamma_{k-1}) = 0          (separate, eq. KKT_b)
               y_k' alpha_k + e'(phi_k - phi_{k-1}) = 0            (joint form)
               0 <= alpha <= C c,  phi >= 0,  gamma >= 0,

with c the hinge weights (:attr:`NordicProblem.upper_bounds` = C c; c = 1 unweighted).

quadprog (Goldfarb-Idnani) needs a positive definite Hessian, but this one is
only semi-definite, so a ridge ``rho * I`` is added.  ``rho`` is relative to the
mean diagonal; ``tests/test_qp.py`` checks against an independent primal solve
that the default does not move the optimum (1e-12 gave wrong answers on these
machines, 1e-6 gave the objective to ~1e-8; see
``docs/notes/solvers.md``).  A few proximal-point
refinements ``theta <- argmin 1/2 theta'(H + rho I)theta - (a + rho theta_prev)'theta``
remove the ridge's bias (:func:`nordicstats.solvers.proximal.solve_proximal_quadprog`).
The intercepts come from the LP with omega fixed that the paper describes
(Section 3.3), solved with HiGHS.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from nordicstats.exceptions import SolverError
from nordicstats.solvers.certificate import certified_result
from nordicstats.solvers.proximal import solve_proximal_quadprog

__all__ = ["solve_quadprog", "solve_dual_quadprog", "solve_primal_quadprog", "fit_intercepts",
           "dual_layout"]

DEFAULT_RIDGE = 1e-6
DEFAULT_REFINEMENTS = 3


def dual_layout(problem):
    """Sizes of the dual blocks ``(n_alpha, n_phi, n_gamma)`` for this problem."""
    n, m = problem.n, problem.n_boundaries
    if problem.method == "bsvm" or m < 2:
        return n * m, 0, 0
    n_gamma = m - 1 if (problem.method == "nordic0" or problem.noncrossing == "separate") else 0
    return n * m, n * (m - 1), n_gamma


def _difference_operator(m):
    D = np.zeros((m, m - 1))
    idx = np.arange(m - 1)
    D[idx, idx] = 1.0
    D[idx + 1, idx] = -1.0
    return D


def _dual_matrices(problem):
    """Hessian H, linear term a, equality rows E (theta -> K-1 values)."""
    n, m = problem.n, problem.n_boundaries
    n_alpha, n_phi, n_gamma = dual_layout(problem)
    size = n_alpha + n_phi + n_gamma
    K = problem.gram
    y = problem.signs.T.reshape(-1)
    H = np.zeros((size, size))
    blockK = np.kron(np.eye(m), K)
    H[:n_alpha, :n_alpha] = y[:, None] * blockK * y[None, :]
    if n_phi:
        D = _difference_operator(m)
        cross = y[:, None] * np.kron(D, K)
        phiphi = np.kron(D.T @ D, K)
        H[:n_alpha, n_alpha:n_alpha + n_phi] = cross
        H[n_alpha:n_alpha + n_phi, :n_alpha] = cross.T
        H[n_alpha:n_alpha + n_phi, n_alpha:n_alpha + n_phi] = phiphi
    a = np.zeros(size)
    a[:n_alpha] = 1.0
    E = np.zeros((m, size))
    for k in range(m):
        E[k, k * n:(k + 1) * n] = problem.signs[:, k]
    if n_gamma:
        E[:, n_alpha + n_phi:] = _difference_operator(m)
    elif n_phi:
        E[:, n_alpha:n_alpha + n_phi] = np.kron(_difference_operator(m), np.ones((1, n)))
    return H, a, E


def _inequalities(problem, size):
    """quadprog inequality columns (C' theta >= b): 0 <= alpha <= C c, phi >= 0, gamma >= 0."""
    n_alpha, _, _ = dual_layout(problem)
    eye = np.eye(size)
    Cmat = np.hstack([eye, -eye[:, :n_alpha]])
    bvec = np.concatenate([np.zeros(size), -_alpha_bounds(problem)])
    return Cmat, bvec


def solve_dual_quadprog(problem, ridge=None, refinements=DEFAULT_REFINEMENTS):
    """Solve BSVM or NORDIC-1 through the paper's Wolfe dual with quadprog.

    Parameters
    ----------
    problem : NordicProblem
        ``method`` in {"bsvm", "nordic1"} with ``penalty="l2"``.
    ridge : float, optional
        Relative ridge rho; the Hessian gets ``rho * mean(diag(H)) * I``.
        Default 1e-6 (with proximal refinement, objective within ~1e-9 relative of an
        independent primal solve in the tests; 1e-9 and smaller lose accuracy).
    refinements : int, default=3
        Proximal-point steps that remove the ridge's bias.

    Returns
    -------
    SolverResult
        ``multipliers`` holds alpha (n, K-1), phi (n, K-2) and gamma (K-2);
        ``kkt_residual`` is the relative duality gap ``(P - D) / max(1, |P|)``.

    Raises
    ------
    SolverError
        quadprog reports an inconsistent problem or a Hessian that is not
        positive definite even with the ridge.
    """
    if problem.penalty != "l2":
        raise ValueError("quadprog solves the l2-penalised problems; use solver='scip' for l1.")
    ridge = _check_ridge(ridge)
    start = time.perf_counter()
    if problem.method == "nordic0":
        raise ValueError("the dual path does not handle method='nordic0' (its dual needs K^-1); "
                         "use solve_quadprog, which solves NORDIC-0 in the primal.")
    H, a, E = _dual_matrices(problem)
    size = H.shape[0]
    rho = ridge * max(float(np.mean(np.diag(H))), 1e-12)
    # alphas whose bound C c_ik is 0 (weight 0) are fixed at 0 and left out: quadprog
    # fails on the degenerate pair 0 <= alpha <= 0
    free = np.ones(size, dtype=bool)
    free[:dual_layout(problem)[0]] = _alpha_bounds(problem) > 0
    Cineq, bineq = _inequalities(problem, size)
    Cineq = Cineq[free]
    used = np.any(Cineq != 0, axis=0)
    Ef = E[:, free]
    Ef = Ef[np.any(Ef != 0, axis=1)]
    G = H[np.ix_(free, free)] + rho * np.eye(int(free.sum()))
    Cmat = np.hstack([Ef.T, Cineq[:, used]])
    bvec = np.concatenate([np.zeros(Ef.shape[0]), bineq[used]])
    theta = np.zeros(size)
    theta[free], iterations, _ = solve_proximal_quadprog(
        G, a[free], Cmat, bvec, Ef.shape[0], rho, refinements, problem.C, **_failure_text(problem))
    theta = _clip_to_bounds(theta, problem)
    omega = _omega_from_theta(problem, theta)
    b = fit_intercepts(problem, problem.gram @ omega)
    return _result(problem, theta, omega, b, H, a, iterations, time.perf_counter() - start, rho)


def _failure_text(problem):
    """What is solved and how to enlarge the ridge, for quadprog's error message."""
    return {"problem_name": f"the {problem.method} problem",
            "ridge_hint": "solver_options={'ridge': 1e-5}"}


def _alpha_bounds(problem):
    """Upper bounds of alpha in the dual's k-major order (alpha_{k,i} at k n + i)."""
    return problem.upper_bounds.T.reshape(-1)


def _clip_to_bounds(theta, problem):
    n_alpha, _, _ = dual_layout(problem)
    theta = theta.copy()
    theta[:n_alpha] = np.clip(theta[:n_alpha], 0.0, _alpha_bounds(problem))
    theta[n_alpha:] = np.maximum(theta[n_alpha:], 0.0)
    return theta


def _split(problem, theta):
    n, m = problem.n, problem.n_boundaries
    n_alpha, n_phi, n_gamma = dual_layout(problem)
    alpha = theta[:n_alpha].reshape(m, n).T
    phi = theta[n_alpha:n_alpha + n_phi].reshape(m - 1, n).T if n_phi else np.zeros((n, 0))
    gamma = theta[n_alpha + n_phi:]
    return alpha, phi, gamma


def _omega_from_theta(problem, theta):
    alpha, phi, _ = _split(problem, theta)
    omega = problem.signs * alpha
    if phi.shape[1]:
        omega[:, :-1] += phi
        omega[:, 1:] -= phi
    return omega


def fit_intercepts(problem, G):
    """Intercepts b minimising the primal with omega fixed (the paper's LP, Section 3.3).

    Parameters
    ----------
    problem : NordicProblem
    G : ndarray of shape (n, K-1)
        K omega (or X w): the decision values without intercepts.

    Returns
    -------
    ndarray of shape (K-1,)

    Notes
    -----
    Variables (b, xi); minimise sum C c_ki xi_ki subject to xi >= 1 - y (G + b),
    xi >= 0 and the method's ordering of the intercepts: b_k >= b_{k+1}
    (separate, NORDIC-0) or b_k - b_{k+1} >= max_i (G_{k+1,i} - G_{k,i}) (joint).
    """
    n, m = problem.n, problem.n_boundaries
    Y = problem.signs
    n_xi = n * m
    cost = np.concatenate([np.zeros(m), problem.upper_bounds.T.reshape(-1)])
    # -y_ki b_k - xi_ki <= y_ki G_ki - 1
    rows = np.arange(n_xi)
    cols_b = np.repeat(np.arange(m), n)
    yk = Y.T.reshape(-1)
    A_hinge = sparse.csr_matrix(
        (np.concatenate([-yk, -np.ones(n_xi)]),
         (np.concatenate([rows, rows]), np.concatenate([cols_b, m + rows]))),
        shape=(n_xi, m + n_xi))
    b_hinge = yk * G.T.reshape(-1) - 1.0
    A_list, b_list = [A_hinge], [b_hinge]
    if problem.method != "bsvm" and m > 1:
        order = sparse.lil_matrix((m - 1, m + n_xi))
        for k in range(m - 1):
            order[k, k], order[k, k + 1] = -1.0, 1.0  # b_{k+1} - b_k <= rhs
        if problem.method == "nordic1" and problem.noncrossing == "joint":
            rhs = -np.max(G[:, 1:] - G[:, :-1], axis=0)
        else:
            rhs = np.zeros(m - 1)
        A_list.append(order.tocsr())
        b_list.append(rhs)
    bounds = [(None, None)] * m + [(0, None)] * n_xi
    lp = linprog(cost, A_ub=sparse.vstack(A_list).tocsc(), b_ub=np.concatenate(b_list),
                 bounds=bounds, method="highs")
    if lp.status != 0:
        raise SolverError(f"the intercept LP failed: {lp.message}", solver="highs",
                          status=lp.message)
    return lp.x[:m]


def _result(problem, theta, omega, b, H, a, iterations, elapsed, rho):
    alpha, phi, gamma = _split(problem, theta)
    multipliers = {"alpha": alpha, "phi": phi, "gamma": gamma}
    active = int(np.sum(phi > 1e-8 * max(1.0, problem.C))) + int(np.sum(gamma > 1e-8))
    return certified_result(
        problem, "quadprog", omega, b, multipliers, iterations=iterations, time=elapsed,
        info={"ridge": rho, "active_noncrossing": active})


def solve_primal_quadprog(problem, ridge=None, refinements=DEFAULT_REFINEMENTS):
    """Solve an l2 NORDIC problem in the primal (omega, b, xi) with quadprog.

    Used for NORDIC-0, whose dual involves K^{-1} (paper, Section 3.3): for
    RBF Gram matrices with condition numbers of 1e8 and more that dual recovers
    omega with constraint violations of order one, while the primal enforces
    omega_k >= omega_{k+1} exactly.

    The QP is min 1/2 sum_k omega_k' K omega_k + sum_ki C c_ki xi_ki subject to
    y_ki (K omega_k + b_k)_i + xi_ki >= 1, xi >= 0 and the method's ordering
    constraints; the zero curvature in b and xi is handled by the same ridge and
    proximal-point refinement as the dual.

    Parameters
    ----------
    problem : NordicProblem
    ridge : float, optional
    refinements : int, default=3

    Returns
    -------
    SolverResult
        ``multipliers`` alpha, psi (f-space multipliers of omega_k >= omega_{k+1})
        and gamma from quadprog's Lagrange multipliers, and the certificate.  On
        ill-conditioned Gram matrices the ridge's bias can exceed the tolerances;
        the certificate then reports ``status="inaccurate"`` with a warning (the
        exact NORDIC-0 solver is ``solver="active_set"``).
    """
    if problem.penalty != "l2":
        raise ValueError("quadprog solves the l2-penalised problems; use solver='scip' for l1.")
    ridge = _check_ridge(ridge)
    start = time.perf_counter()
    n, m = problem.n, problem.n_boundaries
    nw, size = n * m, 2 * n * m + m
    K = problem.gram
    G = np.zeros((size, size))
    G[:nw, :nw] = np.kron(np.eye(m), K)
    rho = ridge * max(float(np.mean(np.diag(K))), 1e-12)
    G += rho * np.eye(size)
    a = np.concatenate([np.zeros(nw + m), -problem.upper_bounds.T.reshape(-1)])
    y = problem.signs.T.reshape(-1)
    hinge = np.zeros((size, nw))  # columns: y (K omega_k + b_k) + xi >= 1
    hinge[:nw, :] = (np.kron(np.eye(m), K) * y[:, None]).T
    hinge[nw + np.repeat(np.arange(m), n), np.arange(nw)] = y
    hinge[nw + m + np.arange(nw), np.arange(nw)] = 1.0
    columns, rhs = [hinge], [np.ones(nw)]
    xi_pos = np.zeros((size, nw))
    xi_pos[nw + m + np.arange(nw), np.arange(nw)] = 1.0
    columns.append(xi_pos)
    rhs.append(np.zeros(nw))
    if problem.method != "bsvm" and m > 1:
        columns.append(_ordering_columns(problem, size))
        rhs.append(np.zeros(columns[-1].shape[1]))
    x, iterations, lagrange = solve_proximal_quadprog(
        G, a, np.hstack(columns), np.concatenate(rhs), 0, rho, refinements, problem.C,
        **_failure_text(problem))
    omega = x[:nw].reshape(m, n).T
    b = fit_intercepts(problem, K @ omega)
    return certified_result(
        problem, "quadprog", omega, b, _primal_multipliers(problem, lagrange),
        detail="primal QP with ridge", iterations=iterations,
        time=time.perf_counter() - start, info={"ridge": rho, "form": "primal"})


def _primal_multipliers(problem, lagrange):
    """alpha, and phi/psi and gamma, from quadprog's multipliers of the primal's columns.

    The columns are the hinge rows, the slack bounds and, per boundary pair, n
    ordering rows followed (except in the joint form) by b_k >= b_{k+1}; see
    :func:`_ordering_columns`.  The multiplier of omega_k >= omega_{k+1} is the
    f-space psi of NORDIC-0, that of K omega_k >= K omega_{k+1} NORDIC-1's phi.
    """
    n, m = problem.n, problem.n_boundaries
    nw = n * m
    out = {"alpha": lagrange[:nw].reshape(m, n).T}
    if problem.method == "bsvm" or m < 2:
        return out
    joint = problem.method == "nordic1" and problem.noncrossing == "joint"
    order = lagrange[2 * nw:].reshape(m - 1, n if joint else n + 1)
    out["psi" if problem.method == "nordic0" else "phi"] = order[:, :n].T
    if not joint:
        out["gamma"] = order[:, n]
    return out


def _ordering_columns(problem, size):
    """Columns of the noncrossing constraints (>= 0) on x = (omega, b, xi)."""
    n, m = problem.n, problem.n_boundaries
    nw = n * m
    cols = []
    for k in range(m - 1):
        if problem.method == "nordic0":
            block = np.zeros((size, n))  # omega_k - omega_{k+1} >= 0
            block[k * n + np.arange(n), np.arange(n)] = 1.0
            block[(k + 1) * n + np.arange(n), np.arange(n)] = -1.0
            cols.append(block)
        elif problem.noncrossing == "joint":
            block = np.zeros((size, n))  # K(omega_k - omega_{k+1}) + b_k - b_{k+1} >= 0
            block[k * n:(k + 1) * n] = problem.gram
            block[(k + 1) * n:(k + 2) * n] = -problem.gram
            block[nw + k], block[nw + k + 1] = 1.0, -1.0
            cols.append(block)
            continue
        else:
            block = np.zeros((size, n))
            block[k * n:(k + 1) * n] = problem.gram
            block[(k + 1) * n:(k + 2) * n] = -problem.gram
            cols.append(block)
        b_col = np.zeros((size, 1))  # b_k - b_{k+1} >= 0
        b_col[nw + k], b_col[nw + k + 1] = 1.0, -1.0
        cols.append(b_col)
    return np.hstack(cols)


def _check_ridge(ridge):
    ridge = DEFAULT_RIDGE if ridge is None else ridge
    try:
        ridge = float(ridge)
    except (TypeError, ValueError):
        ridge = float("nan")
    if not (np.isfinite(ridge) and ridge > 0):
        raise ValueError(f"The 'ridge' option must be a float in (0, inf). Got {ridge!r} instead.")
    return ridge


def solve_quadprog(problem, ridge=None, refinements=DEFAULT_REFINEMENTS):
    """quadprog for BSVM and NORDIC-1 (the paper's Wolfe dual) and NORDIC-0 (primal).

    See :func:`solve_dual_quadprog` and :func:`solve_primal_quadprog`.
    """
    if problem.method == "nordic0":
        return solve_primal_quadprog(problem, ridge=ridge, refinements=refinements)
    return solve_dual_quadprog(problem, ridge=ridge, refinements=refinements)
