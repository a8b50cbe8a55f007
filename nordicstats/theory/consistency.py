"""Numerical check of generalized Fisher consistency (paper, Section 5.1, Definition 1).

Sign conventions (they match :func:`nordicstats.data.binary_signs`).  Boundary
k = 0, ..., K-2 (code-based; the paper's k + 1) separates classes ``<= k`` from
classes ``> k``.  Its dummy label is ``Y^(k) = -1`` if ``Y <= k`` and ``+1`` if
``Y > k``, and ``f_k > 0`` predicts "above boundary k".  Hence

    p_k = P(Y^(k) = +1 | x) = P(Y > k | x) = 1 - sum_{l<=k} eta_l,

and Definition 1's requirement ``sgn f_k* = sgn(1/2 - sum_{l<=k} eta_l)`` reads
``sgn f_k* = sgn(p_k - 1/2)``.  The population problem of a margin loss V is

    min_f  sum_k E[V(Y^(k) f_k)] = sum_k g_k(f_k),   g_k(t) = p_k V(t) + (1 - p_k) V(-t),

over f in R^{K-1} (``constrained=False``: it separates into K-1 one-dimensional
problems) or under the NORDIC-0/1 ordering ``f_0 >= f_1 >= ... >= f_{K-2}``
(``constrained=True``: the problems are coupled, an isotonic problem).

How the sign is judged.  Minimisers may sit at infinity (exponential or
logistic loss when p_k is 0 or 1) or form an interval (hinge at p_k = 1/2 or 1,
truncated losses).  We therefore never ask "what is f*" but "can a wrong sign
be optimal": boundary k is **consistent** iff every minimiser has the Bayes
sign, i.e. iff

    gap_k = min{ risk : f ordered (if constrained), s_k f_k <= 0 } - min{ risk } > tol,

with s_k = sgn(p_k - 1/2), tol = ``1e-12 max(1, |min risk|)``.  A minimiser at
f_k = 0 counts as a wrong sign (the rule is undetermined).  When p_k = 1/2
(within 1e-12) both signs are Bayes and the boundary is consistent by
definition.  All minimisations are over the box ``[-bound, bound]^{K-1}``
(default 20, where the logistic minimiser ``log(p/(1-p))`` needs p within
2e-9 of 0 or 1 to leave the box); a minimiser on the box edge is reported as
"at infinity or beyond the bound".  For convex V the box does not change the
judgement (a convex g_k with its minimum on one side is monotone on the other).

Solvers.  One-dimensional problems: a grid of ``n_grid`` points (always
containing 0) and Brent's method in the best grid cell, plus the exact values
at the interval ends.  Ordered problems with convex V: pool-adjacent-violators
with exact block minimisation (exact for separable convex objectives under a
chain order; Best, Chakravarti & Ubhaya, 2000).  Nonconvex V: dynamic
programming over the grid (exact on the grid) followed by refinement of each
pooled block.  Resolution: for smooth losses the gap is of order
``(p_k - 1/2)^2``, so ``|p_k - 1/2|`` below about 1e-6 is beyond double precision;
such boundaries get a note.

Cost matrices (``cost=``).  For a cost matrix ``cost[true, predicted]`` that is
zero on the diagonal and nondecreasing away from it along every row, a case of
level l weights its hinge term at boundary k by the increment
``c_{l,k} = |cost[l, k+1] - cost[l, k]|`` (:func:`nordicstats.costs.cost_to_boundary_weights`;
the absolute-error matrix gives ``c = 1``, the unweighted problem above).  The
weighted population problem is again a sum over boundaries,

    sum_l eta_l sum_k c_{l,k} V(y_l^(k) f_k) = sum_k [A_k V(f_k) + B_k V(-f_k)],
    A_k = sum_{l>k} eta_l c_{l,k},   B_k = sum_{l<=k} eta_l c_{l,k},

so each boundary is a weighted binary problem with "probability"
``q_k = A_k / (A_k + B_k)`` (``p_weighted``).  The target is the cost-Bayes
rule: boundary k's Bayes sign is that of :func:`~nordicstats.theory.bayes.bayes_boundary_signs`
(+1 when every level of least expected cost lies above k).  Since
``R(k+1) - R(k) = B_k - A_k`` for the expected costs R(j) = sum_l eta_l cost[l, j],

    R(j) = R(0) - S(j),   S(j) = sum_{k<j} D_k,   D_k = A_k - B_k,

and the cost-Bayes level maximises the partial sums S(j).  Two consequences
(docs/notes/weights-theory.md has the measurements):

* Unconstrained: a calibrated loss gives ``sgn f_k* = sgn D_k``, which is the
  cost-Bayes sign pattern iff the signs of D_0, D_1, ... do not go from - to +.
  A crossing ``D_k < 0 < D_{k+1}`` occurs for some eta iff the increments
  violate the cross-ratio condition of :func:`cost_crossing_triples`,
  ``c_{l,k} c_{m,k+1} <= c_{m,k} c_{l,k+1}`` for all ``l <= k < k+2 <= m``.
  The absolute and balance-scale matrices satisfy it, the donut matrix does not.
* Ordered (``constrained=True``): for a convex V differentiable at 0 with
  V'(0) < 0 the set {k : f_k* > 0} of the isotonic minimiser is the prefix
  that maximises sum_{k in prefix} (-g_k'(0)) = ``|V'(0)| S(j)`` (level sets of
  separable convex isotonic problems solve thresholded problems), i.e. the
  cost-Bayes level: the noncrossing weighted problem is cost-consistent for
  every such cost matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from nordicstats.costs import absolute_cost, check_cost_matrix
from nordicstats.theory.bayes import (
    bayes_boundary_signs,
    bayes_rule_cost,
    check_probabilities,
    upper_tail,
)
from nordicstats.theory.losses import get_margin_loss
from nordicstats.theory.weighted import boundary_masses, near_tie_probabilities

__all__ = ["FisherConsistencyResult", "FisherReport", "fisher_consistency",
           "fisher_consistency_report", "near_half_probabilities"]

_GAP_TOL = 1e-12
_FLAT_TOL = 1e-9
_RESOLUTION = 1e-6


@dataclass(frozen=True, eq=False)
class FisherConsistencyResult:
    """Population minimiser of a margin loss at one eta and its sign check.

    Attributes
    ----------
    loss : str
    eta : ndarray of shape (K,)
    constrained : bool
        Whether ``f_0 >= ... >= f_{K-2}`` was imposed.
    p_upper : ndarray of shape (K-1,)
        ``P(Y > k)``.
    expected_sign : ndarray of int, shape (K-1,)
        Bayes sign of each boundary under the cost matrix
        (:func:`~nordicstats.theory.bayes.bayes_boundary_signs`); without a cost
        matrix ``sgn(P(Y > k) - 1/2)``.  0 when Bayes levels lie on both sides.
    f_star : ndarray of shape (K-1,)
        One minimiser (box-limited; see ``notes``).
    consistent : ndarray of bool, shape (K-1,)
    risk_gap : ndarray of shape (K-1,)
        Increase of the minimal risk when boundary k is forced to a wrong sign
        (``s_k f_k <= 0``); NaN where the sign is free.
    boundary_notes : tuple of str
        One note per boundary ("" when nothing to say).
    bound : float
    cost : ndarray of shape (K, K)
        The cost matrix (the absolute-error matrix when none was given).
    p_weighted : ndarray of shape (K-1,)
        ``q_k = A_k / (A_k + B_k)``, the cost-weighted share of the cases above
        boundary k (NaN when no case carries weight there); equals ``p_upper``
        without a cost matrix.
    bayes_level : int
        The cost-Bayes level (lowest on ties).
    """

    loss: str
    eta: np.ndarray
    constrained: bool
    p_upper: np.ndarray
    expected_sign: np.ndarray
    f_star: np.ndarray
    consistent: np.ndarray
    risk_gap: np.ndarray
    boundary_notes: tuple
    bound: float
    cost: np.ndarray
    p_weighted: np.ndarray
    bayes_level: int

    @property
    def failing(self):
        """Code-based indices k of the boundaries whose sign is not recovered."""
        return tuple(int(k) for k in np.flatnonzero(~self.consistent))

    @property
    def failing_boundaries(self):
        """Failing boundaries named ``"k|k+1"`` with the paper's classes 1..K."""
        return tuple(f"{k + 1}|{k + 2}" for k in self.failing)

    @property
    def is_consistent(self):
        """True when every boundary has the Bayes sign."""
        return bool(self.consistent.all())

    @property
    def noncrossing(self):
        """True when the signs of f* fall from + to - once at most (one level is predicted)."""
        return bool(np.all(np.diff((self.f_star > 0).astype(int)) <= 0))

    @property
    def notes(self):
        """The non-empty boundary notes, prefixed with their boundary."""
        return tuple(f"boundary {k + 1}|{k + 2}: {note}"
                     for k, note in enumerate(self.boundary_notes) if note)

    def to_frame(self):
        """One row per boundary: p_upper, p_weighted, expected_sign, f_star, consistent, ..."""
        names = [f"{k + 1}|{k + 2}" for k in range(self.p_upper.size)]
        return pd.DataFrame({"p_upper": self.p_upper, "p_weighted": self.p_weighted,
                             "expected_sign": self.expected_sign,
                             "f_star": self.f_star, "consistent": self.consistent,
                             "risk_gap": self.risk_gap, "note": list(self.boundary_notes)},
                            index=pd.Index(names, name="boundary"))


