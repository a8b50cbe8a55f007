"""Active-set polishing of a BSVM / NORDIC-1 dual point: one Newton step on its face.

The dual of the separate form of NORDIC-1 (paper, Section 3.3; BSVM without phi
and gamma) is::

    min  D = 1/2 sum_k omega_k' K omega_k - e'alpha,
    omega_k = y_k alpha_k + phi_k - phi_{k-1}                          (eq. KKT_omega)
    s.t. y_k'alpha_k + gamma_k - gamma_{k-1} = 0,  0 <= alpha <= U,  phi, gamma >= 0.

An SMO point at libsvm's tolerance usually sits on the right face already: the
alphas at 0 and at U, the noncrossing multipliers phi and the intercept ties gamma
that are zero are those of the optimum, and only the values of the others are
inexact.  Fixing every bounded variable, the rest v = (free alphas, positive phis,
positive gammas) and the intercepts b (the multipliers of the equality rows) solve
the equality-constrained KKT system of the dual restricted to that face::

    [ H   A' ] [ v ]   [ -c ]     H = M' (I (x) K_SS) M,   c = M' vec(G_fixed) - [alpha]
    [ A   0  ] [ b ] = [  r ]     A v = r: the K-1 equality rows,

where M maps v to the entries of Omega it moves (rows S of the free alphas and
positive phis), G_fixed = K Omega_fixed on S the decision values without intercepts
of the fixed part, and r = -sum of y alpha over the bounded alphas.  Row by row it
says: y_ik (G_ik + b_k) = 1 for a free alpha (on the margin), G_ik = G_i,k+1 for a
positive phi (the boundaries touch at x_i), b_k = b_k+1 for a positive gamma (tied
intercepts), and the equality rows.  The system is symmetric and indefinite, of size
|free alphas| + |positive phis| + |positive gammas| + K-1, and needs only the dense
kernel block K_SS.

It is solved for the step from the current point with a small proximal term delta
(+delta on the v block, -delta on the b block, which makes the matrix
quasi-definite and hence nonsingular) and iterative refinement against the exact
matrix (OSQP's polishing: Stellato et al. 2020, Section 4.3); on a singular face
(duplicated rows, a phi and both alphas of one row free) the refinement converges to
the solution nearest the current point.  The step is then cut at the first bound it
would cross (ratio test, as in active-set methods).  Since the full step minimises D
over the face's affine hull, every cut step lowers D: the point stays dual feasible
and is never worse, so the SMO loop can continue from it when the guess of the face
was wrong.  Design and measurements: docs/notes/scaling.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from nordicstats.kernels import KernelMatrix, gram_block

__all__ = ["PolishStep", "polish_step"]

# proximal term of the factorised matrix, relative to the largest diagonal of H
PROXIMAL = 1e-9
REFINEMENT_STEPS = 12
# Newton steps per polishing step, each on a smaller subface
SUBFACE_ROUNDS = 10
# refinement stops when the KKT residual is below this, relative to the right side
REFINEMENT_TOL = 1e-13
# a full step may overshoot a bound by this much (relative to max U) before it is cut
BOUND_SLACK = 1e-12
# Largest face polished: its KKT matrix and Cholesky factor take 8 size^2 bytes each
# (288 MB at 6,000) and a factorisation ~size^3 / 3 flops (seconds at 6,000)
MAX_FACE_SIZE = 6000


@dataclass(frozen=True)
class PolishStep:
    """What one polishing step did.

    Attributes
    ----------
    size : int
        Order of the KKT system (free alphas + positive phis + positive gammas + K-1).
    rows : int
        Observations whose kernel rows entered the block K_SS.
    descent : bool
        Whether the candidate (the optimum of the subface) lowers the dual objective.
    accepted : bool
        Whether the caller took the candidate (set by the caller).
    fixed : int
        Variables of the face fixed at a bound because a Newton step crossed it.
    rounds : int
        Newton steps solved (one per subface).
    residual : float
        Relative residual of the last KKT system after refinement.
    seconds : float
        Time of the polishing step.
    """

    size: int
    rows: int
    descent: bool
    fixed: int
    rounds: int
    residual: float
    seconds: float
    accepted: bool = False


class _Face:
    """The free variables of a face: which entries of Omega they move and how."""

    def __init__(self, Y, U, alpha, phi, gamma, G, b, near):
        n, m = Y.shape
        self.m = m
        F = G + b
        ia, ka = np.nonzero(((alpha > 0.0) & (alpha < U)) | (np.abs(Y * F - 1.0) <= near))
        chain = phi.shape[1] > 0  # NORDIC-1 (BSVM has no phi and no gamma)
        ip, kp = np.nonzero((phi > 0.0) | (np.abs(G[:, :-1] - G[:, 1:]) <= near)
                            if chain else phi > 0.0)
        self.kg = np.flatnonzero((gamma > 0.0) | (np.abs(b[:-1] - b[1:]) <= near)
                                 if chain else gamma > 0.0)
        self.rows, local = np.unique(np.r_[ia, ip], return_inverse=True)
        la, lp = local[:ia.size], local[ia.size:]
        self.alpha_index, self.phi_index = (ia, ka), (ip, kp)
        na, nphi = ia.size, ip.size
        self.n_omega = na + nphi  # variables that move Omega (gammas do not)
        self.size = self.n_omega + self.kg.size
        # entries (variable, local row, boundary, coefficient) of the map M
        var = np.r_[np.arange(na), na + np.arange(nphi), na + np.arange(nphi)]
        self.entries = (var, np.r_[la, lp, lp], np.r_[ka, kp, kp + 1],
                        np.r_[Y[ia, ka], np.ones(nphi), -np.ones(nphi)])
        self.lower = np.zeros(self.size)
        self.upper = np.r_[U[ia, ka], np.full(nphi + self.kg.size, np.inf)]

    def values(self, alpha, phi, gamma):
        """v at the current point."""
        return np.r_[alpha[self.alpha_index], phi[self.phi_index], gamma[self.kg]]

    def assign(self, v, alpha, phi, gamma):
        """Write v into the dual arrays (in place)."""
        na, nphi = self.alpha_index[0].size, self.phi_index[0].size
        alpha[self.alpha_index] = v[:na]
        phi[self.phi_index] = v[na:na + nphi]
        gamma[self.kg] = v[na + nphi:]

    def omega(self, v):
        """M v: the (|S|, K-1) entries of Omega on the rows S that v moves."""
        var, row, bound, coef = self.entries
        out = np.zeros((self.rows.size, self.m))
        np.add.at(out, (row, bound), coef * v[var])
        return out

    def transpose_omega(self, W):
        """M' vec(W) for W of shape (|S|, K-1)."""
        var, row, bound, coef = self.entries
        out = np.zeros(self.size)
        np.add.at(out, var, coef * W[row, bound])
        return out

    def hessian(self, K_SS):
        """H = M' (I (x) K_SS) M, boundary by boundary (a variable meets a boundary once)."""
        var, row, bound, coef = self.entries
        H = np.zeros((self.size, self.size))
        for k in range(self.m):
            on = bound == k
            p, r, c = var[on], row[on], coef[on]
            H[np.ix_(p, p)] += K_SS[np.ix_(r, r)] * np.outer(c, c)
        return H

    def equality_rows(self, Y):
        """A (K-1, size): y_ik for alpha_ik in row k; +1, -1 in rows k, k+1 for gamma_k."""
        ia, ka = self.alpha_index
        A = np.zeros((self.m, self.size))
        A[ka, np.arange(ia.size)] = Y[ia, ka]
        cols = self.n_omega + np.arange(self.kg.size)
        A[self.kg, cols] = 1.0
        A[self.kg + 1, cols] = -1.0
        return A


