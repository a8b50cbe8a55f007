"""The L1-SVM LP's optimum as sign rows' margins move (the branch and bound's re-solves).

The branch and bound of :mod:`nordicstats.solvers.lazy_mip` changes one boundary's LP
(:mod:`nordicstats.solvers.l1svm_lp`) by a sign row ``s f(x_i) >= h`` switched on (or
off) on an LP whose optimum is known.  In the basis of the cost path
(:mod:`nordicstats.solvers.l1svm_path`: A, the elbow E, L, R and M's inverse) a sign row is
one more point with label s, margin h and a multiplier nu without upper bound (never in
L).  Switched on, its margin starts where the row is tight at the known vertex and rises
to h -- a parametric right-hand side of the primal: the vertex moves linearly
(M' (db, dtheta_A) = e_k while the row is in E) and the dual stays, until a point of R or
L reaches its margin or an active theta_j reaches 0.  There the dual moves along the edge
that takes that constraint into the basis (a dual simplex pivot with a zero change of
the objective), to the first of mu_E's bounds, an inactive ``|s_j|`` reaching 1 or the
entering variable's own bound (a bound flip).  It is the cost path with primal and dual
exchanged, with its pivots, rank-one updates and perturbed margins.  Switched off, a row
on the margin has its margin lowered until a pivot takes its multiplier to 0.

At n = 1,000, C = 2^4 a re-solve takes 70-130 such pivots, about as many as HiGHS's dual
simplex took iterations, at a quarter of their cost; the end basis is then checked
afresh (:mod:`nordicstats.solvers.l1svm_certificate`), and confirmed by HiGHS (with no
iteration) only when that check fails (``docs/notes/scaling.md``).
"""

from __future__ import annotations

import numba
import numpy as np

from nordicstats.solvers.l1svm_path import (
    _L,
    _OFF,
    _R,
    FOLLOWED,
    INFEASIBLE,
    MAX_ZERO_STEPS,
    PIVOT_TOL,
    REFACTOR_EVERY,
    SINGULAR,
    STALLED,
    STEP_LIMIT,
    UNBOUNDED_EDGE,
    _basic_mu,
    _build_inverse,
    _combine_rows,
    _dual_side,
    _edge_direction,
    _edge_length,
    _matvec,
    _matvec_t,
    _move_point,
    _next_breakpoint,
    _pivot,
    basis_arrays,
    margin_perturbation,
    path_end,
)

__all__ = ["follow_margin_path"]


def follow_margin_path(Z, ZT, y, u, margins, point_status, active, sign, moves, targets,
                       max_steps=None, perturbation=0.0):
    """Follow the LP's optimum as the margins of some constraints move (sign rows switched).

    The branch and bound (:mod:`nordicstats.solvers.lazy_mip`) changes one boundary's LP
    by a sign row ``s f(x_i) >= h`` (a side of NORDIC-2's disjunctions, paper eqs.
    cond1-cond2) switched on (or off) on an LP whose optimum it knows.  A sign row is one
    more "point" of the L1-SVM LP (:mod:`nordicstats.solvers.l1svm_path`), with label s,
    margin h and an
    unbounded multiplier (u = inf; it is never in L).  Switched on, its margin starts
    where the row is tight at the current vertex, h_0 = s f(x_i), and rises to h: the
    primal vertex moves linearly (M' (db, dtheta_A) = e_k while the row is in E) and
    the dual stays, until a point of R or L reaches its margin or an active theta_j
    reaches 0.  There the dual moves along the edge that takes that constraint into the
    basis (a dual simplex pivot with a zero objective change; the ratio test over mu_E's
    boxes, the inactive ``|s_j| <= 1`` and the entering variable's own box) -- the
    parametric right-hand side, the cost path
    (:func:`~nordicstats.solvers.l1svm_path.follow_cost_path`) with primal and dual
    exchanged.  Switched off (target -inf), a row on the margin has its margin
    lowered until a pivot takes its multiplier to 0 (the LP's value is convex in h with
    slope nu, bounded below, so this happens); a row off the margin simply goes.

    Parameters
    ----------
    Z : ndarray of shape (N, p)
        Rows of the n points, then one per sign row (Z_i of its point); rows of unused
        entries are ignored (status 3).
    ZT : ndarray of shape (p, N)
        Z transposed, C-contiguous.
    y, u, margins : ndarray of shape (N,)
        Labels (s for a sign row), slack costs (inf for a sign row) and margins (1 for a
        point, h for a sign row; the moved rows' entries are replaced).
    point_status : ndarray of int, shape (N,)
        An optimal basis of the LP before the moves: 0 (R), 1 (L), 2 (E), 3 (a sign row
        switched off); ``|{status 2}| == len(active) + 1``.
    active, sign : array_like
        A and sigma, as in :func:`~nordicstats.solvers.l1svm_path.follow_cost_path`.
    moves : array_like of int
        Sign rows to move, in this order (switched off first is cheaper).
    targets : array_like of float
        Their margins h, or -inf to switch the row off.
    max_steps : int, optional
        Most primal breakpoints (default n + p).
    perturbation : float, default=0.0
        The nonbasic constraints' margins are moved by
        :func:`~nordicstats.solvers.l1svm_path.margin_perturbation` of this size (ties
        among points on the margin broken, as on the cost path).

    Returns
    -------
    PathEnd
        ``lam`` is 1; ``point_status`` covers the N entries (3: switched off);
        ``INFEASIBLE`` when a dual ray shows that a row's margin cannot reach its target.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0], [1.0]])   # the 5th: a sign row at x = 1
    >>> y, u = np.array([-1.0, -1.0, 1.0, 1.0, 1.0]), np.array([10.0] * 4 + [np.inf])
    >>> margins = np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    >>> start = np.array([0, 2, 2, 0, 3])    # the optimum theta = 2, b = -3 at u = 10
    >>> end = follow_margin_path(Z, np.ascontiguousarray(Z.T), y, u, margins, start, [0], [1.0],
    ...                          [4], [0.0])    # switch f(x_5) >= 0 on
    >>> end.status, end.theta.round(6).tolist(), round(end.b, 6)
    (0, [1.0], -1.0)
    """
    Z = np.ascontiguousarray(Z, dtype=float)
    N, p = Z.shape
    status, E, A, sigma, m = basis_arrays(point_status, active, sign, N, p)
    r_true = np.asarray(margins, dtype=float).copy()
    r = r_true + margin_perturbation(status, perturbation)
    out, theta_A = np.zeros(3), np.zeros(E.size)
    try:
        code, m = _follow_margins(Z, np.ascontiguousarray(ZT, dtype=float),
                                  np.asarray(y, dtype=float), np.asarray(u, dtype=float), r,
                                  r_true, status, E, A, sigma, m,
                                  np.asarray(moves, dtype=np.int64),
                                  np.asarray(targets, dtype=float),
                                  int(max_steps or N + p), theta_A, out)
    except np.linalg.LinAlgError:  # M singular at a refactorisation
        code, m = SINGULAR, 1
    return path_end(code, m, out, status, E, A, sigma, theta_A, p)


