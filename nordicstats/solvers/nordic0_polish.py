"""A Newton step on the face of NORDIC-0's reduced dual that an SMO point identifies.

SMO converges linearly: each factor 10 of the duality gap costs about as many steps
again, and the certificate asks for a relative gap of 1e-6 where libsvm stops at a
pair tolerance of 1e-3.  By then the point usually has the optimum's face: which
alphas sit at 0 or at U, which gammas are 0.  On that face the reduced dual of a free
set F (:mod:`nordicstats.solvers.nordic0_smo_core`) is an equality-constrained
quadratic programme whose KKT conditions are linear, in beta_A = y * alpha on the set
A of alphas strictly inside their box, the intercepts b and the positive gammas P::

    [ Q_AA  E    0  ] [d_A     ]   [ y_A - G_A ]
    [ E'    0    D  ] [b       ] = [ 0         ]      (E_(k,i),k' = [k = k'])
    [ 0     D'   0  ] [d_gamma ]   [ 0         ]      (D_k,p = [k = p] - [k = p + 1])

(stationarity G_k(i) + b_k = y_ik on A; the step keeps the equality rows
y_k'alpha_k + gamma_k - gamma_{k-1} = 0; b_p = b_{p+1} where gamma_p > 0), with
Q_AA = K_AA / m + R_A R_A' (R: the low-rank part of the free increments, ``V Z``),
solved by the KKT solver of NORDIC-1's polishing (:mod:`nordicstats.solvers.polish`).
The step goes along (d_A, d_gamma) by the minimiser of the dual objective on that
line, cut where the first alpha or gamma reaches its bound, so it is a descent step
whether the face was right or not (a wrong face only shortens it); the SMO loop does
the rest.
"""

from __future__ import annotations

import numpy as np

from nordicstats.kernels import gram_block
from nordicstats.solvers.polish import solve_kkt

__all__ = ["newton_on_face", "MAX_FACE", "MAX_DROPS"]

#: Largest KKT system (``|A| + m + |P|`` unknowns) solved densely (3,000: ~1 s).
MAX_FACE = 3000
#: Newton steps per call: each one cut by a bound puts one more variable on its bound.
MAX_DROPS = 20
#: Largest relative residual of the face solve for its direction to be used (a face
#: whose system is singular, e.g. two equal rows, gives no step).
KKT_RTOL = 1e-8
#: Largest change of the equality rows y_k'alpha_k + gamma_k - gamma_{k-1} = 0 that a
#: step may make (the face solve's residual times the step), relative to max(1, U).
EQUALITY_ATOL = 1e-12


def newton_on_face(state, max_face=MAX_FACE, max_drops=MAX_DROPS):
    """Newton steps on the face of ``state`` (an
    :class:`~nordicstats.solvers.nordic0.IncrementState`), in place.

    A step cut by an alpha or a gamma reaching its bound puts that variable on its
    bound, and the step is solved again on the smaller face (a primal active set on
    the face, at most ``max_drops`` times); H, delta_F and G are then recomputed.

    Returns
    -------
    int
        Newton steps taken (0: no move).
    """
    Y, U, alpha, gamma = state.Y, state.upper, state.alpha, state.gamma
    m = Y.shape[1]
    rows_i, cols_k = np.nonzero((alpha > 0.0) & (alpha < U))
    if rows_i.size == 0 or rows_i.size + 2 * m > max_face:
        return 0
    rows, where = np.unique(rows_i, return_inverse=True)
    K_rows = gram_block(state.K, rows)  # (|rows|, n)
    Q = K_rows[where][:, rows_i] / m
    if state.free.size:
        R = (state.weights[cols_k] * state.K_free[rows_i]) @ state.S_root
        Q += R @ R.T
    beta = np.zeros((rows.size, m))  # change of y * alpha on the face's rows
    G_face = state.G[rows_i, cols_k].copy()  # G on the face, kept along the steps
    steps = 0
    for _ in range(max_drops):
        on = (alpha[rows_i, cols_k] > 0.0) & (alpha[rows_i, cols_k] < U[rows_i, cols_k])
        if not on.any():
            break
        move = _newton_step(Q, on, rows_i, cols_k, Y, U, alpha, gamma, G_face)
        if move is None:
            break
        steps += 1
        change, full = move
        np.add.at(beta, (where, cols_k), change)
        G_face += Q[:, on] @ change[on]
        if full:
            break
    if steps:
        state.Hk += K_rows.T @ beta
        state.refresh(full=False)
    return steps