def fisher_consistency(loss, eta, constrained=True, bound=20.0, n_grid=4001, cost=None):
    """Check Definition 1 (generalized Fisher consistency) for one eta, optionally under costs.

    Minimises ``sum_k [p_k V(f_k) + (1 - p_k) V(-f_k)]`` with
    ``p_k = P(Y > k) = 1 - sum_{l<=k} eta_l`` over ``f in [-bound, bound]^{K-1}``
    (under ``f_0 >= ... >= f_{K-2}`` if ``constrained``) and asks whether every
    minimiser satisfies ``sgn f_k = sgn(p_k - 1/2) = sgn(1/2 - sum_{l<=k} eta_l)``
    (see the module notes for the sign conventions and the judgement rule).

    With a cost matrix the hinge terms of a level-l case are weighted by the
    increments ``c_{l,k}`` of its cost row, the risk becomes

    .. math:: \\sum_k \\big[A_k V(f_k) + B_k V(-f_k)\\big],\\quad
              A_k = \\sum_{l>k} \\eta_l c_{l,k},\\quad B_k = \\sum_{l\\le k} \\eta_l c_{l,k},

    and the target signs are those of the cost-Bayes rule
    :func:`~nordicstats.theory.bayes.bayes_rule_cost` (module notes).

    Parameters
    ----------
    loss : str, MarginLoss or callable
        Margin loss V(u), u = y f; see :mod:`nordicstats.theory.losses`.
    eta : array-like of shape (K,)
        Class probabilities at one x.
    constrained : bool, default=True
        Impose the NORDIC ordering ``f_0 >= f_1 >= ... >= f_{K-2}``.
    bound : float, default=20.0
        Half-width of the search box.
    n_grid : int, default=4001
        Grid points on ``[-bound, bound]`` (0 is always added).
    cost : array-like or DataFrame of shape (K, K), optional
        ``cost[true, predicted]``, levels in order, zero on the diagonal and
        nondecreasing away from it along each row
        (:func:`nordicstats.costs.check_cost_matrix`).  ``None`` means the
        absolute-error matrix, i.e. the unweighted hinge and the median rule.

    Returns
    -------
    FisherConsistencyResult

    Examples
    --------
    >>> res = fisher_consistency("hinge", [0.40, 0.15, 0.25, 0.20])
    >>> res.f_star.round(6).tolist(), res.is_consistent
    ([1.0, -1.0, -1.0], True)
    >>> fisher_consistency("kinked_hinge", [0.1, 0.3, 0.6]).failing_boundaries
    ('2|3',)

    Donut costs (Section 6.2): the cost-Bayes level is class 3, the separate
    weighted SVMs cross, the noncrossing ones recover it.

    >>> from nordicstats.metrics import DONUT_COSTS
    >>> free = fisher_consistency("hinge", [0.7, 0.05, 0.25], False, cost=DONUT_COSTS)
    >>> free.bayes_level, free.f_star.round(6).tolist(), free.failing_boundaries
    (2, [-1.0, 1.0], ('1|2',))
    >>> fisher_consistency("hinge", [0.7, 0.05, 0.25], cost=DONUT_COSTS).f_star.round(6).tolist()
    [1.0, 1.0]
    """
    V = get_margin_loss(loss)
    probs, was_1d = check_probabilities(eta)
    if not was_1d:
        raise ValueError(f"eta must be one probability vector of shape (K,); got shape "
                         f"{probs.shape}. Use fisher_consistency_report for many.")
    bound, n_grid = _check_box(bound, n_grid)
    K = probs.shape[1]
    cost = absolute_cost(K) if cost is None else check_cost_matrix(cost, n_levels=K)
    p = upper_tail(probs[0])
    upper, lower = boundary_masses(probs[0], cost)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = upper / (upper + lower)
    sign = bayes_boundary_signs(probs[0], cost)
    funcs = [_expected_loss(V, a, b) for a, b in zip(upper, lower, strict=True)]
    free = [(-bound, bound)] * p.size
    solve = _solver(V, constrained, bound, n_grid)
    f_star, best = solve(funcs, free)
    gaps = np.full(p.size, np.nan)
    for k in np.flatnonzero(sign != 0):
        domains = list(free)
        domains[k] = (-bound, 0.0) if sign[k] > 0 else (0.0, bound)
        f_wrong, value = solve(funcs, domains)
        if value < best:  # the free search missed it: keep the better point
            f_star, best = f_wrong, value
        gaps[k] = value - best
    tol = _GAP_TOL * max(1.0, abs(best))
    consistent = (sign == 0) | (gaps > tol)
    notes = _notes(funcs, f_star, q, sign, consistent, bound, n_grid, constrained)
    return FisherConsistencyResult(
        loss=V.name, eta=_frozen(probs[0]), constrained=bool(constrained), p_upper=_frozen(p),
        expected_sign=_frozen(sign), f_star=_frozen(f_star), consistent=_frozen(consistent),
        risk_gap=_frozen(gaps), boundary_notes=tuple(notes), bound=bound, cost=_frozen(cost),
        p_weighted=_frozen(q), bayes_level=int(bayes_rule_cost(probs[0], cost)))


