"""A decomposition (SVMlight/SMO-type) solver for the BSVM and NORDIC-1 duals.

The dual solved is the one of :mod:`nordicstats.solvers.qp` (paper, Section 3.3)::

    min_theta  D(theta) = 1/2 sum_k omega_k' K omega_k - e' alpha,
    omega_k  = y_k * alpha_k + phi_k - phi_{k-1}                    (eq. KKT_omega)
    s.t.     y_k' alpha_k + gamma_k - gamma_{k-1} = 0               (separate, eq. KKT_b)
             y_k' alpha_k + e'(phi_k - phi_{k-1}) = 0               (joint form)
             0 <= alpha <= C c,  phi >= 0,  gamma >= 0,

with c the hinge weights (``problem.upper_bounds`` = C c, c = 1 unweighted).

Instead of the dense n(K-1) x n(K-1) Hessian it keeps G = K Omega (the decision
values without intercepts) and, at each iteration, optimises a small working set
of variables exactly while the others stay fixed:

* for every boundary k, the q alphas with the largest and the q with the smallest
  score s_i = y_ik - G_ik among those that may move up or down (the extremes
  bound the intercept interval, as in SVMlight's selection);
* every positive phi (a free variable: leaving it out makes the method zig-zag
  and multiplies the iterations) and the ``max_phi`` most violated
  noncrossing rows (G_k - G_{k+1} < 0, or F_k - F_{k+1} < 0 in the joint form),
  i.e. the noncrossing constraints are generated lazily, together with the
  alphas of their rows;
* every gamma (there are K-2).

The sub-problem (a few hundred variables) is solved by quadprog with a proximal
term tau ||Delta||^2, which does not move the fixed point; its equality
multipliers give the intercepts b = -lambda.  G is updated with the kernel rows
of the touched observations only.  The start is the exact BSVM optimum from
libsvm (scikit-learn's ``SVC`` with the precomputed kernel), which is already
feasible for the dual (phi = gamma = 0), or a warm start such as the solution at
another C scaled by C_new / C_old (the constraints are homogeneous).

The loop stops when the largest KKT violation (in units of the decision
values) is below ``tol``; the answer is then certified on the full problem:
omega from theta, intercepts from the paper's LP with omega fixed (solved exactly
by pooling adjacent violators, :func:`intercepts_by_pooling`, which equals
:func:`~nordicstats.solvers.qp.fit_intercepts` without an LP solver), and the
certificate of :mod:`nordicstats.solvers.certificate` (relative duality gap and
largest violation) deciding the status.

The quadprog sub-problems dominate the time, and the iterations grow with K and C
(measurements: docs/notes/solvers.md, "The decomposition solver"), so
``solver="auto"`` uses :mod:`nordicstats.solvers.smo` for BSVM and the separate form
of NORDIC-1 (docs/notes/scaling.md); this solver remains auto's choice for the joint
form, and reachable by name.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import quadprog
from sklearn.exceptions import ConvergenceWarning

from nordicstats.exceptions import SolverError
from nordicstats.kernels import KernelMatrix
from nordicstats.solvers.certificate import certified_result

__all__ = ["solve_dual_decomposition", "DualState", "intercepts_by_pooling", "libsvm_start"]

DEFAULT_TOL = 1e-7
# Working-set size q by default: 20 + n / 250, at most 60.  The iteration count is
# sensitive to q (K = 5, n = 5,000: 193 iterations with q = 20, 9 with q = 40).
DEFAULT_WORKING_SET = None
DEFAULT_MAX_PHI = 20
DEFAULT_MAX_ITER = 5000
PROXIMAL = 1e-6
# Stop after this many iterations without a dual improvement; the certificate then
# decides whether the answer is optimal.
STALL_ITERATIONS = 5


class DualState:
    """The dual variables with the running decision values G = K Omega.

    Parameters
    ----------
    problem : NordicProblem
        ``method`` in {"bsvm", "nordic1"}.
    alpha, phi, gamma : ndarray
        Starting point, shapes (n, K-1), (n, K-2), (K-2,); must be dual feasible.
    """

    def __init__(self, problem, alpha, phi, gamma):
        self.problem = problem
        self.Y = np.asarray(problem.signs, dtype=float)
        m = self.Y.shape[1]
        self.has_phi = problem.method == "nordic1" and m > 1
        self.joint = self.has_phi and problem.noncrossing == "joint"
        self.has_gamma = self.has_phi and not self.joint
        self.upper = problem.upper_bounds
        self.alpha = np.array(alpha, dtype=float)
        self.phi = np.array(phi, dtype=float) if self.has_phi else np.zeros((self.Y.shape[0], 0))
        self.gamma = np.array(gamma, dtype=float) if self.has_gamma else np.zeros(0)
        # rows with equal Gram rows carry the same noncrossing constraint; only the
        # first of each may enter the working set (duplicated covariate patterns would
        # otherwise make the working-set QP degenerate)
        self.constraint_row = np.zeros(self.Y.shape[0], dtype=bool)
        if self.has_phi:
            self.constraint_row[distinct_rows(problem.gram)] = True
        self.refresh()

    @property
    def m(self):
        """K - 1."""
        return self.Y.shape[1]

    def omega(self):
        """omega_k = y_k alpha_k + phi_k - phi_{k-1}."""
        omega = self.Y * self.alpha
        if self.has_phi:
            omega[:, :-1] += self.phi
            omega[:, 1:] -= self.phi
        return omega

    def refresh(self):
        """Recompute G = K Omega from scratch (removes rounding drift)."""
        self.G = self.problem.gram @ self.omega()

    def dual_objective(self):
        """The paper's dual objective e'alpha - 1/2 sum_k omega_k' G_k (to be maximised)."""
        return float(self.alpha.sum() - 0.5 * np.sum(self.omega() * self.G))

    def equality_residual(self):
        """Largest ``|y_k'alpha_k + (gamma or phi terms)|``: dual feasibility of the equalities."""
        return float(np.max(np.abs(self._equality_rows())))

    def rebalance(self):
        """Restore the equalities exactly after clipping, moving one free alpha per row.

        quadprog meets its bounds to ~1e-11; clipping to them leaves residuals of
        that size, which this removes so that the dual point stays feasible.
        """
        U = self.upper
        for k, r in enumerate(self._equality_rows()):
            room = np.minimum(self.alpha[:, k], U[:, k] - self.alpha[:, k])
            i = int(np.argmax(room))
            if r == 0.0 or room[i] < abs(r):
                continue
            self.alpha[i, k] -= self.Y[i, k] * r
            self.G[:, k] -= r * self.problem.gram[i]

    def _equality_rows(self):
        r = np.sum(self.Y * self.alpha, axis=0)
        if self.has_gamma:
            r[:-1] += self.gamma
            r[1:] -= self.gamma
        if self.joint:
            s = self.phi.sum(axis=0)
            r[:-1] += s
            r[1:] -= s
        return r

    # --- optimality -------------------------------------------------------------------------
    def violations(self, b):
        """Largest KKT residual of each block at intercepts b: (alpha, phi, gamma).

        The natural residual ``|theta - P(theta - r)|``, with r the gradient of the
        Lagrangian and P the projection on the bounds: min(``|r|``, distance to the
        bound that r pushes towards), so that round-off sized values count as
        being at their bound.
        """
        r = self.Y * (self.G + b) - 1.0
        va = float(np.max(np.abs(self.alpha - np.clip(self.alpha - r, 0.0, self.upper))))
        vp = vg = 0.0
        if self.has_phi:
            rp = self._phi_gradient(b)
            vp = float(np.max(np.abs(self.phi - np.maximum(self.phi - rp, 0.0))))
        if self.has_gamma:
            rg = b[:-1] - b[1:]
            vg = float(np.max(np.abs(self.gamma - np.maximum(self.gamma - rg, 0.0))))
        return va, vp, vg

    def _phi_gradient(self, b):
        rp = self.G[:, :-1] - self.G[:, 1:]
        if self.joint:
            rp = rp + (b[:-1] - b[1:])
        return rp

    # --- working set ------------------------------------------------------------------------
    def select(self, b, q, max_phi):
        """Working set: alpha (k, i) pairs, phi (k, i) pairs (see the module docstring)."""
        U = self.upper
        up = ((self.Y > 0) & (self.alpha < U)) | ((self.Y < 0) & (self.alpha > 0))
        low = ((self.Y > 0) & (self.alpha > 0)) | ((self.Y < 0) & (self.alpha < U))
        score = self.Y - self.G
        ks, rows = [], []
        for k in range(self.m):
            for mask, sign in ((up[:, k], -1.0), (low[:, k], 1.0)):
                idx = np.flatnonzero(mask)
                if idx.size > q:
                    part = np.argpartition(sign * score[idx, k], q)[:q]
                    idx = idx[part]
                rows.append(idx)
                ks.append(np.full(idx.size, k))
        alpha_set = _unique_pairs(np.concatenate(ks), np.concatenate(rows), self.Y.shape[0])
        if not self.has_phi:
            return alpha_set, (np.zeros(0, int), np.zeros(0, int))
        rp = self._phi_gradient(b)
        active = self.phi > 0
        cand = np.flatnonzero((~active & (rp < 0) & self.constraint_row[:, None]).ravel())
        if cand.size > max_phi:
            cand = cand[np.argpartition(rp.ravel()[cand], max_phi)[:max_phi]]
        flat = np.union1d(np.flatnonzero(active.ravel()), cand)
        i, k = np.unravel_index(flat, rp.shape)
        # the alphas on the rows of the chosen phis move with them
        extra_k = np.concatenate([k, k + 1])
        extra_i = np.concatenate([i, i])
        alpha_set = _unique_pairs(np.concatenate([alpha_set[0], extra_k]),
                                  np.concatenate([alpha_set[1], extra_i]), self.Y.shape[0])
        movable = self.upper[alpha_set[1], alpha_set[0]] > 0  # alpha <= 0 (weight 0) is fixed
        return (alpha_set[0][movable], alpha_set[1][movable]), (k, i)

    # --- one step ---------------------------------------------------------------------------
    def step(self, alpha_set, phi_set):
        """Solve the sub-problem on the working set exactly and update the state.

        Returns
        -------
        ndarray of shape (K-1,)
            Intercepts from the sub-problem's equality multipliers (NaN for a
            boundary without variables in the working set).
        """
        sub = _Subproblem(self, alpha_set, phi_set)
        delta, b = sub.solve()
        self._apply(sub, delta)
        self.rebalance()
        return b

    def iterate(self, b, q, max_phi, iteration, dual):
        """One working-set iteration from intercepts b (the loop body of both solvers).

        Returns
        -------
        b : ndarray
            New intercepts (kept where a boundary had no variable in the working set).
        dual : float
            Dual objective after the step.
        n_phi : int
            Noncrossing multipliers in the working set.
        progressed : bool
            Whether the dual objective rose by more than round-off.
        """
        alpha_set, phi_set = self.select(b, q, max_phi)
        b_new = self.step(alpha_set, phi_set)
        if (iteration + 1) % 50 == 0:
            self.refresh()  # G = K omega drifts by round-off over many rank-one updates
        new = self.dual_objective()
        return (np.where(np.isnan(b_new), b, b_new), new, phi_set[0].size,
                new - dual > 1e-15 * max(1.0, abs(new)))

    def _apply(self, sub, delta):
        ak, ai = sub.alpha_set
        pk, pi = sub.phi_set
        na, npk = ak.size, pk.size
        self.alpha[ai, ak] = np.clip(self.alpha[ai, ak] + delta[:na], 0.0, self.upper[ai, ak])
        if npk:
            self.phi[pi, pk] = np.maximum(self.phi[pi, pk] + delta[na:na + npk], 0.0)
        if self.has_gamma:
            self.gamma = np.maximum(self.gamma + delta[na + npk:], 0.0)
        d_omega = (sub.atoms @ delta).reshape(self.m, sub.rows.size).T
        self.G += self.problem.gram[sub.rows].T @ d_omega


