"""The NORDIC model and results API: labels, formulas, errors, determinism, summary."""

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from nordicstats import NORDIC
from nordicstats.solvers import NordicProblem, solve


def grade_data(n=60, seed=0, K=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
    latent = X.a + 0.5 * X.b ** 2 + 0.5 * rng.normal(size=n)
    labels = ["lo", "mid", "hi", "top", "max"][:K]
    cuts = np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1])
    y = pd.Series(pd.Categorical(np.array(labels)[np.digitize(latent, cuts)], categories=labels,
                                 ordered=True), name="grade")
    return X, y


def test_predictions_are_user_labels_and_boundaries_named_r_style():
    X, y = grade_data()
    res = NORDIC(y, X, C=2.0).fit()
    assert res.boundary_names == ["lo|mid", "mid|hi"]
    pred = res.predict(X)
    assert isinstance(pred, pd.Series) and list(pred.cat.categories) == ["lo", "mid", "hi"]
    assert pred.cat.ordered and pred.index.equals(X.index)
    assert set(pred) <= {"lo", "mid", "hi"}
    dec = res.predict(X, which="decision")
    assert list(dec.columns) == ["lo|mid", "mid|hi"]
    # class = number of boundaries with f_k >= 0 (paper Section 2.2)
    codes = (dec.to_numpy() >= 0).sum(axis=1)
    assert np.array_equal(np.asarray(pred.cat.codes), codes)
    assert res.crossing_rate() == 0.0


def test_decision_function_matches_kernel_expansion():
    X, y = grade_data()
    res = NORDIC(y, X, kernel="rbf", gamma=0.4).fit()
    Xn = np.random.default_rng(9).normal(size=(5, 2))
    diff = Xn[:, None, :] - X.to_numpy()[None, :, :]
    Kn = np.exp(-0.4 * (diff ** 2).sum(axis=2))
    expected = Kn @ res.dual_coef + res.intercept.to_numpy()
    np.testing.assert_allclose(res.decision_function(Xn), expected, rtol=1e-12)


def test_linear_fit_exposes_primal_weights():
    X, y = grade_data()
    res = NORDIC(y, X, kernel="linear").fit(cov_type="none")
    assert list(res.params.index) == ["Intercept", "a", "b"]
    np.testing.assert_allclose(res.coef.to_numpy(), X.to_numpy().T @ res.dual_coef, atol=1e-10)
    np.testing.assert_allclose(res.decision_function(X),
                               X.to_numpy() @ res.coef.to_numpy() + res.intercept.to_numpy())
    with pytest.raises(AttributeError, match="kernel='linear' only"):
        NORDIC(y, X).fit().params  # noqa: B018 (the access itself must raise)


def test_formula_interface_with_ordered_categorical_and_missing_rows():
    X, y = grade_data(n=50)
    data = X.assign(grade=y, group=np.where(np.arange(50) % 2, "u", "v"))
    data.loc[3, "a"] = np.nan
    data.loc[7, "grade"] = np.nan
    model = NORDIC.from_formula("grade ~ a + b + C(group)", data, kernel="linear")
    assert model.n_dropped == 2 and model.nobs == 48
    assert model.exog_names == ["C(group)[T.v]", "a", "b"]
    res = model.fit(cov_type="none")
    pred = res.predict(data.drop(index=[3, 7]))
    assert len(pred) == 48
    with pytest.raises(ValueError, match="missing values"):
        NORDIC.from_formula("grade ~ a + b", data, missing="raise")
    with pytest.raises(ValueError, match="must read 'response ~ terms'"):
        NORDIC.from_formula("nothing ~ a", data)


def test_two_classes_are_an_ordinary_svm():
    X, y = grade_data(K=2)
    res = NORDIC(y, X, kernel="linear").fit()
    assert res.boundary_names == ["lo|mid"]
    assert "K = 2" in res.summary().as_text()
    bsvm = NORDIC(y, X, kernel="linear", method="bsvm").fit(cov_type="none")
    # two solvers (joint NORDIC-1: decomposition; BSVM: smo), each certified to a
    # relative duality gap of 1e-6: their objectives agree to that
    assert res.objective == pytest.approx(bsvm.objective, rel=1e-6)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"C": -1}, ValueError, r"The 'C' parameter of NORDIC must be a float in \(0, inf\). Got -1"),
    ({"C": np.inf}, ValueError, r"'C' parameter"),
    ({"C": "1"}, ValueError, r"'C' parameter"),
    ({"method": "nordic3"}, ValueError,
     r"'method' parameter of NORDIC must be one of \['bsvm', 'nordic0', 'nordic1', 'nordic2'\]"),
    ({"kernel": "laplace"}, ValueError, r"'kernel' parameter of NORDIC must be one of"),
    ({"gamma": 0.0}, ValueError, r"'gamma' parameter"),
    ({"noncrossing": "both"}, ValueError, r"'noncrossing' parameter"),
    ({"method": "nordic0", "kernel": "linear"}, ValueError, "never negative"),
    ({"method": "nordic0", "kernel": "poly", "degree": 3}, ValueError, "never negative"),
    ({"penalty": "l1"}, ValueError, "only available for method='nordic2'"),
])
def test_bad_options_get_clear_errors(kwargs, error, message):
    X, y = grade_data(n=20)
    with pytest.raises(error, match=message):
        NORDIC(y, X, **kwargs)


