"""quadprog solutions of BSVM / NORDIC-0 / NORDIC-1 against an independent primal solve."""

import numpy as np
import pytest
from primal_reference import solve_primal

from nordicstats.data import binary_signs
from nordicstats.exceptions import SolverError
from nordicstats.kernels import make_kernel
from nordicstats.solvers import NordicProblem, solve
from nordicstats.solvers.proximal import solve_proximal_quadprog
from nordicstats.solvers.qp import solve_dual_quadprog, solve_primal_quadprog


def make_problem(n, K, kernel, method, noncrossing="separate", C=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    latent = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
    codes = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1]))
    kern = make_kernel(kernel, X)
    return NordicProblem(kern(X, X), binary_signs(codes, K), C, method, noncrossing,
                         X=X if kernel == "linear" else None)


CASES = [
    # (n, K, kernel, method, noncrossing, C)
    (120, 3, "rbf", "bsvm", "separate", 1.0),
    (120, 3, "rbf", "nordic1", "separate", 1.0),
    (120, 3, "rbf", "nordic1", "joint", 4.0),
    (60, 3, "rbf", "nordic0", "separate", 1.0),
    (40, 5, "rbf", "nordic1", "separate", 0.5),
    (40, 5, "rbf", "nordic0", "separate", 2.0),
    (40, 5, "rbf", "bsvm", "separate", 1.0),
    (100, 3, "linear", "nordic1", "joint", 1.0),
    (100, 3, "linear", "bsvm", "separate", 1.0),
    (40, 5, "linear", "nordic1", "joint", 1.0),
    (40, 5, "linear", "nordic1", "separate", 1.0),
    (30, 5, "poly", "nordic1", "separate", 1.0),
]


@pytest.mark.parametrize("n,K,kernel,method,noncrossing,C", CASES)
def test_objective_matches_independent_primal_solve(n, K, kernel, method, noncrossing, C):
    problem = make_problem(n, K, kernel, method, noncrossing, C, seed=n + K)
    result = solve(problem)
    reference = solve_primal(problem)
    # Clarabel is run to 1e-10 gaps; 1e-6 relative catches any wrong constraint or sign.
    assert result.objective == pytest.approx(reference, rel=1e-6)
    # feasibility of the returned (omega, b): hinge slacks are implied, noncrossing checked here
    assert result.max_violation <= 1e-7
    assert result.objective == pytest.approx(problem.objective(result.dual_coef, result.intercept),
                                             rel=1e-12)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_noncrossing_holds_on_training_points_and_costs_at_least_bsvm(kernel):
    nordic = make_problem(80, 4, kernel, "nordic1", "joint" if kernel == "linear" else "separate",
                          C=8.0, seed=3)
    res = solve(nordic)
    F = nordic.decision_values(res.dual_coef, res.intercept)
    assert np.all(F[:, :-1] - F[:, 1:] >= -1e-7)
    bsvm = solve(make_problem(80, 4, kernel, "bsvm", C=8.0, seed=3))
    assert res.objective >= bsvm.objective * (1 - 1e-9)


def test_objectives_equal_when_bsvm_already_noncrossing():
    # Well separated ordered classes along one axis: the separate SVMs do not cross.
    x = np.concatenate([np.linspace(-6, -4, 10), np.linspace(-1, 1, 10), np.linspace(4, 6, 10)])
    X = np.column_stack([x, np.zeros_like(x)])
    codes = np.repeat([0, 1, 2], 10)
    G = X @ X.T
    signs = binary_signs(codes, 3)
    bsvm = solve(NordicProblem(G, signs, 1.0, "bsvm", X=X))
    F = X @ bsvm.coef + bsvm.intercept
    assert np.all(F[:, 0] >= F[:, 1])  # precondition: already noncrossing
    nordic = solve(NordicProblem(G, signs, 1.0, "nordic1", "joint", X=X))
    assert nordic.objective == pytest.approx(bsvm.objective, rel=1e-8)


def test_dual_and_primal_quadprog_agree_for_nordic1():
    problem = make_problem(50, 4, "rbf", "nordic1", "separate", seed=11)
    dual = solve_dual_quadprog(problem)
    primal = solve_primal_quadprog(problem)
    assert dual.objective == pytest.approx(primal.objective, rel=1e-7)
    assert dual.kkt_residual < 1e-7  # relative duality gap


