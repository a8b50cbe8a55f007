"""NORDIC-0 by an active set on the ordering increments with a compiled SMO loop inside.

The outer loop is the active set of :mod:`nordicstats.solvers.nordic0` (free
increments F, Lawson-Hanson moves, :class:`~nordicstats.solvers.nordic0.IncrementState`);
for a fixed F the reduced dual is solved by the numba loop of
:mod:`nordicstats.solvers.nordic0_smo_core` (two-variable steps on the shared-omega
gradient, the low-rank correction through the kernel columns of the free rows)
instead of ``active_set``'s working sets of ~80 variables solved by quadprog.

How far each part is solved:

* **Rounds.**  The SMO loop runs to a pair tolerance ``tol`` (decision-value units);
  then the free set is updated at the same tolerance (``max(tol,`` ``ORDER_TOL)``:
  increments below -tol leave, ordering multipliers psi below -tol join; at 0.1 and
  above all negative increments leave at once, below by Lawson-Hanson moves).  While
  F changes the tolerance is kept; once it does not, it is divided by 10, starting
  from ``coarse_tol`` = 1 (the early rounds need no accurate inner optimum), and
  below 1e-3 by what the duality gap asks (:func:`next_tolerance`).
* **Newton on the face.**  From a tolerance of 1e-2 on, the alphas strictly inside
  their box and the positive gammas define a face of the reduced dual, whose optimum
  solves a linear KKT system (:mod:`nordicstats.solvers.nordic0_polish`); a step
  towards it, cut at the bounds, usually ends SMO's linear tail (the gap fell from
  1.7e-5 to 1e-14 in two such steps at n = 1,000, K = 3, C = 16, heavy overlap).
* **Shrinking** (``shrinking``, on from :data:`SHRINKING_MIN_ROWS` rows): at the start
  of every round after the first and every :data:`SHRINK_EVERY` steps, entries at a
  bound that have been in no violating pair at :data:`SHRINK_PATIENCE` consecutive
  shrinks leave the scans and rows with no entry left
  leave the updates of G (the free increments' part reads their kernel rows compacted
  to the rows left); before the run may stop,
  G is recomputed on those rows from H and the free rows and every entry comes back
  (the stopping test is the one without shrinking).
* **Stop.**  From a tolerance of 1e-2 on the relative duality gap
  from the running G = K omega with the intercepts by pooling is checked; the loop
  stops when it is below half the certificate's
  :data:`~nordicstats.solvers.certificate.GAP_TOL` and no increment or ordering
  multiplier violates ``ORDER_TOL`` (half the certificate's
  :data:`~nordicstats.solvers.certificate.VIOLATION_TOL`; a negative psi left out of
  F shows as a stationarity residual, a negative increment as an ordering violation).

Each inner solve starts from the last point (alpha stays dual feasible whatever F
is) and hands back H = K (Y * alpha), from which delta_F and G are recomputed
exactly (:meth:`IncrementState.refresh`), so the rounding drift of G's rank-one
updates is removed at every round; H itself is recomputed from alpha at the end when
K is a dense matrix (with rows on demand the rank-one updates of H are kept: the
product would cost as much as the certificate's).
Kernel rows come from the dense matrix or, for a
:class:`~nordicstats.kernels.KernelMatrix`, from the row cache of the NORDIC-1 SMO
solver, sized to hold every row up to :data:`CACHE_CAP_MB`; the loop reads the free
rows' kernel rows in single precision (:data:`FREE_ROWS_DTYPE`).  The answer is
certified on the full problem (:func:`~nordicstats.solvers.certificate.certified_result`).
Design and measurements: docs/notes/scaling.md.
"""

from __future__ import annotations

import time

import numpy as np

from nordicstats.kernels import KernelMatrix
from nordicstats.solvers.certificate import GAP_TOL, VIOLATION_TOL
from nordicstats.solvers.decomposition import intercepts_by_pooling
from nordicstats.solvers.nordic0 import (
    IncrementState,
    nordic0_result,
    starting_point,
)
from nordicstats.solvers.nordic0_polish import newton_on_face
from nordicstats.solvers.nordic0_smo_core import nordic0_smo_loop
from nordicstats.solvers.smo import FIRST_TOL, SMALLEST_TOL, _row_cache, default_cache_mb

