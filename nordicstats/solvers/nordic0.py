"""NORDIC-0 solved exactly by an active set on the ordering increments and a decomposition dual.

NORDIC-0 (paper, eqs. constraint_b, constraint_omega) is::

    min  sum_k 1/2 omega_k' K omega_k + sum_{k,i} U_{ik} xi_{k,i}
    s.t. y_ik (K omega_k + b_k)_i >= 1 - xi_{k,i},  xi >= 0,
         omega_k >= omega_{k+1} (elementwise),      b_k >= b_{k+1},

with U = ``problem.upper_bounds`` (C times the hinge weights).  Its Lagrange dual
contains K^{-1} applied to the ordering multipliers, which is unusable for RBF
Gram matrices (condition numbers of 1e12 and more).  This solver avoids K^{-1}:

Increments.  Write omega_k = v + sum_{J >= k} delta_J (J = 1..K-2) with
delta_J >= 0: the ordering constraints become bounds.  At the optimum almost every
increment is zero (measured: 86 of 90 at n = 90, K = 3), i.e. most rows share one
coefficient across the boundaries.  The solver keeps a small free set F of
increments and fixes the others at zero.

Reduced dual.  For a fixed F, minimising the Lagrangian over (v, delta_F) has a
closed form without K^{-1}.  With H_k = K (y_k * alpha_k), s = sum_k y_k alpha_k,
c(J, J') = min(J, J') - J J' / m (m = K-1) and::

    Ka_J = sum_{k <= J} H_k - (J / m) sum_k H_k,
    S    = [c(J, J') K_{i i'}] over (J, i), (J', i') in F        (|F| x |F|),
    delta_F = S^+ (Ka)_F,     m v = s - sum_J J delta_J,
    G_k  = K omega_k = sum_k H_k / m + sum_J ([J >= k] - J / m) K delta_J,

the dual in (alpha, gamma) is max e'alpha - 1/2 sum_k omega_k' G_k subject to
y_k'alpha_k + gamma_k - gamma_{k-1} = 0, 0 <= alpha <= U, gamma >= 0, with
Hessian Q = (1/m) 1 1' (x) K + V S^+ V' (V: the coefficients of delta_F in G;
S^+ = Z Z' from S's positive eigenvalues, so Q stays positive semi-definite).
Its gradient is y * G - 1, as for an SVM, so the working-set steps of
:mod:`nordicstats.solvers.decomposition` apply with Q in place of the block
diagonal K; G is updated from the kernel columns of the touched rows.

Active set.  The multiplier of delta_J >= 0 is the f-space ordering multiplier
psi_J = sum_{k <= J} K (omega_k - y_k alpha_k), zero on F by construction.  After
each inner solve either the reduced optimum has increments below -tol, and the
primal point moves towards it until the first reaches zero, which leaves F (as in
Lawson and Hanson's NNLS, so the objective never increases and the set does not
cycle), or increments with psi < -tol join F (the most violated first); the loop
ends when neither happens.  alpha
stays dual feasible throughout (its constraints do not depend on F), so each
inner solve continues from the last point.

Kernel rows.  The solver reads K only by rows (the working set's, a step's), by
the kernel columns of the free rows (``n x |F|``, formed once per free set) and by the
products K (Y * alpha) of a refresh, so a
:class:`~nordicstats.kernels.KernelMatrix` (rows computed from X on demand) serves
as well as the dense matrix; the model passes one above
:data:`~nordicstats.solvers.DENSE_GRAM_MAX_ROWS` rows.

The returned point is certified on the full problem by
:func:`nordicstats.solvers.certificate.certify` (duality gap, ordering, f-space
stationarity K omega_k = K y_k alpha_k + psi_k - psi_{k-1}).
"""

from __future__ import annotations

import time

import numpy as np

from nordicstats.kernels import KernelMatrix, gram_block
from nordicstats.solvers.certificate import certified_result
from nordicstats.solvers.decomposition import (
    DualState,
    _Subproblem,
    intercepts_by_pooling,
    libsvm_start,
)

