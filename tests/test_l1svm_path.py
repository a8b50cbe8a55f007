"""The L1-SVM LP's cost path (l1svm_path) against scipy's HiGHS on the primal with all columns.

The reference (``full_lp`` of ``test_l1svm_lp``) is the primal LP in (theta+, theta-, b,
xi) with every column, solved from scratch by HiGHS's interior point method, no basis
or path involved.  The path's end point is read as a primal point (theta, b) and its
objective ||theta||_1 + u' max(0, 1 - y f) compared to 1e-9 relative: both solvers stop
at 1e-9 feasibility on objectives of order 1-1,000, and a wrong vertex (one pivot too
many or too few) moves the objective by far more than that.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_l1svm_lp import full_lp, primal_objective

from nordicstats.data import binary_signs
from nordicstats.datasets import make_nonlinear
from nordicstats.kernels import make_kernel
from nordicstats.solvers import l1svm_lp, l1svm_path
from nordicstats.solvers.l1svm_lp import BoundaryLP
from nordicstats.solvers.l1svm_path import follow_cost_path

pytest.importorskip("highspy")

RTOL = 1e-9
PERTURBATION = l1svm_lp.PATH_PERTURBATION


def start_basis(Z, y, u, lam):
    """HiGHS's optimal basis of the LP at costs lam u, without the path."""
    lp = BoundaryLP(Z, y)
    lp.set_costs(lam * u)
    lp._cutting_planes()
    return lp.basis_sets()


