"""Class probabilities: the calibration maps (nordicstats.probability) and the API around them.

References nobody here wrote: scikit-learn's isotonic regression for the monotone
projection, cvxpy/Clarabel for the constrained logistic fits, scikit-learn's
StratifiedKFold + a manual refit for the cross-fitting, and a brute-force argmin of
the expected cost for the cost decisions.
"""

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.isotonic import IsotonicRegression, isotonic_regression
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from nordicstats import NORDIC
from nordicstats.compare import OrderedLogit, OrdinalSVR
from nordicstats.datasets import make_nonlinear
from nordicstats.probability import (
    CALIBRATION_METHODS,
    CALIBRATION_TARGETS,
    check_probability_kwds,
    cost_bayes_codes,
    fit_calibration,
    own_value_and_mean,
    project_monotone,
    rearrange,
)
from nordicstats.sklearn import NORDICClassifier


def _data(n=90, K=3, seed=0, d=2):
    X, y = make_nonlinear(n, d=d, K=K, random_state=seed)
    return X, y


def _check_valid(proba, cumulative=None):
    """Rows sum to 1, no probability is negative, cumulative probabilities are
    nonincreasing in k: asserted exactly or to 1e-12."""
    proba = np.asarray(proba)
    assert np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if cumulative is not None:
        assert np.all(np.diff(cumulative, axis=1) <= 0)


# --- the monotone set --------------------------------------------------------------------------
def test_projection_equals_sklearn_antitonic_regression():
    rng = np.random.default_rng(1)
    for m in (1, 2, 4, 7):
        P = rng.uniform(size=(300, m))
        ours = project_monotone(P)
        ref = np.array([isotonic_regression(p, increasing=False) for p in P])
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-14)
        assert np.all(np.diff(ours, axis=1) <= 0)


def test_rearrangement_keeps_ordered_rows_and_sorts_crossing_ones():
    F = np.array([[2.0, 1.0, -1.0], [0.0, 1.0, 3.0]])
    np.testing.assert_array_equal(rearrange(F), [[2.0, 1.0, -1.0], [3.0, 1.0, 0.0]])


@settings(max_examples=200, deadline=None)
@given(method=st.sampled_from(CALIBRATION_METHODS),
       targets=st.sampled_from(CALIBRATION_TARGETS),
       F=hnp.arrays(np.float64, st.tuples(st.integers(8, 40), st.integers(1, 4)),
                    elements=st.floats(-50, 50)),
       seed=st.integers(0, 2**16))