__all__ = ["solve_nordic0_active_set", "IncrementState", "nordic0_result", "starting_point"]

DEFAULT_TOL = 1e-8
# decomposition steps over all rounds: max(20,000, 10 n (K-1)) by default
MIN_MAX_ITER = 20000
# increments added to the free set per round: at most this many, or n / 20
DEFAULT_MAX_ADD = 50
# KKT tolerance (decision-value units) of the first pass of active-set rounds
# (see solve_nordic0_active_set)
DEFAULT_COARSE_TOL = 1e-1
# relative eigenvalue cut-off of the pseudo-inverse of S (directions below it are left
# out of the free set; the certificate checks the answer either way)
_PINV_RCOND = 1e-11
# with kernel rows on demand, every this many calls of refresh() recompute H from scratch
_ROWS_ON_DEMAND_REFRESH = 20


class IncrementState(DualState):
    """Dual point (alpha, gamma), free increments F and the running G = K omega.

    Parameters
    ----------
    problem : NordicProblem
        ``method="nordic0"``, ``penalty="l2"``.
    alpha : ndarray of shape (n, K-1)
    gamma : ndarray of shape (K-2,)
        A dual feasible start (y_k'alpha_k + gamma_k - gamma_{k-1} = 0).
    """

    def __init__(self, problem, alpha, gamma):  # noqa: D107 - documented on the class
        self.problem = problem
        gram = problem.gram
        self.K = gram if isinstance(gram, KernelMatrix) else np.asarray(gram, dtype=float)
        self.Y = np.asarray(problem.signs, dtype=float)
        self.upper = problem.upper_bounds
        n, m = self.Y.shape
        self.has_phi, self.joint, self.has_gamma = False, False, m > 1
        self.alpha = np.array(alpha, dtype=float)
        self.phi = np.zeros((n, 0))
        self.gamma = np.array(gamma, dtype=float) if m > 1 else np.zeros(0)
        self.free = np.zeros((0, 2), dtype=int)  # rows (J - 1, i): 0-based increment, row
        self.K_free_rows, self._row_position = np.zeros((0, n)), {}  # K[i] by free row i
        self.feasible = np.zeros(0)  # increments of the last feasible point, on F
        self.coupling = _bridge(m)
        self._refreshes = 0  # calls of refresh(), for the full ones with rows on demand
        self._factor_free()
        self.refresh(full=True)

    # --- the reduced problem ----------------------------------------------------------------
    def _factor_free(self):
        """Pseudo-inverse of S and the coefficient matrix of delta_F in G (per boundary)."""
        j, i = self.free[:, 0], self.free[:, 1]
        m = self.m
        # kernel rows of the free rows, K[i] (|F| x n, contiguous for the compiled loop);
        # K_free = its transpose, the kernel columns K[:, i] (K is symmetric)
        self.K_free_rows = self._kernel_rows(i)
        self.K_free = self.K_free_rows.T
        S = self.coupling[np.ix_(j, j)] * self.K_free[i]
        # S^+ = Z Z' from the positive eigenvalues: the Hessian correction (V Z)(V Z)'
        # is then positive semi-definite by construction, whatever the rounding in S
        lam, vec = np.linalg.eigh(S) if j.size else (np.zeros(0), np.zeros((0, 0)))
        keep = lam > _PINV_RCOND * max(float(lam.max(initial=0.0)), 1e-300)
        self.S_root = vec[:, keep] / np.sqrt(lam[keep])
        # weight of delta_(J, i) in G_k: [J >= k] - J / m  (1-based J = j + 1, k = 1..m)
        J = j + 1
        k = np.arange(1, m + 1)
        self.weights = (J[None, :] >= k[:, None]).astype(float) - J[None, :] / m  # (m, |F|)

    def _kernel_rows(self, rows):
        """K[rows] (len(rows) x n), reusing the rows of the last free set.

        A free-set change adds or drops a few increments; computing the kernel rows of
        every free row again (n |F| kernel values, from X with rows on demand) cost more
        than the SMO steps of the short rounds at n = 5,000.
        """
        n = self.Y.shape[0]
        out = np.empty((rows.size, n))
        known, old = self._row_position, self.K_free_rows
        reuse = np.array([r in known for r in rows], dtype=bool)
        if reuse.any():
            out[reuse] = old[[known[r] for r in rows[reuse]]]
        if (~reuse).any():
            out[~reuse] = gram_block(self.K, rows[~reuse])
        self._row_position = {int(r): p for p, r in enumerate(rows)}
        return out

    def refresh(self, full=None):
        """Recompute H = K (Y * alpha), delta_F and G from scratch (removes drift).

        The decomposition loop calls this every 50 steps.  With kernel rows on demand
        (a :class:`~nordicstats.kernels.KernelMatrix`) the product K (Y * alpha)
        evaluates all n^2 kernel values, so it is redone only every
        ``_ROWS_ON_DEMAND_REFRESH``-th call (or when ``full=True``); the others
        recompute delta_F and G from the running H.
        """
        self._refreshes += 1
        if full is None:
            full = not isinstance(self.K, KernelMatrix) or \
                self._refreshes % _ROWS_ON_DEMAND_REFRESH == 0
        if full:
            self.Hk = self.K @ (self.Y * self.alpha)
        self._update()

    def _update(self):
        total = self.Hk.sum(axis=1)
        m = self.m
        cum = np.cumsum(self.Hk, axis=1)[:, :-1]  # sum_{k <= J} H_k, J = 1..m-1
        self.Ka = cum - np.outer(total, np.arange(1, m) / m)
        j, i = self.free[:, 0], self.free[:, 1]
        self.delta_free = self.S_root @ (self.S_root.T @ self.Ka[i, j]) if j.size \
            else np.zeros(0)
        self.G = np.repeat(total[:, None] / m, m, axis=1)
        if j.size:
            # sum over F of the columns K e_i delta_(J, i), weighted per boundary
            self.G += self.K_free @ (self.delta_free[:, None] * self.weights.T)

    def omega(self):
        """omega_k = v + sum_{J >= k} delta_J with m v = s - sum_J J delta_J."""
        n, m = self.Y.shape
        s = (self.Y * self.alpha).sum(axis=1)
        delta = self.increments()
        v = (s - delta @ np.arange(1, m)) / m
        tail = np.cumsum(delta[:, ::-1], axis=1)[:, ::-1]  # sum_{J >= k} delta_J, k < m
        return v[:, None] + np.hstack([tail, np.zeros((n, 1))])

    def increments(self):
        """delta (n, K-2): omega_J - omega_{J+1}, zero outside the free set."""
        delta = np.zeros((self.Y.shape[0], self.m - 1))
        if self.free.size:
            delta[self.free[:, 1], self.free[:, 0]] = self.delta_free
        return delta

    def ordering_multipliers(self):
        """psi_J = sum_{k <= J} K (omega_k - y_k alpha_k), shape (n, K-2); zero on F."""
        j = self.free[:, 0]
        psi = -self.Ka.copy()
        if j.size:
            psi += self.K_free @ (self.delta_free[:, None] * self.coupling[j])
        return psi

    # --- decomposition steps ----------------------------------------------------------------
    def step(self, alpha_set, phi_set):
        """Solve the sub-problem on the working set with the reduced Hessian Q."""
        sub = _ReducedSubproblem(self, alpha_set, phi_set)
        delta, b = sub.solve()
        ak, ai = alpha_set
        na = ak.size
        new = np.clip(self.alpha[ai, ak] + delta[:na], 0.0, self.upper[ai, ak])
        self._move_alpha(ak, ai, new - self.alpha[ai, ak])
        if self.has_gamma:
            self.gamma = np.maximum(self.gamma + delta[na:], 0.0)
        self.rebalance()
        self._update()
        return b

    def _move_alpha(self, ak, ai, change):
        self.alpha[ai, ak] += change
        for k in np.unique(ak):
            sel = ak == k
            # rows of the symmetric K: a contiguous gather, faster than its columns
            self.Hk[:, k] += (self.Y[ai[sel], k] * change[sel]) @ gram_block(self.K, ai[sel])

    def rebalance(self):
        """Restore y_k'alpha_k + gamma_k - gamma_{k-1} = 0 after clipping (one free alpha)."""
        for k, r in enumerate(self._equality_rows()):
            room = np.minimum(self.alpha[:, k], self.upper[:, k] - self.alpha[:, k])
            i = int(np.argmax(room))
            if r == 0.0 or room[i] < abs(r):
                continue
            self._move_alpha(np.array([k]), np.array([i]), np.array([-self.Y[i, k] * r]))

    # --- active set -------------------------------------------------------------------------
    def update_free_set(self, tol, max_add, batch_drop=False):
        """One active-set move on the increments (Lawson-Hanson style, no cycling).

        ``self.feasible`` holds the increments of the last feasible primal point
        (all >= 0, on F).  When the reduced optimum delta_F has entries below
        -tol, the point moves from ``feasible`` towards delta_F until the first
        entry reaches zero, and the entries at zero leave F; the primal objective
        never increases.  Otherwise delta_F becomes the feasible point and the
        increments whose multiplier psi is below -tol (the most violated first)
        join F.

        With ``batch_drop`` every entry of delta_F below -tol leaves F at once and the
        others keep max(delta, 0) (a projection: the objective may rise, so the
        driver uses it only in its coarse rounds and ends with Lawson-Hanson moves).

        Returns
        -------
        int
            Number of entries that left or joined F (0 when F is optimal).
        """
        new = self.delta_free
        negative = new < -tol
        if negative.any() and batch_drop:
            keep = ~negative
            self._set_free(self.free[keep], np.maximum(new[keep], 0.0))
            return int(negative.sum())
        if negative.any():
            old = self.feasible
            ratio = old[negative] / (old[negative] - new[negative])
            point = old + float(ratio.min()) * (new - old)
            # leave F: the entries heading below zero that reached it (at least one)
            keep = ~(negative & (point <= tol * 1e-3))
            keep[np.flatnonzero(negative)[np.argmin(ratio)]] = False
            point = np.maximum(point, 0.0)
            self._set_free(self.free[keep], point[keep])
            return int((~keep).sum())
        self.feasible = np.maximum(new, 0.0)
        psi = self.ordering_multipliers()
        psi[self.free[:, 1], self.free[:, 0]] = 0.0
        cand = np.flatnonzero((psi < -tol).ravel())
        if cand.size > max_add:
            cand = cand[np.argpartition(psi.ravel()[cand], max_add)[:max_add]]
        if cand.size:
            i, j = np.unravel_index(cand, psi.shape)
            self._set_free(np.vstack([self.free, np.column_stack([j, i])]),
                           np.concatenate([self.feasible, np.zeros(cand.size)]))
        return int(cand.size)

    def _set_free(self, free, feasible):
        self.free = np.asarray(free, dtype=int).reshape(-1, 2)
        self.feasible = np.asarray(feasible, dtype=float)
        self._factor_free()
        self._update()


