"""Case weights and cost matrices: replicated rows, zero weights, independent primal, bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest
from primal_reference import solve_primal

from nordicstats import NORDIC
from nordicstats.costs import absolute_cost, check_cost_matrix, cost_to_boundary_weights
from nordicstats.data import binary_signs
from nordicstats.kernels import make_kernel
from nordicstats.metrics import BALANCE_COSTS
from nordicstats.solvers import NordicProblem, solve
from nordicstats.solvers.linear_primal import solve_linear_primal


def _data(n=14, K=3, seed=0, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    latent = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.7 * rng.normal(size=n)
    codes = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1]))
    return X, codes, rng.normal(size=(25, d))


# (kernel, method, noncrossing, solver, penalty): every solver with every method it handles
SOLVER_CASES = [
    (kernel, method, nc, solver, None)
    for kernel in ("rbf", "linear")
    for method, nc in (("bsvm", None), ("nordic1", "separate"), ("nordic1", "joint"))
    for solver in ("quadprog", "decomposition", "primal")
    if not (solver == "primal" and kernel == "rbf")
] + [("rbf", "nordic0", None, "quadprog", None)] + [
    (kernel, "nordic2", None, "scip", penalty) for kernel in ("rbf", "linear")
    for penalty in ("l1", "l2")
]


def _fit(y, X, kernel, method, nc, solver, penalty, C=1.0, **kw):
    # SCIP to a zero gap: the default 1e-6 would let two equal problems differ by that much
    options = {"mip_gap": 0.0} if solver == "scip" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return NORDIC(y, X, method=method, kernel=kernel, C=C, noncrossing=nc, solver=solver,
                      penalty=penalty, solver_options=options, **kw).fit(cov_type="none")


def _assert_same_fit(a, b, Xt, rel=1e-7):
    assert a.solver_result.objective == pytest.approx(b.solver_result.objective, rel=rel)
    Fa, Fb = a.decision_function(Xt), b.decision_function(Xt)
    scale = max(1.0, np.abs(Fb).max())
    np.testing.assert_allclose(Fa, Fb, rtol=0, atol=2e-5 * scale)


@pytest.mark.parametrize("kernel,method,nc,solver,penalty", SOLVER_CASES)
def test_integer_weights_equal_the_fit_on_replicated_rows(kernel, method, nc, solver, penalty):
    K = 4 if method == "nordic2" else 3  # K = 4 makes the NORDIC-2 relaxation cross
    X, codes, Xt = _data(n=16, K=K, seed=K)
    w = np.random.default_rng(1).integers(1, 4, size=codes.size)
    C = 4.0 if method == "nordic2" else 1.0
    # rbf with the default gamma: the width rule counts the weights as frequencies
    weighted = _fit(codes, X, kernel, method, nc, solver, penalty, C, weights=w)
    replicated = _fit(np.repeat(codes, w), np.repeat(X, w, axis=0), kernel, method, nc, solver,
                      penalty, C)
    assert weighted.solver_result.status in ("optimal", "gap_limit")
    if kernel == "rbf":
        assert weighted.model.kernel.gamma == pytest.approx(replicated.model.kernel.gamma,
                                                            rel=1e-12)
    _assert_same_fit(weighted, replicated, Xt)


@pytest.mark.parametrize("kernel,method,nc,solver,penalty", SOLVER_CASES[::3])
def test_zero_weight_rows_are_rows_that_are_not_there(kernel, method, nc, solver, penalty):
    X, codes, Xt = _data(n=18, seed=5)
    w = np.ones(codes.size)
    w[[2, 7, 11]] = 0.0
    keep = w > 0
    a = _fit(codes, X, kernel, method, nc, solver, penalty, weights=w)
    b = _fit(codes[keep], X[keep], kernel, method, nc, solver, penalty)
    assert a.model.n_zero_weight == 3 and a.nobs == 15
    _assert_same_fit(a, b, Xt)


def _problem(method, nc, kernel, hinge_weights, n=40, K=4, C=1.5, seed=3):
    X, codes, _ = _data(n=n, K=K, seed=seed, d=3)
    kern = make_kernel(kernel, X)
    return NordicProblem(kern(X, X), binary_signs(codes, K), C, method, nc,
                         X=X if kernel == "linear" else None,
                         hinge_weights=hinge_weights(codes, n, K)), codes


def _cost_and_case(codes, n, K):
    """Cost increments (some 0: level 0 pays nothing more at boundary 1) x case weights (some 0).

    At the solver level a weight of 0 removes the slack from the objective (alpha's box
    is [0, 0]); the noncrossing constraints at that row stay.
    """
    rng = np.random.default_rng(7)
    cost = np.array([[0, 1, 1, 6], [2, 0, 1, 2], [4, 1, 0, 0.5], [9, 4, 1, 0]], dtype=float)
    case = rng.uniform(0.0, 2.5, size=n)
    case[::7] = 0.0
    return cost_to_boundary_weights(cost)[codes] * case[:, None]


@pytest.mark.parametrize("method,nc,kernel,solver", [
    ("bsvm", "separate", "rbf", "quadprog"), ("bsvm", "separate", "rbf", "decomposition"),
    ("nordic1", "separate", "rbf", "quadprog"), ("nordic1", "separate", "rbf", "decomposition"),
    ("nordic1", "joint", "rbf", "quadprog"), ("nordic1", "joint", "rbf", "decomposition"),
    ("nordic0", "separate", "rbf", "quadprog"),
    ("nordic1", "joint", "linear", "primal"), ("nordic1", "separate", "linear", "primal"),
    ("bsvm", "separate", "linear", "primal"),
])
def test_cost_and_case_weighted_objective_matches_independent_primal(method, nc, kernel, solver):
    problem, _ = _problem(method, nc, kernel, _cost_and_case)
    result = solve(problem, solver=solver)
    # Clarabel to 1e-10 gaps; 1e-6 relative catches a weight on the wrong slack
    assert result.objective == pytest.approx(solve_primal(problem), rel=1e-6)
    assert result.max_violation <= 1e-7
    alpha = result.multipliers.get("alpha")
    if alpha is not None:  # the dual box is 0 <= alpha <= C c
        assert np.all(alpha <= problem.upper_bounds * (1 + 1e-9) + 1e-12)


def test_screened_primal_honours_the_weights():
    problem, _ = _problem("nordic1", "joint", "linear", _cost_and_case, n=150)
    screened = solve_linear_primal(problem, screen=True)
    assert screened.objective == pytest.approx(solve(problem, solver="quadprog").objective,
                                               rel=1e-7)


def test_absolute_cost_reproduces_the_unweighted_fit_and_costs_multiply_weights():
    X, codes, Xt = _data(n=30, K=4, seed=2)
    plain = _fit(codes, X, "rbf", "nordic1", None, "quadprog", None)
    unit = _fit(codes, X, "rbf", "nordic1", None, "quadprog", None, cost=absolute_cost(4))
    _assert_same_fit(unit, plain, Xt, rel=1e-12)
    cost = np.array([[0, 1, 3, 6], [2, 0, 1, 2], [4, 1, 0, 0.5], [9, 4, 1, 0]], dtype=float)
    w = np.arange(30) % 3 + 1.0
    model = NORDIC(codes, X, cost=cost, weights=w)
    # hand-computed increments for a case of level 1: |2 - 0|, |1 - 0|, |2 - 1|
    row = np.flatnonzero(codes == 1)[0]
    np.testing.assert_array_equal(model.hinge_weights[row], w[row] * np.array([2.0, 1.0, 1.0]))
    # the paper's balance-scale costs: cost[true, predicted], boundary increments
    levels = ["L", "B", "R"]
    matrix = check_cost_matrix(BALANCE_COSTS.loc[levels, levels], levels=levels)
    expected = np.abs(np.diff(matrix, axis=1))
    np.testing.assert_array_equal(cost_to_boundary_weights(matrix), expected)


def test_cost_dataframe_is_matched_by_labels():
    levels = ["lo", "mid", "hi"]
    A = np.array([[0, 1, 4], [2, 0, 1], [5, 3, 0]], dtype=float)
    shuffled = pd.DataFrame(A, index=levels, columns=levels).loc[["hi", "lo", "mid"],
                                                                 ["mid", "hi", "lo"]]
    np.testing.assert_array_equal(check_cost_matrix(shuffled, levels=levels), A)
    # R's dimnames arrive as strings: integer levels still match
    frame = pd.DataFrame(A, index=["1", "2", "3"], columns=["1", "2", "3"])
    np.testing.assert_array_equal(check_cost_matrix(frame, levels=[1, 2, 3]), A)


@pytest.mark.parametrize("weights,match", [
    (np.ones(5), r"'weights' parameter of NORDIC must have one weight per row \(length 12\)"),
    (-np.ones(12), "must be nonnegative and finite. Got -1.0 at row 0"),
    (np.r_[np.ones(11), np.nan], "must be nonnegative and finite. Got nan at row 11"),
    (np.r_[np.ones(11), np.inf], "nonnegative and finite"),
    (np.r_[np.zeros(4), np.ones(8)], "gives level 0 a total weight of 0"),
    (["a"] * 12, "must be numeric case weights"),
])
def test_bad_weights_raise_clear_errors(weights, match):
    X, codes = np.arange(24.0).reshape(12, 2), np.repeat([0, 1, 2], 4)
    with pytest.raises(ValueError, match=match):
        NORDIC(codes, X, weights=weights)


@pytest.mark.parametrize("cost,match", [
    (np.zeros((2, 2)), r"must be \(3, 3\), one row and column per level"),
    (np.ones((3, 3)), "must be zero on the diagonal"),
    ([[0, 2, 1], [1, 0, 1], [2, 1, 0]],
     r"row 0 \(level 0\) decreases away from the diagonal: \[0.0, 2.0, 1.0\]"),
    ([[0, 1, 2], [1, 0, 1], [1, 2, 0]], r"row 2 \(level 2\)"),
    ([[0, 1, np.nan], [1, 0, 1], [2, 1, 0]], "must hold finite nonnegative costs"),
    (pd.DataFrame(absolute_cost(3), index=["a", "b", "c"], columns=[0, 1, 2]),
     "labelled by the levels"),
])
def test_bad_cost_matrices_raise_clear_errors(cost, match):
    X, codes = np.arange(24.0).reshape(12, 2), np.repeat([0, 1, 2], 4)
    with pytest.raises(ValueError, match=match):
        NORDIC(codes, X, cost=cost)


def test_formula_weights_column_follows_subset_and_missing_rows():
    X, codes, Xt = _data(n=40, seed=9)
    data = pd.DataFrame({"y": codes, "x1": X[:, 0], "x2": X[:, 1],
                         "freq": np.arange(40) % 3 + 1.0})
    data.loc[3, "freq"] = np.nan
    data.loc[5, "x1"] = np.nan
    subset = data.index != 10
    model = NORDIC.from_formula("y ~ x1 + x2", data, subset=subset, weights="freq",
                                kernel="linear")
    keep = subset & data["freq"].notna().to_numpy() & data["x1"].notna().to_numpy()
    assert model.nobs == keep.sum() and model.n_dropped == 2
    np.testing.assert_array_equal(model.weights, data.loc[keep, "freq"].to_numpy())
    same = NORDIC(codes[keep], X[keep], kernel="linear", weights=data.loc[keep, "freq"])
    assert model.fit().objective == pytest.approx(same.fit().objective, rel=1e-10)
    with pytest.raises(ValueError, match="missing values"):
        NORDIC.from_formula("y ~ x1", data, weights="freq", missing="raise")
    with pytest.raises(ValueError, match="names no column of data: 'w'"):
        NORDIC.from_formula("y ~ x1", data, weights="w")


def test_summary_states_the_weighting():
    X, codes, _ = _data(n=30, seed=4)
    res = NORDIC(codes, X, weights=np.arange(30) % 2 + 1.0, cost=absolute_cost(3) * 2).fit()
    text = str(res.summary())
    assert "case weights x cost matrix" in text
    assert "sum 45 over 30 rows" in text and "0: 0 2 4" in text
    assert "Weighting" not in str(NORDIC(codes, X).fit().summary())
    # the class table adds the weighted counts, and the share is of the weighted total
    weights = np.arange(30) % 2 + 1.0
    totals = np.bincount(codes, weights=weights, minlength=3)
    assert "share of the weighted total" in text
    for level in range(3):
        row = f"{level} {np.sum(codes == level)} {totals[level]:.6g} {totals[level] / 45:.3f}"
        assert row in " ".join(text.split()), row


@pytest.mark.parametrize("cov_type,kwds", [("bahadur", {}),
                                           ("bootstrap", {"n_boot": 20, "random_state": 3,
                                                          "disable": True})])
def test_frequency_weighted_inference_equals_replicated_rows(cov_type, kwds):
    rng = np.random.default_rng(0)
    n = 150
    X = rng.normal(size=(n, 2))
    codes = np.digitize(X[:, 0] + 0.8 * rng.normal(size=n), [-0.5, 0.5])
    w = rng.integers(1, 4, size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = NORDIC(codes, X, kernel="linear", weights=w).fit(cov_type=cov_type, cov_kwds=kwds)
        b = NORDIC(np.repeat(codes, w), np.repeat(X, w, axis=0), kernel="linear").fit(
            cov_type=cov_type, cov_kwds=kwds)
    np.testing.assert_allclose(a.bse.to_numpy(), b.bse.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(a.params.to_numpy(), b.params.to_numpy(), rtol=1e-6, atol=1e-7)
    if cov_type == "bahadur":  # n = sum of weights in the bandwidth rule too
        np.testing.assert_allclose(a.bandwidth, b.bandwidth, rtol=1e-6)


def test_cost_weights_enter_the_sandwich():
    from nordicstats.covariance import BahadurCovariance

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    signs = np.where(X[:, [0]] + rng.normal(size=(300, 1)) > 0, 1.0, -1.0)
    params = np.array([[0.1], [1.0], [0.2]])
    plain = BahadurCovariance(X, signs, params, bandwidth=0.3)
    ones = BahadurCovariance(X, signs, params, bandwidth=0.3, loss_weights=np.ones((300, 1)))
    np.testing.assert_allclose(plain.cov, ones.cov, rtol=1e-12)
    # a constant loss weight c scales H by c and the scores by c: the sandwich is unchanged
    three = BahadurCovariance(X, signs, params, bandwidth=0.3,
                              loss_weights=np.full((300, 1), 3.0))
    np.testing.assert_allclose(three.cov, plain.cov, rtol=1e-10)
    # frequency weights of 3 are three copies: the covariance shrinks by 3
    freq = BahadurCovariance(X, signs, params, bandwidth=0.3, weights=np.full(300, 3.0))
    np.testing.assert_allclose(freq.cov, plain.cov / 3.0, rtol=1e-10)


def test_tuning_with_weights_equals_tuning_on_replicated_rows():
    from nordicstats.tuning import tune

    X, codes, _ = _data(n=40, seed=11)
    Xt, yt, _ = _data(n=30, seed=12)
    w = np.random.default_rng(2).integers(1, 4, size=40)
    wt = np.random.default_rng(3).integers(1, 3, size=30)
    grid = {"C": [0.5, 2.0], "gamma": [0.2, 1.0]}
    cost = np.array([[0, 1, 4], [1, 0, 1], [4, 1, 0]])
    kw = dict(param_grid=grid, scoring=cost, refit=False)
    a = tune("nordic1", X, codes, X_tune=Xt, y_tune=yt, weights=w, weights_tune=wt, **kw)
    b = tune("nordic1", np.repeat(X, w, axis=0), np.repeat(codes, w),
             X_tune=np.repeat(Xt, wt, axis=0), y_tune=np.repeat(yt, wt), **kw)
    np.testing.assert_allclose(a.scores["score"], b.scores["score"], rtol=1e-12)
    # CV: the pooled score weights each held-out row by its case weight
    cv = tune("nordic1", X, codes, weights=w, cv=3, random_state=0, **kw)
    assert np.all(np.isfinite(cv.scores["score"]))
    with pytest.raises(ValueError, match="'weights' parameter of tune must have one weight"):
        tune("nordic1", X, codes, weights=w[:5], cv=3, **kw)


def test_sklearn_sample_weight_is_nordic_weights():
    from nordicstats.sklearn import NORDICClassifier

    X, codes, Xt = _data(n=30, seed=6)
    w = np.arange(30) % 4 + 0.5
    cost = [[0, 1, 3], [1, 0, 1], [3, 1, 0]]
    clf = NORDICClassifier(cost=cost).fit(X, codes, sample_weight=w)
    res = NORDIC(codes, X, weights=w, cost=cost, order=[0, 1, 2]).fit()
    np.testing.assert_allclose(clf.boundary_decision(Xt), res.decision_function(Xt), atol=1e-12)


def test_runner_trains_with_the_scoring_cost():
    from nordicstats.metrics import DONUT_COSTS, weighted_error
    from studies.experiments import (
        Method,
        replication_seeds,
        run_study,
        run_task,
        simulation_design,
    )

    design = simulation_design("donut", d=2, sigma=0.4, n_train=40, n_tune=40, n_test=300)
    method = Method("NORDIC-1", "nordic1", grid={"C": [1.0], "gamma": [0.5]})
    common = dict(scoring=DONUT_COSTS, costs=DONUT_COSTS)
    unit = run_task(design, method, 0, 1, **common)
    trained = run_task(design, method, 0, 1, cost="train", **common)
    assert unit["status"] == trained["status"] == "ok", (unit["message"], trained["message"])
    assert trained["cost_trained"] and not unit["cost_trained"]
    assert trained["config"] != unit["config"]
    # the same data and parameters: the difference is the training loss alone, and the
    # cost-trained fit is the one NORDIC(..., cost=DONUT_COSTS) gives
    split = design.sample(replication_seeds(1, 0)[0])
    direct = NORDIC(split.y_train, split.X_train, C=1.0, gamma=0.5, cost=DONUT_COSTS).fit()
    assert trained["weighted_error"] == pytest.approx(
        weighted_error(split.y_test, direct.predict(split.X_test), DONUT_COSTS), abs=1e-12)
    bad = run_task(design, method, 0, 1, cost="train", scoring="error")
    assert bad["status"] == "failed" and "'cost' parameter of the runner" in bad["message"]
    with pytest.raises(ValueError, match="'cost' parameter of the runner"):  # before any task
        run_study([design], [method], 1, cost="train", progress=False)
