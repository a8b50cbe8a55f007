"""The L1-SVM LP's solution path in its slack costs, followed by parametric pivots (numba).

For one boundary's L1-SVM LP (:mod:`nordicstats.solvers.l1svm_lp`, no sign rows) with
slack costs lambda * u::

    min  ||theta||_1 + lambda u'xi   s.t.  y_i (Z_i theta + b) + xi_i >= 1,  xi >= 0,

the optimal theta and b are piecewise constant in lambda and the dual's mu piecewise
linear (the LP is parametric in its costs; the 1-norm SVM path of Zhu, Rosset, Hastie
and Tibshirani, NIPS 2003, in the parameter C = lambda).  A basis of the dual LP
(:mod:`nordicstats.solvers.l1svm_lp`) is, in the primal's words,

* A, the active coordinates theta_j (dual rows tight, (Z'Y mu)_j = sigma_j = +-1),
* E, the elbow points (y_i f(x_i) = 1, mu_i free in [0, lambda u_i]), ``|E| = |A| + 1``,
* L (y_i f(x_i) < 1, mu_i = lambda u_i) and R (y_i f(x_i) > 1, mu_i = 0),

and the square matrix M = [y_E'; (Y_E Z_{E,A})'] (rows b and A, columns E) gives both
sides of the vertex::

    M' (b, theta_A) = 1,        M mu_E = (0, sigma) - lambda (y_L'u_L, Z_{L,A}'Y_L u_L).

As lambda grows mu_E and s = Z'Y mu move linearly.  A breakpoint is reached when an
elbow mu_i reaches 0 or lambda u_i (the point leaves E for R or L) or an inactive
``|s_j|`` reaches 1 (theta_j enters A with the sign of s_j).  Each is one pivot of the dual
simplex: the primal moves along the edge that frees that constraint (y_i f(x_i) up for
R, down for L; theta_j away from 0) until a point of L or R reaches the elbow (it joins
E) or an active theta reaches 0 (it leaves A).  M's inverse is kept by rank-one updates
(column or row replaced, bordered, or a row and a column removed), ``O(|A|^2)`` a pivot,
and is refactorised every ``REFACTOR_EVERY`` pivots; s and f are refreshed then too.
A breakpoint costs two combinations of ``|A|`` rows of Z (s's and f's slopes),
``O(n |A|)``.

The path is started from an optimal basis at a smaller lambda (HiGHS's,
:meth:`~nordicstats.solvers.l1svm_lp.BoundaryLP.solve`) and stops at the target.
A degenerate start -- more points on the margin than the ``|A| + 1`` of E, e.g. theta = 0
with a whole class at y f = 1 -- makes edges of length zero, and the plain path bounces
among the tied points until it gives up.  With ``perturbation`` it follows the LP whose
margins are y_i f(x_i) >= 1 + eps_i, the eps_i chosen so that the start stays optimal
and every nonbasic point strictly feasible (:func:`margin_perturbation`): ties are
broken, the edges have nonzero length, and the end basis is read back on the LP itself
(its vertex with margins 1; HiGHS confirms it, or goes on from it if the perturbation
moved an end point across its margin).  It gives up (status other than ``FOLLOWED``)
on a run of zero-length steps (ties among degenerate pivots; with the perturbation,
a point that drifted across its moved margin in the incremental updates of f), an edge
without a blocking constraint, a pivot near zero or too many pivots; the caller then
solves the LP by the dual simplex as before.  The end basis is checked afresh on the
LP itself (:mod:`nordicstats.solvers.l1svm_certificate`) and handed to HiGHS to confirm
only when that check fails (``docs/notes/scaling.md``).

The branch and bound's re-solves follow the same basis along another parameter, the
margin of a sign row, with this module's pivots (:mod:`nordicstats.solvers.l1svm_margin_path`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["PathEnd", "follow_cost_path", "margin_perturbation", "FOLLOWED", "STALLED",
           "UNBOUNDED_EDGE", "SINGULAR", "STEP_LIMIT", "INFEASIBLE", "REFACTOR_EVERY",
           "MAX_ZERO_STEPS", "STATUS_TEXT"]

FOLLOWED, STALLED, UNBOUNDED_EDGE, SINGULAR, STEP_LIMIT, INFEASIBLE = 0, 1, 2, 3, 4, 5
STATUS_TEXT = {FOLLOWED: "followed", STALLED: "stalled", UNBOUNDED_EDGE: "unbounded edge",
               SINGULAR: "singular pivot", STEP_LIMIT: "step limit",
               INFEASIBLE: "infeasible margin"}
#: Pivots between refactorisations of M and fresh s = Z'Y mu and f = Z theta + b.
REFACTOR_EVERY = 100
#: Consecutive zero-length steps after which the path gives up (degenerate ties).
MAX_ZERO_STEPS = 50
#: Rates below this (relative to the largest) do not move a constraint.
RATE_TOL = 1e-11
#: A pivot element below this (relative) makes the path give up.
PIVOT_TOL = 1e-10
_R, _L, _E, _OFF = 0, 1, 2, 3  # point status codes (_OFF: a sign row switched off)


@dataclass(frozen=True)
class PathEnd:
    """End point of :func:`follow_cost_path` (a basis of the dual LP at ``lam``).

    Attributes
    ----------
    status : int
        ``FOLLOWED`` when ``lam`` is the target; otherwise why the path gave up.
    lam : float
        The cost multiplier reached.
    steps : int
        Breakpoints passed (pivots).
    point_status : ndarray of int8, shape (n,)
        0 (R: mu = 0), 1 (L: mu = lam u), 2 (E: basic mu).
    elbow, active : ndarray of int
        E and A in the order of M's columns and rows.
    sign : ndarray of shape (n_active,)
        sigma_j = (Z'Y mu)_j for j in A (n_active = ``len(active)``).
    theta : ndarray of shape (p,)
    b : float
    """

    status: int
    lam: float
    steps: int
    point_status: np.ndarray
    elbow: np.ndarray
    active: np.ndarray
    sign: np.ndarray
    theta: np.ndarray
    b: float

    @property
    def followed(self):
        return self.status == FOLLOWED


def follow_cost_path(Z, y, u, lam_start, lam_end, point_status, active, sign,
                     max_steps=None, perturbation=0.0):
    """Follow the L1-SVM LP's optimum from slack costs ``lam_start u`` to ``lam_end u``.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        f(x_i) = Z_i theta + b.
    y : ndarray of shape (n,)
        Signs in {-1, +1}.
    u : ndarray of shape (n,)
        Slack costs at lambda = 1 (positive).
    lam_start, lam_end : float
        0 < lam_start <= lam_end.
    point_status : ndarray of int, shape (n,)
        An optimal basis at ``lam_start``: 0 (mu_i = 0), 1 (mu_i = lam_start u_i),
        2 (mu_i basic); ``|{i: status 2}| == len(active) + 1``.
    active, sign : array_like
        A (dual rows at a bound) and their bounds sigma_j = +-1.
    max_steps : int, optional
        Most pivots (default 20 (n + p)).
    perturbation : float, default=0.0
        Follow the path of the LP whose margins are moved to ``y_i f(x_i) >= 1 + eps_i``
        (:func:`margin_perturbation`, of this size) instead of 1: ties among points on
        the margin (a degenerate start) are broken, and the end basis is that of the
        perturbed LP; ``theta`` and ``b`` are the end basis's vertex without it.

    Returns
    -------
    PathEnd

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> start = np.array([1, 2, 1, 1])      # at lambda = 0.1: theta = 0, b = -1
    >>> end = follow_cost_path(Z, y, np.ones(4), 0.1, 10.0, start, [], [])
    >>> end.status, end.theta.round(6).tolist(), round(end.b, 6)
    (0, [2.0], -3.0)
    """
    Z = np.ascontiguousarray(Z, dtype=float)
    n, p = Z.shape
    ZT = Z if n == p and np.array_equal(Z, Z.T) else np.ascontiguousarray(Z.T)
    status, E, A, sigma, m = basis_arrays(point_status, active, sign, n, p)
    out = np.zeros(3)  # lam reached, b, steps
    theta_A = np.zeros(E.size)
    try:
        margins = 1.0 + margin_perturbation(status, perturbation)
        code, m = _follow(Z, ZT, np.asarray(y, dtype=float), np.asarray(u, dtype=float),
                          margins, float(lam_start), float(lam_end), status, E, A, sigma,
                          m, int(max_steps or 20 * (n + p)), theta_A, out)
    except np.linalg.LinAlgError:  # M singular at a refactorisation
        code, m = SINGULAR, 1
    return path_end(code, m, out, status, E, A, sigma, theta_A, p)


def basis_arrays(point_status, active, sign, n, p):
    """Working arrays of a basis given by its point statuses and active coordinates.

    A basis of the L1-SVM LP holds ``|E| = |A| + 1`` elbow points (status ``E``) and the
    active coordinates A with their signs sigma; the arrays are sized for the largest
    basis, ``min(n, p + 1) + 1``, so that pivots can grow them in place.

    Returns
    -------
    status : ndarray of int8, shape (n,)
        A copy of ``point_status``.
    E, A : ndarray of int64
        The elbow points and the active coordinates, in the first ``m`` and ``m - 1``
        entries.
    sigma : ndarray of float
        The signs of the active coordinates, in the first ``m - 1`` entries.
    m : int
        The size of the basis, ``|E|``.
    """
    status = np.asarray(point_status, dtype=np.int8).copy()
    elbow = np.flatnonzero(status == _E)
    active = np.asarray(active, dtype=np.int64)
    if elbow.size != active.size + 1:
        raise ValueError(f"a basis needs |E| = |A| + 1 elbow points; got {elbow.size} and "
                         f"{active.size} active coordinates")
    capacity = min(n, p + 1) + 1
    E = np.zeros(capacity, dtype=np.int64)
    A = np.zeros(capacity, dtype=np.int64)
    sigma = np.zeros(capacity)
    E[:elbow.size], A[:active.size] = elbow, active
    sigma[:active.size] = np.asarray(sign, dtype=float)
    return status, E, A, sigma, int(elbow.size)


def path_end(code, m, out, status, E, A, sigma, theta_A, p):
    """The :class:`PathEnd` of a compiled path: its status, basis of size ``m`` and vertex.

    ``out`` holds the parameter reached, the intercept b and the number of steps;
    ``theta_A`` the coefficients of the active coordinates, spread here into theta.
    """
    theta = np.zeros(p)
    theta[A[:m - 1]] = theta_A[:m - 1]
    return PathEnd(int(code), float(out[0]), int(out[2]), status, E[:m].copy(),
                   A[:m - 1].copy(), sigma[:m - 1].copy(), theta, float(out[1]))


def margin_perturbation(point_status, size):
    """Margins eps_i of a perturbed LP for which the basis ``point_status`` stays optimal.

    A degenerate vertex has more points on the margin (y_i f(x_i) = 1) than the ``|A| + 1``
    of its basis: at theta = 0 every point of the larger side.  Moving the margin of
    the nonbasic points away from their side, eps_i = -size w_i for mu_i = 0 (R) and
    eps_i = +size w_i for mu_i at its bound (L), with distinct w_i in [1, 2) and
    eps_i = 0 on E, keeps the vertex (fixed by E) and makes it strictly feasible for
    every other point; the dual does not depend on the margins, so the basis stays
    optimal, and edges of the perturbed LP have nonzero length (lexicographic
    perturbation, as in Charnes' rule against cycling).

    Parameters
    ----------
    point_status : ndarray of int, shape (n,)
        0 (R), 1 (L), 2 (E).
    size : float
        Size of the perturbation (0 for none).

    Returns
    -------
    ndarray of shape (n,)
        eps_i; w_i = 1 + frac(i phi) (phi the golden ratio): distinct and deterministic.

    Examples
    --------
    >>> (margin_perturbation([0, 1, 2, 0], 1e-6) / 1e-6).round(3).tolist()
    [-1.0, 1.618, 0.0, -1.854]
    """
    status = np.asarray(point_status)
    weights = 1.0 + np.mod(np.arange(status.size) * 0.6180339887498949, 1.0)
    side = np.where(status == _R, -1.0, np.where(status == _L, 1.0, 0.0))
    return size * weights * side


# --- compiled core -------------------------------------------------------------------------
@numba.njit(cache=True)
def _combine_rows(Z, rows, weights, count, out):
    """out = sum_t weights[t] Z[rows[t], :] (rows of a C-contiguous matrix)."""
    out[:] = 0.0
    for t in range(count):
        w = weights[t]
        if w != 0.0:
            r = rows[t]
            for j in range(Z.shape[1]):
                out[j] += w * Z[r, j]


@numba.njit(cache=True)
def _matvec(Minv, m, v, out):
    """out[:m] = Minv[:m, :m] @ v[:m]."""
    for i in range(m):
        total = 0.0
        for k in range(m):
            total += Minv[i, k] * v[k]
        out[i] = total


@numba.njit(cache=True)
def _matvec_t(Minv, m, v, out):
    """out[:m] = Minv[:m, :m].T @ v[:m]."""
    out[:m] = 0.0
    for i in range(m):
        w = v[i]
        if w != 0.0:
            for k in range(m):
                out[k] += Minv[i, k] * w


@numba.njit(cache=True)
def _build_inverse(Z, y, E, A, m, Minv):
    """Minv[:m, :m] = inverse of M = [y_E'; (Y_E Z_{E,A})'] (LinAlgError if singular)."""
    M = np.empty((m, m))
    for c in range(m):
        e = E[c]
        M[0, c] = y[e]
        for q in range(1, m):
            M[q, c] = y[e] * Z[e, A[q - 1]]
    Minv[:m, :m] = np.linalg.inv(M)


@numba.njit(cache=True)
def _replace_column(Minv, m, r, a):
    """Column r of M becomes a (Sherman-Morrison); returns the pivot element."""
    w = np.empty(m)
    _matvec(Minv, m, a, w)
    pivot = w[r]
    if pivot == 0.0:
        return 0.0
    for k in range(m):
        Minv[r, k] /= pivot
    for i in range(m):
        if i != r and w[i] != 0.0:
            factor = w[i]
            for k in range(m):
                Minv[i, k] -= factor * Minv[r, k]
    return pivot


@numba.njit(cache=True)
def _replace_row(Minv, m, q, h):
    """Row q of M becomes h (column q of M', whose inverse is Minv'); returns the pivot."""
    return _replace_column(Minv.T, m, q, h)


@numba.njit(cache=True)
def _border(Minv, m, a, h, corner):
    """M grows by a column a (old rows), a row h (old columns) and the corner entry."""
    Ma, hM = np.empty(m), np.empty(m)
    _matvec(Minv, m, a, Ma)
    _matvec_t(Minv, m, h, hM)
    schur = corner - np.dot(h, Ma)
    if schur == 0.0:
        return 0.0
    for i in range(m):
        for k in range(m):
            Minv[i, k] += Ma[i] * hM[k] / schur
        Minv[i, m] = -Ma[i] / schur
        Minv[m, i] = -hM[i] / schur
    Minv[m, m] = 1.0 / schur
    return schur


@numba.njit(cache=True)
def _remove(Minv, m, r, q):
    """M loses column r and row q; the last column and row take their places.

    Returns the pivot element Minv[r, q] (removing row q and column r of M is
    removing row r and column q of its inverse, by a Schur complement).
    """
    last = m - 1
    for k in range(m):  # swap row r with the last row and column q with the last column
        Minv[r, k], Minv[last, k] = Minv[last, k], Minv[r, k]
    for i in range(m):
        Minv[i, q], Minv[i, last] = Minv[i, last], Minv[i, q]
    pivot = Minv[last, last]
    if pivot == 0.0:
        return 0.0
    for i in range(last):
        f = Minv[i, last] / pivot
        if f != 0.0:
            for k in range(last):
                Minv[i, k] -= f * Minv[last, k]
    return pivot


@numba.njit(cache=True)
def _basic_mu(A, sigma, m, Minv, g, ylu, lam, mu_E, rhs):
    """mu_E = M^-1 ((0, sigma) - lam (y_L'u_L, Z_{L,A}'Y_L u_L)) (g = Z'Y_L u_L)."""
    rhs[0] = -lam * ylu
    for q in range(1, m):
        rhs[q] = sigma[q - 1] - lam * g[A[q - 1]]
    _matvec(Minv, m, rhs, mu_E)


@numba.njit(cache=True)
def _dual_side(Z, y, E, A, sigma, m, Minv, g, ylu, lam, mu_E, dmu, rhs, drhs, work, s, ds,
               fresh):
    """mu_E(lam) and its slope, the slope of s = Z'Y mu (and s itself when ``fresh``)."""
    _basic_mu(A, sigma, m, Minv, g, ylu, lam, mu_E, rhs)
    drhs[0] = -ylu
    for q in range(1, m):
        drhs[q] = -g[A[q - 1]]
    _matvec(Minv, m, drhs, dmu)
    for t in range(m):
        work[t] = y[E[t]] * dmu[t]
    _combine_rows(Z, E, work, m, ds)
    ds += g
    if fresh:
        for t in range(m):
            work[t] = y[E[t]] * mu_E[t]
        _combine_rows(Z, E, work, m, s)
        s += lam * g


@numba.njit(cache=True)
def _next_breakpoint(E, m, u, lam, bound_rate, max_step, mu_E, dmu, s, ds, in_A, ds_floor):
    """(step, kind, who) along mu_E + step dmu and s + step ds, the bounds of mu_E at
    (lam + step bound_rate) u: kind 0 ``max_step``, 1 mu_E[who] reaches 0, 2 its bound,
    3 |s_who| reaches 1.  ``bound_rate`` is 1 on the cost path (lam is the parameter)
    and 0 along a dual edge (fixed bounds, possibly infinite).  Rates of s below
    ``RATE_TOL`` times the largest (at least ``ds_floor``, the size of ds's terms: they
    may cancel to rounding) do not move it."""
    step, kind, who = max_step, 0, -1
    scale = 1e-300
    for t in range(m):
        scale = max(scale, abs(dmu[t]))
        if bound_rate != 0.0:
            scale = max(scale, u[E[t]])
    for t in range(m):
        e = E[t]
        rate = dmu[t] - bound_rate * u[e] if bound_rate != 0.0 else dmu[t]
        if dmu[t] < -RATE_TOL * scale:
            cand = max(-mu_E[t] / dmu[t], 0.0)
            if cand < step:
                step, kind, who = cand, 1, t
        elif rate > RATE_TOL * scale:
            cand = max((lam * u[e] - mu_E[t]) / rate, 0.0)
            if cand < step:
                step, kind, who = cand, 2, t
    ds_scale = max(1e-300, ds_floor)
    for j in range(ds.size):
        ds_scale = max(ds_scale, abs(ds[j]))
    for j in range(ds.size):
        if in_A[j]:
            continue
        if ds[j] > RATE_TOL * ds_scale:
            cand = max((1.0 - s[j]) / ds[j], 0.0)
        elif ds[j] < -RATE_TOL * ds_scale:
            cand = max((-1.0 - s[j]) / ds[j], 0.0)
        else:
            continue
        if cand < step:
            step, kind, who = cand, 3, j
    return step, kind, who


@numba.njit(cache=True)
def _edge_direction(Z, ZT, y, E, A, m, Minv, kind, who, s, d, df, work):
    """d = (db, dtheta_A) and df = Z dtheta + db along the edge that frees the breakpoint's
    constraint; returns (sigma of an entering theta, the point leaving E or -1)."""
    sig, leaving = 0.0, -1
    if kind == 3:  # theta_who enters with the sign of s_who, the elbow stays on the margin
        sig = 1.0 if s[who] > 0.0 else -1.0
        for t in range(m):
            work[t] = -sig * y[E[t]] * ZT[who, E[t]]
        _matvec_t(Minv, m, work, d)
    else:  # point E[who] leaves the margin: y f up (to R) or down (to L)
        tau = 1.0 if kind == 1 else -1.0
        for q in range(m):
            d[q] = tau * Minv[who, q]
        leaving = E[who]
    _combine_rows(ZT, A, d[1:], m - 1, df)
    df += d[0]
    if kind == 3:
        for i in range(df.size):
            df[i] += sig * Z[i, who]
    return sig, leaving


@numba.njit(cache=True)
def _edge_length(y, f, df, r, status, leaving, sigma, x, d, m):
    """(length, block, True if a point blocks / False if theta_A[block - 1] reaches 0);
    point i reaches the margin at y_i f_i = r_i."""
    df_scale = 1e-300
    for i in range(df.size):
        df_scale = max(df_scale, abs(df[i]))
    edge, block, blocking_point = np.inf, -1, True
    for i in range(df.size):
        if status[i] == _E or i == leaving:
            continue
        rate = y[i] * df[i]
        if (status[i] == _L and rate > RATE_TOL * df_scale) or \
                (status[i] == _R and rate < -RATE_TOL * df_scale):
            cand = max(-(y[i] * f[i] - r[i]) / rate, 0.0)
            if cand < edge:
                edge, block = cand, i
    d_scale = 1e-300
    for q in range(1, m):
        d_scale = max(d_scale, abs(d[q]))
    for q in range(1, m):
        if sigma[q - 1] * d[q] < -RATE_TOL * d_scale:
            cand = max(-x[q] / d[q], 0.0)
            if cand < edge:
                edge, block, blocking_point = cand, q, False
    return edge, block, blocking_point


@numba.njit(cache=True)
def _move_point(Z, yu, g, ylu, i, sign):
    """g, y_L'u_L with point i put into (sign +1) or taken out of (-1) L; returns ylu."""
    for j in range(g.size):
        g[j] += sign * yu[i] * Z[i, j]
    return ylu + sign * yu[i]


@numba.njit(cache=True)
def _pivot(Z, ZT, y, yu, status, E, A, sigma, m, Minv, in_A, g, ylu, kind, who, sig, leaving,
           block, blocking_point, work):
    """The sets and M's inverse after the pivot; returns (pivot element, |E|, y_L'u_L)."""
    if leaving >= 0:
        status[leaving] = _R if kind == 1 else _L
        if kind == 2:
            ylu = _move_point(Z, yu, g, ylu, leaving, 1.0)
    if not blocking_point:
        q = block
        in_A[A[q - 1]] = False
        if leaving >= 0:  # the point and theta_q leave: M shrinks
            pivot = _remove(Minv, m, who, q)
            E[who] = E[m - 1]
            A[q - 1], sigma[q - 1] = A[m - 2], sigma[m - 2]
            return pivot, m - 1, ylu
        for t in range(m):  # theta_who replaces theta_q
            work[t] = y[E[t]] * ZT[who, E[t]]
        pivot = _replace_row(Minv, m, q, work[:m].copy())
        A[q - 1], sigma[q - 1] = who, sig
        in_A[who] = True
        return pivot, m, ylu
    k = block
    if status[k] == _L:
        ylu = _move_point(Z, yu, g, ylu, k, -1.0)
    status[k] = _E
    work[0] = y[k]
    for q in range(1, m):
        work[q] = y[k] * Z[k, A[q - 1]]
    if leaving >= 0:  # column of the leaving point replaced by k's
        pivot = _replace_column(Minv, m, who, work[:m].copy())
        E[who] = k
        return pivot, m, ylu
    h = np.empty(m)  # theta_who and point k enter: M is bordered
    for t in range(m):
        h[t] = y[E[t]] * ZT[who, E[t]]
    pivot = _border(Minv, m, work[:m].copy(), h, y[k] * Z[k, who])
    E[m], A[m - 1], sigma[m - 1] = k, who, sig
    in_A[who] = True
    return pivot, m + 1, ylu


@numba.njit(cache=True)
def _follow(Z, ZT, y, u, r, lam, lam_end, status, E, A, sigma, m, max_steps, theta_A, out):
    n, p = Z.shape
    capacity = E.size
    Minv = np.zeros((capacity, capacity))
    yu = y * u
    g = np.zeros(p)  # Z' Y_L u_L and y_L'u_L, updated as points enter and leave L
    ylu = 0.0
    for i in range(n):
        if status[i] == _L:
            ylu = _move_point(Z, yu, g, ylu, i, 1.0)
    in_A = np.zeros(p, dtype=np.bool_)
    for q in range(m - 1):
        in_A[A[q]] = True
    s, ds, f, df = np.zeros(p), np.zeros(p), np.zeros(n), np.zeros(n)
    vectors = np.zeros((8, capacity))  # over the basis: mu_E, slopes, (b, theta_A), ...
    mu_E, dmu, rhs, drhs, x, d, work, r_E = (vectors[0], vectors[1], vectors[2], vectors[3],
                                             vectors[4], vectors[5], vectors[6], vectors[7])
    ones = np.ones(capacity)
    code, steps, zero_steps, zero_edges, since_refresh = STEP_LIMIT, 0, 0, 0, REFACTOR_EVERY
    while steps <= max_steps:
        fresh = since_refresh >= REFACTOR_EVERY
        if fresh:
            _build_inverse(Z, y, E, A, m, Minv)
            since_refresh = 0
        _dual_side(Z, y, E, A, sigma, m, Minv, g, ylu, lam, mu_E, dmu, rhs, drhs, work, s, ds,
                   fresh)
        step, kind, who = _next_breakpoint(E, m, u, lam, 1.0, lam_end - lam, mu_E, dmu, s, ds,
                                            in_A, 0.0)
        lam += step
        s += step * ds
        if kind == 0:
            lam, code = lam_end, FOLLOWED
            break
        steps += 1
        zero_steps = zero_steps + 1 if step <= 1e-15 * lam else 0
        if zero_steps > MAX_ZERO_STEPS:
            code = STALLED
            break
        for t in range(m):
            r_E[t] = r[E[t]]
        _matvec_t(Minv, m, r_E, x)  # the (perturbed) vertex (b, theta_A): M' x = r_E
        if fresh:  # fresh f = Z theta + b
            _combine_rows(ZT, A, x[1:m], m - 1, f)
            f += x[0]
        sig, leaving = _edge_direction(Z, ZT, y, E, A, m, Minv, kind, who, s, d, df, work)
        edge, block, blocking_point = _edge_length(y, f, df, r, status, leaving, sigma, x, d, m)
        if block < 0:
            code = UNBOUNDED_EDGE
            break
        zero_edges = zero_edges + 1 if edge <= 1e-15 else 0
        if zero_edges > MAX_ZERO_STEPS:  # a degenerate vertex: many points on the elbow
            code = STALLED
            break
        f += edge * df
        pivot, m, ylu = _pivot(Z, ZT, y, yu, status, E, A, sigma, m, Minv, in_A, g, ylu, kind,
                               who, sig, leaving, block, blocking_point, work)
        if abs(pivot) < PIVOT_TOL:
            code = SINGULAR
            break
        since_refresh += 1
    _matvec_t(Minv, m, ones, x)  # the end basis's vertex without the perturbation
    theta_A[:m - 1] = x[1:m]
    out[0], out[1], out[2] = lam, x[0], steps
    return code, m
