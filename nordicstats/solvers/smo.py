"""SMO solver for BSVM and NORDIC-1 (separate intercepts): compiled steps, kernel rows on demand.

The dual and the steps are those of :mod:`nordicstats.solvers.smo_core` (libsvm-type
two-variable steps that keep the K-1 equality rows, extended by the intercept chain
gamma and the noncrossing multipliers phi of the paper's Wolfe dual, Section 3.3).
This module chooses where the kernel rows come from, the start, and how far to
solve:

* **Rows.**  A dense ``problem.gram`` is used as it is; a
  :class:`~nordicstats.kernels.KernelMatrix` (what the model passes when n is
  large) gives its kernel and X to the compiled loop, which computes rows into a
  least-recently-used cache, so no n x n matrix is formed.  The cache is sized to the
  problem (:func:`default_cache_mb`: every row, 8 n^2 bytes, up to
  :data:`CACHE_CAP_MB` = 2 GiB; libsvm's fixed 200 MiB held a sixth of the rows at
  n = 20,000 and a step recomputed ~1 ms of them).  The polishing reads its kernel rows
  from this cache (:func:`~nordicstats.solvers.kernel_rows.kernel_rows_for`).
* **Shrinking** (the default from :data:`SHRINKING_MIN_ROWS` = 3,000 rows): entries
  that cannot move leave the loop's scans and updates of G, and are checked again
  before it stops (libsvm's).  Measured: the loop 1.9x faster at n = 4,000 on the
  long fits, 1.4-1.6x for whole fits at n = 5,000; at n = 1,000 whole fits were no
  faster, the different path sometimes making the polishing settle later
  (docs/notes/scaling.md).
* **Start.**  ``"libsvm"``: the K-1 BSVM optima from libsvm (scikit-learn ``SVC``,
  with the named kernel when the Gram matrix is not stored), which are dual
  feasible with phi = gamma = 0; ``"zero"``: alpha = 0; or ``warm_start``, a
  solution at another C rescaled by C_new / C_old (the constraints are homogeneous).
* **Accuracy.**  Without polishing (``polish=False``) the loop runs to a pair
  tolerance of 1e-3 (libsvm's default), then the relative duality gap with the
  intercepts by pooling is computed from the running G = K Omega; while it exceeds
  half of the certificate's :data:`~nordicstats.solvers.certificate.GAP_TOL` the
  tolerance is divided by 10 and the loop continues from where it stopped.  The
  noncrossing residuals are held to the pair tolerance, and then, in a last phase, to
  half of :data:`~nordicstats.solvers.certificate.VIOLATION_TOL`, since the
  certificate counts them as primal violations.  (Half, not less: G drifts by ~1e-12
  over the steps, and every further factor of 10 costs as many steps again, the
  convergence being linear.)
* **Polishing** (the default).  The loop starts at a pair tolerance of 1e-2, divides
  it by sqrt(10), and after each tolerance tries
  :func:`~nordicstats.solvers.polish.polish_step`: the exact optimum of the face the
  SMO point is on, found by a primal-dual active set, with proximal-point steps when
  that does not settle (heavy class overlap).  Its candidate is taken when it is the
  dual's optimum (every KKT condition holds) or meets the certificate's tolerances,
  and the loop stops there; a proximal point that lowers the dual objective is taken
  too, and the loop goes on from it (overlap, n = 5,000, K = 5, C = 16: 401,924 SMO
  steps instead of 2,658,031).  A polishing step is tried only when the SMO
  work since the last one (steps x n) reaches its expected cost (3 rounds x
  ``ROUND_COST |face|^2``), so polishing at most about doubles the time where it does not pay;
  the last phase waits for a pair tolerance of 1e-5, also when the gap is met first.
  Every decision counts steps and sizes, never seconds: the path is deterministic.

The answer is certified on the full problem by
:func:`~nordicstats.solvers.certificate.certified_result`, whose kernel products
go through ``problem.gram`` (by row blocks for a ``KernelMatrix``).  Design and
measurements: docs/notes/scaling.md.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from nordicstats.kernels import KernelMatrix
from nordicstats.solvers.certificate import GAP_TOL, VIOLATION_TOL, certified_result
from nordicstats.solvers.decomposition import (
    _starting_point,
    intercepts_by_pooling,
    libsvm_start,
)
from nordicstats.solvers.kernel_rows import kernel_rows_for
from nordicstats.solvers.polish import dual_expansion, face_size, polish_step
from nordicstats.solvers.smo_core import RowCache, smo_loop

__all__ = ["solve_smo", "default_cache_mb", "CACHE_CAP_MB", "SHRINKING_MIN_ROWS"]

# the largest kernel-row cache sized by default_cache_mb (MiB): every row up to n = 16,384
CACHE_CAP_MB = 2048.0
# shrinking is on by default from this many rows (measured: no gain for whole fits at
# n = 1,000, where the loops over all rows run vectorised; 1.4-1.9x at 4,000-5,000)
SHRINKING_MIN_ROWS = 3000
STARTS = ("libsvm", "zero")
# first pair tolerance (libsvm's default eps; 1e-2 when polishing) and the smallest one tried
FIRST_TOL, POLISH_FIRST_TOL, SMALLEST_TOL = 1e-3, 1e-2, 1e-10
# polishing steps per fit at most (one after each tolerance of the loop)
MAX_POLISH_ROUNDS = 16
# factor between successive pair tolerances: 10 without polishing, sqrt(10) with it (a
# polishing step costs less than the SMO steps between tolerances, so it is tried twice
# as often)
TOL_FACTOR, POLISH_TOL_FACTOR = 10.0, 10.0 ** 0.5
# rounds of the active set a polishing step is expected to take (for its cost)
EXPECTED_ROUNDS = 3
# cost of one round in SMO work units (steps x n) per |face|^2.  Measured at n = 1,000
# (one process): a round of the block-tridiagonal polishing 10-18 |face|^2 ns for faces
# of 600-2,000 variables (quadratic: kernel blocks and products dominate, the block
# factor is (K-1) (|face| / (K-1))^3), an SMO step ~9 n ns at K = 7
ROUND_COST = 2.0
# while polishing, the pair tolerance at which the last phase (noncrossing residuals to
# half the certificate's tolerance) may start, as without polishing
LAST_PHASE_TOL = 1e-5


def solve_smo(problem, start="zero", warm_start=None, cache_mb=None,
              max_iter=None, libsvm_tol=1e-3, polish=True, shrinking=None):
    """Solve BSVM or NORDIC-1 (``noncrossing="separate"``) by SMO to the certificate.

    Parameters
    ----------
    problem : NordicProblem
        ``method`` in {"bsvm", "nordic1"}, ``penalty="l2"``; for NORDIC-1 the separate
        form (eqs. primal_constraint3-4).  ``gram`` a dense array or a
        :class:`~nordicstats.kernels.KernelMatrix`.
    start : {"zero", "libsvm"}, default="zero"
        Cold start: alpha = 0, or the K-1 libsvm BSVM fits.
    warm_start : mapping, optional
        ``{"alpha", "phi", "gamma", "C"}`` of a solution of the same data (another C
        of a grid); rescaled by ``problem.C / C``.  Overrides ``start``.
    cache_mb : float, optional
        Memory of the kernel-row cache in MiB (used when ``gram`` is a ``KernelMatrix``);
        default :func:`default_cache_mb` (every row, at most ``CACHE_CAP_MB``).
    max_iter : int, optional
        SMO steps over all tolerances; default max(10^7, 500 n (K-1)) (heavy class
        overlap at n = 5,000, K = 5, C = 16 needed more than 2 x 10^6).
    libsvm_tol : float, default=1e-3
        ``tol`` of the libsvm start (its default; the SMO loop does the rest).
    polish : bool, default=True
        After each tolerance of the loop, one active-set polishing step
        (:func:`~nordicstats.solvers.polish.polish_step`, at most
        ``MAX_POLISH_ROUNDS``); the loop stops as soon as the polished point meets
        the certificate's tolerances.  ``False`` gives the plain SMO path.
    shrinking : bool, optional
        libsvm's shrinking: entries that cannot move leave the loop's scans and
        updates, and are checked again (G recomputed on them) before it stops.
        Default: on from ``SHRINKING_MIN_ROWS`` rows.

    Returns
    -------
    SolverResult
        ``solver="smo"``; ``info`` holds the steps, the last tolerance, the cache's
        hits and misses and its memory, the polishing steps taken, the kernel rows
        the polishing computed (``polish_kernel_rows``) and read from the loop's cache
        (``polish_rows_read``; :func:`~nordicstats.solvers.kernel_rows.kernel_rows_for`), and
        ``tiers``: the pair tolerance, the noncrossing tolerance, the SMO steps and the
        size of the interior face after each run of the loop.
    """
    _check(problem, start, cache_mb, max_iter, shrinking)
    clock = time.perf_counter()
    n, m = problem.signs.shape
    chain = problem.method == "nordic1" and m > 1
    alpha, phi, gamma, origin = _start(problem, start, warm_start, libsvm_tol)
    if not chain:
        phi, gamma = np.zeros((n, 0)), np.zeros(0)
    G = problem.gram @ dual_expansion(problem.signs, alpha, phi)
    cache = _row_cache(problem.gram, default_cache_mb(n) if cache_mb is None else cache_mb)
    # the compiled loop works boundary-major (arrays (K-1, n), contiguous per boundary)
    Y = np.ascontiguousarray(problem.signs.T, dtype=float)
    U = np.ascontiguousarray(problem.upper_bounds.T, dtype=float)
    alpha, phi, G = (np.ascontiguousarray(x.T) for x in (alpha, phi, G))
    diag = cache.diagonal()
    budget = max(10 ** 7, 500 * n * m) if max_iter is None else int(max_iter)
    shrinking = n >= SHRINKING_MIN_ROWS if shrinking is None else bool(shrinking)
    tol, steps, status, last_phase = POLISH_FIRST_TOL if polish else FIRST_TOL, 0, "optimal", False
    polishes, steps_since_polish, kernel_rows = [], 0, kernel_rows_for(problem.gram, cache)
    tiers = []  # (pair tolerance, phi tolerance, SMO steps, face size) of each loop run
    while True:
        # noncrossing residuals: as loose as the pairs until the gap is reached, then
        # to half of the certificate's violation tolerance (a last short phase)
        tol_phi = VIOLATION_TOL / 2 if last_phase else tol
        it, code, violation = smo_loop(Y, U, alpha, phi, gamma, G, diag, chain, chain, tol,
                                       tol_phi, budget - steps, shrinking, *cache.arrays())
        steps += it
        tiers.append((tol, tol_phi, int(it), face_size(problem, alpha.T, phi.T, gamma)))
        if code != 0:
            status = "iteration_limit"
            break
        steps_since_polish += it
        work = _polish_work(problem, alpha, phi, gamma) if polish else np.inf
        if polish and len(polishes) < MAX_POLISH_ROUNDS and steps_since_polish * n >= work:
            # the rounds the SMO work since the last polishing step pays for: the proximal
            # steps stop there (the SMO loop goes on from the last proximal point)
            rounds = EXPECTED_ROUNDS * steps_since_polish * n / work if work else None
            polishes.append(_polish(problem, alpha, phi, gamma, G, kernel_rows, rounds))
            steps_since_polish = 0
            if _meets_certificate(problem, alpha.T, phi.T, G.T):
                break
            if tol > LAST_PHASE_TOL:
                # no last phase while polishing can still finish: it would run the
                # noncrossing residuals down at a loose pair tolerance
                tol /= POLISH_TOL_FACTOR
                continue
        if _relative_gap(problem, alpha.T, phi.T, G.T) <= GAP_TOL / 2 or tol <= SMALLEST_TOL:
            if last_phase or not chain or _meets_certificate(problem, alpha.T, phi.T, G.T):
                break
            if polish and tol > LAST_PHASE_TOL and len(polishes) < MAX_POLISH_ROUNDS:
                # the gap is met before any polishing step was worth trying: still no
                # last phase at a loose pair tolerance (at 1e-2 it cost 24,679 of 61,308
                # steps at rare, n = 1,000, K = 7, C = 2^-4)
                tol /= POLISH_TOL_FACTOR
                continue
            last_phase = True
        else:
            tol /= POLISH_TOL_FACTOR if polish else TOL_FACTOR
    alpha, phi = alpha.T.copy(), phi.T.copy()
    omega = dual_expansion(problem.signs, alpha, phi)
    G = problem.gram @ omega
    hits, misses, same, cross, phi_steps, shrunk, rebuilt = (int(v) for v in cache.counters[1:])
    return certified_result(
        problem, "smo", omega, intercepts_by_pooling(problem, G),
        {"alpha": alpha, "phi": phi, "gamma": gamma}, status=status,
        detail=f"{steps} steps, pair tolerance {tol:.0e}", iterations=steps,
        time=time.perf_counter() - clock,
        info={"start": origin, "tolerance": tol, "kkt_violation": float(violation),
              "cache_hits": hits, "cache_misses": misses, "cache_bytes": cache.nbytes,
              "steps": {"pair": same, "cross_pair": cross, "phi": phi_steps},
              "shrinking": {"dropped": shrunk, "reconstructions": rebuilt},
              "active_noncrossing": int(np.sum(phi > 0)) + int(np.sum(gamma > 0)),
              "polish": [dataclasses.asdict(step) for step in polishes],
              "polish_kernel_rows": kernel_rows.computed,
              "polish_rows_read": kernel_rows.read, "tiers": tiers})


def default_cache_mb(n, cap_mb=CACHE_CAP_MB):
    """Kernel-row cache for n rows: all of them (8 n^2 bytes), at most ``cap_mb`` MiB.

    The rows are allocated lazily (``np.zeros``), so the memory used is that of the
    rows computed.  NORDIC-0's solver passes its own, smaller cap.

    Examples
    --------
    >>> default_cache_mb(5000), default_cache_mb(20000)
    (190.73486328125, 2048.0)
    >>> default_cache_mb(20000, cap_mb=1024.0)
    1024.0
    """
    return min(float(cap_mb), 8.0 * n * n / 2 ** 20)


def _check(problem, start, cache_mb, max_iter, shrinking):
    if problem.method not in ("bsvm", "nordic1") or problem.penalty != "l2" or (
            problem.method == "nordic1" and problem.noncrossing != "separate"):
        raise ValueError(
            "solver='smo' handles method 'bsvm', and 'nordic1' with noncrossing='separate', "
            f"penalty 'l2'; got method={problem.method!r}, noncrossing={problem.noncrossing!r}, "
            f"penalty={problem.penalty!r}. Use solver='decomposition'.")
    if problem.gram is None:
        raise ValueError("solver='smo' needs problem.gram (a dense array or a KernelMatrix).")
    if shrinking is not None and not isinstance(shrinking, (bool, np.bool_)):
        raise ValueError("The 'shrinking' option of the smo solver must be True, False or None. "
                         f"Got {shrinking!r} instead.")
    if start not in STARTS:
        raise ValueError(f"The 'start' option of the smo solver must be one of {list(STARTS)}. "
                         f"Got {start!r} instead.")
    for name, value in (("cache_mb", cache_mb), ("max_iter", max_iter)):
        if value is not None and (isinstance(value, bool) or not value > 0):
            raise ValueError(f"The '{name}' option of the smo solver must be positive. "
                             f"Got {value!r} instead.")


def _start(problem, start, warm_start, libsvm_tol):
    """(alpha, phi, gamma, origin) of a dual feasible starting point, as float arrays."""
    n, m = problem.signs.shape
    if warm_start is not None:
        alpha, phi, gamma, _, origin = _starting_point(problem, warm_start, libsvm_tol)
    else:
        phi, gamma = np.zeros((n, max(m - 1, 0))), np.zeros(max(m - 1, 0))
        alpha = libsvm_start(problem, tol=libsvm_tol)[0] if start == "libsvm" \
            else np.zeros((n, m))
        origin = start
    return (np.ascontiguousarray(alpha, dtype=float), np.ascontiguousarray(phi, dtype=float),
            np.ascontiguousarray(gamma, dtype=float), origin)


def _row_cache(gram, cache_mb):
    """The compiled loop's row source: the dense matrix, or the kernel of a KernelMatrix."""
    if isinstance(gram, KernelMatrix):
        kernel = gram.kernel
        return RowCache(gram.X, None, kernel.name, gamma=kernel.gamma or 1.0,
                        coef0=kernel.coef0, degree=float(kernel.degree), cache_mb=cache_mb)
    return RowCache(None, gram, "precomputed")