def polish_step(problem, alpha, phi, gamma, G, intercepts, near=0.0):
    """The optimum of the face of a dual feasible point, or of a subface of it.

    Parameters
    ----------
    problem : NordicProblem
        BSVM or NORDIC-1 with separate intercepts; ``gram`` dense or a
        :class:`~nordicstats.kernels.KernelMatrix`.
    alpha, phi, gamma : ndarray of shape (n, K-1), (n, K-2), (K-2,)
        A dual feasible point (not modified).
    G : ndarray of shape (n, K-1)
        K Omega at the point.
    intercepts : ndarray of shape (K-1,)
        Current estimate of b (the start of the refinement).
    near : float, default=0.0
        Bounded variables whose constraint is within ``near`` of binding join the
        face (an alpha at a bound with |y_ik (G_ik + b_k) - 1| <= near, a zero phi with
        |G_ik - G_i,k+1| <= near, a zero gamma with |b_k - b_k+1| <= near); a Newton
        step that moves one of them outwards fixes it again.

    Returns
    -------
    (PolishStep, dict or None)
        What was done, and the candidate ``{"alpha", "phi", "gamma", "G"}`` (new
        arrays; None when the face has no free variable or more than
        ``MAX_FACE_SIZE``, or no subface optimum was feasible within
        ``SUBFACE_ROUNDS`` Newton steps).  The candidate is dual
        feasible; ``PolishStep.descent`` says whether it lowers the dual objective.
    """
    clock = time.perf_counter()
    Y, U = problem.signs, problem.upper_bounds
    face = _Face(Y, U, alpha, phi, gamma, G, intercepts, near)
    if face.size == 0 or face.size > MAX_FACE_SIZE:
        return PolishStep(0, 0, False, 0, 0, 0.0, time.perf_counter() - clock), None
    v = face.values(alpha, phi, gamma)
    H, A = face.hessian(gram_block(problem.gram, face.rows, face.rows)), face.equality_rows(Y)
    # gradient of D in v at the point: M' vec(G_S) - 1 on the alphas
    grad = face.transpose_omega(G[face.rows])
    grad[:face.alpha_index[0].size] -= 1.0
    slack = BOUND_SLACK * max(1.0, float(np.max(U, initial=1.0)))
    step, fixed, rounds, residual = _newton_on_subfaces(
        H, A, grad, _equality_values(Y, alpha, gamma), v, face, slack, intercepts)
    if step is None:
        return PolishStep(face.size, int(face.rows.size), False, fixed, rounds, residual,
                          time.perf_counter() - clock), None
    new = np.clip(v + step, face.lower, face.upper)
    # D(v + step) - D(v) = grad'step + 1/2 step'H step
    descent = bool(grad @ step + 0.5 * step @ (H @ step) <= 0.0)
    candidate = {"alpha": alpha.copy(), "phi": phi.copy(), "gamma": gamma.copy(), "G": G.copy()}
    face.assign(new, candidate["alpha"], candidate["phi"], candidate["gamma"])
    _update_gradient(problem.gram, candidate["G"], face.rows, face.omega(new - v))
    return PolishStep(face.size, int(face.rows.size), descent, fixed, rounds, residual,
                      time.perf_counter() - clock), candidate


