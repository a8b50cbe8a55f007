"""BoundaryLP (the L1-SVM LP's dual by cutting planes) against scipy's HiGHS on all columns.

The reference is the primal LP in (theta+, theta-, b, xi) with every kernel column,
solved from scratch by ``scipy.optimize.linprog`` (HiGHS's interior point method): no
column generation, no dual, no warm start.  Tolerances: both solvers stop at 1e-9
feasibility; objectives of order 10-1,000 then agree to ~1e-10 relative, so 1e-8
catches a wrong optimum (a missing row or a wrong multiplier moves it by far more).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from nordicstats.data import binary_signs
from nordicstats.datasets import make_nonlinear
from nordicstats.kernels import make_kernel
from nordicstats.solvers import l1svm_lp
from nordicstats.solvers.l1svm_lp import BoundaryLP

pytest.importorskip("highspy")

RTOL = 1e-8
MARGIN = 1e-3


@pytest.fixture(scope="module")
def boundary():
    """n = 120, K = 4, RBF kernel: the LP of the middle boundary."""
    X, y = make_nonlinear(120, random_state=5, K=4)
    X = X.to_numpy()
    gram = make_kernel("rbf", X)(X, X)
    return gram, binary_signs(y.cat.codes.to_numpy(), 4)[:, 1]


def full_lp(Z, y, costs, sign_rows=()):
    """Optimum of the primal on all columns, or None if infeasible (scipy, HiGHS IPM)."""
    n, p = Z.shape
    A = [np.hstack([-y[:, None] * Z, y[:, None] * Z, -y[:, None], -np.eye(n)])]
    rhs = [-np.ones(n)]
    for i, s in sign_rows:
        A.append(np.concatenate([-s * Z[i], s * Z[i], [-s], np.zeros(n)])[None, :])
        rhs.append([0.0 if s > 0 else -MARGIN])
    cost = np.concatenate([np.ones(2 * p), [0.0], np.broadcast_to(costs, (n,))])
    bounds = [(0, None)] * (2 * p) + [(None, None)] + [(0, None)] * n
    res = linprog(cost, A_ub=np.vstack(A), b_ub=np.concatenate(rhs), bounds=bounds,
                  method="highs-ipm")
    return None if res.status == 2 else res.fun


def primal_objective(Z, y, costs, theta, b):
    """||theta||_1 + u' max(0, 1 - y f): the multipliers read as a primal point."""
    return np.abs(theta).sum() + np.sum(costs * np.maximum(0.0, 1.0 - y * (Z @ theta + b)))


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_dual_cutting_planes_match_the_full_primal(boundary, C):
    Z, y = boundary
    theta, b, objective = BoundaryLP(Z, y).solve(np.full(len(y), C))
    reference = full_lp(Z, y, C)
    assert objective == pytest.approx(reference, rel=RTOL)
    # the row multipliers are the primal optimum: same objective read from (theta, b)
    assert primal_objective(Z, y, C, theta, b) == pytest.approx(reference, rel=RTOL)


def test_restricted_infeasibility_is_cut_by_farkas_rows(boundary):
    # with no theta row yet the sign rows ask b >= 0 and b <= -delta: the restricted
    # primal is infeasible, the full one is not; rows cutting the dual's ray fix it
    Z, y = boundary
    rows = [(3, 1), (8, -1), (40, 1), (41, -1)]
    lp = BoundaryLP(Z, y)
    lp.set_costs(np.full(len(y), 2.0))
    lp.set_sign_rows(rows, MARGIN)
    theta, b, objective = lp.solve()
    f = Z @ theta + b
    assert f[3] >= -1e-9 and f[8] <= -MARGIN + 1e-9 and f[40] >= -1e-9
    assert f[41] <= -MARGIN + 1e-9
    assert objective == pytest.approx(full_lp(Z, y, 2.0, rows), rel=RTOL)
    assert len(lp.columns) < len(y)  # not every row was needed


