"""One dense QP over NORDIC-0's free alphas and the entries near the margin.

In the tail of :mod:`nordicstats.solvers.nordic0_smo` (pair tolerances 1e-2 and below)
the free set F of ordering increments has settled and so, nearly, has the face: at
n = 1,000, ``rare``, K = 7, C = 16, 13-22 entries differ in status (at 0, inside the
box, at U) from the optimum's after the first round at 1e-2, among ~250 alphas inside
the box.  Yet SMO's pair steps take thousands of steps there (the intercepts tied by
positive gammas and the rank-|F| coupling of the increments move only along pairs).
This module solves the reduced dual of F exactly on a working set W instead:

* W: the alphas strictly inside their box and those at a bound whose margin
  y (G + b) is within ``near`` of 1 (b by pooling), at most ``max_size`` entries (the
  nearest first); every other alpha stays where it is;
* the gammas are eliminated through the equality rows
  y_k'alpha_k + gamma_k - gamma_{k-1} = 0 (gamma_0 = gamma_m = 0):
  gamma_k = -sum_{k' <= k} sum_i beta_(k',i), beta = y * alpha, so the QP in the
  change d of beta_W is::

      min  1/2 d' Q_WW d + (G_W - y_W)' d
      s.t. sum d = 0,   sum_{k' <= k} sum_{i in W_k'} d_(k',i) <= gamma_k  (k < m),
           box bounds of beta_W + d,

  with Q_WW = K_WW / m + R_W R_W' (R = V Z, the increments' low-rank part; the
  Hessian of :mod:`nordicstats.solvers.nordic0_smo_core`), solved by quadprog with
  a ridge (:func:`~nordicstats.solvers.proximal.solve_proximal_quadprog`, no
  refinement: Q_WW is singular wherever a row has entries on two boundaries and no
  free increment near it).

The step is kept only when it lowers the dual objective and keeps the equality rows
to 1e-12 max(1, U); the minimiser of the ridged objective lowers the true one, since
d = 0 is feasible.  Then H, delta_F and G are recomputed (H by the kernel rows of W's
rows), and the SMO loop goes on from the new point.  Design and measurements:
docs/notes/scaling.md, "A working-set QP in the tail".
"""

from __future__ import annotations

import numpy as np

from nordicstats.exceptions import SolverError
from nordicstats.kernels import gram_block
from nordicstats.solvers.decomposition import intercepts_by_pooling
from nordicstats.solvers.proximal import solve_proximal_quadprog

__all__ = ["working_set_qp", "NEAR_MARGIN", "MAX_WORKING_SET", "RIDGE"]

#: Entries at a bound join W when their margin y (G + b) is within this of 1.
NEAR_MARGIN = 0.02
#: Largest W (quadprog's time grows about like |W|^3: 0.03 s at 300 variables).
MAX_WORKING_SET = 800
#: Ridge added to Q_WW, relative to its largest diagonal entry.
RIDGE = 1e-9
#: Largest change of the equality rows that a step may make, relative to max(1, U).
EQUALITY_ATOL = 1e-12


def working_set_qp(state, near=NEAR_MARGIN, max_size=MAX_WORKING_SET):
    """Solve the reduced dual of ``state`` exactly over its working set, in place.

    Parameters
    ----------
    state : IncrementState
        The point of :mod:`nordicstats.solvers.nordic0_smo` (alpha, gamma, F, G).
    near : float, default=0.02
        Margin band of the entries at a bound that join W (:data:`NEAR_MARGIN`).
    max_size : int, default=800
        Largest W; the alphas inside the box always belong to it, so a point with
        more of them than this gets no step.

    Returns
    -------
    int
        Size of W when a step was taken, 0 otherwise.
    """
    rows_i, cols_k = _working_set(state, near, max_size)
    if rows_i.size == 0:
        return 0
    rows, where = np.unique(rows_i, return_inverse=True)
    K_rows = gram_block(state.K, rows)  # (|rows|, n)
    Q = _hessian(state, K_rows, where, rows_i, cols_k)
    change = _solve(state, Q, rows_i, cols_k)
    if change is None:
        return 0
    _apply(state, change, K_rows, where, rows_i, cols_k)
    return int(rows_i.size)


