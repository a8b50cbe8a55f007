"""Compiled SMO loop for NORDIC-0's reduced dual (:mod:`nordicstats.solvers.nordic0_smo`).

For a fixed free set F of ordering increments (see :mod:`nordicstats.solvers.nordic0`)
NORDIC-0's dual in beta = y * alpha (boundary-major, m = K-1 boundaries) is::

    min  1/2 beta' Q beta - e'alpha,   Q = (1/m) 1 1' (x) K + V S^+ V',
    s.t. y_k'alpha_k + gamma_k - gamma_{k-1} = 0,  0 <= alpha <= U,  gamma >= 0,

with V_{(k,i), (J,l)} = W_{kJ} K_{il}, W_{kJ} = [J >= k] - J/m for the free increments
(J, l) in F, S^+ = Z Z' (Z: ``S_root``, from S's positive eigenvalues).  Its gradient in
beta is G = K omega (n x m), the running decision values without intercepts:

    G_k = (1/m) sum_k' H_k' + sum_{(J,l) in F} W_{kJ} K_l delta_(J,l),
    H_k = K (y_k * alpha_k),   delta_F = Z Z' (Ka)_F.

All boundaries share one coefficient vector up to the free increments, so a step
moving beta_(a,i) up by t and beta_(c,j) down by t (the same elementary directions as
NORDIC-1's SMO, :mod:`nordicstats.solvers.smo_core`: on one boundary, or across two
with the gammas between) moves **every** G_k:

    G_k += t (K_i - K_j) / m + t sum_J W_kJ u_J,   u_J = sum_{(J,l) in F} K_l d_(J,l),
    d = Z (R_(a,i) - R_(c,j)),   R_(k,i) = Z' (W_k. * K_{i,F}),

at ``O(n (|F| + m))`` per step, and its curvature is

    (K_ii + K_jj - 2 K_ij) / m + ||R_(a,i) - R_(c,j)||^2

(K_ij enters across boundaries too, unlike NORDIC-1's K_ii + K_jj).  The pair is the
maximal violating pair allowed by the gammas (first order, as in NORDIC-1's loop);
the partner j is chosen by the second-order rule of Fan, Chen & Lin (2005, WSS 2) on
the shared part (K_ii + K_jj - 2 K_ij) / m of the curvature, and the step uses the
exact curvature.  H = K (Y * alpha) is kept along, so the driver can recompute delta_F
and G from it exactly when F changes.

Kernel rows come from the row cache of :class:`~nordicstats.solvers.smo_core.RowCache`.

**Shrinking** (libsvm's, ``shrinking=True``): every ``shrink_every`` steps (and before
the first with ``shrink_first``) the entries (i, k) whose alpha sits at a bound where it
has been in no violating pair at ``patience`` consecutive shrinks leave the scans
(:func:`_shrink_patient`: libsvm's and NORDIC-1's test, with a count per entry that the
caller keeps across runs); a row all of whose entries left also
leaves the updates of G (the free increments' part included, read from a copy of the
free rows compacted to the rows left, :func:`_compact_free_rows`), while H is still
updated on every row.  Before the loop may stop, G is recomputed on the rows
that left from its definition -- from H and the free rows (:func:`_gradient_of_rows`) --
every entry comes back, and the loop goes on if any violates: it stops on the same
test as without shrinking.
"""

from __future__ import annotations

import numba
import numpy as np

from nordicstats.solvers.smo_core import (
    _TAU,
    _best_pair,
    _can_fall,
    _move_pair,
    _row,
    _scan_alpha_active,
    _shrink,
)

__all__ = ["nordic0_smo_loop", "GATHER_FRACTION"]

#: With shrinking, a boundary's scan (or G's update) runs over an index list only
#: while the list keeps at most this fraction of the rows; above it the loop runs over
#: all of them, contiguously.
GATHER_FRACTION = 0.25