def _expected_loss(V, upper, lower):
    def g(t):
        t = np.asarray(t, dtype=float)
        return upper * V(t) + lower * V(-t)
    return g


def _solver(V, constrained, bound, n_grid):
    if not constrained:
        return lambda funcs, domains: _separate(funcs, domains, n_grid)
    if V.convex:
        return lambda funcs, domains: _pava(funcs, domains, n_grid)
    return lambda funcs, domains: _chain_dp(funcs, domains, bound, n_grid)


def _grid(lo, hi, n):
    grid = np.linspace(lo, hi, n)
    return np.union1d(grid, [0.0]) if lo < 0.0 < hi else grid


def _min_1d(h, lo, hi, n_grid):
    """Global minimum of h on [lo, hi]: grid search, then Brent in the best grid cell."""
    if hi <= lo:
        return float(lo), float(h(np.array([lo]))[0])
    grid = _grid(lo, hi, n_grid)
    values = h(grid)
    j = int(np.argmin(values))
    x, value = float(grid[j]), float(values[j])
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    res = minimize_scalar(lambda t: float(h(np.array([t]))[0]), bounds=(a, b),
                          method="bounded", options={"xatol": 1e-12})
    if res.fun < value:
        x, value = float(res.x), float(res.fun)
    return x, value