def _working_set(state, near, max_size):
    """(rows, boundaries) of W: the alphas inside the box, then the nearest at a bound."""
    alpha, upper, Y = state.alpha, state.upper, state.Y
    inside = (alpha > 0.0) & (alpha < upper)
    if inside.sum() > max_size:
        return np.zeros(0, int), np.zeros(0, int)
    b = intercepts_by_pooling(state.problem, state.G)
    distance = np.abs(Y * (state.G + b) - 1.0)
    distance[inside] = -1.0  # inside entries first
    candidates = np.flatnonzero((distance < near).ravel())
    if candidates.size > max_size:
        candidates = candidates[np.argsort(distance.ravel()[candidates], kind="stable")
                                [:max_size]]
    candidates.sort()
    return np.unravel_index(candidates, alpha.shape)


def _hessian(state, K_rows, where, rows_i, cols_k):
    """Q_WW = K_WW / m + R_W R_W' in beta = y * alpha."""
    Q = K_rows[where][:, rows_i] / state.m
    if state.free.size:
        R = (state.weights[cols_k] * state.K_free[rows_i]) @ state.S_root
        Q += R @ R.T
    return Q


def _solve(state, Q, rows_i, cols_k):
    """The change d of beta_W from quadprog, or None when it does not lower the dual."""
    m, q = state.m, rows_i.size
    y = state.Y[rows_i, cols_k]
    upper = state.upper[rows_i, cols_k]
    beta = y * state.alpha[rows_i, cols_k]
    low = np.where(y > 0, 0.0, -upper) - beta
    high = np.where(y > 0, upper, 0.0) - beta
    grad = state.G[rows_i, cols_k] - y
    # columns of quadprog's C (c'd >= b): sum d = 0; -cumulative sums >= -gamma; box
    cumulative = -(cols_k[None, :] <= np.arange(m - 1)[:, None]).astype(float)
    constraints = np.vstack([np.ones((1, q)), cumulative, np.eye(q), -np.eye(q)]).T
    bounds = np.concatenate([[0.0], -state.gamma[: m - 1], low, -high])
    rho = RIDGE * max(float(np.max(np.diag(Q))), 1e-300)
    try:
        d, _, _ = solve_proximal_quadprog(Q + rho * np.eye(q), -grad, constraints, bounds, 1,
                                          rho, 0, float(np.max(upper)),
                                          problem_name="the working-set QP",
                                          ridge_hint="RIDGE")
    except SolverError:
        return None
    d = np.clip(d, low, high)
    decrease = 0.5 * float(d @ Q @ d) + float(grad @ d)
    scale = EQUALITY_ATOL * max(1.0, float(np.max(upper)))
    if not (np.all(np.isfinite(d)) and decrease < 0.0 and abs(float(d.sum())) <= scale):
        return None
    return d


def _apply(state, change, K_rows, where, rows_i, cols_k):
    """alpha, gamma, H on W's rows; then delta_F and G (``state.refresh``)."""
    m = state.m
    y = state.Y[rows_i, cols_k]
    upper = state.upper[rows_i, cols_k]
    old = state.alpha[rows_i, cols_k]
    new = np.clip(old + y * change, 0.0, upper)
    snap = 1e-12 * np.maximum(upper, 1.0)  # onto the bound it nearly reached
    new[new <= snap] = 0.0
    new = np.where(upper - new <= snap, upper, new)
    change = y * (new - old)
    state.alpha[rows_i, cols_k] = new
    moved = np.bincount(cols_k, weights=change, minlength=m)
    state.gamma = np.maximum(state.gamma - np.cumsum(moved)[: m - 1], 0.0)
    beta = np.zeros((K_rows.shape[0], m))
    np.add.at(beta, (where, cols_k), change)
    state.Hk += K_rows.T @ beta
    state.refresh(full=False)