def test_bad_data_get_clear_errors():
    X, y = grade_data(n=20)
    with pytest.raises(ValueError, match="endog has 20 observations but exog has 19 rows"):
        NORDIC(y, X.iloc[:19])
    Xnan = X.copy()
    Xnan.iloc[2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        NORDIC(y, Xnan)
    with pytest.raises(ValueError, match="only one class"):
        NORDIC(["a"] * 20, X)
    res = NORDIC(y, X).fit()
    with pytest.raises(ValueError, match="X has 3 columns but the model was fitted with 2"):
        res.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="'which' parameter of predict"):
        res.predict(X, which="probability")
    with pytest.raises(ValueError, match=r"refit with fit\(probability=True\)"):
        res.predict(X, which="proba")
    with pytest.raises(ValueError, match="'cov_type' parameter must be one of"):
        NORDIC(y, X).fit(cov_type="nonsense")


def test_negative_callable_kernel_rejected_for_nordic0():
    X, y = grade_data(n=20)
    model = NORDIC(y, X, method="nordic0", kernel=lambda A, B: A @ B.T)
    with pytest.raises(ValueError, match="negative Gram entries"):
        model.fit()
    model = NORDIC(y, X, kernel=lambda A, B: -(A @ B.T))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        model.fit()


def test_fit_is_deterministic_bit_for_bit():
    X, y = grade_data(n=50)
    a = NORDIC(y, X, method="nordic1").fit()
    b = NORDIC(y, X, method="nordic1").fit()
    assert np.array_equal(a.dual_coef, b.dual_coef)
    assert np.array_equal(a.solver_result.intercept, b.solver_result.intercept)


def test_price_of_noncrossing_is_the_bsvm_gap():
    X, y = grade_data(n=60, K=4, seed=3)
    res = NORDIC(y, X, C=4.0).fit()
    bsvm = NORDIC(y, X, C=4.0, method="bsvm").fit()
    price = res.price_of_noncrossing
    assert price["bsvm_objective"] == pytest.approx(bsvm.objective, rel=1e-9)
    assert price["objective_increase"] >= -1e-7 * bsvm.objective
    assert price["bsvm_crossing_rate"] == pytest.approx(bsvm.crossing_rate())


def test_refit_params_repeats_rows_as_case_weights_and_fit_unconstrained_is_bsvm():
    X, y = grade_data(n=60, K=3, seed=4)
    model = NORDIC(y, X, kernel="linear", C=2.0, solver="quadprog")
    # the bootstrap's refit on rows (0, 0, 1, ..., 59) is the fit with row 0 weighted twice
    rows = np.r_[0, np.arange(60)]
    weighted = NORDIC(y, X, kernel="linear", C=2.0, solver="quadprog",
                      weights=np.r_[2.0, np.ones(59)]).fit(cov_type="none")
    # 1e-6: two quadprog solves with ridge 1e-6 and proximal refinements (tests/test_qp.py)
    np.testing.assert_allclose(model.refit_params(rows), weighted.params.to_numpy(), atol=1e-6)
    problem, unconstrained = model.fit_unconstrained()
    bsvm = NORDIC(y, X, kernel="linear", C=2.0, solver="quadprog", method="bsvm").fit(
        cov_type="none")
    assert problem.method == "bsvm"
    assert unconstrained.objective == pytest.approx(bsvm.objective, rel=1e-9)
    np.testing.assert_allclose(unconstrained.intercept, bsvm.solver_result.intercept, atol=1e-8)


def test_summary_reports_model_solver_and_classes():
    X, y = grade_data(n=40)
    stamp = dt.datetime(2026, 1, 2, 3, 4, 5)
    res = NORDIC(y, X, kernel="linear", C=2.0).fit(fitted_at=stamp)
    text = res.summary().as_text()
    for piece in ["NORDIC-1", "Fri, 02 Jan 2026", "03:04:05", res.solver_result.solver, "optimal",
                  "Certificate: relative duality gap",
                  "lo|mid", "mid|hi", "Price of noncrossing", "ordered categorical",
                  "Boundary lo|mid", "std err"]:
        assert piece in text, piece
    assert "<table" in res.summary().as_html()
    assert "\\begin{tabular}" in res.summary().as_latex()


def test_model_problem_matches_a_hand_built_problem():
    X, y = grade_data(n=30)
    model = NORDIC(y, X, kernel="linear", C=3.0)
    hand = NordicProblem(X.to_numpy() @ X.to_numpy().T,
                         np.where(np.asarray(y.cat.codes)[:, None] > np.arange(2), 1.0, -1.0),
                         3.0, "nordic1", "joint", X=X.to_numpy())
    assert model.fit().objective == pytest.approx(solve(hand).objective, rel=1e-10)