__all__ = ["solve_nordic0_smo", "next_tolerance", "relative_gap", "ORDER_TOL",
           "SMO_MAX_ADD", "CACHE_CAP_MB", "SHRINKING_MIN_ROWS", "SHRINK_EACH_ROUND",
           "SHRINK_EVERY", "SHRINK_PATIENCE", "GATHER_ROWS"]

#: Tolerance of the last free-set updates (increments and ordering multipliers).
ORDER_TOL = VIOLATION_TOL / 2
# Over-relaxation of the pair steps (still descent steps for any factor in (0, 2)): on
# one boundary exact, across boundaries 1.5 times the exact step.  Steps at n = 1,000,
# C = 16 (likert design of benchmarks/bench_scale.py), factors same/cross 1/1, 1/1.5,
# 1/1.8, 1.5/1.5: K = 3 84,550, 47,587, 67,016, 56,123; K = 7 93,406, 79,084, 89,537,
# 86,297 (the same optima).
RELAX_SAME, RELAX_CROSS = 1.0, 1.5
#: Increments added to the free set per round (at least; n // 500 above n = 5,000).
#: Adding ``active_set``'s 50 at the coarse tolerance added mostly increments that
#: left again one round each (Lawson-Hanson).  Steps at n = 1,000 with 50 / 20 / 10 / 5:
#: overlap K = 3, C = 16: 79,653 / 65,452 / 49,577 / 40,435; likert K = 7, C = 16:
#: 60,490 / 46,587 / 45,424 / 40,001; likert K = 5, C = 1: 4,706 / 4,389 / 3,834 / 3,780;
#: overlap K = 5, C = 2^-4: 5,636 / 5,484 / 4,206 / 4,615 (5: more rounds, no faster).
SMO_MAX_ADD = 10
#: Largest kernel-row cache in MiB (the default sizes it to the problem, up to this).
#: Every step reads two kernel rows; a row missing from the cache is computed from X
#: (n kernel values).  NORDIC-1's 200 MiB hold 1,250 of the 20,000 rows at n = 20,000,
#: where most steps then computed both rows (about 1 ms a step under load).
CACHE_CAP_MB = 1024.0
#: Pair and free-set tolerance of the first rounds.  A tier at 1 before the 0.1 of
#: ``active_set`` halves the steps at large C: n = 1,000, C = 16 (designs of
#: benchmarks/bench_scale.py), steps with 0.1 / 1: likert K = 3, 5, 7 25,147 / 12,215,
#: 33,633 / 16,472, 39,614 / 20,733; overlap K = 3, 5, 7 56,492 / 27,632, 63,303 /
#: 30,036, 63,619 / 34,437; C <= 1 no more steps (18 fits: 62,375 / 51,133 in all).
#: Starting at 0.3 (tiers 0.3, 0.03, 0.003) gave 24,000-48,271 at C = 16, and a
#: division by sqrt(10) instead of 10 between tiers 14,897-30,951 for more rounds.
SMO_COARSE_TOL = 1.0
#: Rounds at this tolerance or above drop every negative increment at once
#: (``IncrementState.update_free_set(batch_drop=True)``) instead of one Lawson-Hanson
#: move each: rounds at n = 1,000 fell by 20-35% (likert K = 7, C = 16: 85 -> 68) for
#: the same steps, and each round costs O(n |F|) outside the loop (6 ms at n = 5,000).
BATCH_DROP_TOL = 0.1
#: The compiled loop reads the kernel rows of the free rows (|F| x n, the most memory
#: of a step at n = 5,000) in single precision: 40% less time per step there, the same
#: steps within 5% (docs/notes/scaling.md).  G's rank-|F| updates carry the rounding
#: (about 1e-7 of a step's change) only until the round ends, when G is recomputed from
#: H in double precision; stops and the certificate use that exact G.
FREE_ROWS_DTYPE = np.float32
#: Pair tolerance from which the gap is computed and Newton steps on the face are tried
#: (the tolerances still fall by 10 down to 1e-3).  From 1e-2 instead of 1e-3: steps at
#: n = 1,000 (likert, rare, overlap; K = 3, 5, 7) 189,177 -> 134,398 over the nine fits
#: with C = 16 (likert K = 7 20,733 -> 14,737) and 28,604 -> 24,890 over those with C = 1.
#: Letting the gap set the next tolerance from 1e-2 too (a jump to 1e-4) cost steps on
#: overlap at C = 1 (4,489 -> 6,768 at K = 3).
NEWTON_FROM_TOL = 1e-2
#: Shrinking (the ``shrinking`` option) is on by default from this many rows.  CPU time
#: on / off in one process at n = 1,000 (benchmarks/bench_nordic0_shrinking.py, likert,
#: rare, overlap, K = 3, 5, 7; benchmarks/results/nordic0_shrink_rounds.txt): 0.83-0.91
#: at C = 16, 0.91-1.09 at C = 1 (fits of 0.03-0.16 s), the same optima.  It was 3,000
#: rows while a round started with every entry active (0.88-1.07 at n = 1,000 then).
SHRINKING_MIN_ROWS = 500
#: With shrinking, every round after the first starts with a shrink on the exact G (the
#: driver has just recomputed it): in the later tiers 2-5% of the entries and 8-10% of
#: the rows stay (likert and overlap, n = 5,000), where a round used to restart with
#: all of them and rarely lasted the 1,000 steps to its first shrink.
SHRINK_EACH_ROUND = True
#: With shrinking, steps between two shrinks (at most n; libsvm's min(n, 1000) before).
#: CPU time with 100 against 1,000 in one process (same file): 0.74-0.94 on the nine
#: fits at n = 5,000, C = 16 (likert, rare, overlap; K = 3, 5, 7).
SHRINK_EVERY = 100
#: With shrinking, an entry leaves the scans only after it has been out of every
#: violating pair at this many consecutive shrinks (a count per entry, kept across
#: rounds and restores, reset when the entry could take part in a pair; 1 is libsvm's
#: rule).  With 1, ``likert``, n = 20,000, K = 3, C = 16 took 3,836,171 steps: entries
#: near their bound left at one shrink, went on violating out of the scans, and every
#: restore found them; with 3, 387,425 steps (docs/notes/scaling.md, "A shrink rule that
#: does not swing").
SHRINK_PATIENCE = 3
#: With shrinking, G's updates run over the rows with an active entry (gathered) while
#: they are at most this fraction of the n rows, over all rows above it.  It changes no
#: step; 0.75 against 0.25 at n = 5,000, C = 16 (nine fits, one process each): 13-26%
#: fewer rows updated, CPU time 0.89-1.03 (one fit 1.19, the order of the pair;
#: docs/notes/scaling.md, "The patient shrink's cost per step").
GATHER_ROWS = 0.25


