"""Cost-weighted binary subproblems of ordinal classification under a cost matrix.

A cost matrix ``cost[true, predicted]`` (zero diagonal, rows nondecreasing
away from it) weights the hinge term of a level-l case at boundary k by the
increment ``c_{l,k} = |cost[l, k+1] - cost[l, k]|``
(:func:`nordicstats.costs.cost_to_boundary_weights`).  At one x the weighted
population risk separates over boundaries,

    sum_l eta_l sum_k c_{l,k} V(y_l^(k) f_k) = sum_k [A_k V(f_k) + B_k V(-f_k)],

with the masses of :func:`boundary_masses`.  This module holds those masses,
the cross-ratio condition under which the separate (crossing-allowed)
weighted boundaries are cost-consistent (:func:`cost_crossing_triples`), and
adversarial eta near the ties of a cost matrix (:func:`near_tie_probabilities`).
The checks themselves are :func:`nordicstats.theory.consistency.fisher_consistency`
with ``cost=``.
"""

from __future__ import annotations

import numpy as np

from nordicstats.costs import absolute_cost, check_cost_matrix, cost_to_boundary_weights
from nordicstats.theory.bayes import check_probabilities

__all__ = ["boundary_masses", "cost_crossing_triples", "near_tie_probabilities"]


def boundary_masses(eta, cost=None):
    """Cost-weighted mass above and below every boundary, ``A_k`` and ``B_k``.

    .. math:: A_k = \\sum_{l>k} \\eta_l c_{l,k}, \\qquad B_k = \\sum_{l\\le k} \\eta_l c_{l,k},

    with ``c = cost_to_boundary_weights(cost)``; the weighted population risk
    is ``sum_k [A_k V(f_k) + B_k V(-f_k)]``, and ``B_k - A_k`` is the change of
    expected cost from predicting level k to predicting k+1.  Without a cost
    matrix ``A_k = P(Y > k)`` and ``B_k = P(Y <= k)``.

    Parameters
    ----------
    eta : array-like of shape (K,) or (n, K)
    cost : array-like or DataFrame of shape (K, K), optional

    Returns
    -------
    upper, lower : ndarray of shape (K-1,) or (n, K-1)

    Examples
    --------
    >>> from nordicstats.metrics import DONUT_COSTS
    >>> A, B = boundary_masses([0.7, 0.05, 0.25], DONUT_COSTS)
    >>> A.round(12).tolist(), B.round(12).tolist()
    ([0.6, 0.25], [0.7, 0.1])
    """
    probs, was_1d = check_probabilities(eta)
    K = probs.shape[1]
    weights = cost_to_boundary_weights(absolute_cost(K) if cost is None
                                       else check_cost_matrix(cost, n_levels=K))
    above = np.arange(K)[:, None] > np.arange(K - 1)[None, :]  # level l above boundary k
    upper = probs @ (weights * above)
    lower = probs @ (weights * ~above)
    return (upper[0], lower[0]) if was_1d else (upper, lower)


def cost_crossing_triples(cost):
    """Where separate cost-weighted boundaries can cross: violations of the cross-ratio condition.

    The unconstrained weighted population minimiser of a calibrated margin
    loss has ``sgn f_k* = sgn D_k``, ``D_k = A_k - B_k`` (:func:`boundary_masses`).
    Its sign pattern is the cost-Bayes rule for every eta iff no eta gives
    ``D_k < 0 < D_{k+1}``, and that happens iff for all boundaries k and
    levels ``l <= k`` and ``m >= k+2``

    .. math:: c_{l,k}\\, c_{m,k+1} \\le c_{m,k}\\, c_{l,k+1}

    (the increments of a lower level grow across the next boundary at least as
    fast as those of a higher level).  Proof: the polytope
    ``{eta : D_k <= 0}`` has as vertices the unit vectors of levels with
    ``D_k(e_l) <= 0`` and the points of the edges [e_l, e_m] where ``D_k = 0``;
    ``D_{k+1} <= 0`` at all of them is the condition, and on the edge of a
    violating pair both strict inequalities hold.  For K = 3 the only triple is
    ``(l, k, m) = (0, 0, 2)``; for K = 2 there is none.  Costs whose increments factor as
    ``c_{l,k} = u_l v_k`` (e.g. ``|s_l - s_j|`` for any increasing scores s, or
    a class-weighted version) satisfy it with equality.

    Parameters
    ----------
    cost : array-like or DataFrame of shape (K, K)

    Returns
    -------
    list of tuple (l, k, m)
        Level and boundary codes (0-based) of every violation; empty when the
        separate (unconstrained) weighted problem is cost-consistent.

    Examples
    --------
    >>> from nordicstats.metrics import BALANCE_COSTS, DONUT_COSTS
    >>> cost_crossing_triples(BALANCE_COSTS), cost_crossing_triples(DONUT_COSTS)
    ([], [(0, 0, 2)])
    """
    c = cost_to_boundary_weights(cost)
    K = c.shape[0]
    return [(low, k, high) for k in range(K - 2) for low in range(k + 1)
            for high in range(k + 2, K)
            if c[low, k] * c[high, k + 1] > c[high, k] * c[low, k + 1]]