@numba.njit(cache=True)
def _shared_partner(i, c, s_i, Ki, diag, m, act, nact, Y, U, alpha, G):
    """Second-order choice of j among the active rows of boundary c that can fall (WSS 2).

    The curvature used is the part shared by all boundaries, (K_ii + K_jj - 2 K_ij) / m.
    """
    best_gain, best_j = -1.0, -1
    every = nact[c] == Y.shape[1]
    for p in range(nact[c]):
        j = p if every else act[c, p]
        y = Y[c, j]
        if not _can_fall(y, alpha[c, j], U[c, j]):
            continue
        diff = s_i - (y - G[c, j])
        if diff <= 0.0:
            continue
        curv = (diag[i] + diag[j] - 2.0 * Ki[j]) / m
        gain = diff * diff / max(curv, _TAU)
        if gain > best_gain:
            best_gain, best_j = gain, j
    return best_j


@numba.njit(cache=True)
def _free_row(k, i, m, KF, JF, S_root, out):
    """R_(k,i) = Z' (W_k. * K_{i,F}) into ``out`` (length rank(S))."""
    out[:] = 0.0
    for f in range(KF.shape[0]):
        w = (1.0 if JF[f] >= k else 0.0) - (JF[f] + 1.0) / m
        x = w * KF[f, i]
        for q in range(S_root.shape[1]):
            out[q] += x * S_root[f, q]


@numba.njit(cache=True)
def _shift_gradient(t, Ki, Kj, m, KF_live, JF, S_root, R_diff, G, free_sum, common, tail,
                    live, nlive):
    """G_k += t (K_i - K_j) / m + t sum_J W_kJ u_J for every boundary k, on the rows
    ``live[:nlive]`` (all rows, contiguously, when nlive = n).

    ``KF_live`` holds the free rows' kernel values at the live rows, compacted
    (``KF_live[f, p] = K_F[f, live[p]]``; K_F itself when nlive = n), so the free
    increments' part reads n_free x nlive contiguous values; the work arrays are
    indexed by p too.
    """
    n = G.shape[1]
    every = nlive == n
    for p in range(nlive):
        r = p if every else live[p]
        common[p] = t * (Ki[r] - Kj[r]) / m
    nf = KF_live.shape[0]
    if nf > 0:
        for J in range(m - 1):
            for p in range(nlive):
                free_sum[J, p] = 0.0
        for f in range(nf):
            d = 0.0
            for q in range(S_root.shape[1]):
                d += S_root[f, q] * R_diff[q]
            d *= t
            if d == 0.0:
                continue
            u = free_sum[JF[f]]
            row = KF_live[f]
            for p in range(nlive):
                u[p] += d * row[p]
        for J in range(m - 1):
            scale = (J + 1.0) / m
            for p in range(nlive):
                common[p] -= scale * free_sum[J, p]
    for p in range(nlive):
        tail[p] = 0.0
    for k in range(m - 1, -1, -1):
        if nf > 0 and k <= m - 2:
            for p in range(nlive):
                tail[p] += free_sum[k, p]
        for p in range(nlive):
            G[k, p if every else live[p]] += common[p] + tail[p]


@numba.njit(cache=True)
def _compact_free_rows(KF, live, nlive, KF_live):
    """``KF_live[f, p] = KF[f, live[p]]`` for p < nlive; returns the view to use."""
    if nlive == KF.shape[1]:
        return KF
    for f in range(KF.shape[0]):
        for p in range(nlive):
            KF_live[f, p] = KF[f, live[p]]
    return KF_live


