"""Tests of linear NORDIC in the primal with PIQP (nordicstats.solvers.linear_primal).

References: quadprog on the dense dual, Clarabel on the paper's primal
(tests/primal_reference.py), and the stationarity w_k = X' omega_k and duality gap
recomputed here from the returned multipliers.
"""

import dataclasses
import sys

import numpy as np
import pytest
from primal_reference import solve_primal

from nordicstats.data import binary_signs
from nordicstats.exceptions import MissingDependencyError
from nordicstats.kernels import make_kernel
from nordicstats.solvers.certificate import certify
from nordicstats.solvers.linear_primal import (
    FALLBACK_MAX_N,
    recover_multipliers,
    solve_linear_primal,
)
from nordicstats.solvers.problem import NordicProblem
from nordicstats.solvers.qp import solve_quadprog

pytest.importorskip("piqp")

OBJ_RTOL = 1e-6  # required agreement of the objectives; measured ~1e-9
FEAS_TOL = 1e-7


def make_problem(n, K, method="nordic1", noncrossing="joint", C=1.0, seed=0, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    # class thresholds whose slope in x2 changes with k, so free boundaries would cross
    latent = X[:, 0] + rng.normal(scale=0.8, size=n)
    codes = np.zeros(n, dtype=int)
    for k in range(1, K):
        codes += latent > (k - K / 2) + 0.6 * (k - K / 2) * X[:, 1]
    codes[:K] = np.arange(K)  # every class observed
    kern = make_kernel("linear", X)
    return NordicProblem(gram=kern(X, X), signs=binary_signs(codes, K), C=C, method=method,
                         noncrossing=noncrossing, X=X)


CASES = [
    (100, 3, "nordic1", "joint", 1.0, 1),
    (150, 3, "nordic1", "joint", 5.0, 2),
    (60, 5, "nordic1", "joint", 1.0, 3),
    (80, 3, "nordic1", "separate", 1.0, 4),
    (40, 5, "nordic1", "separate", 0.5, 5),
    (100, 3, "bsvm", "joint", 1.0, 6),
]


@pytest.mark.parametrize("n,K,method,noncrossing,C,seed", CASES)
def test_same_optimum_as_quadprog(n, K, method, noncrossing, C, seed):
    problem = make_problem(n, K, method, noncrossing, C, seed)
    ref = solve_quadprog(problem)
    res = solve_linear_primal(problem)
    assert res.status == "optimal" and res.solver == "primal"
    assert abs(res.objective - ref.objective) <= OBJ_RTOL * abs(ref.objective)
    assert res.objective == pytest.approx(
        problem.objective(None, res.intercept, coef=res.coef), rel=1e-14)
    assert res.max_violation <= FEAS_TOL
    assert res.dual_coef is None and res.coef.shape == (problem.X.shape[1], K - 1)


@pytest.mark.parametrize("n,K,method,noncrossing,C,seed", [CASES[1], CASES[4]])
def test_matches_independent_primal_solve(n, K, method, noncrossing, C, seed):
    problem = make_problem(n, K, method, noncrossing, C, seed)
    res = solve_linear_primal(problem)
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)


@pytest.mark.parametrize("n,K,method,noncrossing,C,seed", [CASES[0], CASES[2], CASES[3]])
def test_multipliers_certify_the_optimum(n, K, method, noncrossing, C, seed):
    problem = make_problem(n, K, method, noncrossing, C, seed)
    res = solve_linear_primal(problem)
    alpha, phi = res.multipliers["alpha"], res.multipliers["phi"]
    assert alpha.min() >= 0 and alpha.max() <= C and phi.min() >= 0
    omega = problem.signs * alpha
    omega[:, :-1] += phi
    omega[:, 1:] -= phi
    # stationarity in w (eq. KKT_omega with the linear kernel): w_k = X' omega_k
    np.testing.assert_allclose(problem.X.T @ omega, res.coef, atol=1e-6)
    dual = alpha.sum() - 0.5 * np.sum((problem.X.T @ omega) ** 2)
    gap = (res.objective - dual) / max(1.0, abs(res.objective))
    assert abs(gap) <= 1e-6
    # the certificate evaluates the Wolfe dual at the returned w (equal up to PIQP's accuracy)
    assert res.kkt_residual == pytest.approx(abs(gap), abs=1e-9)
    assert res.status == "optimal" and res.certificate.certified
    # active noncrossing rows: positive multiplier only where f_k = f_{k+1}
    mask = res.info["active_mask"]
    assert res.info["active_noncrossing"] == int(mask.sum())
    F = problem.X @ res.coef + (res.intercept if noncrossing == "joint" else 0.0)
    assert np.all(np.abs(F[:, :-1] - F[:, 1:])[mask] <= 1e-5)


def test_rows_are_added_lazily():
    problem = make_problem(400, 3, seed=8)
    res = solve_linear_primal(problem)
    assert res.info["rows_added"] < problem.n  # fewer than n(K-2) noncrossing rows
    assert res.info["rounds"] >= 1
    assert res.max_violation <= FEAS_TOL
    if res.info["rows_added"]:
        assert res.info["active_noncrossing"] <= res.info["rows_added"]