def _separate(funcs, domains, n_grid):
    points = [_min_1d(g, lo, hi, n_grid) for g, (lo, hi) in zip(funcs, domains, strict=True)]
    return np.array([x for x, _ in points]), float(sum(v for _, v in points))


def _pava(funcs, domains, n_grid):
    """Pool-adjacent-violators for min sum g_k(f_k), f_0 >= f_1 >= ..., g_k convex."""
    blocks = []  # (members, lo, hi, x, value)
    for k, (lo, hi) in enumerate(domains):
        blocks.append(_fit_block([k], funcs, lo, hi, n_grid))
        while len(blocks) > 1 and blocks[-2][3] < blocks[-1][3]:
            upper, lower = blocks[-2], blocks[-1]
            blocks[-2:] = [_fit_block(upper[0] + lower[0], funcs, max(upper[1], lower[1]),
                                      min(upper[2], lower[2]), n_grid)]
    f = np.empty(len(funcs))
    for members, _, _, x, _ in blocks:
        f[members] = x
    return f, float(sum(block[4] for block in blocks))


def _fit_block(members, funcs, lo, hi, n_grid):
    def h(t):
        return sum(funcs[j](t) for j in members)
    x, value = _min_1d(h, lo, hi, n_grid)
    return members, lo, hi, x, value