def _newton_on_subfaces(H, A, grad, equality, v, face, slack, intercepts):
    """Newton steps on the face, fixing at their bound the variables each one crosses.

    Returns (step, variables fixed, rounds, KKT residual of the last solve): the step to
    the optimum of the first subface whose optimum is feasible, None if there is none
    within ``SUBFACE_ROUNDS`` steps.
    """
    fixed = np.zeros(v.size, dtype=bool)
    target = np.zeros(v.size)  # the step of the fixed variables (to their bound)
    residual = np.nan
    for rounds in range(1, SUBFACE_ROUNDS + 1):
        free = ~fixed
        # H_ff d_f + A_f' b = -grad_f - H_fx d_x,  A_f d_f = -(A v - r) - A_x d_x
        rhs = np.r_[-grad[free] - H[np.ix_(free, fixed)] @ target[fixed],
                    -equality - A[:, fixed] @ target[fixed]]
        x, residual = _solve_kkt(H[np.ix_(free, free)], A[:, free], rhs,
                                 np.r_[np.zeros(int(free.sum())), intercepts])
        step = target.copy()
        step[free] = x[:int(free.sum())]
        below = free & (v + step < face.lower - slack)
        above = free & (v + step > face.upper + slack)
        if not (below.any() or above.any()):
            return step, int(fixed.sum()), rounds, residual
        target[below] = face.lower[below] - v[below]
        target[above] = face.upper[above] - v[above]
        fixed |= below | above
    return None, int(fixed.sum()), SUBFACE_ROUNDS, residual


def _equality_values(Y, alpha, gamma):
    """y_k'alpha_k + gamma_k - gamma_{k-1} for every k (zero at a feasible point)."""
    values = np.sum(Y * alpha, axis=0)
    if gamma.size:
        values[:-1] += gamma
        values[1:] -= gamma
    return values


def _solve_kkt(H, A, rhs, start):
    """Solve [H A'; A 0] x = rhs: regularised factorisation, then iterative refinement.

    The regularised matrix [H + delta I, A'; A, -delta I] is quasi-definite; it is
    solved through the Cholesky factor of H + delta I and the (K-1) x (K-1) Schur
    complement A (H + delta I)^-1 A' + delta I.  ``start`` is the refinement's first
    iterate (zero step, the current intercepts); returns (x, relative residual).
    """
    nv = H.shape[0]
    delta = PROXIMAL * max(1.0, float(np.max(np.abs(np.diag(H)), initial=1.0)))
    factor = scipy.linalg.cho_factor(H + delta * np.eye(nv), check_finite=False)
    H_inv_At = scipy.linalg.cho_solve(factor, A.T, check_finite=False)
    schur = A @ H_inv_At + delta * np.eye(A.shape[0])

    def regularised_solve(r):
        z = scipy.linalg.cho_solve(factor, r[:nv], check_finite=False)
        b = np.linalg.solve(schur, A @ z - r[nv:])
        return np.r_[z - H_inv_At @ b, b]

    def kkt_product(x):
        return np.r_[H @ x[:nv] + A.T @ x[nv:], A @ x[:nv]]

    x = start.astype(float)
    scale = max(1.0, float(np.max(np.abs(rhs), initial=0.0)))
    residual = rhs - kkt_product(x)
    for _ in range(REFINEMENT_STEPS):
        if np.max(np.abs(residual), initial=0.0) <= REFINEMENT_TOL * scale:
            break
        x += regularised_solve(residual)
        residual = rhs - kkt_product(x)
    return x, float(np.max(np.abs(residual), initial=0.0)) / scale


def _update_gradient(gram, G, rows, delta_omega):
    """G += K[:, rows] delta_omega (by row blocks for a KernelMatrix)."""
    if isinstance(gram, KernelMatrix):
        full = np.zeros_like(G)
        full[rows] = delta_omega
        G += gram @ full
    else:
        G += gram[:, rows] @ delta_omega