def test_deterministic():
    problem = make_problem(150, 3, seed=2)
    a, b = solve_linear_primal(problem), solve_linear_primal(problem)
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.intercept, b.intercept)


def test_refuses_kernel_problems_and_nordic0():
    problem = make_problem(40, 3)
    rbf = NordicProblem(gram=problem.gram, signs=problem.signs, C=1.0)
    with pytest.raises(ValueError, match="linear-kernel"):
        solve_linear_primal(rbf)
    with pytest.raises(ValueError, match="nordic0"):
        solve_linear_primal(make_problem(40, 3, method="nordic0"))


def test_without_piqp_small_falls_back_and_large_raises(monkeypatch):
    monkeypatch.setitem(sys.modules, "piqp", None)  # import piqp -> ImportError
    small = make_problem(60, 3, seed=3)
    assert solve_linear_primal(small).solver == "decomposition"
    n = FALLBACK_MAX_N + 1
    codes = np.arange(n) % 3
    large = NordicProblem(gram=np.empty((0, 0)), signs=binary_signs(codes, 3), C=1.0,
                          method="nordic1", noncrossing="joint", X=np.ones((n, 2)))
    with pytest.raises(MissingDependencyError, match=r"nordicstats\[fast\]"):
        solve_linear_primal(large)


@pytest.mark.parametrize("noncrossing,K", [("joint", 3), ("separate", 4)])
def test_screened_hinge_rows_give_the_same_optimum(noncrossing, K):
    # rows far from the margin enter as alpha = C or 0; the answer must not change
    problem = make_problem(600, K, noncrossing=noncrossing, seed=12, C=2.0)
    full = solve_linear_primal(problem, screen=False)
    screened = solve_linear_primal(problem, screen=True)
    assert screened.info["explicit_hinge_rows"] < problem.n * (K - 1)
    assert screened.objective == pytest.approx(full.objective, rel=1e-8)
    assert screened.max_violation <= FEAS_TOL
    alpha = screened.multipliers["alpha"]
    assert np.any(alpha == 2.0) and np.any(alpha == 0.0)  # screened rows at C and at 0
    omega = problem.signs * alpha
    omega[:, :-1] += screened.multipliers["phi"]
    omega[:, 1:] -= screened.multipliers["phi"]
    np.testing.assert_allclose(problem.X.T @ omega, screened.coef, atol=1e-6)
    assert screened.kkt_residual <= 1e-7


@pytest.mark.parametrize("n,K,method,noncrossing,C,seed", [CASES[0], CASES[4], CASES[5]])
def test_multipliers_recovered_from_the_primal_point(n, K, method, noncrossing, C, seed):
    # Clarabel's optimum (independent) and the KKT system checked on the full problem
    problem = make_problem(n, K, method, noncrossing, C, seed)
    res = solve_linear_primal(problem)
    alpha, phi, gamma = recover_multipliers(problem, res.coef, res.intercept)
    cert = certify(problem, None, res.intercept, {"alpha": alpha, "phi": phi, "gamma": gamma},
                   coef=res.coef)
    # exact up to rounding: BVLS solves the KKT rows on the margin rows to ~1e-12
    assert cert.dual_violation <= 1e-9 and cert.gap <= 1e-9
    assert cert.dual == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    assert np.all((alpha >= 0) & (alpha <= C)) and phi.min(initial=0) >= 0
    # alpha is C inside the margin and 0 outside it (complementary slackness)
    r = 1.0 - problem.signs * (problem.X @ res.coef + res.intercept)
    assert np.all(alpha[r > 1e-5] == C) and np.all(alpha[r < -1e-5] == 0)


def test_recovery_does_not_certify_a_wrong_point():
    # at a point that is not optimal the KKT system has no solution: no row is on the
    # margin of a shrunken w (None), and with a wide tolerance the certificate fails
    problem = make_problem(100, 3, seed=1)
    res = solve_linear_primal(problem)
    w = 0.9 * res.coef
    assert recover_multipliers(problem, w, res.intercept) is None
    alpha, phi, gamma = recover_multipliers(problem, w, res.intercept, tol=0.05)
    cert = certify(problem, None, res.intercept, {"alpha": alpha, "phi": phi, "gamma": gamma},
                   coef=w)
    assert not cert.certified and max(cert.gap, cert.dual_violation) > 1e-3


def test_joint_fit_keeps_the_unconstrained_optimum_on_the_way():
    # the first solve of joint NORDIC-1 is BSVM: kept as info["unconstrained"], equal to
    # a separate BSVM solve and to Clarabel's; screening narrowed once rows were added
    problem = make_problem(600, 4, seed=12, C=2.0)
    res = solve_linear_primal(problem, screen=True)
    assert res.info["rows_added"] > 0 and res.status == "optimal"
    bsvm_problem = dataclasses.replace(problem, method="bsvm")
    kept = res.info["unconstrained"]
    assert kept.status == "optimal" and kept.certificate.certified
    assert kept.objective == pytest.approx(solve_linear_primal(bsvm_problem).objective,
                                           rel=1e-9)
    assert kept.objective == pytest.approx(solve_primal(bsvm_problem), rel=OBJ_RTOL)
    assert kept.objective < res.objective  # the constraints bind
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