def test_contradicting_sign_rows_are_infeasible(boundary):
    Z, y = boundary
    lp = BoundaryLP(Z, y)
    lp.set_costs(np.full(len(y), 1.0))
    lp.solve()
    lp.set_sign_rows([(5, 1), (5, -1)], MARGIN)  # f(x_5) >= 0 and f(x_5) <= -delta
    assert lp.solve() is None
    assert full_lp(Z, y, 1.0, [(5, 1), (5, -1)]) is None
    lp.set_sign_rows((), MARGIN)  # and the LP recovers the plain optimum
    assert lp.solve()[2] == pytest.approx(full_lp(Z, y, 1.0), rel=RTOL)


def test_warm_restarts_reach_the_cold_optima(boundary):
    # one LP along a C path with sign rows switched on and off, against a fresh LP per step
    Z, y = boundary
    n = len(y)
    steps = [(0.5, ()), (4.0, ()), (4.0, ((3, 1),)), (4.0, ((3, 1), (17, -1))),
             (4.0, ((17, -1),)), (1.0, ()), (16.0, ((60, 1),))]
    warm = BoundaryLP(Z, y)
    for C, rows in steps:
        warm.set_costs(np.full(n, C))
        warm.set_sign_rows(rows, MARGIN)
        cold = BoundaryLP(Z, y)
        cold.set_costs(np.full(n, C))
        cold.set_sign_rows(rows, MARGIN)
        assert warm.solve()[2] == pytest.approx(cold.solve()[2], rel=1e-9)


def test_same_optimum_without_dropping_slack_rows(boundary, monkeypatch):
    # the cutting planes alone (the cost path would start at C = 10/16 with every row)
    monkeypatch.setattr(l1svm_lp, "USE_COST_PATH", False)
    Z, y = boundary
    costs = np.full(len(y), 10.0)
    dropping = BoundaryLP(Z, y)
    with_drops = dropping.solve(costs)[2]
    monkeypatch.setattr(l1svm_lp, "DROP_SLACK_ROWS", False)
    keeping = BoundaryLP(Z, y)
    assert keeping.solve(costs)[2] == pytest.approx(with_drops, rel=1e-9)
    assert keeping.stats.rows_dropped == 0 and dropping.stats.rows_dropped > 0


def test_an_unchanged_lp_is_not_solved_again(boundary):
    Z, y = boundary
    lp = BoundaryLP(Z, y)
    first = lp.solve(np.full(len(y), 1.0))
    runs = lp.stats.runs
    again = lp.solve(np.full(len(y), 1.0))
    assert lp.stats.runs == runs and lp.stats.solves == 1 and again[2] == first[2]
    assert lp.stats.simplex_iterations > 0 and lp.stats.highs_seconds > 0.0


def test_sign_row_resolves_keep_their_rows_and_reach_the_full_optimum(boundary):
    # re-solves with sign rows add rows without dropping any; the optimum is the full LP's
    Z, y = boundary
    costs = np.full(len(y), 10.0)
    lp = BoundaryLP(Z, y)
    theta, b, _ = lp.solve(costs)
    f = Z @ theta + b
    dropped = lp.stats.rows_dropped
    for i in np.argsort(np.abs(f))[:4]:  # push the points closest to the boundary across
        rows = ((int(i), -1 if f[i] > 0 else 1),)
        lp.set_sign_rows(rows, MARGIN)
        assert lp.solve()[2] == pytest.approx(full_lp(Z, y, costs, rows), rel=RTOL)
    assert lp.stats.rows_dropped == dropped


@pytest.mark.parametrize("self_certify", [False, True])
def test_resolves_along_the_margin_path_confirmed_by_highs(boundary, self_certify,
                                                           monkeypatch):
    # rows switched on one at a time, then off one at a time (each a re-solve from the
    # last optimum along the rows' margins): every optimum is the full LP's, no path gave
    # up, and HiGHS accepted every end basis with no simplex iteration -- or the fresh
    # check certified it and HiGHS did not run
    monkeypatch.setattr(l1svm_lp, "SELF_CERTIFY", self_certify)
    Z, y = boundary
    costs = np.full(len(y), 10.0)
    lp = BoundaryLP(Z, y)
    theta, b, _ = lp.solve(costs)
    f = Z @ theta + b
    rows = [(int(i), -1 if f[i] > 0 else 1) for i in np.argsort(np.abs(f))[:5]]
    iterations = lp.stats.simplex_iterations
    for active in [rows[:c] for c in range(1, 6)] + [rows[c:] for c in range(1, 6)]:
        lp.set_sign_rows(active, MARGIN)
        assert lp.follows_margin_path()
        assert lp.solve()[2] == pytest.approx(full_lp(Z, y, costs, active), rel=RTOL)
    assert lp.stats.margin_paths == 10 and lp.stats.margin_path_fallbacks == 0
    assert lp.stats.margin_path_steps >= 10
    assert lp.stats.simplex_iterations == iterations
    assert lp.stats.self_certified + lp.stats.highs_confirmed == 11  # the root's cost path
    assert lp.stats.self_certified == (11 if self_certify else 0)