def test_ridge_does_not_move_the_answer():
    problem = make_problem(60, 3, "rbf", "nordic1", seed=5)
    a = solve_dual_quadprog(problem, ridge=1e-6)
    b = solve_dual_quadprog(problem, ridge=1e-5)
    assert a.objective == pytest.approx(b.objective, rel=1e-8)


def test_multipliers_satisfy_the_dual_constraints():
    problem = make_problem(60, 4, "rbf", "nordic1", seed=2, C=2.0)
    res = solve_dual_quadprog(problem)
    alpha, phi, gamma = (res.multipliers[k] for k in ("alpha", "phi", "gamma"))
    assert alpha.min() >= 0 and alpha.max() <= 2.0
    assert phi.min() >= 0 and gamma.min() >= 0
    # eq. KKT_b: y_k'alpha_k + gamma_k - gamma_{k-1} = 0
    padded = np.concatenate([[0.0], gamma, [0.0]])
    balance = np.sum(problem.signs * alpha, axis=0) + padded[1:] - padded[:-1]
    np.testing.assert_allclose(balance, 0.0, atol=1e-8)
    # eq. KKT_omega: omega_k = y_k alpha_k + phi_k - phi_{k-1}
    phipad = np.column_stack([np.zeros(60), phi, np.zeros(60)])
    expected = problem.signs * alpha + phipad[:, 1:] - phipad[:, :-1]
    np.testing.assert_allclose(res.dual_coef, expected, atol=1e-12)


def test_deterministic_bit_identical():
    problem = make_problem(50, 3, "rbf", "nordic1", seed=4)
    a, b = solve(problem), solve(problem)
    assert np.array_equal(a.dual_coef, b.dual_coef)
    assert np.array_equal(a.intercept, b.intercept)


def test_bad_ridge_is_rejected():
    problem = make_problem(20, 3, "rbf", "nordic1")
    with pytest.raises(ValueError, match="'ridge' option must be a float"):
        solve(problem, solver="quadprog", ridge=-1)


def test_unknown_solver_lists_the_valid_ones():
    problem = make_problem(20, 3, "rbf", "nordic1")
    with pytest.raises(ValueError, match="'solver' parameter of NORDIC must be 'auto' or one of"):
        solve(problem, solver="cplex")


def test_unknown_solver_option_lists_the_valid_ones():
    problem = make_problem(20, 3, "rbf", "nordic1")
    with pytest.raises(ValueError, match=r"unknown solver option\(s\) \['tol'\] for solver="
                                         r"'quadprog'.*options are \['ridge', 'refinements'\]"):
        solve(problem, solver="quadprog", tol=1e-3)


def test_proximal_steps_remove_the_ridge_bias_on_a_singular_hessian():
    # 1/2 (x1 + x2)^2 - (x1 + x2) on x >= 0: H = [[1, 1], [1, 1]] is singular, the minimisers
    # are the segment x1 + x2 = 1 (objective -1/2).  With the ridge alone, (H + rho I) x = a
    # gives x1 + x2 = 2 / (2 + rho); every proximal step shrinks the gap by rho / (2 + rho).
    H, a, rho = np.ones((2, 2)), np.ones(2), 0.1
    G, C, b = H + rho * np.eye(2), np.eye(2), np.zeros(2)
    ridged, _, _ = solve_proximal_quadprog(G, a, C, b, 0, rho, 0, 1.0, problem_name="a QP",
                                           ridge_hint="-")
    assert ridged.sum() == pytest.approx(2 / (2 + rho), rel=1e-12)
    refined, iterations, lagrange = solve_proximal_quadprog(G, a, C, b, 0, rho, 50, 1.0,
                                                            problem_name="a QP", ridge_hint="-")
    assert refined.sum() == pytest.approx(1.0, abs=1e-9)  # the stopping tolerance, 1e-9
    assert 0.5 * refined @ H @ refined - a @ refined == pytest.approx(-0.5, abs=1e-12)
    assert iterations >= 2 and np.allclose(lagrange, 0.0)  # x >= 0 is not binding


def test_proximal_quadprog_wraps_an_inconsistent_problem():
    # x1 >= 1 and -x1 >= 0 cannot both hold
    with pytest.raises(SolverError, match="quadprog failed on the toy problem.*ridge=2"):
        solve_proximal_quadprog(np.eye(1), np.zeros(1), np.array([[1.0, -1.0]]),
                                np.array([1.0, 0.0]), 0, 1e-6, 3, 1.0,
                                problem_name="the toy problem", ridge_hint="ridge=2")