def _newton_step(Q, on, rows_i, cols_k, Y, U, alpha, gamma, G_face):
    """One cut Newton step on the face ``on``; (change of y * alpha, full step) or None.

    The face system is NORDIC-1's [H A'; A 0] (:func:`~nordicstats.solvers.polish.solve_kkt`:
    regularised Cholesky factor and iterative refinement) in x = (d_A, d_gamma), with
    H = diag(Q_AA, 0) and A = [E' D] the equality rows; their multipliers are the
    intercepts b.
    """
    m = Y.shape[1]
    i, k = rows_i[on], cols_k[on]
    chain = np.flatnonzero(gamma > 0.0)
    a, nv = i.size, i.size + chain.size
    H = np.zeros((nv, nv))
    H[:a, :a] = Q[np.ix_(on, on)]
    A = np.zeros((m, nv))
    A[k, np.arange(a)] = 1.0
    A[chain, a + np.arange(chain.size)] = 1.0
    A[chain + 1, a + np.arange(chain.size)] = -1.0
    grad = G_face[on] - Y[i, k]  # gradient of the dual in y * alpha on the face
    # a direction along the equality rows (zero right-hand side there: their residual is
    # rounding, and a correction of it would be scaled by the line search's step)
    rhs = np.concatenate([-grad, np.zeros(chain.size + m)])
    sol, residual = solve_kkt(H, A, rhs, np.zeros(nv + m))
    if not (np.all(np.isfinite(sol)) and residual <= KKT_RTOL):
        return None
    d, d_gamma = sol[:a], sol[a:nv]
    slope, curv = float(grad @ d), float(d @ H[:a, :a] @ d)
    if not (slope < 0.0 and curv > 0.0):
        return None
    best = -slope / curv
    step = min(best, _room(alpha[i, k], U[i, k], Y[i, k] * d, gamma[chain], d_gamma))
    # the step must keep the equality rows: on a face that is already optimal up to
    # rounding, d is rounding noise (1e-11) and the line search scales it, and with it
    # the solve's residual in those rows, by up to 1e10
    broken = step * float(np.max(np.abs(A @ sol[:nv]), initial=0.0))
    if step <= 0.0 or broken > EQUALITY_ATOL * max(1.0, float(np.max(U[i, k]))):
        return None
    new = alpha[i, k] + step * Y[i, k] * d
    snap = 1e-12 * np.maximum(U[i, k], 1.0)
    new[new <= snap] = 0.0
    new = np.where(U[i, k] - new <= snap, U[i, k], new)
    change = np.zeros(on.size)
    change[on] = Y[i, k] * (new - alpha[i, k])
    alpha[i, k] = new
    g = gamma[chain] + step * d_gamma
    gamma[chain] = np.where(g <= 1e-12 * np.maximum(np.abs(gamma[chain]), 1.0), 0.0, g)
    return change, step >= best


def _room(alpha, upper, direction, gamma, d_gamma):
    """Largest t with 0 <= alpha + t direction <= upper and gamma + t d_gamma >= 0."""
    t = np.inf
    up, down = direction > 0, direction < 0
    if up.any():
        t = min(t, float(np.min((upper[up] - alpha[up]) / direction[up])))
    if down.any():
        t = min(t, float(np.min(-alpha[down] / direction[down])))
    neg = d_gamma < 0
    if neg.any():
        t = min(t, float(np.min(-gamma[neg] / d_gamma[neg])))
    return t