def distinct_rows(A):
    """Indices of the first occurrence of each distinct row of ``A`` (sorted).

    Examples
    --------
    >>> distinct_rows(np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])).tolist()
    [0, 1]
    """
    A = np.ascontiguousarray(A)
    rows = A.view(np.dtype((np.void, A.dtype.itemsize * A.shape[1]))).ravel()
    return np.sort(np.unique(rows, return_index=True)[1])


def _unique_pairs(k, i, n):
    flat = np.unique(k * n + i)
    return flat // n, flat % n


class _Subproblem:
    """The dual restricted to a working set, in the step Delta from the current point."""

    def __init__(self, state, alpha_set, phi_set):
        self.state = state
        self.alpha_set = alpha_set
        self.phi_set = phi_set
        ak, ai = alpha_set
        pk, pi = phi_set
        m = state.m
        self.rows, local_a = np.unique(np.concatenate([ai, pi]), return_inverse=True)
        local_p = local_a[ai.size:]
        local_a = local_a[:ai.size]
        nr = self.rows.size
        ng = m - 1 if state.has_gamma else 0
        size = ai.size + pi.size + ng
        atoms = np.zeros((m * nr, size))
        atoms[ak * nr + local_a, np.arange(ai.size)] = state.Y[ai, ak]
        cols = ai.size + np.arange(pi.size)
        atoms[pk * nr + local_p, cols] = 1.0
        atoms[(pk + 1) * nr + local_p, cols] = -1.0
        self.atoms = atoms
        self.size = size
        self.n_alpha, self.n_phi, self.n_gamma = ai.size, pi.size, ng

    def hessian(self):
        m, nr = self.state.m, self.rows.size
        Krr = self.state.problem.gram[np.ix_(self.rows, self.rows)]
        blocks = self.atoms.reshape(m, nr, self.size)
        return sum(blocks[k].T @ (Krr @ blocks[k]) for k in range(m))

    def gradient(self):
        st = self.state
        ak, ai = self.alpha_set
        pk, pi = self.phi_set
        g = np.zeros(self.size)
        g[:self.n_alpha] = st.Y[ai, ak] * st.G[ai, ak] - 1.0
        g[self.n_alpha:self.n_alpha + self.n_phi] = st.G[pi, pk] - st.G[pi, pk + 1]
        return g

    def equalities(self):
        st = self.state
        ak, ai = self.alpha_set
        pk, _ = self.phi_set
        E = np.zeros((st.m, self.size))
        E[ak, np.arange(self.n_alpha)] = st.Y[ai, ak]
        if st.joint:
            cols = self.n_alpha + np.arange(self.n_phi)
            E[pk, cols] += 1.0
            E[pk + 1, cols] -= 1.0
        if self.n_gamma:
            g0 = self.n_alpha + self.n_phi
            idx = np.arange(self.n_gamma)
            E[idx, g0 + idx] = 1.0
            E[idx + 1, g0 + idx] = -1.0
        return E

    def bounds(self):
        st = self.state
        ak, ai = self.alpha_set
        pk, pi = self.phi_set
        current = np.concatenate([st.alpha[ai, ak], st.phi[pi, pk], st.gamma])
        return -current, st.upper[ai, ak] - current[:self.n_alpha]

    def solve(self):
        """quadprog on min 1/2 D'(H + tau I)D + g'D s.t. E D = 0, bounds; returns (D, b)."""
        H = self.hessian()
        tau = PROXIMAL * max(float(np.mean(np.diag(H))), 1e-12)
        H[np.diag_indices_from(H)] += tau
        E = self.equalities()
        keep = np.any(E != 0, axis=1)
        lower, upper = self.bounds()
        Cmat = np.hstack([E[keep].T, np.eye(self.size), -np.eye(self.size)[:, :self.n_alpha]])
        bvec = np.concatenate([np.zeros(int(keep.sum())), lower, -upper])
        try:
            sol = quadprog.solve_qp(H, -self.gradient(), Cmat, bvec, int(keep.sum()))
        except ValueError as exc:
            raise SolverError(
                f"quadprog failed on a decomposition sub-problem of size {self.size}: {exc}. "
                "Try solver='quadprog' or a smaller 'working_set'.",
                solver="decomposition", status=str(exc)) from exc
        b = np.full(self.state.m, np.nan)
        b[keep] = -sol[4][:int(keep.sum())]
        return sol[0], b