def test_infeasible_child_and_a_path_that_gives_up(boundary, monkeypatch):
    # a row contradicting another: the path meets a dual ray and HiGHS proves the LP
    # infeasible from the previous basis; the next re-solve starts from a kept optimum
    # (the root's, one row away).  A path cut at one breakpoint leaves HiGHS to go on.
    Z, y = boundary
    costs = np.full(len(y), 4.0)
    lp = BoundaryLP(Z, y)
    lp.solve(costs)
    lp.set_sign_rows([(5, 1)], MARGIN)
    assert lp.solve()[2] == pytest.approx(full_lp(Z, y, costs, [(5, 1)]), rel=RTOL)
    lp.set_sign_rows([(5, 1), (5, -1)], MARGIN)
    assert lp.solve() is None and full_lp(Z, y, costs, [(5, 1), (5, -1)]) is None
    assert lp.stats.margin_paths == 2 and lp.stats.margin_path_fallbacks == 1
    lp.set_sign_rows([(5, -1)], MARGIN)
    assert lp.follows_margin_path() and lp._basis_rows is None
    theta, b, objective = lp.solve()
    assert objective == pytest.approx(full_lp(Z, y, costs, [(5, -1)]), rel=RTOL)
    assert lp.stats.margin_paths == 3 and lp.stats.margin_path_fallbacks == 1
    monkeypatch.setattr(l1svm_lp, "MARGIN_PATH_MAX_STEPS", 1)
    f = Z @ theta + b
    rows = [(5, -1)] + [(int(i), -1 if f[i] > 0 else 1) for i in np.argsort(np.abs(f))[1:4]]
    lp.set_sign_rows(rows, MARGIN)
    assert lp.follows_margin_path()
    assert lp.solve()[2] == pytest.approx(full_lp(Z, y, costs, rows), rel=RTOL)
    assert lp.stats.margin_path_fallbacks == 2


def test_boundaries_share_their_sign_row_points():
    # two boundaries of one Z share the margin path's arrays: each re-solve reaches its
    # full LP's optimum (the other LP's entries are switched off), and a row asked for
    # by both is stored once
    X, y = make_nonlinear(120, random_state=5, K=4)
    X = X.to_numpy()
    Z = make_kernel("rbf", X)(X, X)
    signs = binary_signs(y.cat.codes.to_numpy(), 4)
    costs = np.full(len(y), 6.0)
    points = l1svm_lp.SignRowPoints(Z)
    lps = [BoundaryLP(Z, signs[:, k], points) for k in (0, 1)]
    rows = [(int(i), 1) for i in np.flatnonzero(signs[:, 1] < 0)[:2]] + [(7, -1)]
    for lp, y_k in zip(lps, (signs[:, 0], signs[:, 1])):
        lp.solve(costs)
        for count in (1, 2, 3):
            lp.set_sign_rows(rows[:count], MARGIN)
            out = lp.solve()
            reference = full_lp(Z, y_k, costs, rows[:count])
            assert (out is None) == (reference is None)
            if out is not None:
                assert out[2] == pytest.approx(reference, rel=RTOL)
        assert lp.stats.margin_paths == 3 and lp.stats.margin_path_fallbacks == 0
    assert points.matrices()[0].shape[0] >= len(y) + len(rows)
    np.testing.assert_array_equal(points.entries(rows), len(y) + np.arange(len(rows)))
    with pytest.raises(ValueError, match="same Z"):
        BoundaryLP(Z[:50], signs[:50, 0], points)