def test_every_map_is_valid_whatever_the_decision_values(method, targets, F, seed):
    """Arbitrary (crossing, tied, extreme) decision values at fitting and at new points."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, F.shape[1] + 1, size=F.shape[0])
    cal = fit_calibration(F, codes, rng.uniform(0.5, 2.0, F.shape[0]), method, targets)
    new = rng.normal(scale=rng.uniform(0.1, 100), size=(50, F.shape[1]))
    for G in (F, new):
        _check_valid(cal.class_probabilities(G), cal.cumulative(G))


# --- the logistic maps against an independent convex solver -----------------------------------
def _platt_targets(codes, w, m):
    above = codes[:, None] > np.arange(m)[None, :]
    n_plus = (w[:, None] * above).sum(axis=0)
    return np.where(above, (n_plus + 1) / (n_plus + 2), 1 / (w.sum() - n_plus + 2))


def _cvxpy_logistic(S, T, w, ordered):
    """(a, c) of the one-slope fit of :func:`_cvxpy_link` (S of shape (n, m))."""
    a, c = _cvxpy_link([S], T, w, ordered)
    return a[0], c


def _cvxpy_link(parts, T, w, ordered):
    """min sum w [log(1 + e^z) - t z], z = sum_j a_j S_j + c; a >= 0; c nonincreasing if
    ordered (``parts``: the (n, m) arrays S_j)."""
    n, m = parts[0].shape
    a, c = cp.Variable(len(parts)), cp.Variable(m)
    z = sum(a[j] * S for j, S in enumerate(parts)) + np.ones((n, 1)) @ cp.reshape(
        c, (1, m), order="C")
    loss = cp.sum(cp.multiply(np.repeat(w[:, None], m, axis=1), cp.logistic(z) - cp.multiply(T, z)))
    cons = [a >= 0] + ([cp.diff(c) <= 0] if ordered and m > 1 else [])
    cp.Problem(cp.Minimize(loss), cons).solve(solver="CLARABEL", tol_gap_abs=1e-11,
                                              tol_gap_rel=1e-11, tol_feas=1e-11)
    return a.value, c.value


def test_pooled_map_matches_clarabel():
    """Own sorted value and the row mean as two predictors with nonnegative slopes."""
    rng = np.random.default_rng(13)
    codes = rng.integers(0, 4, 400)
    # boundaries that disagree (noise per boundary), so the mean carries information
    F = np.column_stack([codes - 0.5, codes - 1.5, codes - 2.5]) + rng.normal(size=(400, 3))
    w = rng.uniform(0.5, 2.0, 400)
    pooled = fit_calibration(F, codes, w, "pooled")
    S = rearrange(F)
    a, c = _cvxpy_link([S, np.repeat(S.mean(axis=1, keepdims=True), 3, axis=1)],
                      _platt_targets(codes, w, 3), w, ordered=True)
    # both solvers stop at ~1e-9 relative gradient: parameters to 1e-5 (measured 4e-8)
    np.testing.assert_allclose(pooled.slope, a, atol=1e-5)
    np.testing.assert_allclose(pooled.offset, c, atol=1e-5)
    assert pooled.slope[1] > 0.1  # the mean is used: the pooled map is not the one-slope map
    np.testing.assert_array_equal(own_value_and_mean(S)[:, :, 0], S)


def test_indicator_targets_are_sklearns_unpenalised_logistic_regression():
    """Two levels: the one-slope map with 0/1 targets is ordinary logistic regression."""
    rng = np.random.default_rng(14)
    f = rng.normal(size=300)
    codes = (rng.random(300) < 1 / (1 + np.exp(-(2.0 * f - 0.5)))).astype(int)
    w = rng.uniform(0.5, 2.0, 300)
    ours = fit_calibration(f[:, None], codes, w, "logistic", targets="indicator")
    ref = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(
        f[:, None], codes, sample_weight=w)
    # both are L-BFGS runs to ~1e-9 gradients: parameters to 1e-5 (measured 4e-10)
    np.testing.assert_allclose(ours.slope, ref.coef_[0], atol=1e-5)
    np.testing.assert_allclose(ours.offset, ref.intercept_, atol=1e-5)
    platt = fit_calibration(f[:, None], codes, w, "logistic")
    assert platt.slope[0] < ours.slope[0]  # Platt's targets shrink the slope


def test_logistic_and_platt_maps_match_clarabel():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, 400)
    # crossing decision values: the third boundary is noisy and shifted upwards
    F = np.column_stack([codes - 0.5, codes - 1.5, codes - 1.0]) + rng.normal(size=(400, 3))
    w = rng.uniform(0.5, 2.0, 400)
    T = _platt_targets(codes, w, 3)
    shared = fit_calibration(F, codes, w, "logistic")
    a, c = _cvxpy_logistic(rearrange(F), T, w, ordered=True)
    # both solvers stop at ~1e-9 relative gradient; parameters agree to ~1e-5 (measured 2e-7)
    np.testing.assert_allclose(shared.slope, [a], atol=1e-5)
    np.testing.assert_allclose(shared.offset, c, atol=1e-5)
    platt = fit_calibration(F, codes, w, "platt")
    for k in range(3):
        a, c = _cvxpy_logistic(F[:, [k]], T[:, [k]], w, ordered=False)
        np.testing.assert_allclose([platt.slope[k], platt.offset[k]], [a, c[0]], atol=1e-5)


def test_ordered_offsets_bind_when_the_boundaries_disagree():
    """Boundary 2 looks easier to pass than boundary 1: the offsets are tied, not crossed."""
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 3, 300)
    F = np.column_stack([codes - 0.5, codes + 1.5]) + 0.3 * rng.normal(size=(300, 2))
    cal = fit_calibration(F, codes, None, "logistic")
    assert cal.offset[0] >= cal.offset[1]
    _check_valid(cal.class_probabilities(F), cal.cumulative(F))


def test_isotonic_map_is_sklearns_per_boundary_before_projection():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 3, 200)
    F = np.column_stack([codes - 0.5, codes - 1.5]) + rng.normal(size=(200, 2))
    cal = fit_calibration(F, codes, None, "isotonic")
    new = rng.normal(scale=3, size=(100, 2))
    raw = np.column_stack([
        IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(F[:, k], codes > k)
        .predict(new[:, k]) for k in range(2)])
    ref = np.array([isotonic_regression(p, increasing=False) for p in raw])
    np.testing.assert_allclose(cal.cumulative(new), ref, rtol=0, atol=1e-14)


# --- fitted models ----------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_fitting_uses_held_out_refits_with_the_same_width(weighted):
    X, y = _data(n=80, seed=2)
    extra = {"weights": np.arange(80) % 3 + 1.0, "cost": [[0, 1, 3], [1, 0, 1], [2, 1, 0]]} \
        if weighted else {"weights": None}
    model = NORDIC(y, X, C=2.0, **extra)
    res = model.fit(probability=True, probability_kwds={"n_folds": 4, "random_state": 7})
    codes = model.response.codes
    expected = np.empty((80, 2))
    folds = StratifiedKFold(4, shuffle=True, random_state=7).split(np.zeros((80, 1)), codes)
    for train, test in folds:
        w = None if extra["weights"] is None else extra["weights"][train]
        fold = NORDIC(codes[train], X.to_numpy()[train], C=2.0, gamma=model.kernel.gamma,
                      **{**extra, "weights": w}).fit()
        expected[test] = fold.decision_function(X.to_numpy()[test])
    np.testing.assert_allclose(res.calibration.held_out, expected, atol=1e-8)
    if weighted:  # the map is fitted with the case weights
        cal = fit_calibration(expected, codes, extra["weights"], "logistic")
        np.testing.assert_allclose(res.calibration.offset, cal.offset, atol=1e-6)
    assert res.calibration.options == {"method": "logistic", "n_folds": 4, "random_state": 7}
    again = model.fit(probability=True, probability_kwds={"n_folds": 4, "random_state": 7})
    np.testing.assert_array_equal(again.predict(X, which="proba"), res.predict(X, which="proba"))
    other = model.fit(probability=True, probability_kwds={"n_folds": 4, "random_state": 8})
    assert not np.allclose(other.calibration.held_out, res.calibration.held_out)


_SPECS = [
    {"method": "nordic1", "kernel": "rbf"}, {"method": "nordic1", "kernel": "linear"},
    {"method": "nordic0", "kernel": "rbf"}, {"method": "bsvm", "kernel": "rbf"},
    {"method": "bsvm", "kernel": "poly", "degree": 2}, {"method": "nordic1", "kernel": "poly"},
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(_SPECS), calibration=st.sampled_from(CALIBRATION_METHODS),
       K=st.integers(2, 4), seed=st.integers(0, 10_000), weighted=st.booleans(),
       C=st.sampled_from([0.25, 4.0]))
def test_probabilities_of_fitted_models_are_valid_at_new_points(spec, calibration, K, seed,
                                                                 weighted, C):
    """Property test over random problems: every method, kernel, map, weighting."""
    rng = np.random.default_rng(seed)
    X, y = _data(n=15 * K, K=K, seed=seed)
    weights = rng.integers(1, 4, size=15 * K) if weighted else None
    res = NORDIC(y, X, C=C, weights=weights, **spec).fit(
        cov_type="none", probability=True,
        probability_kwds={"method": calibration, "n_folds": 3})
    new = rng.normal(scale=4.0, size=(200, 2))  # far from the data: kernel boundaries cross
    proba = res.predict(new, which="proba")
    assert list(proba.columns) == list(res.levels)
    _check_valid(proba, res.calibration.cumulative(res.decision_function(new)))


def test_nordic2_probabilities():
    pytest.importorskip("pyscipopt")
    X, y = _data(n=30, seed=6)
    res = NORDIC(y, X, method="nordic2", kernel="linear").fit(
        cov_type="none", probability=True, probability_kwds={"n_folds": 3})
    _check_valid(res.predict(np.random.default_rng(0).normal(size=(50, 2)), which="proba"))


def test_missing_covariates_give_missing_probabilities():
    X, y = _data(n=60, seed=8)
    res = NORDIC(y, X).fit(probability=True, probability_kwds={"n_folds": 3})
    new = X.iloc[:4].copy()
    new.iloc[1, 0] = np.nan
    proba = res.predict(new, which="proba")
    assert proba.index.equals(new.index)
    assert proba.iloc[1].isna().all() and not proba.drop(index=new.index[1]).isna().any().any()
    np.testing.assert_allclose(proba.iloc[[0, 2, 3]], res.predict(X.iloc[[0, 2, 3]], which="proba"),
                               atol=1e-15)
    with pytest.raises(ValueError, match="missing covariate in 1 row"):
        res.predict(new, which="proba", missing="raise")
    labels = res.predict(new, cost=[[0, 1, 2], [1, 0, 1], [2, 1, 0]])
    assert labels.isna().tolist() == [False, True, False, False]


def test_cost_decisions_are_the_least_expected_cost():
    X, y = _data(n=90, seed=9)
    res = NORDIC(y, X).fit(probability=True, probability_kwds={"n_folds": 3})
    new = np.random.default_rng(2).normal(scale=1.5, size=(300, 2))
    probs = res.predict(new, which="proba").to_numpy()
    cost = np.array([[0, 1, 1], [1, 0, 1], [3, 1, 0]], dtype=float)
    brute = np.array([min(range(3), key=lambda j, p=p: (p @ cost[:, j], j)) for p in probs])
    got = res.predict(new, cost=cost)
    np.testing.assert_array_equal(np.asarray(got.codes), brute)
    assert (brute == 2).sum() > (probs.argmax(axis=1) == 2).sum()  # the costs move decisions up
    labelled = pd.DataFrame(cost, index=res.levels, columns=res.levels)
    np.testing.assert_array_equal(res.predict(new, cost=labelled).codes, brute)
    absolute = np.abs(np.subtract.outer(range(3), range(3)))
    median = (np.cumsum(probs, axis=1) < 0.5).sum(axis=1)
    np.testing.assert_array_equal(res.predict(new, cost=absolute).codes, median)
    np.testing.assert_array_equal(cost_bayes_codes(np.array([[0.5, 0.0, 0.5]]), absolute), [0])


def test_errors_say_what_to_do():
    X, y = _data(n=60, seed=10)
    model = NORDIC(y, X)
    plain = model.fit()
    with pytest.raises(ValueError, match=r"refit with fit\(probability=True\)"):
        plain.predict(X, which="proba")
    with pytest.raises(ValueError, match=r"refit with fit\(probability=True\)"):
        plain.predict(X, cost=[[0, 1, 2], [1, 0, 1], [2, 1, 0]])
    with pytest.raises(ValueError, match="used only with probability=True"):
        model.fit(probability_kwds={"n_folds": 3})
    with pytest.raises(ValueError, match="'probability' parameter of NORDIC.fit"):
        model.fit(probability="yes")
    with pytest.raises(ValueError, match=r"Unknown probability_kwds option\(s\) \['folds'\]"):
        model.fit(probability=True, probability_kwds={"folds": 3})
    with pytest.raises(ValueError, match=r"'probability_kwds\['method'\]' .* \['logistic'"):
        check_probability_kwds({"method": "sigmoid"})
    with pytest.raises(ValueError, match="n_folds"):
        check_probability_kwds({"n_folds": 1})
    with pytest.raises(ValueError, match="'method' parameter of fit_calibration"):
        fit_calibration(np.zeros((4, 2)), np.array([0, 1, 2, 1]), method="sigmoid")
    with pytest.raises(ValueError, match=r"shapes \(4, 2\) and \(3,\)"):
        fit_calibration(np.zeros((4, 2)), np.array([0, 1, 2]))
    one_of_level_3 = np.where(np.asarray(y) == 3, 2, np.asarray(y))
    one_of_level_3[-1] = 3
    with pytest.raises(ValueError, match="level 3 has only 1 row"):
        NORDIC(one_of_level_3, X).fit(probability=True)
    one_of_level_3[-2] = 3  # two rows, five folds: each fold's fit still sees level 3
    rare = NORDIC(one_of_level_3, X).fit(probability=True)
    assert not np.isnan(rare.calibration.held_out).any()
    res = model.fit(probability=True, probability_kwds={"n_folds": 3})
    with pytest.raises(ValueError, match="cost= applies to which='class'"):
        res.predict(X, which="decision", cost=np.eye(3))
    with pytest.raises(ValueError, match="zero on the diagonal"):
        res.predict(X, cost=np.ones((3, 3)))
    with pytest.raises(ValueError, match="no class probabilities"):
        OrdinalSVR(y, X).fit().predict(X, cost=[[0, 1, 2], [1, 0, 1], [2, 1, 0]])


def test_ordered_logit_proba_is_prob_and_predict_proba():
    X, y = _data(n=120, seed=11)
    res = OrderedLogit(y, X).fit()
    proba = res.predict(X, which="proba")
    pd.testing.assert_frame_equal(proba, res.predict(X, which="prob"))
    np.testing.assert_array_equal(proba.to_numpy(), res.predict_proba(X).to_numpy())
    cost = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])  # 0-1 cost: the most probable level
    np.testing.assert_array_equal(res.predict(X, cost=cost).cat.codes, proba.to_numpy().argmax(1))


def test_sklearn_predict_proba_in_classes_order():
    X, y = _data(n=90, seed=12)
    labels = np.array(["low", "mid", "high"])[np.asarray(y.cat.codes)]
    order = ["low", "mid", "high"]
    clf = NORDICClassifier(order=order, probability=True,
                           probability_kwds={"n_folds": 3}).fit(X.to_numpy(), labels)
    res = NORDIC(labels, X.to_numpy(), order=order).fit(probability=True,
                                                      probability_kwds={"n_folds": 3})
    np.testing.assert_array_equal(clf.predict_proba(X.to_numpy()),
                                  res.predict(X.to_numpy(), which="proba").to_numpy())
    assert clf.classes_.tolist() == order
    assert not hasattr(NORDICClassifier().fit(X.to_numpy(), labels), "predict_proba")
