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
  changes one boundary's LP only (one re-solve from its parent's optimum along the
  sign row's margin, :class:`~nordicstats.solvers.l1svm_lp.BoundaryLP`);
* a node whose LP solution has no broken disjunction is feasible for NORDIC-2, and
  its bound is its objective: a new incumbent;
* otherwise the most broken pair (largest min(-f_k, f_{k+1} + delta)) is branched on,
  or, with ``candidates`` > 1 (strong branching), the one among the deepest
  ``candidates`` broken pairs whose two children raise the bound most (product of the
  two gains).  Each evaluated pair's two LP optima stay valid in the whole subtree
  and bound it together with the others (:func:`disjunctive_bound`).

When a node leaves the queue its bound is raised with the LPs solved meanwhile elsewhere
in the tree (a boundary's LP with the node's sign rows plus one bounds that side of a
pair in the whole subtree; :func:`disjunctive_bound` combines such pairs); a node
whose bound has risen past the next one goes back into the queue.  Measured at
n = 1,000, C = 2^4 (``docs/notes/scaling.md``): 13 -> 11 nodes (likert, K = 5),
39 -> 28 (K = 7), 278 -> 207 (overlap, K = 7), 5-7% less CPU time, no LP solved for it.

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

__all__ = ["LazyResult", "branch_on_crossings", "broken_pairs", "disjunctive_bound"]

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
                        max_nodes=2000, candidates=1):
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
    candidates : int, default=1
        Broken pairs evaluated per node (both children's LPs solved) before branching;
        1 branches on the deepest crossing.

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
    heap = [(sum(p[2] for p in parts), next(counter), root, ())]
    nodes, status, plunge = 0, "optimal", None
    while heap or plunge is not None:
        if plunge is not None:
            entry, plunge = plunge, None
        else:
            entry = heapq.heappop(heap)
        bound = entry[0]
        if bound < best[2]:  # the LPs solved since the node was queued may raise its bound
            refreshed = _cached_bound(boundaries, entry[2], entry[3])
            if refreshed > bound:
                entry, bound = (refreshed,) + entry[1:], refreshed
                if bound < best[2] and heap and heap[0][0] < bound:
                    heapq.heappush(heap, entry)  # no longer the best open node
                    continue
        if bound >= best[2]:
            continue  # cannot beat the incumbent
        if _closed(best[2], min([bound] + [h[0] for h in heap[:1]]), mip_gap):
            heapq.heappush(heap, entry)
            break
        if nodes >= max_nodes or (time_limit is not None
                                  and time.perf_counter() - start > time_limit):
            heapq.heappush(heap, entry)
            status = "node_limit" if nodes >= max_nodes else "time_limit"
            break
        nodes += 1
        node, evaluations = entry[2], entry[3]
        parts = [boundaries.solve(k, node[k]) for k in range(m)]
        F = np.column_stack([p[3] for p in parts])
        broken = broken_pairs(F, margin)
        if not broken.any():
            value = sum(p[2] for p in parts)
            if value < best[2]:
                best = (np.column_stack([p[0] for p in parts]), np.array([p[1] for p in parts]),
                        value)
            continue
        children = _branch(boundaries, node, evaluations, parts, F, broken, best[2],
                           candidates)
        children = [(max(child_bound, bound), next(counter), child, known)
                    for child_bound, child, known in children if max(child_bound, bound) < best[2]]
        children.sort(key=lambda c: c[:2])
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



def _branch(boundaries, node, evaluations, parts, F, broken, upper, candidates):
    """Children of ``node`` by strong branching on the deepest broken pairs.

    Both sides of each of the ``candidates`` deepest broken pairs (i, k) are solved:
    V+ = LP_k(rows_k + {f_k(x_i) >= 0}), V- = LP_{k+1}(rows_{k+1} + {f_{k+1}(x_i) <= -delta})
    (inf when infeasible).  The pair with the largest product of its two bound gains is
    branched on.  Every evaluation is kept with the children and bounds their whole
    subtrees (:func:`disjunctive_bound`).

    Returns
    -------
    list of (bound, child node, evaluations)
    """
    values = [p[2] for p in parts]
    depth = np.where(broken, np.minimum(-F[:, :-1], F[:, 1:] + boundaries.margin), -np.inf)
    order = np.argsort(-depth, axis=None, kind="stable")[:max(1, candidates)]
    chosen, known = None, list(evaluations)
    for index in order[np.isfinite(depth.flat[order])]:
        i, k = (int(v) for v in np.unravel_index(int(index), depth.shape))
        sides = [(k, node[k] | {(i, 1)}), (k + 1, node[k + 1] | {(i, -1)})]
        solved = [boundaries.solve(boundary, rows) for boundary, rows in sides]
        levels = [np.inf if out is None else out[2] for out in solved]
        known.append((k, levels[0], levels[1]))
        gains = [min(level, upper) - values[b] for level, (b, _) in zip(levels, sides)]
        floor = 1e-9 * max(1.0, abs(sum(values)))
        score = max(min(gains), floor) * max(max(gains), floor)
        if chosen is None or score > chosen[0]:
            chosen = (score, sides, levels)
    known = tuple(known)
    children = []
    for (boundary, rows), level in zip(chosen[1], chosen[2]):
        if not np.isfinite(level):
            continue
        child = node[:boundary] + (frozenset(rows),) + node[boundary + 1:]
        child_values = values[:boundary] + [level] + values[boundary + 1:]
        children.append((disjunctive_bound(child_values, known), child, known))
    return children


def _cached_bound(boundaries, node, evaluations):
    """The node's :func:`disjunctive_bound` with every LP solved so far that bounds a side.

    A solved LP of boundary k whose sign rows are the node's plus one row r -- or a subset
    of those -- bounds boundary k from below in every descendant that takes side r; where
    both sides of a pair are bounded so, the pair joins the node's own ``evaluations``.
    The branch and bound solves the same boundary with the same rows in many nodes (the
    boundaries' choices combine), so these LPs are mostly in the cache already.
    """
    m = len(node)
    values = [boundaries.cache[(k, node[k])][2] for k in range(m)]
    plus, minus = {}, {}
    for (k, rows), out in boundaries.cache.items():
        extra = rows - node[k]
        if len(extra) != 1:
            continue
        ((i, side),) = extra
        level = np.inf if out is None else out[2]
        if side > 0 and k < m - 1:
            plus[(i, k)] = max(plus.get((i, k), -np.inf), level)
        elif side < 0 and k > 0:
            minus[(i, k - 1)] = max(minus.get((i, k - 1), -np.inf), level)
    found = [(k, plus[(i, k)], minus[(i, k)]) for (i, k) in plus if (i, k) in minus]
    return disjunctive_bound(values, list(evaluations) + found)


def disjunctive_bound(values, evaluations):
    """Lower bound on a node's subtree from its LP values and evaluated disjunctions.

    Boundary k's LP value in any descendant is at least ``values[k]``, and for an
    evaluated pair (i, k) at least V+ on boundary k if the descendant takes side (i)
    there, or V- on boundary k+1 if it takes side (ii) -- the evaluations were made at
    an ancestor, whose sign rows are a subset, and adding rows only raises an LP
    optimum.  Every feasible point takes one side of every pair, so::

        bound = min over assignments of sum_k max(values[k], V of the pairs assigned to k),

    a chain over the boundaries solved exactly by dynamic programming: for pair k a
    threshold a sends every evaluation with V+ <= a to boundary k and the rest to
    k+1 (paying their largest V-).  With one evaluated pair this is the node's LP
    value plus the smaller of its two gains; pairs on boundaries apart add up.

    Parameters
    ----------
    values : list of float
        LP optimum of each of the K-1 boundaries at the node.
    evaluations : iterable of (k, V+, V-)
        Pair k in 0..K-3 and the two sides' LP optima (inf if infeasible).

    Returns
    -------
    float

    Examples
    --------
    >>> disjunctive_bound([1.0, 1.0, 1.0], [(0, 3.0, 2.0), (1, 1.5, 4.0)])
    4.0
    """
    m = len(values)
    by_pair = [[] for _ in range(m)]
    for k, plus, minus in evaluations:
        by_pair[k].append((plus, minus))
    states = {-np.inf: 0.0}  # largest V- sent on to the next boundary -> cost so far
    for k, value in enumerate(values):
        options = _threshold_options(value, by_pair[k])
        following = {}
        for carried, total in states.items():
            for level, sent in options:
                cost = total + max(value, carried, level)
                if cost < following.get(sent, np.inf):
                    following[sent] = cost
        states = following
    return min(states.values())


def _threshold_options(value, pairs):
    """(level kept on boundary k, largest V- sent to k+1) for each threshold of pair k."""
    levels = [value] + sorted({plus for plus, _ in pairs if plus > value})
    return [(level, max((minus for plus, minus in pairs if plus > level), default=-np.inf))
            for level in levels]

