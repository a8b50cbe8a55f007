"""Linear NORDIC in the primal, as a sparse QP solved by PIQP, with lazy noncrossing rows.

Variables x = (w_1..w_{K-1}, b, xi) with w_k in R^d (paper, eq. linearNORDIC with
C = 1/lambda)::

    min  sum_k 1/2 ||w_k||^2 + C sum_{k,i} c_{i,k} xi_{k,i}     (c: hinge weights, 1 unweighted)
    s.t. y_ik (x_i'w_k + b_k) + xi_{k,i} >= 1,  xi >= 0                 (hinge rows)
         joint:    x_i'(w_k - w_{k+1}) + b_k - b_{k+1} >= 0 for all i    (Section 5.2)
         separate: x_i'(w_k - w_{k+1}) >= 0 for all i,  b_k >= b_{k+1}   (eqs. primal_constraint3-4)

The n(K-2) noncrossing rows are added lazily: the problem is solved without
them (BSVM, plus b_k >= b_{k+1} in the separate form), the rows violated at the
solution are added, and the solve repeats until no row is violated by more than
``feas_tol``.  Only a handful of rows are ever active, so each solve stays close
to the size of K-1 independent SVMs.  The multipliers of the hinge rows are the
dual alpha, those of the noncrossing rows phi (zero for rows never added) and
those of the intercept ordering gamma; ``info["active_noncrossing"]`` counts the
positive phi and ``info["active_mask"]`` marks them, which is what inference needs.

PIQP (``pip install 'nordicstats[fast]'``) is optional: without it problems with
n <= ``FALLBACK_MAX_N`` fall back to the dual decomposition solver on the Gram
matrix X X' (n x n floats) and larger ones raise a
:class:`~nordicstats.exceptions.MissingDependencyError`.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from scipy import sparse

from nordicstats.exceptions import SolverError, missing_dependency
from nordicstats.solvers.certificate import certified_result, certify
from nordicstats.solvers.decomposition import intercepts_by_pooling, solve_dual_decomposition
from nordicstats.solvers.problem import NordicProblem

__all__ = ["solve_linear_primal", "FALLBACK_MAX_N"]

# Without PIQP, problems with at most this many rows go to the decomposition solver
# (its n x n Gram matrix is 200 MB at n = 5,000).
FALLBACK_MAX_N = 5000
DEFAULT_FEAS_TOL = 1e-8
DEFAULT_MAX_ROUNDS = 30
# Hinge-row screening (see solve_linear_primal) above this many rows n(K-1); the
# subsample has max(SCREEN_SUBSAMPLE, n / 10) rows and the rows nearest the margin,
# a share SCREEN_EXPLICIT of them, keep their slacks.
SCREEN_MIN_ROWS = 40_000
SCREEN_SUBSAMPLE = 5_000
SCREEN_EXPLICIT = 0.2
# Once a solve has found noncrossing violations, only this share of rows nearest the margin
# of that solution keeps its slack in the next solves (_narrowed).
SCREEN_NARROW = 0.02
EXPLICIT, AT_C, ZERO = 0, 1, 2
# Margins and noncrossing slacks within this (relative) distance of 0 are left free when the
# multipliers are recovered from the primal point (recover_multipliers).
RECOVERY_TOL = 1e-6


def solve_linear_primal(problem, tol=1e-9, feas_tol=DEFAULT_FEAS_TOL,
                        max_rounds=DEFAULT_MAX_ROUNDS, max_iter=250, screen=None):
    """Solve linear BSVM or NORDIC-1 in the primal weights with PIQP (sparse).

    Parameters
    ----------
    problem : NordicProblem
        Linear problem (``problem.X`` given), ``method`` in {"bsvm", "nordic1"},
        ``penalty="l2"``.  ``problem.gram`` is not used (it may be None).
    tol : float, default=1e-9
        PIQP's absolute and relative tolerances (``eps_abs``, ``eps_rel``).
    feas_tol : float, default=1e-8
        A noncrossing row is added, and a screened hinge row restored, when its
        condition fails by more than this.
    max_rounds : int, default=30
        Solves with enlarged row sets before giving up with a warning.
    max_iter : int, default=250
        PIQP iterations per solve.
    screen : bool, optional
        Screen the hinge rows (see Notes).  Default: when n(K-1) > ``SCREEN_MIN_ROWS``.

    Returns
    -------
    SolverResult
        ``coef`` (d, K-1), ``intercept``, ``dual_coef=None``; ``multipliers``
        alpha (n, K-1), phi (n, K-2), gamma (K-2); the certificate (gap =
        ``kkt_residual``, ``max_violation``) is recomputed from them.

    Notes
    -----
    Screening: a fit on a fixed-seed subsample (C scaled by n / n_sub) gives
    margins r_ik = y_ik f_k(x_i) - 1 for all rows; rows far inside the margin
    (r < -delta) enter with alpha = C as a linear term -C y_ik (x_i'w_k + b_k)
    (their slack is 1 - y f), rows far outside (r > delta) are left out
    (alpha = 0), and only the rows near the margin keep a slack variable.  After
    every solve each screened row is checked (alpha = C needs r <= 0, alpha = 0
    needs r >= 0); failures join the explicit rows and the solve repeats.  At
    the end every KKT condition of the full problem holds, so the answer is the
    exact optimum; it is certified by the duality gap either way.
    """
    _check(problem)
    try:
        import piqp
    except ImportError:
        if problem.n <= FALLBACK_MAX_N:
            return solve_dual_decomposition(problem)
        raise missing_dependency("piqp", "fast",
                                 "solver='primal' for linear NORDIC") from None
    start = time.perf_counter()
    n, m = problem.signs.shape
    screen = n * m > SCREEN_MIN_ROWS if screen is None else bool(screen)
    state = _screened_state(piqp, problem, tol, max_iter) if screen else np.zeros((n, m), int)
    rows = np.zeros((0, 2), dtype=int)  # (i, k) noncrossing rows in the model
    status, rounds, iters = "optimal", 0, 0
    # joint NORDIC-1 without its noncrossing rows is BSVM: keep that optimum on the way
    bsvm_first = problem.method == "nordic1" and problem.noncrossing == "joint" and m > 1
    unconstrained = None
    while True:
        layout = _Layout(problem, state)
        sol = _solve_once(piqp, problem, layout, rows, tol, max_iter)
        iters += int(sol.info.iter)
        rounds += 1
        w, b = layout.unpack(sol.x)
        new = _violated_rows(problem, w, b, feas_tol, rows)
        wrong = _misscreened(problem, w, b, state, feas_tol)
        if bsvm_first and unconstrained is None and rows.shape[0] == 0:
            if wrong.any():
                new = new[:0]  # finish BSVM (the screening) before adding noncrossing rows
            else:
                unconstrained = _result(dataclasses.replace(problem, method="bsvm"), layout,
                                        sol, rows, "optimal", rounds, iters,
                                        time.perf_counter() - start)
        if new.shape[0] == 0 and not wrong.any():
            break
        if rounds >= max_rounds:
            status = "iteration_limit"
            break
        if screen and new.shape[0]:
            state = _narrowed(problem, w, b, state)
        rows = np.vstack([rows, new])
        state[wrong] = EXPLICIT
    extra = {} if unconstrained is None else {"unconstrained": unconstrained}
    return _result(problem, layout, sol, rows, status, rounds, iters,
                   time.perf_counter() - start, extra)


def _screened_state(piqp, problem, tol, max_iter):
    """Row states from a subsample fit: EXPLICIT near the margin, AT_C inside, ZERO outside."""
    n, m = problem.signs.shape
    size = max(SCREEN_SUBSAMPLE, n // 10)
    sub = np.sort(np.random.default_rng(0).choice(n, size=min(size, n), replace=False))
    weights = None if problem.hinge_weights is None else problem.hinge_weights[sub]
    small = NordicProblem(gram=None, signs=problem.signs[sub], C=problem.C * n / sub.size,
                          method="bsvm", X=problem.X[sub], hinge_weights=weights)
    layout = _Layout(small, np.zeros((sub.size, m), int))
    w, b = layout.unpack(_solve_once(piqp, small, layout, np.zeros((0, 2), int), tol,
                                     max_iter).x)
    r = problem.signs * (problem.X @ w + b) - 1.0
    delta = np.quantile(np.abs(r), SCREEN_EXPLICIT, axis=0)
    state = np.full((n, m), EXPLICIT)
    state[r < -delta] = AT_C
    state[r > delta] = ZERO
    return state


def _narrowed(problem, w, b, state):
    """Screen again around a solution close to the optimum: explicit rows whose margin is
    beyond the ``SCREEN_NARROW`` quantile of |r| get alpha = C or 0 (checked afterwards
    like every screened row), so the solves with noncrossing rows are smaller."""
    r = problem.signs * (problem.X @ w + b) - 1.0
    delta = np.quantile(np.abs(r), SCREEN_NARROW, axis=0)
    state = state.copy()
    explicit = state == EXPLICIT
    state[explicit & (r < -delta)] = AT_C
    state[explicit & (r > delta)] = ZERO
    return state


def _misscreened(problem, w, b, state, feas_tol):
    """Screened rows whose alpha (C or 0) breaks complementarity at (w, b)."""
    r = problem.signs * (problem.X @ w + b) - 1.0
    return ((state == AT_C) & (r > feas_tol)) | ((state == ZERO) & (r < -feas_tol))


def _check(problem):
    if problem.X is None:
        raise ValueError("solver='primal' needs a linear-kernel problem (NordicProblem.X); "
                         "use solver='decomposition' or 'quadprog' for other kernels.")
    if problem.method not in ("bsvm", "nordic1") or problem.penalty != "l2":
        raise ValueError(
            f"solver='primal' handles method 'bsvm' or 'nordic1' with penalty 'l2'; got "
            f"method={problem.method!r}, penalty={problem.penalty!r}. NORDIC-0 orders the "
            "kernel coefficients omega, which a primal in w cannot express: use "
            "solver='quadprog'.")


class _Layout:
    """Positions of w (d x m, column blocks), b (m) and the explicit slacks in x.

    ``state[i, k]`` is EXPLICIT (a slack variable and a hinge row), AT_C (alpha = C,
    a linear term) or ZERO (alpha = 0, left out); explicit rows are ordered k*n + i.
    """

    def __init__(self, problem, state):
        self.n, self.d = problem.X.shape
        self.m = problem.n_boundaries
        self.state = state
        flat = np.flatnonzero((state == EXPLICIT).T.ravel())
        self.k, self.i = flat // self.n, flat % self.n
        self.noncrossing = problem.method == "nordic1" and self.m > 1
        self.separate = self.noncrossing and problem.noncrossing == "separate"
        self.n_w = self.d * self.m
        self.n_xi = flat.size
        self.size = self.n_w + self.m + self.n_xi

    def unpack(self, x):
        w = x[:self.n_w].reshape(self.m, self.d).T
        return w, x[self.n_w:self.n_w + self.m]

    def linear_term(self, problem):
        """c: C c_ik for each slack; -sum over AT_C rows of C c_ik y_ik (x_i, 1) for (w_k, b_k)."""
        U = problem.upper_bounds
        at_c = (self.state == AT_C) * problem.signs * U  # (n, m) of C c y or 0
        c_w = -(problem.X.T @ at_c)  # (d, m)
        c_b = -at_c.sum(axis=0)
        return np.concatenate([c_w.T.ravel(), c_b, U[self.i, self.k]])

    def hinge_rows(self, problem):
        """G (explicit rows x size) for y_ik (x_i'w_k + b_k) + xi_ik >= 1."""
        d, m, k, i = self.d, self.m, self.k, self.i
        row = np.arange(self.n_xi)
        yk = problem.signs[i, k]
        w_cols = (k * d)[:, None] + np.arange(d)[None, :]
        data = np.concatenate([(yk[:, None] * problem.X[i]).ravel(), yk, np.ones(self.n_xi)])
        cols = np.concatenate([w_cols.ravel(), self.n_w + k, self.n_w + m + row])
        rows = np.concatenate([np.repeat(row, d), row, row])
        return sparse.csc_matrix((data, (rows, cols)), shape=(self.n_xi, self.size))

    def noncrossing_rows(self, problem, pairs):
        """x_i'(w_k - w_{k+1}) (+ b_k - b_{k+1} when joint) >= 0 for the (i, k) pairs."""
        d = self.d
        i, k = pairs[:, 0], pairs[:, 1]
        r = np.arange(pairs.shape[0])
        Xi = problem.X[i]
        cols = [(k * d)[:, None] + np.arange(d), ((k + 1) * d)[:, None] + np.arange(d)]
        data = [Xi.ravel(), -Xi.ravel()]
        rr = [np.repeat(r, d), np.repeat(r, d)]
        cc = [cols[0].ravel(), cols[1].ravel()]
        if not self.separate:
            data += [np.ones(r.size), -np.ones(r.size)]
            rr += [r, r]
            cc += [self.n_w + k, self.n_w + k + 1]
        return sparse.csc_matrix((np.concatenate(data), (np.concatenate(rr), np.concatenate(cc))),
                                 shape=(r.size, self.size))

    def intercept_rows(self):
        """b_k - b_{k+1} >= 0 (separate form)."""
        m = self.m
        k = np.arange(m - 1)
        return sparse.csc_matrix(
            (np.concatenate([np.ones(m - 1), -np.ones(m - 1)]),
             (np.concatenate([k, k]), self.n_w + np.concatenate([k, k + 1]))),
            shape=(m - 1, self.size))


def _solve_once(piqp, problem, layout, rows, tol, max_iter):
    P = sparse.diags(np.concatenate([np.ones(layout.n_w), np.zeros(layout.size - layout.n_w)]),
                     format="csc")
    c = layout.linear_term(problem)
    blocks = [layout.hinge_rows(problem)]
    lower = [np.ones(layout.n_xi)]
    if layout.separate:
        blocks.append(layout.intercept_rows())
        lower.append(np.zeros(layout.m - 1))
    if rows.shape[0]:
        blocks.append(layout.noncrossing_rows(problem, rows))
        lower.append(np.zeros(rows.shape[0]))
    G = sparse.vstack(blocks, format="csc")
    h_l = np.concatenate(lower)
    x_l = np.concatenate([np.full(layout.n_w + layout.m, -np.inf), np.zeros(layout.n_xi)])
    solver = piqp.SparseSolver()
    solver.settings.eps_abs = tol
    solver.settings.eps_rel = tol
    solver.settings.max_iter = int(max_iter)
    solver.setup(P, c, None, None, G, h_l, np.full(h_l.size, np.inf), x_l, None)
    status = solver.solve()
    if status != piqp.PIQP_SOLVED:
        raise SolverError(f"PIQP did not solve the linear NORDIC primal: status {status}. "
                          "Try solver='quadprog' on a smaller problem or a larger 'tol'.",
                          solver="piqp", status=str(status))
    return solver.result


def _violated_rows(problem, w, b, feas_tol, present):
    """(i, k) noncrossing rows violated by more than feas_tol and not yet in the model."""
    if problem.method != "nordic1" or problem.n_boundaries < 2:
        return np.zeros((0, 2), dtype=int)
    F = problem.X @ w
    if problem.noncrossing == "joint":
        F = F + b
    diff = F[:, :-1] - F[:, 1:]
    mask = diff < -feas_tol
    if present.shape[0]:
        mask[present[:, 0], present[:, 1]] = False
    i, k = np.nonzero(mask)
    return np.column_stack([i, k]).astype(int)


def _multipliers(problem, layout, sol, rows):
    n, m = layout.n, layout.m
    z = np.asarray(sol.z_l) - np.asarray(sol.z_u)
    U = problem.upper_bounds
    alpha = np.where(layout.state == AT_C, U, 0.0)
    alpha[layout.i, layout.k] = np.clip(z[:layout.n_xi], 0.0, U[layout.i, layout.k])
    pos = layout.n_xi
    gamma = np.zeros(max(m - 1, 0))
    if layout.separate:
        gamma = np.maximum(z[pos:pos + m - 1], 0.0)
        pos += m - 1
    phi = np.zeros((n, max(m - 1, 0)))
    if rows.shape[0]:
        phi[rows[:, 0], rows[:, 1]] = np.maximum(z[pos:pos + rows.shape[0]], 0.0)
    return alpha, phi, gamma


def _result(problem, layout, sol, rows, status, rounds, iters, elapsed, extra=None):
    w, _ = layout.unpack(np.asarray(sol.x))
    # Exact intercepts for this w (the paper's LP, by pooling): the interior-point b is
    # one of them only up to tolerance, and an arbitrary one when they form an interval.
    b = intercepts_by_pooling(problem, problem.X @ w)
    multipliers = _multipliers(problem, layout, sol, rows)
    recovered = recover_multipliers(problem, w, b)
    source = "interior point"
    if recovered is not None and _violation(problem, w, b, recovered) < _violation(
            problem, w, b, multipliers):
        multipliers, source = recovered, "recovered from the primal point"
    alpha, phi, gamma = multipliers
    tiny = 1e-7 * max(1.0, problem.C)
    active_mask = phi > tiny
    return certified_result(
        problem, "primal", None, b, {"alpha": alpha, "phi": phi, "gamma": gamma},
        status=status, coef=w, iterations=iters, time=elapsed,
        detail=f"PIQP, {rounds} solve(s) with {rows.shape[0]} noncrossing rows; "
               f"multipliers {source}",
        info={"rounds": rounds, "rows_added": int(rows.shape[0]),
              "explicit_hinge_rows": layout.n_xi,
              "active_noncrossing": int(active_mask.sum()), "active_mask": active_mask,
              "active_intercept_order": int(np.sum(gamma > tiny)),
              "multipliers": source,
              "piqp_duality_gap_rel": float(sol.info.duality_gap_rel), **(extra or {})})


def _violation(problem, w, b, multipliers):
    alpha, phi, gamma = multipliers
    return certify(problem, None, b, {"alpha": alpha, "phi": phi, "gamma": gamma},
                   coef=w).max_violation


def recover_multipliers(problem, w, b, tol=RECOVERY_TOL):
    """Multipliers that make (w, b) a KKT point, solved from the primal point itself.

    An interior-point method leaves every multiplier slightly inside its bounds, and
    at n = 10^6 the sum of those errors breaks the equality rows
    sum_i y_ik alpha_ik (+ phi and gamma terms) = 0 by ~1e-6.  Complementary
    slackness fixes almost all of them from the margins r_ik = 1 - y_ik f_k(x_i):
    alpha_ik = C c_ik where r_ik > tol, 0 where r_ik < -tol, phi_ik = 0 (gamma_k = 0)
    where the noncrossing (intercept-order) row is slack by more than tol.  The
    remaining few -- the ~d + 1 rows per boundary on the margin and the active
    noncrossing rows -- solve the stationarity and equality rows
    (eq. KKT_omega with K = X X')

        w_k = X'(y_k o alpha_k + phi_k - phi_{k-1}),
        y_k'alpha_k + [joint] 1'(phi_k - phi_{k-1}) + [separate] (gamma_k - gamma_{k-1}) = 0,

    with 0 <= alpha <= C c, phi >= 0, gamma >= 0, by bounded least squares
    (:func:`scipy.optimize.lsq_linear`, BVLS): (K-1)(d + 1) equations in a few
    dozen unknowns.  The certificate then checks the result on the full problem.

    Parameters
    ----------
    problem : NordicProblem
        Linear BSVM or NORDIC-1.
    w : ndarray of shape (d, K-1)
    b : ndarray of shape (K-1,)
    tol : float, default=RECOVERY_TOL
        Margins and noncrossing slacks within tol (relative to max(1, max |f|)) are
        left free.

    Returns
    -------
    (alpha, phi, gamma) or None
        None when nothing is left free on some boundary (no exact recovery).
    """
    from scipy.optimize import lsq_linear

    X, Y, U = problem.X, problem.signs, problem.upper_bounds
    n, m = Y.shape
    d = X.shape[1]
    XW = X @ w
    scale = tol * max(1.0, float(np.max(np.abs(XW + b), initial=0.0)))
    r = 1.0 - Y * (XW + b)
    alpha = np.where(r > scale, U, 0.0)
    free_alpha = np.abs(r) <= scale
    if not free_alpha.any(axis=0).all():
        return None
    phi, free_phi = np.zeros((n, max(m - 1, 0))), np.zeros((n, max(m - 1, 0)), dtype=bool)
    gamma, free_gamma = np.zeros(max(m - 1, 0)), np.zeros(max(m - 1, 0), dtype=bool)
    joint = problem.method == "nordic1" and problem.noncrossing == "joint"
    if problem.method == "nordic1" and m > 1:
        slack = XW[:, :-1] - XW[:, 1:] + ((b[:-1] - b[1:]) if joint else 0.0)
        free_phi = slack <= scale
        if not joint:
            free_gamma = b[:-1] - b[1:] <= scale
    columns, lower, upper = [], [], []
    for k in range(m):  # alpha_k enters block k: (y_k x_i, y_k)
        rows = np.flatnonzero(free_alpha[:, k])
        columns.append(_block_columns(k, m, d, Y[rows, k][:, None] * X[rows], Y[rows, k]))
        lower.append(np.zeros(rows.size))
        upper.append(U[rows, k])
    for k in range(m - 1):  # phi_k enters block k with +, block k+1 with -
        rows = np.flatnonzero(free_phi[:, k])
        ones = np.ones(rows.size) if joint else np.zeros(rows.size)
        columns.append(_block_columns(k, m, d, X[rows], ones)
                       - _block_columns(k + 1, m, d, X[rows], ones))
        lower.append(np.zeros(rows.size))
        upper.append(np.full(rows.size, np.inf))
    gam = np.flatnonzero(free_gamma)
    if gam.size:
        columns.append(_block_columns(gam, m, d, np.zeros((gam.size, d)), np.ones(gam.size))
                       - _block_columns(gam + 1, m, d, np.zeros((gam.size, d)),
                                        np.ones(gam.size)))
        lower.append(np.zeros(gam.size))
        upper.append(np.full(gam.size, np.inf))
    fixed = Y * alpha
    target = np.concatenate([w - X.T @ fixed, -fixed.sum(axis=0)[None, :]]).T.ravel()
    A = np.concatenate(columns, axis=1)
    lo, hi = np.concatenate(lower), np.concatenate(upper)
    u = lsq_linear(A, target, bounds=(lo, hi), method="bvls", tol=1e-14).x
    u = np.clip(u, lo, hi)
    sizes = np.cumsum([c.shape[1] for c in columns])[:-1]
    parts = np.split(u, sizes)
    for k in range(m):
        alpha[free_alpha[:, k], k] = parts[k]
    for k in range(m - 1):
        phi[free_phi[:, k], k] = parts[m + k]
    if gam.size:
        gamma[gam] = parts[-1]
    return alpha, phi, gamma


def _block_columns(k, m, d, coef_rows, intercept_rows):
    """Columns of unknowns entering boundary block k (scalar or one per unknown): rows
    k(d+1) .. k(d+1)+d-1 get the unknown's x-part, row k(d+1)+d its intercept part."""
    size = np.shape(intercept_rows)[0]
    out = np.zeros((m * (d + 1), size))
    k = np.broadcast_to(np.asarray(k), (size,))
    cols = np.arange(size)
    for j in range(d):
        out[k * (d + 1) + j, cols] = coef_rows[:, j]
    out[k * (d + 1) + d, cols] = intercept_rows
    return out