# --- compiled core -------------------------------------------------------------------------
@numba.njit(cache=True)
def _refresh(Z, ZT, y, E, A, sigma, m, Minv, g, ylu, r, vectors, s, ds, f):
    """M's inverse, s = Z'Y mu and f = Z theta + b of the (perturbed) vertex, afresh."""
    mu_E, dmu, rhs, drhs, x, work, r_E = (vectors[0], vectors[1], vectors[2], vectors[3],
                                          vectors[4], vectors[6], vectors[7])
    _build_inverse(Z, y, E, A, m, Minv)
    _dual_side(Z, y, E, A, sigma, m, Minv, g, ylu, 1.0, mu_E, dmu, rhs, drhs, work, s, ds, True)
    for t in range(m):
        r_E[t] = r[E[t]]
    _matvec_t(Minv, m, r_E, x)
    _combine_rows(ZT, A, x[1:m], m - 1, f)
    f += x[0]


@numba.njit(cache=True)
def _dual_edge(Z, y, status, E, A, sigma, m, Minv, block, blocking_point, dmu, ds, work):
    """The dual's direction when the primal's constraint ``block`` becomes tight.

    A point reaching its margin enters E: its mu leaves its bound (up from 0 for R, down
    from u for L) and mu_E compensates, dmu_E = -M^-1 a_j (a_j = (y_j, y_j Z_{j,A}));
    an active theta_q reaching 0 frees its dual row: s_q moves from sigma_q towards
    -sigma_q, dmu_E = -sigma_q M^-1 e_q.  ds = Z' Y dmu over all coordinates.
    """
    if blocking_point:
        j = block
        enter = 1.0 if status[j] == _R else -1.0
        work[0] = y[j]
        for q in range(1, m):
            work[q] = y[j] * Z[j, A[q - 1]]
        _matvec(Minv, m, work, dmu)
        for t in range(m):
            dmu[t] *= -enter
            work[t] = y[E[t]] * dmu[t]
        _combine_rows(Z, E, work, m, ds)
        for c in range(ds.size):
            ds[c] += enter * y[j] * Z[j, c]
        return
    delta = -sigma[block - 1]
    for t in range(m):
        dmu[t] = delta * Minv[t, block]
        work[t] = y[E[t]] * dmu[t]
    _combine_rows(Z, E, work, m, ds)