def solve_nordic0_smo(problem, warm_start=None, cache_mb=None, max_iter=None,
                      max_add=None, coarse_tol=SMO_COARSE_TOL, polish=True, shrinking=None):
    """Solve NORDIC-0 (eqs. constraint_b, constraint_omega) to the certificate by SMO.

    Parameters
    ----------
    problem : NordicProblem
        ``method="nordic0"``, ``penalty="l2"``; ``gram`` a dense array or a
        :class:`~nordicstats.kernels.KernelMatrix`.
    warm_start : mapping, optional
        ``{"alpha", "gamma", "C"}`` from a fit of the same data (another C of a grid;
        rescaled by ``problem.C / C``).  The cold start is alpha = 0.
    cache_mb : float, optional
        Memory of the kernel-row cache in MiB (used when ``gram`` is a
        ``KernelMatrix``); default every row up to :data:`CACHE_CAP_MB`
        (:func:`~nordicstats.solvers.smo.default_cache_mb`).
    max_iter : int, optional
        SMO steps over all rounds; default max(10^7, 500 n (K-1)).
    max_add : int, optional
        Increments added to the free set per round; default ``max(10, n // 500)``
        (see :data:`SMO_MAX_ADD`).
    coarse_tol : float, default=1.0
        Pair and free-set tolerance of the first rounds (:data:`SMO_COARSE_TOL`).
    polish : bool, default=True
        From the tolerance 1e-2 on, while the gap is above its target, take Newton
        steps on the face the SMO point identifies
        (:func:`~nordicstats.solvers.nordic0_polish.newton_on_face`) before
        tightening the tolerance.
    shrinking : bool, optional
        libsvm's shrinking in the compiled loop: entries at a bound that have been in
        no violating pair at :data:`SHRINK_PATIENCE` consecutive shrinks leave the
        scans, rows with no active entry the updates of G;
        G is recomputed on them from H and the free rows before the loop may stop, and
        the loop goes on if any violates (the same stopping test).  Default: on from
        :data:`SHRINKING_MIN_ROWS` rows.

    Returns
    -------
    SolverResult
        ``solver="nordic0_smo"``; multipliers alpha, gamma and psi as ``active_set``'s.
    """
    _check(problem, cache_mb, max_iter, max_add, coarse_tol, polish, shrinking)
    clock = time.perf_counter()
    n, m = problem.signs.shape
    max_add = max(SMO_MAX_ADD, n // 500) if max_add is None else int(max_add)
    budget = max(10 ** 7, 500 * n * m) if max_iter is None else int(max_iter)
    alpha, gamma, origin = starting_point(problem, warm_start)
    state = IncrementState(problem, alpha, gamma)
    shrinking = n >= SHRINKING_MIN_ROWS if shrinking is None else bool(shrinking)
    loop = _Loop(problem, default_cache_mb(n, CACHE_CAP_MB) if cache_mb is None else cache_mb,
                 shrinking)
    tol, steps, rounds, status = max(float(coarse_tol), FIRST_TOL), 0, 0, "optimal"
    polished = 0
    while True:
        it, code = loop.run(state, tol, budget - steps,
                            shrink_first=SHRINK_EACH_ROUND and rounds > 0)
        steps, rounds = steps + it, rounds + 1
        if code != 0:
            status = "iteration_limit"
            break
        if m > 1 and state.update_free_set(max(tol, ORDER_TOL), max_add,
                                           batch_drop=tol >= BATCH_DROP_TOL):
            continue
        gap = relative_gap(problem, state) if tol <= NEWTON_FROM_TOL else np.inf
        if polish and np.isfinite(gap) and gap > GAP_TOL / 2:
            taken = newton_on_face(state)
            if taken:
                polished += taken
                gap = relative_gap(problem, state)
        if gap <= GAP_TOL / 2:
            if m < 2 or not state.update_free_set(ORDER_TOL, max_add):
                break
        elif tol <= SMALLEST_TOL:
            break
        else:
            # by 10 down to 1e-3 (libsvm's), then by what the gap asks
            tol = next_tolerance(tol, gap if tol <= FIRST_TOL else np.inf)
    # H was kept exactly by the loop's and the Newton steps' updates (drift ~1e-12); a
    # product with all n^2 kernel values from X would cost as much as the certificate's
    state.refresh(full=not isinstance(state.K, KernelMatrix))
    return nordic0_result(problem, state, "nordic0_smo", status, steps, rounds, origin,
                          time.perf_counter() - clock,
                          info={**loop.info(tol), "newton_steps": polished})


class _Loop:
    """The compiled loop's fixed arrays (labels, bounds, K_ii, the row cache)."""

    def __init__(self, problem, cache_mb, shrinking=False):
        self.cache = _row_cache(problem.gram, cache_mb)
        self.shrinking = shrinking
        self.Y = np.ascontiguousarray(problem.signs.T, dtype=float)
        self.U = np.ascontiguousarray(problem.upper_bounds.T, dtype=float)
        self.diag = self.cache.diagonal()
        self.chain = self.Y.shape[0] > 1
        self.calm = np.zeros(self.Y.shape, np.int32)
        self.load, self.steps = np.zeros(2, np.int64), 0

    def run(self, state, tol, max_iter, shrink_first=False):
        """SMO steps on the reduced dual of ``state``'s free set; (steps, status code)."""
        alpha, H, G = (np.ascontiguousarray(x.T) for x in (state.alpha, state.Hk, state.G))
        gamma = np.ascontiguousarray(state.gamma, dtype=float)
        KF = state.K_free_rows.astype(FREE_ROWS_DTYPE)
        JF = np.ascontiguousarray(state.free[:, 0], dtype=np.int64)
        LF = np.ascontiguousarray(state.free[:, 1], dtype=np.int64)
        S_root = np.ascontiguousarray(state.S_root, dtype=float)
        it, code, _ = nordic0_smo_loop(self.Y, self.U, alpha, gamma, G, H, self.diag, KF, JF,
                                       LF, S_root, self.chain, tol, max(int(max_iter), 0),
                                       RELAX_SAME, RELAX_CROSS, self.shrinking,
                                       shrink_first, SHRINK_EVERY, SHRINK_PATIENCE,
                                       self.calm, self.load, GATHER_ROWS,
                                       *self.cache.arrays())
        self.steps += int(it)
        state.alpha, state.Hk, state.gamma = alpha.T.copy(), H.T.copy(), gamma
        state.refresh(full=False)  # delta_F and G from H, exactly
        return int(it), int(code)

    def info(self, tol):
        """Last tolerance, the steps by kind, the cache's use and the shrinking's work."""
        hits, misses, same, cross = (int(v) for v in self.cache.counters[1:5])
        dropped, restores = (int(v) for v in self.cache.counters[6:8])
        scanned, updated = (float(v) / max(self.steps, 1) for v in self.load)
        return {"tolerance": tol, "cache_hits": hits, "cache_misses": misses,
                "cache_bytes": self.cache.nbytes, "steps": {"pair": same, "cross_pair": cross},
                "shrinking": {"on": self.shrinking, "dropped": dropped,
                              "restores": restores, "entries_scanned_per_step": scanned,
                              "rows_updated_per_step": updated}}


def next_tolerance(tol, gap):
    """The pair tolerance after ``tol`` left the relative gap ``gap`` above GAP_TOL / 2.

    The gap falls about in proportion to the tolerance (measured at n = 1,000, K = 3,
    C = 16: gaps 3e-5, 3e-6, 3e-7 at tolerances 1e-3, 1e-4, 1e-5), so the tolerance is
    scaled by half the ratio of the target to the gap, between 1/100 and 1/2 (1/10 for
    ``gap=inf``, which the driver passes above :data:`~nordicstats.solvers.smo.FIRST_TOL`): a gap
    just above the target costs a short step, not a factor 10 of linear convergence.
    """
    if not np.isfinite(gap):
        return tol / 10.0
    return tol * min(0.5, max(0.01, 0.5 * (GAP_TOL / 2) / gap))


def relative_gap(problem, state):
    """``(P - D) / max(1, |P|)`` at ``state`` from its running G, intercepts by pooling.

    P - D = sum_k omega_k' G_k + sum U xi - e'alpha, xi = (1 - y (G + b))_+.
    """
    omega = state.omega()
    b = intercepts_by_pooling(problem, state.G)
    slack = np.maximum(0.0, 1.0 - problem.signs * (state.G + b))
    quad = float(np.sum(omega * state.G))
    primal = 0.5 * quad + float(np.sum(problem.upper_bounds * slack))
    return (primal - (float(state.alpha.sum()) - 0.5 * quad)) / max(1.0, abs(primal))


def _check(problem, cache_mb, max_iter, max_add, coarse_tol, polish, shrinking):
    if problem.method != "nordic0" or problem.penalty != "l2":
        raise ValueError("solver='nordic0_smo' handles method='nordic0' with penalty 'l2'; got "
                         f"method={problem.method!r}, penalty={problem.penalty!r}.")
    if not isinstance(polish, (bool, np.bool_)):
        raise ValueError(f"The 'polish' option of the nordic0_smo solver must be True or False. "
                         f"Got {polish!r} instead.")
    if shrinking is not None and not isinstance(shrinking, (bool, np.bool_)):
        raise ValueError("The 'shrinking' option of the nordic0_smo solver must be True, False "
                         f"or None. Got {shrinking!r} instead.")
    if problem.gram is None:
        raise ValueError("solver='nordic0_smo' needs problem.gram (a dense array or a "
                         "KernelMatrix).")
    for name, value in (("cache_mb", cache_mb), ("max_iter", max_iter), ("max_add", max_add),
                        ("coarse_tol", coarse_tol)):
        if value is not None and (isinstance(value, bool) or not value > 0):
            raise ValueError(f"The '{name}' option of the nordic0_smo solver must be positive. "
                             f"Got {value!r} instead.")
