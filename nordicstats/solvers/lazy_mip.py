"""NORDIC-2 (l1) by branch and bound over the disjunctions that the relaxation breaks.

NORDIC-2 asks, for every training point i and k = 1, ..., K-2, that
f_k(x_i) >= 0 or f_{k+1}(x_i) <= -delta (paper, eqs. cond1-cond2; delta =
``SIGN_MARGIN`` of :mod:`nordicstats.solvers.milp`).  Without these disjunctions the
problem splits into K-1 L1-SVM LPs, whose optimum has only a handful of crossing
rows (0-3 at n = 400, ``docs/notes/solvers.md``).  So instead of handing SCIP all
n(K-2) disjunctions with a dense n x n kernel block per boundary, this module
branches only on the disjunctions that the current LP solution breaks:

* a node fixes, for some pairs (i, k), which side holds: f_k(x_i) >= 0 (a sign row
  on boundary k) or f_{k+1}(x_i) <= -delta (a sign row on boundary k+1); its LP
  still splits by boundary, so its bound is the sum of K-1 LP optima, and a child
  changes one boundary's LP only (one warm-started re-solve,
  :class:`~nordicstats.solvers.l1svm_lp.BoundaryLP`);
* a node whose LP solution has no broken disjunction is feasible for NORDIC-2, and
  its bound is its objective: a new incumbent;
* otherwise the most broken pair (largest min(-f_k, f_{k+1} + delta)) is branched on.

Nodes are taken best bound first, with plunging (the better child is processed next)
so that an incumbent appears after about as many LPs as the root has crossings.  The
search stops when the relative gap ``(incumbent - bound) / min(|incumbent|, |bound|)``
is at most ``mip_gap``, when no open node remains (proven optimal), or at a node or
time limit, returning its incumbent and bound (the caller then hands SCIP the
incumbent as a start).  The bound is valid because each node LP is a relaxation of
NORDIC-2 restricted to the node's choices, and the two children's choices cover
the node's feasible set.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["LazyResult", "branch_on_crossings", "broken_pairs"]

#: Tolerance on side (i): f_k(x_i) >= -FEAS counts as satisfied (HiGHS's 1e-9
#: feasibility tolerance; the caller's intercept polish removes such a shift exactly).
FEAS = 1e-9


@dataclass(frozen=True)
class LazyResult:
    """Outcome of :func:`branch_on_crossings`.

    Attributes
    ----------
    theta, b : ndarray or None
        Best crossing-free point found (None if none beat ``incumbent``).
    objective : float
        Its objective (``incumbent`` when nothing better was found).
    bound : float
        Proven lower bound on NORDIC-2's optimum.
    nodes, lp_solves : int
    status : {"optimal", "gap_limit", "node_limit", "time_limit"}
    """

    theta: np.ndarray | None
    b: np.ndarray | None
    objective: float
    bound: float
    nodes: int
    lp_solves: int
    status: str


def broken_pairs(F, margin):
    """Boolean (n, K-2): f_k(x_i) < 0 and f_{k+1}(x_i) > -margin (up to :data:`FEAS`)."""
    return (F[:, :-1] < -FEAS) & (F[:, 1:] > -margin + FEAS)


class _Boundaries:
    """Per boundary: LP optimum for a set of sign rows, cached (one re-solve per child)."""

    def __init__(self, lps, Z, margin):
        self.lps, self.Z, self.margin = lps, Z, margin
        self.cache, self.solves = {}, 0

    def solve(self, k, rows):
        key = (k, rows)
        if key not in self.cache:
            self.lps[k].set_sign_rows(rows, self.margin)
            out = self.lps[k].solve()
            self.solves += 1
            self.cache[key] = None if out is None else (out[0], out[1], out[2],
                                                        self.Z @ out[0] + out[1])
        return self.cache[key]


def branch_on_crossings(lps, Z, margin, incumbent, mip_gap=1e-6, time_limit=None,
                        max_nodes=2000):
    """Branch and bound on the broken disjunctions (see the module docstring).

    Parameters
    ----------
    lps : list of BoundaryLP
        One per boundary, slack costs set, no sign rows active.
    Z : ndarray of shape (n, p)
        f_k(x_i) = Z_i theta_k + b_k.
    margin : float
        delta of side (ii).
    incumbent : float
        Objective of a known crossing-free point (an upper bound).
    mip_gap : float
    time_limit : float, optional
        Seconds.
    max_nodes : int

    Returns
    -------
    LazyResult
    """
    start = time.perf_counter()
    boundaries = _Boundaries(lps, Z, margin)
    m = len(lps)
    root = tuple(frozenset() for _ in range(m))
    parts = [boundaries.solve(k, root[k]) for k in range(m)]
    best = (None, None, float(incumbent))
    counter = itertools.count()
    heap = [(sum(p[2] for p in parts), next(counter), root)]
    nodes, status, plunge = 0, "optimal", None
    while heap or plunge is not None:
        if plunge is not None:
            bound, _, node = plunge
            plunge = None
        else:
            bound, _, node = heapq.heappop(heap)
        if bound >= best[2]:
            continue  # cannot beat the incumbent
        if _closed(best[2], min([bound] + [h[0] for h in heap[:1]]), mip_gap):
            heapq.heappush(heap, (bound, next(counter), node))
            break
        if nodes >= max_nodes or (time_limit is not None
                                  and time.perf_counter() - start > time_limit):
            heapq.heappush(heap, (bound, next(counter), node))
            status = "node_limit" if nodes >= max_nodes else "time_limit"
            break
        nodes += 1
        parts = [boundaries.solve(k, node[k]) for k in range(m)]
        F = np.column_stack([p[3] for p in parts])
        broken = broken_pairs(F, margin)
        if not broken.any():
            if bound < best[2]:
                best = (np.column_stack([p[0] for p in parts]), np.array([p[1] for p in parts]),
                        bound)
            continue
        i, k = _most_broken(F, broken, margin)
        children = []
        for boundary, side in ((k, 1), (k + 1, -1)):
            rows = node[boundary] | {(int(i), side)}
            solved = boundaries.solve(boundary, rows)
            if solved is None:
                continue
            child = node[:boundary] + (frozenset(rows),) + node[boundary + 1:]
            children.append((bound - parts[boundary][2] + solved[2], next(counter), child))
        children = [c for c in sorted(children) if c[0] < best[2]]
        if children:
            plunge = children[0]
            for child in children[1:]:
                heapq.heappush(heap, child)
    for lp in lps:  # leave the LPs as the plain relaxation (a C grid reuses them)
        lp.set_sign_rows((), margin)
    open_bound = min((h[0] for h in heap), default=np.inf)
    bound = min(open_bound, best[2])
    if status == "optimal" and open_bound < best[2]:
        status = "gap_limit"
    return LazyResult(best[0], best[1], best[2], bound, nodes, boundaries.solves, status)


def _closed(upper, lower, mip_gap):
    if lower >= upper:
        return True
    denominator = min(abs(upper), abs(lower))
    return denominator > 0 and (upper - lower) / denominator <= mip_gap


def _most_broken(F, broken, margin):
    depth = np.minimum(-F[:, :-1], F[:, 1:] + margin)
    depth = np.where(broken, depth, -np.inf)
    return np.unravel_index(int(np.argmax(depth)), depth.shape)
