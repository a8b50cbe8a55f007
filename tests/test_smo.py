"""Tests of the SMO solver (nordicstats.solvers.smo, smo_core) and of KernelMatrix.

References nobody here wrote: Clarabel on the paper's primal through cvxpy
(tests/primal_reference.py), quadprog on the dense dual, libsvm (scikit-learn's
``SVC`` with a tight tolerance) for BSVM, and the dense Gram matrix of scipy's
``cdist`` for the kernel products.  Certificates are recomputed here.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from primal_reference import solve_primal
from sklearn.svm import SVC

from nordicstats import model as model_module
from nordicstats.data import binary_signs
from nordicstats.exceptions import SolverLimitWarning
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.model import NORDIC
from nordicstats.solvers import NordicProblem, solve
from nordicstats.solvers import smo as smo_module
from nordicstats.solvers.certificate import GAP_TOL, VIOLATION_TOL, certify
from nordicstats.solvers.qp import solve_quadprog
from nordicstats.solvers.smo import CACHE_CAP_MB, default_cache_mb, solve_smo

# Clarabel at 1e-10 and quadprog reach ~1e-9 relative; the certificate's own gap is
# 1e-6 relative, so agreement within 1e-6 relative is what an optimum must show.
OBJ_RTOL = 1e-6


def design(n, K, seed, rare=False, noise=0.7, d=5):
    """The scaling design: latent = X beta + sin(2 x1) + noise * Logistic, K quantile classes.

    ``rare`` puts 5% of the rows in the top class (the other cuts equally spaced).
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta = np.array([1.0, 0.625, 0.25, -0.125, -0.5])[:d]
    latent = X @ beta + np.sin(2 * X[:, 0]) + noise * rng.logistic(size=n)
    levels = np.linspace(0, 0.95, K)[1:] if rare else np.linspace(0, 1, K + 1)[1:-1]
    codes = np.searchsorted(np.quantile(latent, levels), latent)
    return X, codes


def rbf_problem(n, K, C, seed, rare=False, weighted=False, method="nordic1", lazy=False):
    X, codes = design(n, K, seed, rare=rare)
    kernel = make_kernel("rbf", gamma=0.2)
    weights = None
    if weighted:
        rng = np.random.default_rng(seed + 1000)
        weights = rng.uniform(0.2, 3.0, size=(n, K - 1))
        weights[rng.random(n) < 0.05] = 0.0  # rows of weight 0 carry nothing
    return NordicProblem(gram=KernelMatrix(kernel, X) if lazy else kernel(X, X),
                         signs=binary_signs(codes, K), C=C, method=method,
                         hinge_weights=weights)


def _random_cases(count=24, seed=7):
    rng = np.random.default_rng(seed)
    cases = []
    for t in range(count):
        K = 3 + t % 5
        n = int(rng.integers(25, 70 if K <= 5 else 45))
        cases.append((n, K, float(2.0 ** rng.integers(-4, 5)), t, bool(t % 3 == 0),
                      bool(t % 2 == 1)))
    return cases


def _check_dual_point(problem, res):
    mult = res.multipliers
    alpha, phi, gamma = mult["alpha"], mult["phi"], mult["gamma"]
    U = problem.upper_bounds
    assert alpha.min() >= 0.0 and np.all(alpha <= U)
    if problem.method == "nordic1":
        assert phi.min() >= 0.0 and gamma.min() >= 0.0
    eq = np.sum(problem.signs * alpha, axis=0)
    if gamma.size:
        eq[:-1] += gamma
        eq[1:] -= gamma
    assert np.max(np.abs(eq)) <= 1e-9 * max(1.0, problem.C)
    cert = certify(problem, res.dual_coef, res.intercept, mult)
    assert cert.certified and cert.gap <= GAP_TOL and cert.max_violation <= VIOLATION_TOL


@pytest.mark.parametrize("n,K,C,seed,rare,weighted", _random_cases())
def test_random_problems_match_the_independent_primal(n, K, C, seed, rare, weighted):
    problem = rbf_problem(n, K, C, seed, rare=rare, weighted=weighted)
    res = solve(problem)  # solver="auto"
    assert res.solver == "smo" and res.status == "optimal", res.message
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    _check_dual_point(problem, res)
    assert problem.noncrossing_violation(res.dual_coef, res.intercept) <= VIOLATION_TOL