def _bridge(m):
    """c(J, J') = min(J, J') - J J' / m for J, J' = 1..m-1 (the coupling of increments)."""
    J = np.arange(1, m)
    return np.minimum.outer(J, J) - np.outer(J, J) / m


class _ReducedSubproblem(_Subproblem):
    """A working set of alphas and every gamma, with the reduced Hessian Q."""

    def hessian(self):
        st = self.state
        ak, ai = self.alpha_set
        na = ai.size
        Q = gram_block(st.K, ai, ai) / st.m
        if st.free.size:
            R = (st.weights[ak] * st.K_free[ai]) @ st.S_root  # V Z
            Q = Q + R @ R.T
        y = st.Y[ai, ak]
        H = np.zeros((self.size, self.size))
        H[:na, :na] = y[:, None] * Q * y[None, :]
        return H


def solve_nordic0_active_set(problem, tol=DEFAULT_TOL, working_set=None, max_add=None,
                             max_iter=None, warm_start=None, time_limit=None,
                             libsvm_tol=1e-6, coarse_tol=DEFAULT_COARSE_TOL):
    """Solve NORDIC-0 exactly: active set on the ordering increments, decomposition dual.

    Parameters
    ----------
    problem : NordicProblem
        ``method="nordic0"``, ``penalty="l2"``, any PSD kernel matrix.
    tol : float, default=1e-8
        KKT tolerance in decision-value units (margins, ordering multipliers).
    working_set : int, optional
        Alphas taken from each end of each boundary's score ordering; default
        ``max(8, 40 // (K-1))``, i.e. sub-problems of about 80 alphas (n = 2,000:
        K = 3 took 1.26 s with 20 against 1.75 s with 28 and 3.9 s with 8; K = 5
        3.5 s with 12 (10 by default) against 10 s with 28).
    max_add : int, optional
        Increments added to the free set per round; default ``max(50, n // 20)``.
    max_iter : int, optional
        Decomposition steps over all rounds; default max(20,000, 10 n (K-1)).  With a
        cap of 20,000 at any n, n = 1,000, K = 5, C = 16 certified after 19,875 steps
        (balanced design of the kernel benchmark); the cap grows with the problem
        as the SMO solver's does.
    warm_start : mapping, optional
        ``{"alpha", "gamma", "C"}`` from a fit of the same data (e.g. the previous C
        of a grid; rescaled by ``problem.C / C``, which keeps it feasible).
    time_limit : float, optional
        Seconds; the current point is returned with a warning when reached.
    libsvm_tol : float, default=1e-6
        ``tol`` of the libsvm BSVM start.
    coarse_tol : float, default=0.1
        The active-set rounds run twice: first with inner solves to
        ``max(tol, coarse_tol)`` until the free set stops changing at that tolerance,
        then at ``tol`` from there (``coarse_tol=tol`` gives one pass).  Most rounds
        add or drop a few increments and the early ones need no accurate inner
        optimum.  Steps at n = 1,000 (balanced design of the kernel benchmark, RBF
        gamma = 0.2; one pass / coarse_tol 1e-3 / 0.1): K = 3, C = 1: 417 / 196 / 108;
        K = 3, C = 4: 3,208 / 1,327 / 398; K = 5, C = 1: 1,664 / 692 / 413; K = 5,
        C = 4: 16,892 / 5,964 / 1,835; the same optima (docs/notes/scaling.md).

    Returns
    -------
    SolverResult
        ``solver="active_set"``, ``multipliers`` alpha, gamma and psi (the f-space
        ordering multipliers), and the certificate (``gap``, ``max_violation``).
    """
    if problem.method != "nordic0" or problem.penalty != "l2":
        raise ValueError("solver='active_set' handles method='nordic0' with penalty 'l2'; got "
                         f"method={problem.method!r}, penalty={problem.penalty!r}.")
    n, m = problem.signs.shape
    working_set = max(8, 40 // m) if working_set is None else working_set
    max_add = max(DEFAULT_MAX_ADD, n // 20) if max_add is None else max_add
    max_iter = max(MIN_MAX_ITER, 10 * n * m) if max_iter is None else max_iter
    for name, value in (("tol", tol), ("working_set", working_set), ("max_add", max_add),
                        ("max_iter", max_iter), ("coarse_tol", coarse_tol)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                             np.floating)) or not value > 0:
            raise ValueError(f"The '{name}' option of the active-set solver must be positive. "
                             f"Got {value!r} instead.")
    start = time.perf_counter()
    alpha, gamma, origin = starting_point(problem, warm_start, libsvm_tol)
    state = IncrementState(problem, alpha, gamma)
    status, it, rounds, b = "optimal", 0, 0, np.zeros(m)
    # the free set is found with inner solves to a loose tolerance first, then the
    # rounds continue at ``tol`` from there (the answer is certified either way)
    for round_tol in (max(tol, coarse_tol), tol):
        while True:
            it, b, status = _inner(state, b, round_tol, int(working_set), max_iter, it, start,
                                   time_limit)
            rounds += 1
            if status != "optimal" or m < 2 or not state.update_free_set(round_tol,
                                                                         int(max_add)):
                break
        if status != "optimal":
            break
    state.refresh(full=True)
    return nordic0_result(problem, state, "active_set", status, it, rounds, origin,
                          time.perf_counter() - start)


def starting_point(problem, warm_start, libsvm_tol=None):
    """(alpha, gamma, origin) of a dual feasible start for NORDIC-0.

    ``warm_start`` (``{"alpha", "gamma", "C"}``, rescaled by ``problem.C / C``) when
    given; otherwise the K-1 libsvm BSVM fits to ``libsvm_tol``, or alpha = 0 when
    ``libsvm_tol`` is None.
    """
    n, m = problem.signs.shape
    if warm_start is None and libsvm_tol is None:
        return np.zeros((n, m)), np.zeros(max(m - 1, 0)), "zero"
    if warm_start is None:
        alpha, _ = libsvm_start(problem, tol=libsvm_tol)
        return alpha, np.zeros(max(m - 1, 0)), "libsvm"
    scale = problem.C / float(warm_start.get("C", problem.C))
    alpha = np.asarray(warm_start["alpha"], dtype=float) * scale
    gamma = np.asarray(warm_start.get("gamma", np.zeros(max(m - 1, 0))), dtype=float) * scale
    if alpha.shape != (n, m) or gamma.shape != (max(m - 1, 0),):
        raise ValueError(f"The 'warm_start' alpha must have shape {(n, m)} and gamma "
                         f"{(max(m - 1, 0),)}. Got {alpha.shape} and {gamma.shape} instead.")
    return np.clip(alpha, 0.0, problem.upper_bounds), gamma, "warm_start"


def _inner(state, b, tol, q, max_iter, it, start, time_limit):
    """Decomposition steps until no alpha/gamma KKT condition fails by more than tol."""
    stalled, dual = 0, state.dual_objective()
    while True:
        if max(state.violations(b)) <= tol:
            return it, b, "optimal"
        if stalled >= 5:
            return it, b, "optimal"  # no progress: the certificate decides
        if it >= max_iter:
            return it, b, "iteration_limit"
        if time_limit and time.perf_counter() - start > time_limit:
            return it, b, "time_limit"
        b, dual, _, progressed = state.iterate(b, q, 0, it, dual)
        it += 1
        stalled = 0 if progressed else stalled + 1


def nordic0_result(problem, state, solver, status, iterations, rounds, origin, elapsed, info=None):
    """The certified :class:`SolverResult` of an :class:`IncrementState` (G up to date).

    ``multipliers`` are alpha, gamma and psi = max(psi, 0), the f-space ordering
    multipliers; ``info`` entries are added to the result's.
    """
    psi = np.maximum(state.ordering_multipliers(), 0.0)
    return certified_result(
        problem, solver, state.omega(), intercepts_by_pooling(problem, state.G),
        {"alpha": state.alpha, "gamma": state.gamma, "psi": psi}, status=status,
        detail=f"{iterations} steps, {rounds} rounds, {state.free.shape[0]} free increments",
        iterations=iterations, time=elapsed,
        info={"start": origin, "rounds": rounds, "free_increments": int(state.free.shape[0]),
              "active_noncrossing": int(np.sum(psi > 1e-8)), **(info or {})})