@numba.njit(cache=True)
def _gradient_of_rows(rows, count, H, KF, JF, LF, S_root, G):
    """G_k,i from its definition on the rows ``rows[:count]``, from H and the free rows.

    G_k,i = (1/m) sum_k' H_k',i + sum_{(J,l) in F} W_kJ K_il delta_(J,l), with
    delta_F = Z Z' (Ka)_F and (Ka)_(J,l) = sum_{k <= J} H_k,l - (J/m) sum_k H_k,l
    (J 1-based), as :meth:`~nordicstats.solvers.nordic0.IncrementState.refresh` has them.
    """
    m = H.shape[0]
    nf, rank = KF.shape[0], S_root.shape[1]
    proj, delta = np.zeros(rank), np.zeros(nf)
    for f in range(nf):
        row, J = LF[f], JF[f]
        ka, total = 0.0, 0.0
        for k in range(m):
            total += H[k, row]
            if k <= J:
                ka += H[k, row]
        ka -= (J + 1.0) / m * total
        for q in range(rank):
            proj[q] += S_root[f, q] * ka
    for f in range(nf):
        for q in range(rank):
            delta[f] += S_root[f, q] * proj[q]
    by_increment = np.zeros(max(m - 1, 1))
    for p in range(count):
        i = rows[p]
        total = 0.0
        for k in range(m):
            total += H[k, i]
        by_increment[:] = 0.0
        for f in range(nf):
            by_increment[JF[f]] += KF[f, i] * delta[f]
        weighted = 0.0  # sum_J (J / m) s_J
        for J in range(m - 1):
            weighted += (J + 1.0) / m * by_increment[J]
        tail = 0.0  # sum_{J >= k} s_J
        for k in range(m - 1, -1, -1):
            if k <= m - 2:
                tail += by_increment[k]
            G[k, i] = total / m + tail - weighted


@numba.njit(cache=True)
def _sparse_lists(is_act, act, nact, live, gather_rows):
    """After :func:`_shrink_patient`: the rows with an active entry into ``live``; a list that
    keeps more than :data:`GATHER_FRACTION` of the n rows is replaced by all rows
    (contiguous loops beat gathers there), and so are the live rows when they are more
    than the fraction ``gather_rows`` of them.  Returns the number of live rows."""
    m, n = is_act.shape
    limit = GATHER_FRACTION * n
    for k in range(m):
        if nact[k] > limit:
            for i in range(n):
                act[k, i] = i
                is_act[k, i] = True
            nact[k] = n
    count = 0
    for i in range(n):
        for k in range(m):
            if is_act[k, i]:
                live[count] = i
                count += 1
                break
    if count > gather_rows * n:
        for i in range(n):
            live[i] = i
        count = n
    return count


@numba.njit(cache=True)
def _restore(H, KF, JF, LF, S_root, G, act, nact, is_act, live):
    """G from its definition on the rows that left, then every entry active again."""
    m, n = G.shape
    gone = np.empty(n, np.int64)
    count = 0
    for i in range(n):
        left = True
        for k in range(m):
            left = left and not is_act[k, i]
        if left:
            gone[count] = i
            count += 1
    _gradient_of_rows(gone, count, H, KF, JF, LF, S_root, G)
    for k in range(m):
        for i in range(n):
            act[k, i] = i
            is_act[k, i] = True
        nact[k] = n
    for i in range(n):
        live[i] = i
    return n


@numba.njit(cache=True)
def _shrink_patient(chain, gamma, Y, U, alpha, G, up_val, low_val, act, nact, is_act, calm,
                    patience):
    """Drop from the scans the entries that have been out of every violating pair at
    ``patience`` consecutive shrinks; returns the entries dropped.

    The test of one shrink is libsvm's and NORDIC-1's
    (:func:`~nordicstats.solvers.smo_core._shrink`, with no noncrossing multipliers):
    an alpha that can only fall is out of every violating pair when its score y - G
    exceeds every score that can rise on a boundary it may pair with, one that can only
    rise when its score is below every score that can fall.  ``calm[k, i]`` counts the
    consecutive shrinks at which entry (i, k) passed that test; it is reset whenever the
    entry could take part in a pair, and only an entry whose count reached ``patience``
    leaves the lists.  ``patience`` = 1 is libsvm's rule.  One pass over the active
    lists.
    """
    return _shrink(chain, False, 0, 0.0, gamma, Y, U, alpha, np.zeros((1, 1)), G, up_val,
                   low_val, act, nact, is_act, calm, patience)