def _polish(problem, alpha, phi, gamma, G, kernel_rows, max_rounds=None):
    """One polishing step on the boundary-major arrays, taken (in place) when its
    candidate is the optimum, meets the certificate's tolerances, or is a proximal point
    that lowers the dual objective (the SMO loop goes on from there); the kernel rows of
    its faces are kept in ``kernel_rows`` for the next steps."""
    step, candidate = polish_step(problem, alpha.T, phi.T, gamma, G.T,
                                  intercepts_by_pooling(problem, G.T), kernel_rows,
                                  max_rounds=max_rounds)
    if candidate is None or not ((step.descent and (step.converged or step.proximal))
                                 or _meets_certificate(problem, candidate["alpha"],
                                                       candidate["phi"], candidate["G"])):
        return step
    for name, target in (("alpha", alpha.T), ("phi", phi.T), ("gamma", gamma), ("G", G.T)):
        target[...] = candidate[name]
    return dataclasses.replace(step, accepted=True)


def _polish_work(problem, alpha, phi, gamma):
    """Expected cost of a polishing step in SMO work units (steps x n).

    A polishing step is tried only when the SMO steps since the last one did at least
    this much work, so that polishing at most doubles the time where it does not pay
    (heavy class overlap at small C: thousands of free alphas, and no face guess settles).
    A round costs ``ROUND_COST size^2`` units; ``EXPECTED_ROUNDS`` = 3 rounds are
    counted (measured at n = 1,000, 18 fits with K = 5, 7: 4-10 rounds per step that
    settles, 2-10 per step that does not).
    """
    size = face_size(problem, alpha.T, phi.T, gamma)
    return EXPECTED_ROUNDS * ROUND_COST * float(size) ** 2


def _meets_certificate(problem, alpha, phi, G):
    """Relative gap and noncrossing violation (K omega_k >= K omega_k+1) both below half
    of the certificate's tolerances, from the running G."""
    crossing = float(np.max(G[:, 1:] - G[:, :-1], initial=0.0)) if G.shape[1] > 1 else 0.0
    return (_relative_gap(problem, alpha, phi, G) <= GAP_TOL / 2
            and crossing <= VIOLATION_TOL / 2)


def _relative_gap(problem, alpha, phi, G):
    """(P - D) / max(1, |P|) from the running G, with the intercepts by pooling.

    P - D = sum_k omega_k' G_k + sum U xi - e'alpha, with xi = (1 - y (G + b))_+.
    """
    omega = dual_expansion(problem.signs, alpha, phi)
    b = intercepts_by_pooling(problem, G)
    slack = np.maximum(0.0, 1.0 - problem.signs * (G + b))
    quad = float(np.sum(omega * G))
    primal = 0.5 * quad + float(np.sum(problem.upper_bounds * slack))
    return (primal - (float(alpha.sum()) - 0.5 * quad)) / max(1.0, abs(primal))