@pytest.mark.parametrize("K,C", [(3, 16.0), (5, 0.0625), (7, 1.0)])
def test_same_optimum_as_quadprog_on_the_dual(K, C):
    problem = rbf_problem(40, K, C, seed=K, rare=K == 7)
    ref = solve_quadprog(problem)
    res = solve_smo(problem)
    assert res.objective == pytest.approx(ref.objective, rel=OBJ_RTOL)
    # f = K omega + b is unique at the optimum (strictly convex in f); 1e-4 allows
    # quadprog's ridge and the two solvers' tolerances
    F_smo = problem.decision_values(res.dual_coef, res.intercept)
    F_ref = problem.decision_values(ref.dual_coef, ref.intercept)
    np.testing.assert_allclose(F_smo, F_ref, atol=1e-4)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_bsvm_equals_libsvm_fits(kernel):
    X, codes = design(120, 4, seed=3)
    kern = make_kernel(kernel, gamma=0.2)
    Y = binary_signs(codes, 4)
    problem = NordicProblem(gram=kern(X, X), signs=Y, C=2.0, method="bsvm")
    res = solve_smo(problem)
    assert res.status == "optimal"
    omega, b = np.zeros((120, 3)), np.zeros(3)
    for k in range(3):
        svc = SVC(C=2.0, kernel="precomputed", tol=1e-10).fit(problem.gram, Y[:, k])
        sign = 1.0 if svc.classes_[1] > 0 else -1.0  # decision > 0 means classes_[1]
        omega[svc.support_, k], b[k] = sign * svc.dual_coef_[0], sign * svc.intercept_[0]
    assert res.objective == pytest.approx(problem.objective(omega, b), rel=OBJ_RTOL)
    # f is unique at the optimum; the SMO stops at pair tolerance ~1e-5 (gap 1e-6)
    np.testing.assert_allclose(problem.decision_values(res.dual_coef, res.intercept),
                               problem.decision_values(omega, b), atol=1e-4)


def test_rows_on_demand_give_the_dense_answer_with_a_tiny_cache():
    dense = rbf_problem(150, 5, 4.0, seed=11, rare=True)
    lazy = dataclasses.replace(dense, gram=KernelMatrix(make_kernel("rbf", gamma=0.2),
                                                        design(150, 5, 11, rare=True)[0]))
    ref = solve_smo(dense)
    # 0.003 MiB holds 2 rows of 150: every step evicts, so the cache bookkeeping is exercised
    res = solve_smo(lazy, cache_mb=0.003)
    assert res.status == "optimal"
    assert res.info["cache_misses"] > 100 and res.info["cache_bytes"] == 2 * 150 * 8
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)
    assert res.iterations == ref.iterations  # same steps, rows from another source


@pytest.mark.parametrize("name,options", [("rbf", {"gamma": 0.3}), ("linear", {}),
                                          ("poly", {"gamma": 0.5, "degree": 2, "coef0": 1.0})])