def near_tie_probabilities(cost, n, random_state=None, low=1e-5, high=1e-3):
    """Adversarial eta near the ties of a cost matrix's Bayes rule and weighted boundaries.

    Even rows lie near a tie of two expected costs, ``R(j) - R(j') = delta``
    for a random pair of levels; odd rows near a balanced weighted boundary,
    ``D_k = A_k - B_k = delta`` (:func:`boundary_masses`); ``|delta|``
    log-uniform on ``[low, high]`` with a random sign.  Each row is the point
    of the segment between two flat-Dirichlet draws on opposite sides of the
    tie where the linear function equals delta.  Under the absolute-error
    matrix both kinds of tie are ``P(Y > k)`` near 1/2
    (:func:`near_half_probabilities`).

    Parameters
    ----------
    cost : array-like or DataFrame of shape (K, K)
    n : int
    random_state : int or numpy Generator, optional
    low, high : float
        Range of ``|delta|``.

    Returns
    -------
    ndarray of shape (n, K)

    Examples
    --------
    >>> from nordicstats.metrics import DONUT_COSTS
    >>> eta = near_tie_probabilities(DONUT_COSTS, 4, random_state=0)
    >>> eta.shape, bool(np.allclose(eta.sum(axis=1), 1.0))
    ((4, 3), True)
    """
    matrix = np.asarray(cost, dtype=float)
    weights = cost_to_boundary_weights(matrix)
    K = matrix.shape[0]
    signs = np.where(np.arange(K)[:, None] > np.arange(K - 1)[None, :], 1.0, -1.0)
    ties = [matrix[:, j] - matrix[:, i] for i in range(K) for j in range(i + 1, K)]
    ties = [v for v in ties if v.min() < 0 < v.max()]  # the others never tie inside
    balances = [v for v in (weights * signs).T if v.min() < 0 < v.max()]
    if not ties and not balances:
        raise ValueError(f"cost {matrix.tolist()} has no ties to approach: no two levels' "
                         "expected costs can be equal inside the simplex.")
    rng = np.random.default_rng(random_state)
    out = np.empty((n, K))
    for i in range(n):
        pool = balances if (i % 2 == 1 and balances) or not ties else ties
        out[i] = _point_near_zero(pool[int(rng.integers(len(pool)))], rng, low, high, K)
    return out


def _point_near_zero(v, rng, low, high, K):
    """A point of the simplex with ``eta @ v = delta``, ``|delta|`` log-uniform in [low, high]."""
    delta = 10.0 ** rng.uniform(np.log10(low), np.log10(high)) * rng.choice([-1.0, 1.0])
    delta = float(np.clip(delta, v.min() / 2, v.max() / 2))
    while True:
        a, b = rng.dirichlet(np.ones(K), size=2)
        ha, hb = a @ v - delta, b @ v - delta
        if ha * hb < 0:
            t = hb / (hb - ha)
            point = np.clip(t * a + (1.0 - t) * b, 0.0, None)
            return point / point.sum()