def _chain_dp(funcs, domains, bound, n_grid):
    """Exact grid minimum of sum g_k(f_k) under f_0 >= f_1 >= ... , then block refinement."""
    grid = _grid(-bound, bound, n_grid)
    positions = np.arange(grid.size)
    total, back = None, []
    for g, (lo, hi) in zip(funcs, domains, strict=True):
        values = np.where((grid >= lo) & (grid <= hi), g(grid), np.inf)
        if total is None:
            total = values
            continue
        rev = total[::-1]
        run = np.minimum.accumulate(rev)
        last = np.maximum.accumulate(np.where(rev == run, positions, 0))
        back.append((grid.size - 1 - last)[::-1])
        total = values + run[::-1]
    index = [int(np.argmin(total))]
    for arg in reversed(back):
        index.append(int(arg[index[-1]]))
    f = grid[np.array(index[::-1])]
    return _refine_blocks(f, funcs, domains, bound, n_grid)


def _refine_blocks(f, funcs, domains, bound, n_grid):
    """Re-minimise each run of equal values between its neighbours (two sweeps)."""
    f = f.copy()
    for _ in range(2):
        start = 0
        while start < f.size:
            stop = start + 1
            while stop < f.size and f[stop] == f[start]:
                stop += 1
            members = list(range(start, stop))
            hi = min([f[start - 1] if start > 0 else bound] + [domains[j][1] for j in members])
            lo = max([f[stop] if stop < f.size else -bound] + [domains[j][0] for j in members])
            x, value = _min_1d(lambda t, m=members: sum(funcs[j](t) for j in m), lo, hi,
                               max(n_grid // 20, 101))
            if value < sum(float(funcs[j](np.array([f[start]]))[0]) for j in members):
                f[start:stop] = x
            start = stop
    value = sum(float(g(np.array([x]))[0]) for g, x in zip(funcs, f, strict=True))
    return f, value


def _notes(funcs, f_star, q, sign, consistent, bound, n_grid, constrained):
    notes = []
    for k, g in enumerate(funcs):
        text = []
        if sign[k] == 0:
            text.append("Bayes levels on both sides (a tie): both signs are Bayes, "
                        "no requirement")
        if np.isnan(q[k]):
            text.append("no case carries weight on this boundary at this eta: f_k is free "
                        "but for the ordering")
        if abs(f_star[k]) >= bound * (1 - 1e-9):
            text.append(f"minimiser at the box bound {f_star[k]:+g}: at infinity or beyond "
                        "the bound")
        else:
            span = _flat_span(g, bound, n_grid)
            if span is not None and not constrained:
                text.append(f"flat minimum: not unique, minimisers span about "
                            f"[{span[0]:.3g}, {span[1]:.3g}]")
            elif span is not None:
                text.append(f"flat minimum of this boundary's own risk on about "
                            f"[{span[0]:.3g}, {span[1]:.3g}]")
        if not consistent[k] and sign[k] != 0 and abs(f_star[k]) < 1e-6:
            text.append("f* = 0 is a minimiser: sign undetermined")
        elif not consistent[k] and sign[k] != 0:
            text.append("a minimiser has the wrong sign")
        if sign[k] != 0 and abs(q[k] - 0.5) < _RESOLUTION:
            text.append("|p_weighted - 1/2| < 1e-6: below the numerical resolution for "
                        "smooth losses")
        notes.append("; ".join(text))
    return notes


def _flat_span(g, bound, n_grid):
    grid = _grid(-bound, bound, n_grid)
    values = g(grid)
    low = values.min()
    near = grid[values <= low + _FLAT_TOL * max(1.0, abs(low))]
    step = 2.0 * bound / (n_grid - 1)
    if near.max() - near.min() <= 2.5 * step:
        return None
    return float(near.min()), float(near.max())


def _frozen(values):
    arr = np.array(values)
    arr.setflags(write=False)
    return arr


def _check_box(bound, n_grid):
    if not np.isscalar(bound) or not np.isfinite(bound) or bound <= 0:
        raise ValueError(f"The 'bound' parameter must be a finite float > 0. Got {bound!r}.")
    if isinstance(n_grid, bool) or not isinstance(n_grid, (int, np.integer)) or n_grid < 11:
        raise ValueError(f"The 'n_grid' parameter must be an int >= 11. Got {n_grid!r}.")
    return float(bound), int(n_grid)


@dataclass(frozen=True, eq=False)
class FisherReport:
    """Fisher-consistency checks of one loss over many eta.

    Attributes
    ----------
    loss : str
    constrained : bool
    table : pandas.DataFrame
        One row per (eta, boundary): ``source`` ("dirichlet(a=...)",
        "near_half" or, with a cost matrix, "near_tie"), ``draw``, ``boundary``
        (classes 1..K, "k|k+1"), ``k``, ``p_upper``, ``p_weighted``,
        ``expected_sign``, ``f_star``, ``consistent``, ``risk_gap``, ``note``,
        ``bayes_level`` (the cost-Bayes level of the eta), and the eta vector
        in columns ``eta1..etaK``.
    counts : pandas.DataFrame
        Per source: ``n_eta``, ``n_boundaries``, ``n_failures`` (boundaries)
        and ``n_eta_failing``.
    cost : ndarray of shape (K, K) or None
        The cost matrix (None: the absolute-error matrix).
    """

    loss: str
    constrained: bool
    table: pd.DataFrame
    counts: pd.DataFrame
    cost: np.ndarray | None = None

    @property
    def failures(self):
        """The rows of ``table`` whose boundary is not consistent."""
        return self.table.loc[~self.table["consistent"]]

    @property
    def n_failures(self):
        """Number of inconsistent boundaries over all eta."""
        return int((~self.table["consistent"]).sum())


def near_half_probabilities(K, n, random_state=None, low=1e-5, high=1e-3):
    """Adversarial eta whose cumulative sums come within ``high`` of 1/2.

    Even rows: ``F_j = sum_{l<=j} eta_l = 1/2 + delta`` at a random boundary j,
    ``|delta|`` log-uniform on ``[low, high]`` with a random sign.  Odd rows
    (when ``K >= 3``): a tiny class straddles 1/2, ``F_{j-1} = 1/2 - a`` and
    ``F_j = 1/2 + b`` with ``a, b`` log-uniform on ``[low, high]``.  Mass on
    either side is spread by a flat Dirichlet.

    Returns
    -------
    ndarray of shape (n, K)

    Examples
    --------
    >>> eta = near_half_probabilities(4, 6, random_state=0)
    >>> bool(np.all(np.abs(np.cumsum(eta, axis=1)[:, :-1] - 0.5).min(axis=1) <= 1e-3))
    True
    """
    rng = np.random.default_rng(random_state)
    out = np.empty((n, K))
    for i in range(n):
        a, b = 10.0 ** rng.uniform(np.log10(low), np.log10(high), size=2)
        if i % 2 == 1 and K >= 3:
            j = int(rng.integers(1, K - 1))
            below, tiny, above = 0.5 - a, a + b, 0.5 - b
            out[i] = np.concatenate([below * rng.dirichlet(np.ones(j)), [tiny],
                                     above * rng.dirichlet(np.ones(K - j - 1))])
        else:
            j = int(rng.integers(1, K))
            delta = a if rng.uniform() < 0.5 else -a
            out[i] = np.concatenate([(0.5 + delta) * rng.dirichlet(np.ones(j)),
                                     (0.5 - delta) * rng.dirichlet(np.ones(K - j))])
    return out


def fisher_consistency_report(loss, n_draws=100, K=None, random_state=0, constrained=True,
                              concentrations=(0.3, 1.0, 5.0), n_near_half=None, bound=20.0,
                              n_grid=4001, cost=None):
    """Check Definition 1 over Dirichlet draws of eta and adversarial near-tie cases.

    Parameters
    ----------
    loss : str, MarginLoss or callable
    n_draws : int, default=100
        eta vectors per Dirichlet concentration.
    K : int, optional
        Number of classes; defaults to the size of ``cost``, else 4.
    random_state : int or numpy Generator, default=0
    constrained : bool, default=True
    concentrations : sequence of float, default=(0.3, 1.0, 5.0)
        Symmetric Dirichlet parameters a (small a: eta near the simplex
        corners, so P(Y > k) near 0 or 1 and minimisers at infinity; large a:
        eta near uniform).
    n_near_half : int, optional
        Number of adversarial cases, :func:`near_half_probabilities` without a
        cost matrix, :func:`near_tie_probabilities` with one; defaults to
        ``n_draws``.
    bound, n_grid, cost
        Passed to :func:`fisher_consistency`.

    Returns
    -------
    FisherReport

    Examples
    --------
    >>> rep = fisher_consistency_report("logistic", n_draws=3, K=3)
    >>> rep.n_failures
    0
    >>> from nordicstats.metrics import DONUT_COSTS
    >>> free = fisher_consistency_report("hinge", 20, constrained=False, cost=DONUT_COSTS)
    >>> int(free.counts.loc["total", "n_eta_failing"]) > 0
    True
    """
    if cost is not None:
        cost = check_cost_matrix(cost, n_levels=K)
        K = cost.shape[0]
    K = 4 if K is None else K
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 2:
        raise ValueError(f"The 'K' parameter must be an int >= 2. Got {K!r}.")
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 0:
        raise ValueError(f"The 'n_draws' parameter must be an int >= 0. Got {n_draws!r}.")
    if any(not np.isfinite(a) or a <= 0 for a in concentrations):
        raise ValueError(f"The 'concentrations' parameter must hold positive floats. "
                         f"Got {list(concentrations)!r}.")
    rng = np.random.default_rng(random_state)
    sources = [(f"dirichlet(a={a:g})", rng.dirichlet(np.full(K, float(a)), size=n_draws))
               for a in concentrations]
    n_near = n_draws if n_near_half is None else int(n_near_half)
    if cost is None:
        sources.append(("near_half", near_half_probabilities(K, n_near, rng)))
    else:
        sources.append(("near_tie", near_tie_probabilities(cost, n_near, rng)))
    frames = []
    for source, etas in sources:
        for draw, eta in enumerate(etas):
            eta = eta / eta.sum()
            res = fisher_consistency(loss, eta, constrained=constrained, bound=bound,
                                     n_grid=n_grid, cost=cost)
            frame = res.to_frame().reset_index()
            frame["bayes_level"] = res.bayes_level
            frame.insert(0, "k", np.arange(K - 1))
            frame.insert(0, "draw", draw)
            frame.insert(0, "source", source)
            for c in range(K):
                frame[f"eta{c + 1}"] = eta[c]
            frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    return FisherReport(loss=get_margin_loss(loss).name, constrained=bool(constrained),
                        table=table, counts=_counts(table), cost=cost)


def _counts(table):
    failed = ~table["consistent"]
    grouped = table.assign(failed=failed).groupby("source", sort=False)
    counts = pd.DataFrame({
        "n_eta": grouped["draw"].nunique(),
        "n_boundaries": grouped.size(),
        "n_failures": grouped["failed"].sum().astype(int),
        "n_eta_failing": grouped.apply(lambda d: d.loc[d["failed"], "draw"].nunique(),
                                       include_groups=False),
    })
    counts.loc["total"] = counts.sum()
    return counts