def test_kernel_matrix_products_equal_the_dense_matrix(name, options):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(70, 3))
    kernel = make_kernel(name, **options)
    B = rng.normal(size=(70, 4))
    B[rng.random(70) < 0.5] = 0.0  # sparse expansions skip rows
    K = KernelMatrix(kernel, X)
    np.testing.assert_allclose(K @ B, kernel(X, X) @ B, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(K @ B[:, 0], kernel(X, X) @ B[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(K), kernel(X, X))
    first = K @ B
    first[:] = 0.0  # a returned product is the caller's copy
    np.testing.assert_allclose(K @ B, kernel(X, X) @ B, rtol=1e-12, atol=1e-12)


def test_kernel_matrix_refuses_a_callable_kernel():
    kernel = make_kernel(lambda A, B: A @ B.T)
    with pytest.raises(ValueError, match="named kernel"):
        KernelMatrix(kernel, np.ones((3, 2)))


def test_model_passes_rows_on_demand_above_the_threshold(monkeypatch):
    X, codes = design(200, 4, seed=2)
    dense_fit = NORDIC(codes, X, gamma=0.2, C=2.0).fit(cov_type="none")
    monkeypatch.setattr(model_module, "DENSE_GRAM_MAX_ROWS", 100)
    model = NORDIC(codes, X, gamma=0.2, C=2.0)
    assert isinstance(model.build_problem().gram, KernelMatrix)
    assert model._gram is None  # the dense matrix was never formed
    assert isinstance(model.build_problem(method="nordic0").gram, KernelMatrix)
    fit = model.fit(cov_type="none")
    assert fit.solver_result.solver == "smo" and fit.solver_result.status == "optimal"
    assert model._gram is None  # still never formed (nordic0's solver takes rows too)
    # kernel rows computed per call round differently from the dense matrix, so the
    # iterates differ; both answers are certified, hence agree to the certificate's 1e-6
    assert fit.objective == pytest.approx(dense_fit.objective, rel=OBJ_RTOL)
    np.testing.assert_allclose(fit.decision_function(X), dense_fit.decision_function(X),
                               atol=1e-4)  # measured 8e-6


def test_warm_start_along_C_reaches_the_cold_optimum():
    first = solve_smo(rbf_problem(150, 4, 0.5, seed=4))
    problem = rbf_problem(150, 4, 4.0, seed=4)
    cold = solve_smo(problem)
    warm = solve_smo(problem, warm_start={**first.multipliers, "C": 0.5})
    assert warm.info["start"] == "warm_start" and warm.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, rel=OBJ_RTOL)


def test_libsvm_start_reaches_the_same_optimum():
    problem = rbf_problem(150, 5, 2.0, seed=9, lazy=True)
    zero, libsvm = solve_smo(problem), solve_smo(problem, start="libsvm")
    assert libsvm.info["start"] == "libsvm" and libsvm.status == "optimal"
    assert libsvm.objective == pytest.approx(zero.objective, rel=OBJ_RTOL)


def test_deterministic():
    problem = rbf_problem(120, 5, 1.0, seed=3)
    a, b = solve_smo(problem), solve_smo(problem)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    np.testing.assert_array_equal(a.intercept, b.intercept)


def test_iteration_limit_warns_and_reports_the_gap():
    problem = rbf_problem(150, 4, 1.0, seed=2)
    with pytest.warns(SolverLimitWarning, match="iteration_limit"):
        res = solve_smo(problem, max_iter=5)
    assert res.status == "iteration_limit" and res.iterations == 5
    assert res.gap > GAP_TOL  # not optimal, and the certificate says so


def test_no_warnings_on_a_normal_solve():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve_smo(rbf_problem(100, 3, 1.0, seed=5))


def test_duplicated_rows_solve_like_their_case_weights():
    rng = np.random.default_rng(3)
    patterns = rng.normal(size=(12, 3))
    rows = rng.integers(0, 12, size=150)
    codes = np.digitize(patterns[rows] @ [1.0, -0.5, 0.3] + 0.5 * rng.logistic(size=150),
                        [-0.3, 0.3, 0.9])
    kern = make_kernel("rbf", gamma=0.5)
    replicated = NordicProblem(gram=kern(patterns[rows], patterns[rows]),
                               signs=binary_signs(codes, 4), C=1.0)
    res = solve_smo(replicated)
    assert res.status == "optimal", res.message
    pairs, counts = np.unique(np.c_[rows, codes], axis=0, return_counts=True)
    X_unique = patterns[pairs[:, 0]]
    weighted = NordicProblem(gram=kern(X_unique, X_unique), signs=binary_signs(pairs[:, 1], 4),
                             C=1.0, hinge_weights=np.repeat(counts[:, None], 3, axis=1) * 1.0)
    assert res.objective == pytest.approx(solve_primal(weighted), rel=OBJ_RTOL)


@pytest.mark.parametrize("n,K,C,seed,noise", [(150, 5, 16.0, 21, 0.7), (120, 7, 8.0, 22, 0.7),
                                              (140, 5, 4.0, 23, 3.0)])
@pytest.mark.parametrize("polish", [True, False])
def test_shrinking_on_and_off_reach_the_independent_optimum(n, K, C, seed, noise, polish):
    # large C: the intercepts tie (gamma > 0) and noncrossing rows bind (phi > 0), so the
    # shrinking has to keep the entries next to positive phis and re-check the dropped ones
    X, codes = design(n, K, seed, noise=noise)
    problem = NordicProblem(gram=make_kernel("rbf", gamma=0.2)(X, X),
                            signs=binary_signs(codes, K), C=C, method="nordic1")
    reference = solve_primal(problem)
    results = {shrinking: solve_smo(problem, shrinking=shrinking, polish=polish)
               for shrinking in (True, False)}
    for res in results.values():
        assert res.status == "optimal", res.message
        assert res.objective == pytest.approx(reference, rel=OBJ_RTOL)
        _check_dual_point(problem, res)
        assert np.any(res.multipliers["gamma"] > 0) and np.any(res.multipliers["phi"] > 0)
    shrunk, plain = results[True].info["shrinking"], results[False].info["shrinking"]
    assert shrunk["dropped"] > 0 and shrunk["reconstructions"] >= 1
    assert plain == {"dropped": 0, "reconstructions": 0}
    # f = K omega + b is unique at the optimum (strictly convex in f); each answer is
    # within the certificate's 1e-6 relative gap of it
    np.testing.assert_allclose(
        problem.decision_values(results[True].dual_coef, results[True].intercept),
        problem.decision_values(results[False].dual_coef, results[False].intercept), atol=1e-3)


def test_shrinking_with_rows_on_demand_and_a_tiny_cache():
    # the re-check of the dropped entries computes G from kernel rows through the cache;
    # 0.003 MiB holds 2 rows of 150, so those rows are evicted and recomputed
    X, codes = design(150, 5, 12, noise=3.0)
    kernel = make_kernel("rbf", gamma=0.2)
    dense = NordicProblem(gram=kernel(X, X), signs=binary_signs(codes, 5), C=16.0)
    lazy = dataclasses.replace(dense, gram=KernelMatrix(kernel, X))
    res = solve_smo(lazy, cache_mb=0.003, polish=False, shrinking=True)
    assert res.status == "optimal" and res.info["shrinking"]["reconstructions"] >= 1
    assert res.objective == pytest.approx(solve_primal(dense), rel=OBJ_RTOL)


def test_shrinking_is_the_default_from_its_number_of_rows(monkeypatch):
    problem = rbf_problem(120, 5, 8.0, seed=4)
    assert solve_smo(problem).info["shrinking"]["dropped"] == 0
    monkeypatch.setattr(smo_module, "SHRINKING_MIN_ROWS", 120)
    assert solve_smo(problem).info["shrinking"]["dropped"] > 0


def test_the_default_cache_holds_every_row_up_to_its_cap():
    assert default_cache_mb(1000) == pytest.approx(8e6 / 2**20)
    assert default_cache_mb(10**6) == CACHE_CAP_MB
    X, codes = design(300, 3, 4)
    lazy = NordicProblem(gram=KernelMatrix(make_kernel("rbf", gamma=0.2), X),
                         signs=binary_signs(codes, 3), C=1.0)
    res = solve_smo(lazy)
    assert res.info["cache_bytes"] == 300 * 300 * 8
    assert res.info["cache_misses"] <= 300  # no row is computed twice


@pytest.mark.parametrize("option,value", [("start", "libsvm2"), ("cache_mb", 0),
                                          ("max_iter", -1), ("shrinking", "yes")])
def test_bad_options_name_the_parameter(option, value):
    with pytest.raises(ValueError, match=f"'{option}'"):
        solve_smo(rbf_problem(30, 3, 1.0, seed=1), **{option: value})


@pytest.mark.parametrize("change", [{"method": "nordic0"}, {"noncrossing": "joint"}])
def test_refuses_what_it_does_not_solve(change):
    problem = dataclasses.replace(rbf_problem(30, 3, 1.0, seed=1), **change)
    with pytest.raises(ValueError, match="solver='smo' handles"):
        solve_smo(problem)
