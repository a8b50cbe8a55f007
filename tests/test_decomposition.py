"""Tests of the decomposition solver (nordicstats.solvers.decomposition).

References nobody here wrote the answer of: quadprog on the dense dual (the
package's exact reference), Clarabel on the paper's primal through cvxpy
(tests/primal_reference.py), the HiGHS intercept LP, and the duality gap
recomputed here from the returned multipliers.
"""

import importlib.util
import warnings

import numpy as np
import pytest
from primal_reference import solve_primal

from nordicstats.data import binary_signs
from nordicstats.exceptions import SolverLimitWarning
from nordicstats.kernels import make_kernel
from nordicstats.solvers import (
    AUTO_PRIMAL_MIN_ROWS,
    NordicProblem,
    choose_solver,
    solve,
)
from nordicstats.solvers.decomposition import intercepts_by_pooling, solve_dual_decomposition
from nordicstats.solvers.qp import fit_intercepts, solve_quadprog

# quadprog with the proximal refinements reaches ~1e-9 relative (tests/test_qp.py);
# required here: objectives agree to 1e-6 relative, constraints hold to 1e-7.
OBJ_RTOL = 1e-6
FEAS_TOL = 1e-7


def make_problem(n, K, kernel="rbf", method="nordic1", noncrossing="separate", C=1.0, seed=0):
    """Random ordinal data whose classes drift with x1 (so boundaries want to cross)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    latent = 1.5 * X[:, 0] + 0.8 * X[:, 1] ** 2 + rng.normal(scale=1.0, size=n)
    cuts = np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1])
    codes = np.searchsorted(cuts, latent)
    kern = make_kernel(kernel, X)
    return NordicProblem(gram=kern(X, X), signs=binary_signs(codes, K), C=C, method=method,
                         noncrossing=noncrossing, X=X if kernel == "linear" else None)


def omega_from(problem, mult):
    omega = problem.signs * mult["alpha"]
    if problem.method == "nordic1" and problem.n_boundaries > 1:
        omega[:, :-1] += mult["phi"]
        omega[:, 1:] -= mult["phi"]
    return omega


CASES = [
    # n, K, kernel, method, noncrossing, C, seed
    (30, 3, "rbf", "nordic1", "separate", 1.0, 1),
    (150, 3, "rbf", "nordic1", "separate", 1.0, 2),
    (120, 3, "rbf", "nordic1", "joint", 4.0, 3),
    (60, 5, "rbf", "nordic1", "separate", 1.0, 4),
    (50, 5, "rbf", "nordic1", "joint", 0.5, 5),
    (100, 3, "linear", "nordic1", "joint", 1.0, 6),
    (50, 5, "linear", "nordic1", "separate", 2.0, 7),
    (150, 3, "rbf", "bsvm", "separate", 1.0, 8),
    (40, 5, "linear", "bsvm", "separate", 1.0, 9),
]


@pytest.mark.parametrize("n,K,kernel,method,noncrossing,C,seed", CASES)
def test_same_optimum_as_quadprog_and_feasible(n, K, kernel, method, noncrossing, C, seed):
    problem = make_problem(n, K, kernel, method, noncrossing, C, seed)
    ref = solve_quadprog(problem)
    res = solve_dual_decomposition(problem)
    assert res.status == "optimal"
    assert abs(res.objective - ref.objective) <= OBJ_RTOL * abs(ref.objective)
    # the objective is re-evaluated from (omega, b), not taken from the solver
    assert res.objective == pytest.approx(problem.objective(res.dual_coef, res.intercept),
                                          rel=1e-14)
    assert res.max_violation <= FEAS_TOL
    assert problem.noncrossing_violation(res.dual_coef, res.intercept) <= FEAS_TOL
    alpha = res.multipliers["alpha"]
    assert alpha.min() >= 0.0 and alpha.max() <= C
    if method == "nordic1":
        assert res.multipliers["phi"].min() >= 0.0


@pytest.mark.parametrize("n,K,kernel,method,noncrossing,C,seed", [CASES[1], CASES[4]])
def test_matches_independent_primal_solve(n, K, kernel, method, noncrossing, C, seed):
    problem = make_problem(n, K, kernel, method, noncrossing, C, seed)
    res = solve_dual_decomposition(problem)
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)


@pytest.mark.parametrize("case", [CASES[2], CASES[3]])
def test_kkt_certificate_recomputed_from_multipliers(case):
    n, K, kernel, method, noncrossing, C, seed = case
    problem = make_problem(n, K, kernel, method, noncrossing, C, seed)
    res = solve_dual_decomposition(problem)
    mult = res.multipliers
    omega = omega_from(problem, mult)
    np.testing.assert_allclose(res.dual_coef, omega, atol=1e-12)
    # dual feasibility: the equality rows (eq. KKT_b), with gamma or the joint phi sums
    eq = np.sum(problem.signs * mult["alpha"], axis=0)
    extra = mult["gamma"] if noncrossing == "separate" else mult["phi"].sum(axis=0)
    eq[:-1] += extra
    eq[1:] -= extra
    assert np.max(np.abs(eq)) <= 1e-10
    dual = mult["alpha"].sum() - 0.5 * np.sum(omega * (problem.gram @ omega))
    primal = problem.objective(res.dual_coef, res.intercept)
    gap = (primal - dual) / max(1.0, abs(primal))
    assert -1e-9 <= gap <= 1e-7  # weak duality, and a certified optimum
    assert res.kkt_residual == pytest.approx(abs(gap), abs=1e-12)
    # complementary slackness for the noncrossing rows: phi > 0 only where they bind
    F = problem.gram @ omega + (res.intercept if noncrossing == "joint" else 0.0)
    tight = np.abs(F[:, :-1] - F[:, 1:])
    assert np.all(tight[mult["phi"] > 1e-6] <= 1e-5)


def test_iteration_limit_warns_and_reports_gap():
    problem = make_problem(150, 3, seed=2)
    with pytest.warns(SolverLimitWarning, match="iteration_limit"):
        res = solve_dual_decomposition(problem, max_iter=1, working_set=2, max_phi=1)
    assert res.status == "iteration_limit"
    assert res.kkt_residual > 1e-6  # not optimal, and the certificate says so
    assert res.info["kkt_violation"] > 1e-7


def test_time_limit_returns_the_current_point_with_a_warning():
    problem = make_problem(150, 3, seed=2)
    with pytest.warns(SolverLimitWarning, match="time_limit"):
        res = solve_dual_decomposition(problem, time_limit=1e-9)
    assert res.status == "time_limit" and res.iterations == 0
    # the libsvm start is dual feasible, so the certificate is still a valid bound
    assert res.info["equality_residual"] <= 1e-10
    assert res.kkt_residual > 0


def test_deterministic():
    problem = make_problem(120, 3, seed=3)
    a = solve_dual_decomposition(problem)
    b = solve_dual_decomposition(problem)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    np.testing.assert_array_equal(a.intercept, b.intercept)
    assert a.iterations == b.iterations


def test_warm_start_along_C_reaches_the_cold_optimum():
    base = make_problem(150, 3, seed=2, C=0.5)
    first = solve_dual_decomposition(base)
    problem = make_problem(150, 3, seed=2, C=2.0)
    cold = solve_dual_decomposition(problem)
    warm = solve_dual_decomposition(problem, warm_start={**first.multipliers, "C": 0.5})
    assert warm.info["start"] == "warm_start"
    assert warm.objective == pytest.approx(cold.objective, rel=OBJ_RTOL)
    assert warm.max_violation <= FEAS_TOL


def test_intercepts_by_pooling_equal_the_lp():
    rng = np.random.default_rng(11)
    for trial in range(60):
        K = int(rng.choice([2, 3, 5]))
        n = int(rng.integers(K, 40))
        codes = np.concatenate([np.arange(K), rng.integers(0, K, n - K)])
        method = str(rng.choice(["bsvm", "nordic1", "nordic0"]))
        problem = NordicProblem(gram=np.eye(n), signs=binary_signs(codes, K),
                                C=float(rng.uniform(0.1, 5)), method=method,
                                noncrossing=str(rng.choice(["separate", "joint"])))
        G = rng.normal(size=(n, K - 1)) * rng.uniform(0.1, 3) + np.linspace(1, -1, K - 1)
        if trial % 3 == 0:
            G = np.round(G, 1)  # ties: flat minima
        b_lp, b_pool = fit_intercepts(problem, G), intercepts_by_pooling(problem, G)

        def loss(b, G=G, problem=problem):
            return problem.C * problem.slacks(G + b).sum()

        assert loss(b_pool) <= loss(b_lp) * (1 + 1e-12) + 1e-12
        if method != "bsvm" and K > 2:
            if method == "nordic1" and problem.noncrossing == "joint":
                assert np.max((G[:, 1:] + b_pool[1:]) - (G[:, :-1] + b_pool[:-1])) <= 1e-12
            else:
                assert np.all(b_pool[:-1] >= b_pool[1:])


def test_choose_solver_by_size():
    small = make_problem(6, 3)  # quadprog is never auto's choice for the l2 problems
    large = make_problem(21, 3)
    assert choose_solver(small) == "smo"
    assert choose_solver(large) == "smo"
    assert choose_solver(make_problem(21, 3, noncrossing="joint")) == "decomposition"
    linear = make_problem(40, 3, kernel="linear")
    assert choose_solver(linear) == "smo"
    n_big = AUTO_PRIMAL_MIN_ROWS // 2 + 1  # no Gram matrix needed for this choice
    big = NordicProblem(gram=None, signs=binary_signs(np.arange(n_big) % 3, 3), C=1.0,
                        X=np.ones((n_big, 2)))
    assert choose_solver(big) == ("primal" if importlib.util.find_spec("piqp") else "smo")
    nordic0 = make_problem(40, 3, method="nordic0")
    assert choose_solver(nordic0) == "nordic0_smo"
    res = solve(large)
    assert res.solver == "smo"


@pytest.mark.parametrize("option,value", [("tol", -1.0), ("working_set", 0), ("max_iter", "x"),
                                          ("max_phi", None)])
def test_bad_options_name_the_parameter(option, value):
    problem = make_problem(40, 3)
    with pytest.raises(ValueError, match=f"'{option}'"):
        solve_dual_decomposition(problem, **{option: value})


def test_refuses_nordic0():
    with pytest.raises(ValueError, match="nordic0"):
        solve_dual_decomposition(make_problem(40, 3, method="nordic0"))


def test_warm_start_of_wrong_shape():
    problem = make_problem(40, 3)
    with pytest.raises(ValueError, match="warm_start"):
        solve_dual_decomposition(problem, warm_start={"alpha": np.zeros((39, 2))})


def test_no_warnings_on_normal_solve():
    problem = make_problem(100, 3, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve_dual_decomposition(problem)


def test_through_the_model_api():
    from nordicstats.datasets import make_nonlinear
    from nordicstats.model import NORDIC

    X, y = make_nonlinear(150, d=5, sigma=1.0, random_state=4)
    fast = NORDIC(y, X, method="nordic1", solver="decomposition").fit()
    exact = NORDIC(y, X, method="nordic1", solver="quadprog").fit()
    assert fast.solver_result.solver == "decomposition"
    assert fast.objective == pytest.approx(exact.objective, rel=OBJ_RTOL)
    # f = K omega + b is unique (strictly convex in f); 1e-4 allows the two solvers'
    # tolerances (objective agreement ~1e-9 relative, KKT tol 1e-7)
    np.testing.assert_allclose(fast.decision_function(X), exact.decision_function(X), atol=1e-4)


@pytest.mark.parametrize("noncrossing", ["separate", "joint"])
def test_duplicated_rows_solve_like_their_case_weights(noncrossing):
    # Factor-only data repeat a few covariate patterns many times.  Equal rows carry the
    # same noncrossing constraint; the working set must not collect copies of it (the
    # sub-problem became degenerate and the solver stalled).  The replicated data and the
    # distinct rows with their counts as case weights are the same problem.
    rng = np.random.default_rng(3)
    patterns = rng.integers(0, 2, size=(12, 4)).astype(float)
    rows = rng.integers(0, 12, size=150)
    latent = patterns[rows] @ [1.0, -0.5, 0.3, 0.2] + rng.logistic(size=150) * 0.5
    codes = np.digitize(latent, [0.2, 0.8])
    kern = make_kernel("rbf", patterns[rows])
    replicated = NordicProblem(gram=kern(patterns[rows], patterns[rows]),
                               signs=binary_signs(codes, 3), C=1.0, noncrossing=noncrossing)
    res = solve_dual_decomposition(replicated)
    assert res.status == "optimal", res.certificate
    assert res.info["max_phi_in_working_set"] <= 12 * 2  # one copy per pattern and boundary
    pairs, counts = np.unique(np.c_[rows, codes], axis=0, return_counts=True)
    X_unique = patterns[pairs[:, 0]]
    weighted = NordicProblem(gram=kern(X_unique, X_unique), signs=binary_signs(pairs[:, 1], 3),
                             C=1.0, noncrossing=noncrossing,
                             hinge_weights=np.repeat(counts[:, None].astype(float), 2, axis=1))
    reference = solve_primal(weighted)
    assert res.objective == pytest.approx(reference, rel=1e-6)


def test_capped_libsvm_start_still_reaches_the_certified_optimum():
    # libsvm's SMO cycles for ~20 s per boundary on this tiny, badly scaled linear Gram
    # matrix (entries ~100, C = 8); its start is capped, and the decomposition finishes
    # the job to the certificate.
    rng = np.random.default_rng(23)
    n, K = rng.integers(12, 31), rng.integers(3, 5)
    X = rng.normal(size=(n, 2)) * 10.0
    codes = np.concatenate([np.arange(K), rng.integers(0, K, size=n - K)])
    rng.shuffle(codes)
    problem = NordicProblem(gram=X @ X.T, signs=binary_signs(codes, K), C=8.0,
                            noncrossing="joint", X=X)
    res = solve_dual_decomposition(problem)
    assert res.status == "optimal", res.certificate
    assert res.objective == pytest.approx(solve_primal(problem), rel=1e-6)