def libsvm_start(problem, tol=1e-6):
    """BSVM optimum of each boundary from libsvm (scikit-learn ``SVC``, precomputed kernel).

    Hinge weights enter as libsvm's per-row ``sample_weight`` of boundary k (its box
    becomes 0 <= alpha_i <= C c_{i,k}); a boundary whose weighted rows all lie on one
    side starts at alpha = 0.  libsvm stops after max(100,000, 100 n) iterations:
    its SMO can cycle for minutes on small, badly scaled linear Gram matrices
    (docs/notes/solvers.md), and any dual-feasible point is a valid
    start, which the decomposition then solves to the certificate.

    Returns
    -------
    alpha : ndarray of shape (n, K-1)
        Dual variables, ``y_k' alpha_k = 0``, ``0 <= alpha <= C c``.
    b : ndarray of shape (K-1,)
        libsvm's intercepts.
    """
    n, m = problem.signs.shape
    alpha = np.zeros((n, m))
    b = np.zeros(m)
    fit_rows = _libsvm_fitter(problem.gram)
    U = problem.upper_bounds
    for k in range(m):
        y = problem.signs[:, k]
        weighted = U[:, k] > 0
        if np.all(y[weighted] == y[weighted][0]):
            b[k] = y[weighted][0]
            continue
        # rows of weight 0 have alpha = 0: leave them out (libsvm would renumber them)
        rows = np.flatnonzero(weighted)
        svc = fit_rows(rows, y[rows], dict(C=problem.C, tol=tol, shrinking=True,
                                           max_iter=_libsvm_max_iter(rows.size)),
                       None if problem.hinge_weights is None else U[rows, k] / problem.C)
        coef = svc.dual_coef_[0]
        if svc.classes_[1] < 0:  # decision > 0 means classes_[1]; we need +1
            coef, b[k] = -coef, -svc.intercept_[0]
        else:
            b[k] = svc.intercept_[0]
        support = rows[svc.support_]
        alpha[support, k] = np.clip(y[support] * coef, 0.0, U[support, k])
    _restore_balance(alpha, problem.signs, U)
    return alpha, b