def random_problem(seed, n=60, duplicates=0, kernel="rbf"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if duplicates:  # copies of some points, half of them with the other label
        X[-duplicates:] = X[:duplicates]
    y = np.where(X[:, 0] + 0.5 * np.sin(2 * X[:, 1]) + rng.logistic(size=n) > 0.3, 1.0, -1.0)
    if duplicates:
        y[-duplicates:] = np.where(np.arange(duplicates) % 2 == 0, y[:duplicates],
                                   -y[:duplicates])
    Z = X if kernel == "linear" else make_kernel("rbf", X, gamma=0.5)(X, X)
    return Z, y, rng.uniform(0.5, 2.0, size=n)


def assert_matches_full_lp(Z, y, u, end):
    reference = full_lp(Z, y, end.lam * u)
    assert primal_objective(Z, y, end.lam * u, end.theta, end.b) == \
        pytest.approx(reference, rel=RTOL)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("target", [4.0, 30.0])
def test_path_end_is_the_full_lp_optimum(seed, target):
    # random RBF problems with unequal slack costs, from C = 1 to C = 4 or 30
    Z, y, u = random_problem(seed)
    end = follow_cost_path(Z, y, u, 1.0, target, *start_basis(Z, y, u, 1.0))
    assert end.followed and end.lam == target and end.steps > 0
    assert_matches_full_lp(Z, y, u, end)
    # the end basis is a vertex: |E| = |A| + 1, the elbow points on the margin
    f = Z @ end.theta + end.b
    assert end.elbow.size == end.active.size + 1
    np.testing.assert_allclose(y[end.elbow] * f[end.elbow], 1.0, atol=1e-9)
    assert np.all(np.sign(end.theta[end.active]) * end.sign >= 0)


def test_linear_design_and_duplicated_points():
    # Z = X (n x 3, not square), and six points repeated (three with the other label):
    # the path either reaches the optimum or says it gave up
    for seed in range(4):
        Z, y, u = random_problem(seed, n=50, duplicates=6, kernel="linear")
        end = follow_cost_path(Z, y, u, 0.5, 20.0, *start_basis(Z, y, u, 0.5))
        assert end.followed
        assert_matches_full_lp(Z, y, u, end)
        Z, y, u = random_problem(seed, n=50, duplicates=6)
        end = follow_cost_path(Z, y, u, 0.5, 20.0, *start_basis(Z, y, u, 0.5))
        if end.followed:
            assert_matches_full_lp(Z, y, u, end)
        else:
            assert end.status in (l1svm_path.STALLED, l1svm_path.SINGULAR)


def test_separable_data_at_large_cost():
    # separable classes: at C = 1e4 every slack is zero and the path ends at the
    # minimal-norm separator; the optimum is still the full LP's
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += 0.5 * y
    Z, u = make_kernel("rbf", X, gamma=0.5)(X, X), np.ones(40)
    end = follow_cost_path(Z, y, u, 0.5, 1e4, *start_basis(Z, y, u, 0.5))
    assert end.followed
    assert_matches_full_lp(Z, y, u, end)
    assert np.all(y * (Z @ end.theta + end.b) >= 1 - 1e-9)


def test_path_ending_at_a_breakpoint():
    # stop after 7 pivots (the 7th breakpoint), then follow a fresh path exactly to it
    Z, y, u = random_problem(11)
    start = start_basis(Z, y, u, 1.0)
    cut = follow_cost_path(Z, y, u, 1.0, 50.0, *start, max_steps=6)
    assert cut.status == l1svm_path.STEP_LIMIT and 1.0 < cut.lam < 50.0
    end = follow_cost_path(Z, y, u, 1.0, cut.lam, *start)
    assert end.followed and end.lam == cut.lam
    assert_matches_full_lp(Z, y, u, end)


def unbalanced_boundary():
    """1 of 4 classes against 3 (n = 150): at C = 0.02 the LP's optimum is theta = 0,
    b = 1 with every point of the larger class on the margin (a degenerate vertex)."""
    X, y = make_nonlinear(150, random_state=2, K=4)
    X = X.to_numpy()
    Z = make_kernel("rbf", X)(X, X)
    signs = binary_signs(y.cat.codes.to_numpy(), 4)[:, 0]
    return Z, signs, np.ones(len(signs))


def overlapping_outer_boundary(seed, k):
    """Boundary k of five classes cut at quantiles of a latent with heavy noise (3 Logistic,
    as the benchmark's ``overlap`` design), n = 200, RBF: at C = 1 its start is degenerate."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 3))
    latent = X @ np.array([1.0, 0.6, -0.3]) + np.sin(2 * X[:, 0]) + 3 * rng.logistic(size=200)
    classes = np.searchsorted(np.quantile(latent, [0.2, 0.4, 0.6, 0.8]), latent)
    Z = make_kernel("rbf", X, gamma=0.2)(X, X)
    return Z, np.where(classes > k, 1.0, -1.0), np.ones(200)


def test_margin_perturbation_keeps_the_start_optimal():
    # the perturbed margins keep the start's vertex and make every nonbasic point
    # strictly feasible: y f > 1 + eps on R, y f < 1 + eps on L, = 1 on E
    Z, signs, u = unbalanced_boundary()
    point_status, active, sign = start_basis(Z, signs, u, 0.02)
    assert active.size == 0 and np.sum(point_status == 2) == 1
    eps = l1svm_path.margin_perturbation(point_status, PERTURBATION)
    assert np.all(eps[point_status == 2] == 0.0)
    assert np.all(np.abs(eps[point_status != 2]) >= PERTURBATION)
    assert np.all(np.abs(eps) < 2 * PERTURBATION) and np.unique(eps[point_status == 0]).size == \
        np.sum(point_status == 0)
    at_start = follow_cost_path(Z, signs, u, 0.02, 0.02, point_status, active, sign,
                                perturbation=PERTURBATION)
    margin = signs * (Z @ at_start.theta + at_start.b) - 1.0  # 0 for the larger class
    assert np.sum(np.abs(margin) < 1e-12) > 90  # 96 of the 150 points
    assert np.all((margin - eps)[point_status == 0] > 0)
    assert np.all((margin - eps)[point_status == 1] < 0)


def test_degenerate_start_is_followed_with_perturbed_margins():
    # theta = 0 and the larger class on the margin: the path stalls on the LP itself
    # (MAX_ZERO_STEPS zero-length edges) and reaches the full LP's optimum on the
    # perturbed one; the end basis's vertex is read without the perturbation
    Z, signs, u = unbalanced_boundary()
    start = start_basis(Z, signs, u, 0.02)
    stalled = follow_cost_path(Z, signs, u, 0.02, 4.0, *start)
    assert stalled.status == l1svm_path.STALLED and stalled.lam < 4.0
    end = follow_cost_path(Z, signs, u, 0.02, 4.0, *start, perturbation=PERTURBATION)
    assert end.followed and end.steps > l1svm_path.MAX_ZERO_STEPS
    assert_matches_full_lp(Z, signs, u, end)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [0, 3])
def test_overlapping_outer_boundaries(seed, k, monkeypatch):
    # the outer boundaries of a heavily overlapping design from C = 1 to 16: degenerate
    # (the plain path stalls), followed with perturbed margins.  The path's end basis is
    # the perturbed LP's optimum, within the perturbation of the LP's own (its objective
    # moves by at most sum_i |eps_i| mu_i <= 2e-6 u'1 here, 1e-6 relative); HiGHS goes
    # on from it to the LP's optimum, which matches the full LP to 1e-9
    Z, signs, u = overlapping_outer_boundary(seed, k)
    start = start_basis(Z, signs, u, 1.0)
    assert follow_cost_path(Z, signs, u, 1.0, 16.0, *start).status == l1svm_path.STALLED
    end = follow_cost_path(Z, signs, u, 1.0, 16.0, *start, perturbation=PERTURBATION)
    assert end.followed
    reference = full_lp(Z, signs, 16.0 * u)
    assert primal_objective(Z, signs, 16.0 * u, end.theta, end.b) == \
        pytest.approx(reference, rel=1e-6)
    monkeypatch.setattr(l1svm_lp, "PATH_START_FRACTION", 1.0 / 16.0)
    lp = BoundaryLP(Z, signs)
    theta, b, objective = lp.solve(16.0 * u)
    assert lp.stats.path_fallbacks == 0 and lp.stats.path_steps == end.steps
    assert objective == pytest.approx(reference, rel=RTOL)
    assert primal_objective(Z, signs, 16.0 * u, theta, b) == pytest.approx(objective, rel=RTOL)


def test_boundary_lp_follows_a_degenerate_start(monkeypatch):
    # BoundaryLP's path (perturbed margins) needs no fallback and HiGHS confirms its end
    # basis with no simplex iteration; with the perturbation off the path gives up and
    # HiGHS goes on from the start's basis -- both to the full LP's optimum
    Z, signs, u = unbalanced_boundary()
    monkeypatch.setattr(l1svm_lp, "PATH_START_FRACTION", 0.02 / 4.0)
    start = BoundaryLP(Z, signs)
    start.solve(0.02 * u)
    reference = full_lp(Z, signs, 4.0)
    for perturbation, fallbacks in ((l1svm_lp.PATH_PERTURBATION, 0), (0.0, 1)):
        monkeypatch.setattr(l1svm_lp, "PATH_PERTURBATION", perturbation)
        lp = BoundaryLP(Z, signs)
        theta, b, objective = lp.solve(4.0 * u)
        assert lp.stats.path_fallbacks == fallbacks and lp.stats.path_steps > 0
        assert objective == pytest.approx(reference, rel=RTOL)
        assert primal_objective(Z, signs, 4.0, theta, b) == pytest.approx(objective, rel=RTOL)
        if not fallbacks:
            assert lp.stats.simplex_iterations == start.stats.simplex_iterations


def test_boundary_lp_confirms_the_path_in_highs(monkeypatch):
    # the LP solved through the path equals the LP solved without it, and HiGHS
    # accepts the path's end basis as optimal: no simplex iteration after it
    X, y = make_nonlinear(200, random_state=4, K=3)
    X = X.to_numpy()
    Z = make_kernel("rbf", X)(X, X)
    signs = binary_signs(y.cat.codes.to_numpy(), 3)[:, 1]
    costs = np.full(len(signs), 8.0)
    monkeypatch.setattr(l1svm_lp, "SELF_CERTIFY", False)  # HiGHS confirms every end basis
    with_path = BoundaryLP(Z, signs)
    start = BoundaryLP(Z, signs)
    start.solve(costs * l1svm_lp.PATH_START_FRACTION)
    theta, b, objective = with_path.solve(costs)
    assert with_path.stats.path_steps > 0 and with_path.stats.path_fallbacks == 0
    assert with_path.stats.simplex_iterations == start.stats.simplex_iterations
    assert with_path.stats.highs_confirmed == 1 and with_path.stats.runs > start.stats.runs
    monkeypatch.setattr(l1svm_lp, "SELF_CERTIFY", True)  # the check instead: no run
    checked = BoundaryLP(Z, signs)
    assert checked.solve(costs)[2] == pytest.approx(objective, rel=RTOL)
    assert checked.stats.self_certified == 1 and checked.stats.runs == start.stats.runs
    monkeypatch.setattr(l1svm_lp, "USE_COST_PATH", False)
    plain = BoundaryLP(Z, signs)
    assert plain.solve(costs)[2] == pytest.approx(objective, rel=RTOL)
    assert plain.stats.path_steps == 0
    assert objective == pytest.approx(full_lp(Z, signs, 8.0), rel=RTOL)


def test_basis_size_is_checked():
    Z, y, u = random_problem(0)
    point_status, active, sign = start_basis(Z, y, u, 1.0)
    with pytest.raises(ValueError, match=r"\|E\| = \|A\| \+ 1"):
        follow_cost_path(Z, y, u, 1.0, 2.0, point_status, active[1:], sign[1:])


def test_start_at_its_iteration_cap_solves_cold(monkeypatch):
    # a start that reaches its simplex iteration cap (a cycling dual simplex, here a
    # cap of 0) is dropped: the LP is solved cold at its costs, to the same optimum
    Z, y, u = random_problem(7, n=80)
    monkeypatch.setattr(l1svm_lp, "PATH_START_ITERATIONS", 0)
    lp = BoundaryLP(Z, y)
    theta, b, objective = lp.solve(10.0 * u)
    assert lp.stats.path_fallbacks == 1 and lp.stats.path_steps == 0
    assert objective == pytest.approx(full_lp(Z, y, 10.0 * u), rel=RTOL)
    assert primal_objective(Z, y, 10.0 * u, theta, b) == pytest.approx(objective, rel=RTOL)
    assert lp.lp.getOptionValue("simplex_iteration_limit")[1] == l1svm_lp.NO_ITERATION_LIMIT