@numba.njit(cache=True)
def _shrink_entries(chain, gamma, Y, U, alpha, G, up_val, low_val, act, nact, is_act, calm,
                    patience, live, gather_rows, KF, KF_live):
    """One shrink (:func:`_shrink_patient`), the live rows and the free rows compacted
    to them; (nlive, free rows to read, entries out of the scans)."""
    _shrink_patient(chain, gamma, Y, U, alpha, G, up_val, low_val, act, nact, is_act, calm,
                    patience)
    nlive = _sparse_lists(is_act, act, nact, live, gather_rows)
    return (nlive, _compact_free_rows(KF, live, nlive, KF_live),
            Y.shape[0] * Y.shape[1] - nact.sum())


@numba.njit(cache=True)
def nordic0_smo_loop(Y, U, alpha, gamma, G, H, diag, KF, JF, LF, S_root, chain, tol, max_iter,
                     relax_same, relax_cross, shrinking, shrink_first, shrink_every, patience,
                     calm, load, gather_rows, kind, gram, X, sqnorm, params, rows, slot_of,
                     owner, stamp, counters):
    """Run SMO steps on the reduced dual in place until no pair violation exceeds tol.

    Parameters
    ----------
    Y, U : ndarray of shape (m, n)
        Labels y_ik in {-1, +1} and upper bounds, boundary-major (m = K-1).
    alpha, gamma, G, H : ndarray
        Dual point (m, n) and (m-1,), G = (K omega)' and H = (K (Y * alpha))', both
        (m, n); updated in place.
    diag : ndarray of shape (n,)
        K_ii.
    KF : ndarray of shape (n_free, n)
        Kernel columns K_l of the free increments' rows l.
    JF, LF : ndarray of int of shape (n_free,)
        0-based increment J - 1 and row l of each free increment.
    S_root : ndarray of shape (n_free, rank)
        Z with S^+ = Z Z'.
    chain : bool
        Whether the gammas (intercept ordering) take part (K > 2).
    tol : float
        Stopping tolerance on the pair violations (decision-value units).
    max_iter : int
    relax_same, relax_cross : float
        Factors (in (0, 2)) of the exact step on one boundary and across boundaries.
    shrinking : bool
        Every ``shrink_every`` steps, drop the entries that have been in no violating
        pair at ``patience`` consecutive shrinks from the scans, and the rows left with
        no entry from the updates of G; before
        stopping, G is recomputed on those rows (:func:`_restore`) and the loop goes
        on if any entry violates.
    shrink_first : bool
        With ``shrinking``, shrink once before the first step (G is exact on every row
        when the driver starts a round), so that a round of the outer active set does
        not start with every entry active.
    shrink_every : int
        Steps between two shrinks (capped at n).
    patience : int
        Consecutive shrinks at which an entry must be out of every violating pair
        before it leaves the scans (:func:`_shrink_patient`; 1 is libsvm's rule).
    calm : ndarray of int32 of shape (m, n)
        The counts of :func:`_shrink_patient`, kept by the caller across rounds.
    load : ndarray of int64 of shape (2,)
        Work of the steps, added to: ``load[0]`` the entries scanned after each step
        (the active lists' lengths), ``load[1]`` the rows whose G each step updated.
    gather_rows : float
        With shrinking, G's updates run over the live rows' index list while it keeps
        at most this fraction of the rows, over all rows contiguously above it (the
        rows' G that left are recomputed before a stop either way).
    kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters
        The kernel-row cache (:meth:`~nordicstats.solvers.smo_core.RowCache.arrays`);
        ``counters[6]`` and ``[7]`` count the entries dropped and the restores.

    Returns
    -------
    (int, int, float)
        Steps, status (0 converged, 1 step limit), last largest violation.  On return
        every entry is active and G is the running one on every row.
    """
    m, n = Y.shape
    rank = S_root.shape[1]
    up_val, low_val = np.empty(m), np.empty(m)
    up_arg, low_arg = np.empty(m, np.int64), np.empty(m, np.int64)
    R_i, R_j = np.empty(rank), np.empty(rank)
    free_sum = np.zeros((max(m - 1, 1), n))
    common, tail = np.empty(n), np.empty(n)
    # active entries of each boundary: act[k, :nact[k]] (increasing), is_act[k, i];
    # rows with an active entry: live[:nlive]
    act = np.empty((m, n), np.int64)
    for k in range(m):
        act[k] = np.arange(n)
    nact, is_act = np.full(m, n, np.int64), np.ones((m, n), np.bool_)
    live, nlive = np.arange(n), n
    KF_live, KFL = np.empty_like(KF), KF
    shrink_every = max(min(n, shrink_every), 1)
    countdown, shrunk = shrink_every, 0
    for k in range(m):
        _scan_alpha_active(k, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg)
    if shrinking and shrink_first:
        nlive, KFL, shrunk = _shrink_entries(chain, gamma, Y, U, alpha, G, up_val, low_val,
                                             act, nact, is_act, calm, patience, live,
                                             gather_rows, KF, KF_live)
        counters[6] += shrunk
        for k in range(m):
            _scan_alpha_active(k, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg)
    it = 0
    while True:
        best, a, c = _best_pair(m, chain, gamma, up_val, up_arg, low_val, low_arg)
        if (best <= tol or it >= max_iter) and shrunk > 0:
            # re-check the dropped entries before stopping
            nlive = _restore(H, KF, JF, LF, S_root, G, act, nact, is_act, live)
            KFL = KF
            counters[7] += 1
            shrunk, countdown = 0, shrink_every
            for k in range(m):
                _scan_alpha_active(k, act, nact, Y, U, alpha, G, up_val, up_arg, low_val,
                                   low_arg)
            continue
        if best <= tol:
            return it, 0, best
        if it >= max_iter:
            return it, 1, best
        it += 1
        i = up_arg[a]
        Ki = _row(i, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters)
        j = _shared_partner(i, c, up_val[a], Ki, diag, m, act, nact, Y, U, alpha, G)
        Kj = _row(j, kind, gram, X, sqnorm, params, rows, slot_of, owner, stamp, counters)
        _free_row(a, i, m, KF, JF, S_root, R_i)
        _free_row(c, j, m, KF, JF, S_root, R_j)
        curv = (diag[i] + diag[j] - 2.0 * Ki[j]) / m
        for q in range(rank):
            R_i[q] -= R_j[q]
            curv += R_i[q] * R_i[q]
        t = (relax_same if a == c else relax_cross) * (
            (Y[a, i] - G[a, i]) - (Y[c, j] - G[c, j])) / max(curv, _TAU)
        t = _move_pair(i, a, j, c, t, Y, U, alpha, gamma)
        counters[3 if a == c else 4] += 1
        if t > 0.0:
            for r in range(n):
                H[a, r] += t * Ki[r]
                H[c, r] -= t * Kj[r]
            _shift_gradient(t, Ki, Kj, m, KFL, JF, S_root, R_i, G, free_sum, common, tail,
                            live, nlive)
            load[1] += nlive
        if shrinking:
            countdown -= 1
            if countdown == 0:
                countdown = shrink_every
                nlive, KFL, dropped = _shrink_entries(chain, gamma, Y, U, alpha, G, up_val,
                                                      low_val, act, nact, is_act, calm,
                                                      patience, live, gather_rows, KF,
                                                      KF_live)
                counters[6] += dropped - shrunk
                shrunk = dropped
        for k in range(m):
            _scan_alpha_active(k, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg)
        load[0] += nact.sum()