def _libsvm_fitter(gram):
    """fit(rows, y, options, sample_weight) -> fitted ``SVC`` on those rows of the problem.

    A dense Gram matrix is handed to libsvm as a precomputed kernel; a
    :class:`~nordicstats.kernels.KernelMatrix` as its named kernel on the rows of X
    (same conventions: rbf exp(-gamma d^2), poly (gamma x'x' + coef0)^degree), so
    libsvm computes and caches its own kernel rows and no n x n matrix is formed.
    """
    from sklearn.svm import SVC

    def fit(rows, y, options, sample_weight):
        if isinstance(gram, KernelMatrix):
            kernel = gram.kernel
            svc = SVC(kernel=kernel.name, gamma=kernel.gamma if kernel.gamma else "scale",
                      degree=kernel.degree, coef0=kernel.coef0, **options)
            data = gram.X[rows]
        else:
            svc = SVC(kernel="precomputed", **options)
            dense = np.ascontiguousarray(gram, dtype=float)
            data = dense if rows.size == dense.shape[0] else dense[np.ix_(rows, rows)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # only a starting point
            return svc.fit(data, y, sample_weight=sample_weight)

    return fit


def _libsvm_max_iter(n):
    """Iteration cap of the libsvm start: max(100,000, 100 n)."""
    return max(100_000, 100 * int(n))


def _restore_balance(alpha, Y, U):
    """Move one free alpha per boundary so that y_k'alpha_k = 0 exactly (after clipping).

    U (n, K-1) holds the upper bounds C c_{i,k}.
    """
    for k in range(alpha.shape[1]):
        r = float(Y[:, k] @ alpha[:, k])
        if r == 0.0:
            continue
        target = alpha[:, k] - Y[:, k] * r
        ok = np.flatnonzero((target >= 0) & (target <= U[:, k]))
        if ok.size:
            i = ok[np.argmax(np.minimum(alpha[ok, k], U[ok, k] - alpha[ok, k]))]
            alpha[i, k] = target[i]


def _starting_point(problem, warm_start, libsvm_tol):
    """(alpha, phi, gamma, b, origin): libsvm's BSVM optimum, or a rescaled warm start."""
    n, m = problem.signs.shape
    phi, gamma = np.zeros((n, max(m - 1, 0))), np.zeros(max(m - 1, 0))
    if warm_start is None:
        alpha, b = libsvm_start(problem, tol=libsvm_tol)
        return alpha, phi, gamma, b, "libsvm"
    start = dict(warm_start)
    scale = problem.C / float(start.get("C", problem.C))
    alpha = np.asarray(start["alpha"], dtype=float) * scale
    if alpha.shape == (n, m):
        alpha = np.clip(alpha, 0.0, problem.upper_bounds)
    if problem.method == "nordic1":
        phi = np.asarray(start.get("phi", phi), dtype=float) * scale
        gamma = np.asarray(start.get("gamma", gamma), dtype=float) * scale
    for name, value, shape in (("alpha", alpha, (n, m)), ("phi", phi, (n, max(m - 1, 0)))):
        if value.shape != shape:
            raise ValueError(f"The 'warm_start' {name} must have shape {shape}. "
                             f"Got {value.shape} instead.")
    if problem.noncrossing == "joint" or problem.method == "bsvm":
        gamma = np.zeros(max(m - 1, 0))
    return alpha, phi, gamma, np.zeros(m), "warm_start"


def _check_options(tol, working_set, max_phi, max_iter):
    for name, value, kind in (("tol", tol, float), ("working_set", working_set, int),
                              ("max_phi", max_phi, int), ("max_iter", max_iter, int)):
        if not (isinstance(value, (int, float, np.integer, np.floating)) and value > 0):
            raise ValueError(f"The '{name}' option of the decomposition solver must be a "
                             f"positive {kind.__name__}. Got {value!r} instead.")


def solve_dual_decomposition(problem, tol=DEFAULT_TOL, working_set=DEFAULT_WORKING_SET,
                             max_phi=DEFAULT_MAX_PHI, max_iter=DEFAULT_MAX_ITER,
                             warm_start=None, time_limit=None, libsvm_tol=1e-6):
    """Solve BSVM or NORDIC-1 (either intercept form) by working-set decomposition.

    Parameters
    ----------
    problem : NordicProblem
        ``method`` in {"bsvm", "nordic1"}, ``penalty="l2"``.
    tol : float, default=1e-7
        Stop when no KKT condition is violated by more than ``tol`` (decision-value
        units: a margin y f - 1, or a noncrossing difference).
    working_set : int, optional
        q: alphas taken from each end of each boundary's score ordering.
        Default ``min(60, 20 + n // 250)``.
    max_phi : int, default=20
        Violated noncrossing rows added per iteration.
    max_iter : int, default=5000
    warm_start : mapping, optional
        ``{"alpha", "phi", "gamma", "C"}`` of a solution of the same data (e.g.
        another C: it is rescaled by ``problem.C / C``, which keeps it feasible).
        Default: the libsvm BSVM solution.
    time_limit : float, optional
        Seconds; on reaching it the current point is returned with a
        :class:`SolverLimitWarning`.
    libsvm_tol : float, default=1e-6
        ``tol`` of the libsvm start.

    Returns
    -------
    SolverResult
        ``solver="decomposition"``; ``gap`` (= ``kkt_residual``) is the relative duality gap
        ``(P - D) / max(1, |P|)`` with the LP intercepts; ``info`` holds the largest
        KKT violation, the iterations and the noncrossing rows used.
    """
    if problem.method not in ("bsvm", "nordic1") or problem.penalty != "l2":
        raise ValueError(
            f"solver='decomposition' handles method 'bsvm' or 'nordic1' with penalty 'l2'; "
            f"got method={problem.method!r}, penalty={problem.penalty!r}. Use solver='quadprog'.")
    if working_set is None:
        working_set = min(60, 20 + problem.n // 250)
    _check_options(tol, working_set, max_phi, max_iter)
    start = time.perf_counter()
    alpha, phi, gamma, b, origin = _starting_point(problem, warm_start, libsvm_tol)
    state = DualState(problem, alpha, phi, gamma)
    if state.equality_residual() > 1e-8 * max(1.0, problem.C):
        raise ValueError("The 'warm_start' point is not dual feasible (y'alpha + gamma/phi "
                         "terms != 0); pass a solution of the same method and data.")
    status, it, viol, phi_seen, stalled = "optimal", 0, np.inf, 0, 0
    dual = state.dual_objective()
    while True:
        viol = max(state.violations(b))
        if viol <= tol:
            break
        if stalled >= STALL_ITERATIONS:
            status = "stalled"
            break
        if it >= max_iter or (time_limit and time.perf_counter() - start > time_limit):
            status = "iteration_limit" if it >= max_iter else "time_limit"
            break
        b, dual, n_phi, progressed = state.iterate(b, int(working_set), int(max_phi), it, dual)
        phi_seen = max(phi_seen, n_phi)
        it += 1
        stalled = 0 if progressed else stalled + 1
    state.refresh()
    return _finish(problem, state, status, it, viol, phi_seen, origin,
                   time.perf_counter() - start)


def _finish(problem, state, status, iterations, viol, phi_seen, origin, elapsed):
    """Intercepts by pooling, then the certificate on the full problem decides the status.

    A stall (no dual progress while the intercept estimate still shows a KKT
    violation) counts as converged; the certificate then says whether it is optimal.
    """
    tiny = 1e-8 * max(1.0, problem.C)
    active = int(np.sum(state.phi > tiny)) + int(np.sum(state.gamma > tiny))
    return certified_result(
        problem, "decomposition", state.omega(), intercepts_by_pooling(problem, state.G),
        {"alpha": state.alpha, "phi": state.phi, "gamma": state.gamma},
        status="optimal" if status == "stalled" else status,
        detail=f"{iterations} iterations, largest KKT violation {viol:.3g}",
        iterations=iterations, time=elapsed,
        info={"kkt_violation": viol, "start": origin, "active_noncrossing": active,
              "max_phi_in_working_set": phi_seen, "stalled": status == "stalled",
              "equality_residual": state.equality_residual()})


def intercepts_by_pooling(problem, G):
    """Intercepts minimising the primal with omega fixed, by pooling adjacent violators.

    The paper's intercept LP (Section 3.3; :func:`~nordicstats.solvers.qp.fit_intercepts`)
    separates over k into h_k(b) = sum_i C c_ik (1 - y_ik (G_ik + b))_+, convex and
    piecewise linear in b, tied only by the chain b_1 >= ... >= b_{K-1}
    (separate form, NORDIC-0) or b_k - b_{k+1} >= c_k = max_i (G_{i,k+1} - G_{ik})
    (joint form; the shift a_k = b_k + sum_{j<k} c_j turns it into a chain).
    Minimising a sum of convex functions over a chain is solved exactly by
    pooling adjacent violators: each pool takes a minimiser of its summed
    h_k (the midpoint when the minimiser is an interval), and neighbouring pools
    merge while their values break the order.  Cost O(n K log n), with no LP solver.

    Parameters
    ----------
    problem : NordicProblem
    G : ndarray of shape (n, K-1)
        K omega (or X w).

    Returns
    -------
    ndarray of shape (K-1,)
    """
    Y = np.asarray(problem.signs, dtype=float)
    m = Y.shape[1]
    shift = np.zeros(m)
    if problem.method != "bsvm" and m > 1 and problem.method == "nordic1" \
            and problem.noncrossing == "joint":
        shift[1:] = np.cumsum(np.max(G[:, 1:] - G[:, :-1], axis=0))
    # breakpoints of h_k in the shifted variable a_k = b_k + shift_k
    T = Y - G + shift
    W = problem.upper_bounds
    if problem.method == "bsvm" or m < 2:
        return np.array([_pl_argmin(T[:, [k]], Y[:, [k]], W[:, [k]]) for k in range(m)]) - shift
    pools = []  # (first k, last k, value)
    for k in range(m):
        pools.append((k, k, _pl_argmin(T[:, [k]], Y[:, [k]], W[:, [k]])))
        while len(pools) > 1 and pools[-2][2] < pools[-1][2]:
            first, _, _ = pools[-2]
            last = pools[-1][1]
            cols = slice(first, last + 1)
            pools[-2:] = [(first, last, _pl_argmin(T[:, cols], Y[:, cols], W[:, cols]))]
    a = np.empty(m)
    for first, last, value in pools:
        a[first:last + 1] = value
    return a - shift


def _pl_argmin(T, Y, W):
    """Midpoint of the minimisers of sum w (1 - y (G + b))_+ written with breakpoints T = y - G.

    A term with y = +1 is active (slope -w) for b < t, one with y = -1 (slope +w)
    for b > t, so the slope between consecutive sorted breakpoints is
    w(neg at or left) - w(pos right).  Terms of weight 0 are left out, so that
    they do not move the answer (a zero-weight row is a row that is not there).
    """
    keep = W.ravel() > 0
    t, y, w = T.ravel()[keep], Y.ravel()[keep], W.ravel()[keep]
    if t.size == 0:  # no weighted term: any b minimises; take the middle of the data
        return float(np.median(T))
    order = np.argsort(t, kind="stable")
    t, pos, w = t[order], y[order] > 0, w[order]
    w_pos = float(w[pos].sum())
    if not pos.any() or pos.all():
        return float(t[0] if not pos.any() else t[-1])
    # slope on (t_j, t_{j+1}) for j = 0..N-2; exact zero with integer weights
    slope = np.cumsum(np.where(pos, 0.0, w))[:-1] - (w_pos - np.cumsum(np.where(pos, w, 0.0))[:-1])
    flat = 1e-12 * float(w.sum())
    j = int(np.searchsorted(slope, -flat, side="left"))  # first interval with slope >= 0
    if j < slope.size and abs(slope[j]) <= flat:
        return float(0.5 * (t[j] + t[j + 1]))
    return float(t[j])
