"""Compiled inner loop of the SMO solver (:mod:`nordicstats.solvers.smo`), with numba.

The dual solved (paper, Section 3.3; the separate intercept form of NORDIC-1 and,
with no phi and no gamma, the K-1 BSVM duals) is::

    min  D = 1/2 sum_k omega_k' K omega_k - e'alpha,
    omega_k = y_k * alpha_k + phi_k - phi_{k-1}                       (eq. KKT_omega)
    s.t. y_k'alpha_k + gamma_k - gamma_{k-1} = 0,  0 <= alpha <= U,  phi, gamma >= 0.

The loop keeps G = K Omega (n x (K-1)) and takes the cheapest steps that keep the
K-1 equality rows exactly, each solved analytically along one direction:

* a **pair** moves alpha_{i,a} up (y_ia alpha_ia grows by t) and alpha_{j,c} down
  (y_jc alpha_jc falls by t).  With a = c it is libsvm's two-variable step; with
  a > c the gammas gamma_c..gamma_{a-1} grow by t, with a < c they fall by t (so
  the step is bounded by their minimum).  These are the elementary vectors of the
  equality rows: every feasible direction is a conformal sum of them.  In the
  scores s_ik = y_ik - G_ik the first-order gain is t (s_ia - s_jc) and the
  curvature K_ii + K_jj - 2 K_ij [a = c], so the step is t = (s_ia - s_jc) / curv
  clipped to the box and to the gammas;
* a **phi** step moves one noncrossing multiplier phi_{i,k} (it enters no equality
  row), gradient G_ik - G_{i,k+1}, curvature 2 K_ii, clipped at 0.

Phi and cross-boundary steps are over-relaxed (1.8 times the exact step, see
``_RELAX``).

Selection is the maximal violating pair over all boundary pairs (a, c) allowed by
the gammas (first order, from the per-boundary extremes of the scores, which are
kept per column and rescanned only for the columns a step changed), with the
second partner j chosen by the second-order rule of Fan, Chen & Lin (2005, WSS 2):
the largest (s_i - s_j)^2 / curv.  A phi step is taken instead when its natural
residual is larger.  Pair violations and phi residuals are both in decision-value
units; the loop stops when neither exceeds its tolerance.

Kernel rows come from a precomputed Gram matrix (``kind = 0``) or are computed on
demand from X into a least-recently-used cache of rows (linear, rbf, poly with the
conventions of :mod:`nordicstats.kernels`), so no n x n matrix is needed.

**Shrinking** (libsvm's, per boundary; ``shrinking=True``): every min(n, 1000) steps
the entries (i, k) whose alpha can be in no violating pair and whose neighbouring
noncrossing multipliers are zero with a clear margin leave the scans and the updates
of G_k (:func:`_shrink`); each boundary keeps its active rows as an index list.
Before stopping, G is recomputed on the dropped entries (:func:`_reconstruct`) and
the loop goes on if any of them violates, so it stops on the same test as without.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["KERNEL_KINDS", "RowCache", "smo_loop"]

#: kernel name -> code of the compiled row function (0: rows of a precomputed matrix)
KERNEL_KINDS = {"precomputed": 0, "linear": 1, "rbf": 2, "poly": 3}

# curvature used when K_ii + K_jj - 2 K_ij <= 0 (libsvm's TAU)
_TAU = 1e-12

_STATUS_CONVERGED, _STATUS_ITERATION_LIMIT = 0, 1

# Over-relaxation of the phi and cross-boundary steps: the step is 1.8 times the
# exact minimiser along its direction (still a descent step for any factor in (0, 2)).
# These two kinds of step zig-zag between coupled constraints; measured at n = 1,000,
# K = 7, C = 16: 151,000 steps with 1.8 against 459,000 exact.  libsvm's own pair
# step (same boundary) is kept exact: relaxing it cost more steps where phi was active.
_RELAX = 1.8


class RowCache:
    """Arrays of the kernel-row cache, handed to the compiled loop.

    Parameters
    ----------
    X : ndarray of shape (n, d) or None
        Covariates; None with a precomputed ``gram``.
    gram : ndarray of shape (n, n) or None
        Precomputed Gram matrix (then no rows are cached).
    kind : str
        A key of :data:`KERNEL_KINDS`.
    gamma, coef0, degree : float
        Kernel parameters (rbf: exp(-gamma ||x - x'||^2); poly: (gamma x'x' + coef0)^degree).
    cache_mb : float
        Memory of the row cache in MiB (at least two rows are kept).
    """

    def __init__(self, X, gram, kind, gamma=1.0, coef0=0.0, degree=1.0, cache_mb=200.0):
        self.kind = KERNEL_KINDS[kind]
        if self.kind == 0:
            self.gram = np.ascontiguousarray(gram, dtype=float)
            n = self.gram.shape[0]
            self.X = np.zeros((n, 1))
            slots = 1
        else:
            self.X = np.ascontiguousarray(X, dtype=float)
            n = self.X.shape[0]
            self.gram = np.zeros((1, 1))
            slots = int(min(n, max(2, cache_mb * 2 ** 20 // (8 * max(n, 1)))))
        self.sqnorm = np.einsum("ij,ij->i", self.X, self.X)
        self.params = np.array([gamma, coef0, degree], dtype=float)
        self.rows = np.zeros((slots, n if self.kind else 1))
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(slots, -1, dtype=np.int64)
        self.stamp = np.zeros(slots, dtype=np.int64)
        # clock, cache hits, cache misses, same-boundary pairs, cross pairs, phi steps,
        # entries shrunk, gradient reconstructions (see smo_loop)
        self.counters = np.zeros(8, dtype=np.int64)

    def diagonal(self):
        """K_ii for every row."""
        if self.kind == 0:
            return np.ascontiguousarray(np.diag(self.gram))
        out = np.empty(self.X.shape[0])
        _diagonal(self.X, self.sqnorm, self.kind, self.params, out)
        return out

    def arrays(self):
        """The tuple the compiled loop takes, in its order."""
        return (self.kind, self.gram, self.X, self.sqnorm, self.params, self.rows,
                self.slot_of, self.owner, self.stamp, self.counters)

    @property
    def nbytes(self):
        """Memory held by the cache (and the Gram matrix, when precomputed)."""
        return int(self.rows.nbytes + (self.gram.nbytes if self.kind == 0 else 0))

    def fetch(self, wanted):
        """Slots of the kernel rows ``wanted`` (unique indices) in :attr:`rows`, the
        missing ones computed into the least recently used slots by the loop's own
        formula, as a step would; None for a precomputed matrix or more rows than slots.

        Returns (slots, rows computed).  The loop's hit and miss counters are left as
        they are (its clock advances).
        """
        wanted = np.asarray(wanted, dtype=np.int64)
        if self.kind == 0 or wanted.size > self.owner.size:
            return None
        counters = self.counters.copy()
        slots = np.empty(wanted.size, dtype=np.int64)
        _fetch(wanted, slots, self.kind, self.gram, self.X, self.sqnorm, self.params,
               self.rows, self.slot_of, self.owner, self.stamp, counters)
        self.counters[0] = counters[0]
        return slots, int(counters[2] - self.counters[2])


@numba.njit(cache=True)
def _kernel_value(dot, sq_i, sq_j, kind, params):
    if kind == 1:
        return dot
    if kind == 2:
        dist = sq_i + sq_j - 2.0 * dot
        return np.exp(-params[0] * max(dist, 0.0))
    return (params[0] * dot + params[1]) ** params[2]


@numba.njit(cache=True)
def _diagonal(X, sqnorm, kind, params, out):
    for i in range(X.shape[0]):
        out[i] = _kernel_value(sqnorm[i], sqnorm[i], sqnorm[i], kind, params)


@numba.njit(cache=True)
def _row(i, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters):
    """Kernel row i: from the Gram matrix, the cache, or computed into the oldest slot."""
    if kind == 0:
        return gram[i]
    counters[0] += 1
    slot = slot_of[i]
    if slot >= 0:
        counters[1] += 1
        stamp[slot] = counters[0]
        return rows[slot]
    counters[2] += 1
    slot = np.argmin(stamp)
    if owner[slot] >= 0:
        slot_of[owner[slot]] = -1
    owner[slot] = i
    slot_of[i] = slot
    stamp[slot] = counters[0]
    out = rows[slot]
    _compute_row(i, kind, X, sqnorm, params, out)
    return out


@numba.njit(cache=True)
def _fetch(wanted, slots, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp,
           counters):
    """slots[t] = the slot of row wanted[t], computed where missing (:func:`_row`)."""
    for t in range(wanted.size):
        _row(wanted[t], kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters)
        slots[t] = slot_of[wanted[t]]


@numba.njit(cache=True)
def _compute_row(i, kind, X, sqnorm, params, out):
    """out = row i of the kernel matrix, computed from X."""
    n, d = X.shape
    for j in range(n):
        dot = 0.0
        for col in range(d):
            dot += X[i, col] * X[j, col]
        out[j] = _kernel_value(dot, sqnorm[i], sqnorm[j], kind, params)


@numba.njit(cache=True, inline="always")
def _can_rise(y, a, u):
    """y * alpha can grow: (y = +1, alpha < U) or (y = -1, alpha > 0)."""
    return (a < u) if y > 0 else (a > 0.0)


@numba.njit(cache=True, inline="always")
def _can_fall(y, a, u):
    """y * alpha can shrink: (y = +1, alpha > 0) or (y = -1, alpha < U)."""
    return (a > 0.0) if y > 0 else (a < u)


@numba.njit(cache=True)
def _scan_alpha(k, Y, U, alpha, G, up_val, up_arg, low_val, low_arg):
    """Largest score among rows that can rise and smallest among rows that can fall."""
    up_val[k], low_val[k] = -np.inf, np.inf
    up_arg[k], low_arg[k] = -1, -1
    for i in range(Y.shape[1]):
        y, a, u = Y[k, i], alpha[k, i], U[k, i]
        s = y - G[k, i]
        if s > up_val[k] and _can_rise(y, a, u):
            up_val[k], up_arg[k] = s, i
        if s < low_val[k] and _can_fall(y, a, u):
            low_val[k], low_arg[k] = s, i


@numba.njit(cache=True)
def _scan_alpha_active(k, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg):
    """:func:`_scan_alpha` over the active rows of column k (the extremes kept in locals)."""
    best_up, best_low, arg_up, arg_low = -np.inf, np.inf, -1, -1
    every = nact[k] == Y.shape[1]  # nothing shrunk: contiguous loop
    for p in range(nact[k]):
        i = p if every else act[k, p]
        y, a, u = Y[k, i], alpha[k, i], U[k, i]
        s = y - G[k, i]
        if s > best_up and _can_rise(y, a, u):
            best_up, arg_up = s, i
        if s < best_low and _can_fall(y, a, u):
            best_low, arg_low = s, i
    up_val[k], up_arg[k], low_val[k], low_arg[k] = best_up, arg_up, best_low, arg_low


@numba.njit(cache=True)
def _scan_phi(k, act, nact, is_act, phi, G, phi_val, phi_arg):
    """Largest natural residual |phi - max(phi - g, 0)| of column k, g = G_k - G_{k+1},
    over the rows active in both columns k and k+1."""
    best, arg = 0.0, -1
    n = G.shape[1]
    every = nact[k] == n and nact[k + 1] == n
    for p in range(nact[k]):
        i = p if every else act[k, p]
        if not (every or is_act[k + 1, i]):
            continue
        g = G[k, i] - G[k + 1, i]
        r = -g if g < 0.0 else min(g, phi[k, i])
        if r > best:
            best, arg = r, i
    phi_val[k], phi_arg[k] = best, arg


@numba.njit(cache=True)
def _pair_allowed(a, c, chain, gamma):
    """Whether a pair may move y alpha up on boundary a and down on c: a = c; with the
    chain also a > c (the gammas between grow) and a < c when gamma_a..gamma_{c-1} > 0."""
    if a == c:
        return True
    if not chain:
        return False
    for t in range(a, c):  # empty unless a < c
        if gamma[t] <= 0.0:
            return False
    return True


@numba.njit(cache=True)
def _best_pair(m, chain, gamma, up_val, up_arg, low_val, low_arg):
    """(violation, a, c) of the maximal violating pair allowed by the gammas."""
    best, best_a, best_c = -np.inf, -1, -1
    for a in range(m):
        if up_arg[a] < 0:
            continue
        for c in range(m):
            if low_arg[c] < 0 or not _pair_allowed(a, c, chain, gamma):
                continue
            v = up_val[a] - low_val[c]
            if v > best:
                best, best_a, best_c = v, a, c
    return best, best_a, best_c


@numba.njit(cache=True)
def _partner(i, a, c, s_i, Ki, diag, act, nact, Y, U, alpha, G):
    """Second-order choice of j among the active rows of boundary c that can fall
    (Fan et al. WSS 2)."""
    best_gain, best_j, best_curv = -1.0, -1, 1.0
    every = nact[c] == Y.shape[1]
    for p in range(nact[c]):
        j = p if every else act[c, p]
        y = Y[c, j]
        if not _can_fall(y, alpha[c, j], U[c, j]):
            continue
        diff = s_i - (y - G[c, j])
        if diff <= 0.0:
            continue
        curv = diag[i] + diag[j] - (2.0 * Ki[j] if a == c else 0.0)
        if curv <= 0.0:
            curv = _TAU
        gain = diff * diff / curv
        if gain > best_gain:
            best_gain, best_j, best_curv = gain, j, curv
    return best_j, best_curv


@numba.njit(cache=True)
def _move_pair(i, a, j, c, t, Y, U, alpha, gamma):
    """Clip t to the box and the gammas, then move alpha_ia, alpha_jc and the gammas between.

    y_ia alpha_ia rises and y_jc alpha_jc falls by the clipped t, which is returned
    (<= 0: no move).  The K-1 equality rows are kept exactly.
    """
    room_i = U[a, i] - alpha[a, i] if Y[a, i] > 0 else alpha[a, i]
    room_j = alpha[c, j] if Y[c, j] > 0 else U[c, j] - alpha[c, j]
    t = min(t, room_i, room_j)
    if a < c:
        for k in range(a, c):
            t = min(t, gamma[k])
    if t <= 0.0:
        return t
    alpha[a, i] = U[a, i] if (Y[a, i] > 0 and t == room_i) else (
        0.0 if t == room_i else alpha[a, i] + Y[a, i] * t)
    alpha[c, j] = 0.0 if (Y[c, j] > 0 and t == room_j) else (
        U[c, j] if t == room_j else alpha[c, j] - Y[c, j] * t)
    if a < c:
        for k in range(a, c):
            gamma[k] = 0.0 if gamma[k] == t else gamma[k] - t
    elif a > c:
        for k in range(c, a):
            gamma[k] += t
    return t


@numba.njit(cache=True)
def _pair_step(i, a, j, c, curv, Y, U, alpha, gamma, G, Ki, Kj, act, nact):
    """Move y_ia alpha_ia up and y_jc alpha_jc down by t (and the gammas between);
    G is updated on the active rows of columns a and c."""
    t = (_RELAX if a != c else 1.0) * ((Y[a, i] - G[a, i]) - (Y[c, j] - G[c, j])) / curv
    t = _move_pair(i, a, j, c, t, Y, U, alpha, gamma)
    if t <= 0.0:
        return False
    _add_row(G, a, t, Ki, act, nact)
    _add_row(G, c, -t, Kj, act, nact)
    return True


@numba.njit(cache=True)
def _add_row(G, k, t, Ki, act, nact):
    """G_k += t K_i on the active rows of column k."""
    if nact[k] == G.shape[1]:
        for r in range(G.shape[1]):
            G[k, r] += t * Ki[r]
        return
    for p in range(nact[k]):
        r = act[k, p]
        G[k, r] += t * Ki[r]


@numba.njit(cache=True)
def _phi_step(i, k, diag, phi, G, Ki, act, nact):
    """Over-relaxed minimisation over phi_ik >= 0 (curvature 2 K_ii)."""
    g = G[k, i] - G[k + 1, i]
    step = -_RELAX * g / max(2.0 * diag[i], _TAU)
    if phi[k, i] + step < 0.0:
        step = -phi[k, i]
    if step == 0.0:
        return False
    phi[k, i] = 0.0 if step == -phi[k, i] else phi[k, i] + step
    _add_row(G, k, step, Ki, act, nact)
    _add_row(G, k + 1, -step, Ki, act, nact)
    return True


@numba.njit(cache=True)
def _keeps(k, i, up_bound, low_bound, margin, has_phi, mp, Y, U, alpha, phi, G, is_act):
    """Whether entry (i, k) must stay active: its alpha could still take part in a
    violating pair, or a noncrossing multiplier next to it is positive or within
    ``margin`` of being violated (phi_{i,k-1} and phi_ik are scanned only while both
    of their columns are active)."""
    y, a, u = Y[k, i], alpha[k, i], U[k, i]
    s = y - G[k, i]
    rise, fall = _can_rise(y, a, u), _can_fall(y, a, u)
    if (rise and fall) or (fall and s <= up_bound) or (rise and s >= low_bound):
        return True
    if has_phi:
        if k >= 1 and (phi[k - 1, i] > 0.0 or (
                is_act[k - 1, i] and G[k - 1, i] - G[k, i] <= margin)):
            return True
        if k < mp and (phi[k, i] > 0.0 or (is_act[k + 1, i] and G[k, i] - G[k + 1, i] <= margin)):
            return True
    return False


@numba.njit(cache=True)
def _pair_bounds(k, m, chain, gamma, up_val, low_val):
    """The largest score that can rise and the smallest that can fall on the boundaries
    an entry of boundary k may pair with (``up_val``, ``low_val`` per boundary): the
    thresholds of the shrinking test (:func:`_keeps`)."""
    up_bound, low_bound = -np.inf, np.inf
    for other in range(m):
        if _pair_allowed(other, k, chain, gamma):
            up_bound = max(up_bound, up_val[other])
        if _pair_allowed(k, other, chain, gamma):
            low_bound = min(low_bound, low_val[other])
    return up_bound, low_bound


@numba.njit(cache=True)
def _shrink(chain, has_phi, mp, margin, gamma, Y, U, alpha, phi, G, up_val, low_val,
            act, nact, is_act, calm, patience):
    """Drop from the scans the entries that cannot move (libsvm's shrinking, per boundary).

    An alpha that can only fall is out of every violating pair when its score exceeds
    every score that can rise on a boundary it may pair with, one that can only rise
    when its score is below every score that can fall; both only when the noncrossing
    multipliers next to it are zero with a gradient above ``margin``.  With
    ``patience`` = 1 (libsvm's rule) such an entry is dropped at once; otherwise
    ``calm[k, i]`` counts the consecutive shrinks at which entry (i, k) was out of every
    pair (reset when it could take part in one) and the entry is dropped when the count
    reaches ``patience`` (``calm`` is not read when ``patience`` = 1).  One pass over
    the active lists; returns the entries dropped.
    """
    m = Y.shape[0]
    dropped = 0
    for k in range(m):
        up_bound, low_bound = _pair_bounds(k, m, chain, gamma, up_val, low_val)
        kept = 0
        for p in range(nact[k]):
            i = act[k, p]
            keep = _keeps(k, i, up_bound, low_bound, margin, has_phi, mp, Y, U, alpha, phi,
                          G, is_act)
            if patience > 1:
                calm[k, i] = 0 if keep else min(calm[k, i] + 1, patience)
                keep = calm[k, i] < patience
            if keep:
                act[k, kept] = i
                kept += 1
            else:
                is_act[k, i] = False
        dropped += nact[k] - kept
        nact[k] = kept
    return dropped


@numba.njit(cache=True)
def _reconstruct(Y, alpha, phi, G, act, nact, is_act, kind, gram, X, sqnorm, params, rows,
                 slot_of):
    """G = K Omega on the inactive entries, then every entry active again.

    Loops over the rows j with omega_j != 0 (the support vectors, whose kernel rows the
    steps have mostly cached), adding K_ij omega_jk to every inactive entry (i, k); the
    cache is neither reordered nor filled by this sweep.
    """
    m, n = Y.shape
    omega = np.empty((m, n))
    for k in range(m):
        for i in range(n):
            omega[k, i] = Y[k, i] * alpha[k, i]
    for k in range(phi.shape[0]):
        for i in range(n):
            omega[k, i] += phi[k, i]
            omega[k + 1, i] -= phi[k, i]
    count = 0
    for k in range(m):
        count += n - nact[k]
    entry_k, entry_i = np.empty(count, np.int64), np.empty(count, np.int64)
    q = 0
    for k in range(m):
        for i in range(n):
            if not is_act[k, i]:
                entry_k[q], entry_i[q] = k, i
                G[k, i] = 0.0
                q += 1
    # cached rows (and a precomputed matrix's) as they are; the others computed into a
    # scratch row, not into the cache: a sweep over more support rows than the cache
    # holds would evict every row the steps use (least recently used, cyclic access)
    scratch = np.empty(n if kind != 0 else 1)
    for j in range(n):
        nonzero = False
        for k in range(m):
            nonzero = nonzero or omega[k, j] != 0.0
        if not nonzero:
            continue
        if kind == 0:
            Kj = gram[j]
        elif slot_of[j] >= 0:
            Kj = rows[slot_of[j]]
        else:
            _compute_row(j, kind, X, sqnorm, params, scratch)
            Kj = scratch
        for q in range(count):
            G[entry_k[q], entry_i[q]] += Kj[entry_i[q]] * omega[entry_k[q], j]
    for k in range(m):
        for i in range(n):
            act[k, i] = i
            is_act[k, i] = True
        nact[k] = n


@numba.njit(cache=True)
def _rescan(Y, U, alpha, phi, G, mp, act, nact, is_act, up_val, up_arg, low_val, low_arg,
            phi_val, phi_arg):
    """Extremes of every column (after shrinking or reconstructing)."""
    for k in range(Y.shape[0]):
        _scan_alpha_active(k, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg)
    for k in range(mp):
        _scan_phi(k, act, nact, is_act, phi, G, phi_val, phi_arg)


@numba.njit(cache=True)
def smo_loop(Y, U, alpha, phi, gamma, G, diag, chain, has_phi, tol, tol_phi, max_iter,
             shrinking, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters):
    """Run SMO steps in place until no pair violation > tol and no phi residual > tol_phi.

    Parameters
    ----------
    Y, U : ndarray of shape (m, n)
        Labels y_ik in {-1, +1} and upper bounds U = C c, boundary-major (m = K-1):
        every array of the loop is stored by boundary, so that the scans of one
        boundary and the updates G_k += t K_i run over contiguous memory.
    alpha, phi, gamma, G : ndarray
        Dual point (m, n), (m-1, n), (m-1,) and G = (K Omega)' (m, n), updated in place.
    diag : ndarray of shape (n,)
        K_ii.
    chain, has_phi : bool
        Whether gamma (the intercept chain) and phi (noncrossing) take part.
    tol, tol_phi : float
        Stopping tolerances in decision-value units.
    max_iter : int
    shrinking : bool
        Every min(n, 1000) steps, drop the entries that cannot move from the scans and
        the updates of G (:func:`_shrink`); before stopping, G is recomputed on them
        (:func:`_reconstruct`) and the loop goes on if any of them violates.
    kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters
        The kernel-row cache (:meth:`RowCache.arrays`).

    Returns
    -------
    (int, int, float)
        Iterations, status (0 converged, 1 iteration limit), last largest violation.
        G is exact (as maintained by the steps) on return, every entry active.
    """
    m, n = Y.shape
    up_val, low_val = np.empty(m), np.empty(m)
    up_arg, low_arg = np.empty(m, np.int64), np.empty(m, np.int64)
    mp = m - 1 if has_phi else 0
    phi_val, phi_arg = np.zeros(max(mp, 1)), np.full(max(mp, 1), -1, np.int64)
    # active entries of each column: act[k, :nact[k]] (increasing), is_act[k, i]
    act = np.empty((m, n), np.int64)
    for k in range(m):
        act[k] = np.arange(n)
    nact, is_act = np.full(m, n, np.int64), np.ones((m, n), np.bool_)
    shrink_every = min(n, 1000)
    countdown, shrunk = shrink_every, 0
    no_calm = np.zeros((1, 1), np.int32)  # libsvm's rule: no counts
    _rescan(Y, U, alpha, phi, G, mp, act, nact, is_act, up_val, up_arg, low_val, low_arg,
            phi_val, phi_arg)
    it, violation = 0, np.inf
    while True:
        best, a, c = _best_pair(m, chain, gamma, up_val, up_arg, low_val, low_arg)
        phi_best, kp = 0.0, -1
        for k in range(mp):
            if phi_val[k] > phi_best:
                phi_best, kp = phi_val[k], k
        violation = max(best, phi_best)
        done = best <= tol and phi_best <= tol_phi
        if (done or it >= max_iter) and shrunk > 0:
            # re-check the dropped entries before stopping
            _reconstruct(Y, alpha, phi, G, act, nact, is_act, kind, gram, X, sqnorm, params,
                         rows, slot_of)
            counters[7] += 1
            shrunk, countdown = 0, shrink_every
            _rescan(Y, U, alpha, phi, G, mp, act, nact, is_act, up_val, up_arg, low_val,
                    low_arg, phi_val, phi_arg)
            continue
        if done:
            return it, _STATUS_CONVERGED, violation
        if it >= max_iter:
            return it, _STATUS_ITERATION_LIMIT, violation
        it += 1
        if phi_best > tol_phi and (phi_best >= best or best <= tol):
            i = phi_arg[kp]
            Ki = _row(i, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters)
            _phi_step(i, kp, diag, phi, G, Ki, act, nact)
            counters[5] += 1
            lo, hi = kp, kp + 1
        else:
            i = up_arg[a]
            Ki = _row(i, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters)
            j, curv = _partner(i, a, c, up_val[a], Ki, diag, act, nact, Y, U, alpha, G)
            Kj = _row(j, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters)
            _pair_step(i, a, j, c, curv, Y, U, alpha, gamma, G, Ki, Kj, act, nact)
            counters[3 if a == c else 4] += 1
            lo, hi = min(a, c), max(a, c)
        if shrinking:
            countdown -= 1
            if countdown == 0:
                countdown = shrink_every
                dropped = _shrink(chain, has_phi, mp, violation, gamma, Y, U, alpha, phi, G,
                                  up_val, low_val, act, nact, is_act, no_calm, 1)
                shrunk += dropped
                counters[6] += dropped
                _rescan(Y, U, alpha, phi, G, mp, act, nact, is_act, up_val, up_arg, low_val,
                        low_arg, phi_val, phi_arg)
                continue
        # only columns lo and hi of G changed: their alpha extremes, and the phi columns
        # that read them (lo-1, lo, hi-1, hi)
        _scan_alpha_active(lo, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg)
        if hi != lo:
            _scan_alpha_active(hi, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg)
        for k in range(max(lo - 1, 0), min(lo + 1, mp)):
            _scan_phi(k, act, nact, is_act, phi, G, phi_val, phi_arg)
        for k in range(max(hi - 1, lo + 1), min(hi + 1, mp)):
            _scan_phi(k, act, nact, is_act, phi, G, phi_val, phi_arg)