@numba.njit(cache=True)
def _follow_margins(Z, ZT, y, u, r, r_true, status, E, A, sigma, m, moves, targets, max_steps,
                    theta_A, out):
    """Move the margins r[moves[c]] to targets[c] one after the other (-inf: switch off)."""
    p = Z.shape[1]
    capacity = E.size
    Minv = np.zeros((capacity, capacity))
    yu = y * u
    g = np.zeros(p)
    ylu = 0.0
    for i in range(Z.shape[0]):
        if status[i] == _L:
            ylu = _move_point(Z, yu, g, ylu, i, 1.0)
    in_A = np.zeros(p, dtype=np.bool_)
    for q in range(m - 1):
        in_A[A[q]] = True
    s, ds, f, df = np.zeros(p), np.zeros(p), np.zeros(Z.shape[0]), np.zeros(Z.shape[0])
    vectors = np.zeros((8, capacity))
    mu_E, dmu, rhs, x, d, work, r_E = (vectors[0], vectors[1], vectors[2], vectors[4],
                                       vectors[5], vectors[6], vectors[7])
    code, steps, zero_moves = FOLLOWED, 0, 0
    z_max = np.abs(Z).max()
    _refresh(Z, ZT, y, E, A, sigma, m, Minv, g, ylu, r, vectors, s, ds, f)
    since_refresh = 0
    for c in range(moves.size):
        k, target = moves[c], targets[c]
        switch_off = target == -np.inf
        if not switch_off:  # the row starts tight where the vertex is, nonbasic
            if status[k] == _OFF:
                status[k] = _R
            r[k] = y[k] * f[k]
            if r[k] >= target:  # already satisfied: nothing moves
                r[k], r_true[k] = target, target
                continue
        direction = -1.0 if switch_off else 1.0
        while code == FOLLOWED:
            if since_refresh >= REFACTOR_EVERY:
                _refresh(Z, ZT, y, E, A, sigma, m, Minv, g, ylu, r, vectors, s, ds, f)
                since_refresh = 0
            pos = -1
            for t in range(m):
                if E[t] == k:
                    pos = t
            if switch_off and pos < 0:  # its multiplier reached 0: the row goes
                status[k] = _OFF
                break
            remaining = np.inf if switch_off else target - r[k]
            if pos < 0:  # k nonbasic (R): it blocks where it is tight
                edge, block, blocking_point = max(y[k] * f[k] - r[k], 0.0), k, True
                if edge >= remaining:
                    r[k] = target
                    break
            else:  # the vertex moves with k's margin: M' dx = direction e_pos
                for t in range(m):
                    r_E[t] = r[E[t]]
                _matvec_t(Minv, m, r_E, x)
                _edge_direction(Z, ZT, y, E, A, m, Minv, 2 if switch_off else 1, pos,
                                s, d, df, work)
                edge, block, blocking_point = _edge_length(y, f, df, r, status, -1, sigma, x, d,
                                                           m)
                if edge >= remaining:
                    f += remaining * df
                    r[k] = target
                    break
                if block < 0:
                    code = UNBOUNDED_EDGE
                    break
                f += edge * df
            r[k] += direction * edge
            zero_moves = zero_moves + 1 if edge <= 1e-15 else 0
            steps += 1
            if zero_moves > MAX_ZERO_STEPS:
                code = STALLED
            elif steps > max_steps:
                code = STEP_LIMIT
            if code != FOLLOWED:
                break
            # a dual pivot at the primal breakpoint: the tight constraint enters the basis
            _basic_mu(A, sigma, m, Minv, g, ylu, 1.0, mu_E, rhs)
            _dual_edge(Z, y, status, E, A, sigma, m, Minv, block, blocking_point, dmu, ds, work)
            flip = u[block] if blocking_point else 2.0  # mu_j across its box, s_q to -sigma_q
            terms = z_max * (np.abs(dmu[:m]).sum() + (1.0 if blocking_point else 0.0))
            step, kind, who = _next_breakpoint(E, m, u, 1.0, 0.0, flip, mu_E, dmu, s, ds, in_A,
                                               terms)
            if kind == 0 and step == np.inf:  # a dual ray: no larger margin is feasible
                code = INFEASIBLE
                break
            s += step * ds
            if kind == 0:  # a bound flip: mu_j from 0 to u_j (or back), or theta_q's sign
                if blocking_point:
                    enters_L = status[block] == _R
                    status[block] = _L if enters_L else _R
                    ylu = _move_point(Z, yu, g, ylu, block, 1.0 if enters_L else -1.0)
                else:
                    sigma[block - 1] = -sigma[block - 1]
                continue
            sig = 1.0 if kind == 3 and s[who] > 0.0 else -1.0
            leaving = E[who] if kind != 3 else -1
            pivot, m, ylu = _pivot(Z, ZT, y, yu, status, E, A, sigma, m, Minv, in_A, g, ylu,
                                   kind, who, sig, leaving, block, blocking_point, work)
            if abs(pivot) < PIVOT_TOL:
                code = SINGULAR
                break
            since_refresh += 1
        r_true[k] = r[k] if not switch_off else r_true[k]
        if code != FOLLOWED:
            break
    for t in range(m):
        r_E[t] = r_true[E[t]]
    _matvec_t(Minv, m, r_E, x)  # the end basis's vertex on the LP's own margins
    theta_A[:m - 1] = x[1:m]
    out[0], out[1], out[2] = 1.0, x[0], steps
    return code, m
