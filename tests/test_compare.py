"""Tests for nordicstats.compare: competitors checked against independent computations.

* Chu-Keerthi: the dual solution is compared with a cvxpy/Clarabel solve of the
  PRIMAL (kernel representer form), for both constraint sets.
* Data replication: compared with an SVC fitted to replicas built by hand.
* SVR: compared with scikit-learn SVR fitted by hand (R parity is in test_compare_r.py).
* Ordered logit: compared with a direct maximum-likelihood fit written here with
  scipy on the natural parameterisation.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special
from sklearn.exceptions import NotFittedError
from sklearn.svm import SVC, SVR

from nordicstats.compare import (
    COMPETITORS,
    ChuKeerthi,
    DataReplication,
    OrderedLogit,
    OrdinalClassifier,
    OrdinalSVR,
    classifier_names,
    make_classifier,
)
from nordicstats.compare.ck import pair_set
from nordicstats.compare.ordered_logit import _jacobian
from nordicstats.datasets import load_balance_scale, make_nonlinear
from nordicstats.kernels import make_kernel


def small_data(n=40, d=3, seed=0, K=3):
    X, y = make_nonlinear(n, d=d, sigma=0.5, random_state=seed, K=K)
    return X, y


def ck_primal_cvxpy(X, codes, K, kernel, C, constraints, ordered):
    """Primal of Chu & Keerthi in representer form, solved by cvxpy + Clarabel."""
    import cvxpy as cp

    gram = kernel(X, X)
    lam, V = np.linalg.eigh(gram)
    L = V * np.sqrt(np.clip(lam, 0, None))  # gram = L L'
    n = X.shape[0]
    a, b = cp.Variable(n), cp.Variable(K - 1)
    obs, thr, signs = pair_set(codes, K, constraints)
    f = gram @ a
    margins = cp.multiply(signs, f[obs] - b[thr])
    objective = 0.5 * cp.sum_squares(L.T @ a) + C * cp.sum(cp.pos(1 - margins))
    cons = [b[:-1] <= b[1:]] if ordered else []
    prob = cp.Problem(cp.Minimize(objective), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, a.value, b.value


@pytest.mark.parametrize("solver", ["piqp", "quadprog"])
@pytest.mark.parametrize("constraints", ["explicit", "implicit"])
@pytest.mark.parametrize("K", [3, 4])
def test_chu_keerthi_matches_cvxpy_primal(constraints, K, solver):
    X, y = small_data(n=36, seed=K, K=K)
    C, gamma = 2.0, 0.3
    res = ChuKeerthi(y, X, C=C, gamma=gamma, constraints=constraints, solver=solver).fit()
    kernel = make_kernel("rbf", gamma=gamma)
    codes = np.asarray(y.cat.codes)
    # implicit: the primal WITHOUT an ordering constraint (Chu & Keerthi's lemma says the
    # optimum is ordered anyway); explicit: with it.
    value, _, _ = ck_primal_cvxpy(X.to_numpy(), codes, K, kernel, C, constraints,
                                  ordered=constraints == "explicit")
    # 1e-6 relative: Clarabel at 1e-10, PIQP at 1e-10 and quadprog with refinements are
    # all far tighter
    assert res.objective == pytest.approx(value, rel=1e-6)
    assert res.dual_objective == pytest.approx(value, rel=1e-6)
    assert np.all(np.diff(res.thresholds.to_numpy()) >= -1e-12)
    # the reported objective is the primal at the returned (a, b)
    f = res.score()
    obs, thr, signs = res.pairs
    slack = np.maximum(0, 1 - signs * (f[obs] - res.thresholds.to_numpy()[thr]))
    assert res.objective == pytest.approx(0.5 * res.dual_coef @ f + C * slack.sum(), rel=1e-12)


def test_chu_keerthi_linear_weights_match_primal():
    import cvxpy as cp

    X, y = small_data(n=40, d=2, seed=3)
    res = ChuKeerthi(y, X, kernel="linear", C=0.5).fit()
    codes = np.asarray(y.cat.codes)
    obs, thr, signs = pair_set(codes, 3, "explicit")
    w, b = cp.Variable(2), cp.Variable(2)
    margins = cp.multiply(signs, X.to_numpy()[obs] @ w - b[thr])
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 0.5 * cp.sum(cp.pos(1 - margins))),
                      [b[0] <= b[1]])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    # w is unique (strictly convex in w); 1e-5 allows for both solvers' tolerances
    np.testing.assert_allclose(res.coef.to_numpy(), w.value, atol=1e-5)
    assert res.objective == pytest.approx(prob.value, rel=1e-6)
    assert list(res.params.index) == ["x1", "x2", "1|2", "2|3"]


def test_chu_keerthi_prediction_rule_and_pairs():
    X, y = small_data(n=50, seed=5)
    res = ChuKeerthi(y, X, gamma=0.5).fit()
    Xt, _ = small_data(n=200, seed=6)
    f = res.score(Xt)
    expected = (f[:, None] >= res.thresholds.to_numpy()[None, :]).sum(axis=1)
    np.testing.assert_array_equal(res.predict_codes(Xt), expected)
    pred = res.predict(Xt)  # labelled like NORDIC's: a categorical Series indexed like Xt
    assert isinstance(pred, pd.Series) and list(pred.cat.categories) == [1, 2, 3]
    assert pred.index.equals(Xt.index)
    obs, thr, signs = pair_set(np.array([0, 1, 2, 2]), 3, "implicit")
    assert obs.tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    assert signs.tolist() == [-1, 1, 1, 1, -1, -1, 1, 1]


@pytest.mark.parametrize("K", [3, 4])
def test_data_replication_equals_hand_built_svc(K):
    X, y = small_data(n=30, seed=K, K=K)
    Xt, _ = small_data(n=25, seed=10, K=K)
    h, gamma, C = 0.7, 0.4, 1.5
    res = DataReplication(y, X, C=C, gamma=gamma, h=h, tol=1e-8).fit()
    codes = np.asarray(y.cat.codes)

    def augment(x, k):  # replica k = 1..K-1 of one row: (x, 0) or (x, h e_{k-1})
        extra = np.zeros(K - 2)
        if k >= 2:
            extra[k - 2] = h
        return np.concatenate([x, extra])

    rows, labels = [], []
    for k in range(1, K):
        for x, c in zip(X.to_numpy(), codes + 1):
            rows.append(augment(x, k))
            labels.append(1 if c > k else -1)
    svc = SVC(C=C, gamma=gamma, kernel="rbf", tol=1e-8).fit(np.array(rows), labels)
    hand = np.column_stack([svc.decision_function(np.array([augment(x, k) for x in
                                                            Xt.to_numpy()]))
                            for k in range(1, K)])
    np.testing.assert_allclose(res.decision_function(Xt), hand, atol=1e-10)
    np.testing.assert_array_equal(res.predict_codes(Xt), (hand >= 0).sum(axis=1))


def test_data_replication_linear_boundaries_are_parallel():
    X, y = small_data(n=60, d=2, seed=2, K=4)
    res = DataReplication(y, X, kernel="linear", C=1.0, h=2.0).fit()
    F = res.decision_function(X)
    # f(x^(k)) - f(x^(1)) = h v_{k-1}, the same for every x
    diffs = F[:, 1:] - F[:, :1]
    np.testing.assert_allclose(diffs, np.broadcast_to(diffs[0], diffs.shape), atol=1e-9)
    np.testing.assert_allclose(diffs[0], 2.0 * res.coef.to_numpy()[2:], atol=1e-9)


@pytest.mark.parametrize("scale", [False, True])
def test_ordinal_svr_equals_hand_fitted_svr(scale):
    X, y = small_data(n=60, seed=8)
    Xt, _ = small_data(n=40, seed=9)
    res = OrdinalSVR(y, X, C=2.0, gamma=0.2, epsilon=0.2, scale=scale).fit()
    Xa, Xb, target = X.to_numpy(), Xt.to_numpy(), np.asarray(y.cat.codes) + 1.0
    if scale:
        mu, sd = Xa.mean(0), Xa.std(0, ddof=1)
        ym, ys = target.mean(), target.std(ddof=1)
        Xa, Xb, target = (Xa - mu) / sd, (Xb - mu) / sd, (target - ym) / ys
    svr = SVR(C=2.0, gamma=0.2, epsilon=0.2).fit(Xa, target)
    g = svr.predict(Xb)
    if scale:
        g = g * ys + ym
    np.testing.assert_allclose(res.predict_score(Xt), g, atol=1e-12)
    codes = (g[:, None] >= np.array([1.5, 2.5])).sum(axis=1)
    np.testing.assert_array_equal(res.predict_codes(Xt), codes)
    np.testing.assert_allclose(res.decision_function(Xt), g[:, None] - [1.5, 2.5], atol=1e-12)


def _polr_negloglik(theta, X, codes, K):
    """-loglik of logit P(Y <= k) = zeta_k - x'beta, written independently of statsmodels."""
    d = X.shape[1]
    beta, zeta = theta[:d], theta[d:]
    if np.any(np.diff(zeta) <= 0):
        return np.inf
    eta = X @ beta
    cut = np.concatenate([[-np.inf], zeta, [np.inf]])
    upper = special.expit(cut[codes + 1] - eta)
    lower = special.expit(cut[codes] - eta)
    return -np.sum(np.log(upper - lower))


def test_ordered_logit_matches_direct_mle():
    X, y = small_data(n=300, d=3, seed=12)
    res = OrderedLogit(y, X).fit()
    codes = np.asarray(y.cat.codes)
    start = np.r_[np.zeros(3), -1.0, 1.0]
    opt = optimize.minimize(_polr_negloglik, start, args=(X.to_numpy(), codes, 3),
                            method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 40000,
                                     "maxfev": 40000})
    # 1e-4: both optimisers stop on tolerances of ~1e-6 in the log-likelihood
    np.testing.assert_allclose(res.params.to_numpy(), opt.x, atol=1e-4)
    assert res.llf == pytest.approx(-opt.fun, abs=1e-6)
    # SEs: inverse of a finite-difference Hessian of the independent likelihood
    step = 1e-4
    p = opt.x.size
    H = np.zeros((p, p))
    for i in range(p):
        for j in range(p):
            ei, ej = np.eye(p)[i] * step, np.eye(p)[j] * step
            H[i, j] = (_polr_negloglik(opt.x + ei + ej, X.to_numpy(), codes, 3)
                       - _polr_negloglik(opt.x + ei - ej, X.to_numpy(), codes, 3)
                       - _polr_negloglik(opt.x - ei + ej, X.to_numpy(), codes, 3)
                       + _polr_negloglik(opt.x - ei - ej, X.to_numpy(), codes, 3)) / (4 * step**2)
    np.testing.assert_allclose(res.bse.to_numpy(), np.sqrt(np.diag(np.linalg.inv(H))), rtol=1e-3)
    assert list(res.params.index) == ["x1", "x2", "x3", "1|2", "2|3"]


def test_ordered_logit_probabilities_and_prediction():
    X, y = small_data(n=200, d=2, seed=4)
    res = OrderedLogit(y, X).fit()
    prob = res.predict_proba(X.iloc[:20])
    eta = X.iloc[:20].to_numpy() @ res.coef.to_numpy()
    zeta = res.thresholds.to_numpy()
    expected = np.diff(np.column_stack([np.zeros(20), special.expit(zeta[None, :] - eta[:, None]),
                                        np.ones(20)]), axis=1)
    np.testing.assert_allclose(prob.to_numpy(), expected, atol=1e-14)
    np.testing.assert_array_equal(res.predict_codes(X.iloc[:20]), expected.argmax(axis=1))
    ci = res.conf_int(0.1)
    np.testing.assert_allclose(ci["upper"] - res.params, 1.6448536269514722 * res.bse, rtol=1e-12)


def test_delta_method_jacobian_by_finite_differences():
    raw = np.array([0.3, -0.2, -1.0, 0.4, -0.3])  # d = 2, three thresholds

    def natural(t):
        return np.r_[t[:2], np.cumsum(np.r_[t[2], np.exp(t[3:])])]

    numeric = np.column_stack([(natural(raw + 1e-6 * e) - natural(raw - 1e-6 * e)) / 2e-6
                               for e in np.eye(5)])
    np.testing.assert_allclose(_jacobian(raw, 2), numeric, atol=1e-8)


def test_user_labels_round_trip_on_balance_scale():
    df = load_balance_scale()
    X, y = df.drop(columns="balance"), df["balance"]
    for name in COMPETITORS:
        pred = make_classifier(name).fit(X.iloc[::7], y.iloc[::7]).predict(X.iloc[:7])
        assert isinstance(pred, pd.Categorical)
        assert list(pred.categories) == ["L", "B", "R"] and pred.ordered


def test_make_classifier_registry_and_params():
    assert set(classifier_names()) == {"svr", "ologit", "dr", "ck", "bsvm", "nordic0",
                                       "nordic1", "nordic2"}
    clf = make_classifier("ck", C=2.0)
    assert isinstance(clf, OrdinalClassifier)
    assert clf.get_params()["C"] == 2.0 and "gamma" in clf.get_params()
    assert "C" not in make_classifier("ologit").get_params()
    with pytest.raises(ValueError, match="Unknown classifier 'svm'"):
        make_classifier("svm")
    with pytest.raises(ValueError, match=r"Unknown parameter\(s\) \['cost'\]"):
        make_classifier("svr", cost=1)
    with pytest.raises(RuntimeError, match="not fitted"):
        make_classifier("dr").predict(np.zeros((1, 2)))
    with pytest.raises(NotFittedError, match="not fitted"):  # scikit-learn's type too
        make_classifier("dr").predict(np.zeros((1, 2)))
    nordic = make_classifier("nordic2", C=0.5)
    assert nordic.model_class.__name__ == "NORDIC"
    assert "method" not in nordic.get_params() and nordic.get_params()["C"] == 0.5


def test_from_formula_and_summary():
    X, y = small_data(n=80, d=2, seed=1)
    data = X.assign(y=y)
    res = OrderedLogit.from_formula("y ~ x1 + x2", data).fit()
    direct = OrderedLogit(y, X).fit()
    np.testing.assert_allclose(res.params.to_numpy(), direct.params.to_numpy(), atol=1e-10)
    text = str(res.summary())
    assert "1|2" in text and "polr" in text
    for model in (OrdinalSVR(y, X), DataReplication(y, X), ChuKeerthi(y, X)):
        assert "Fit time" in str(model.fit().summary())


def test_invalid_options():
    X, y = small_data(n=30, seed=0)
    with pytest.raises(ValueError, match="'C' parameter of ChuKeerthi"):
        ChuKeerthi(y, X, C=-1)
    with pytest.raises(ValueError, match="'constraints' parameter"):
        ChuKeerthi(y, X, constraints="both")
    with pytest.raises(ValueError, match="'scale' parameter"):
        OrdinalSVR(y, X, scale="yes")
    with pytest.raises(ValueError, match="'h' parameter"):
        DataReplication(y, X, h=0)
    with pytest.raises(ValueError, match="constant"):
        OrderedLogit(y, X.assign(const=1.0))
    res = OrdinalSVR(y, X).fit()
    with pytest.raises(ValueError, match="X has 2 columns"):
        res.predict(X.iloc[:, :2])
    with pytest.raises(ValueError, match="'which' parameter"):
        res.predict(X, which="proba")
    with pytest.raises(AttributeError, match="kernel='linear'"):
        ChuKeerthi(y, X).fit().coef  # noqa: B018 (the access itself must raise)


def test_ordered_logit_with_separated_classes_reports_nan_se_but_predicts():
    # Balance-scale split (n = 52, seed 0) where L and R are quasi-separated: the observed
    # information is singular, yet the fitted model still classifies.
    import warnings

    from nordicstats.compare import OrderedLogit
    from nordicstats.datasets import load_balance_scale, stratified_split
    from nordicstats.exceptions import ConvergenceWarning

    data = load_balance_scale()
    cols = ["left_weight", "left_distance", "right_weight", "right_distance"]
    train, test = stratified_split(data["balance"], [52], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.warns(ConvergenceWarning, match="information matrix is singular"):
            res = OrderedLogit(data["balance"].iloc[train], data[cols].iloc[train]).fit()
    assert res.bse.isna().all()
    pred = np.asarray(res.predict(data[cols].iloc[test]))
    accuracy = np.mean(pred == np.asarray(data["balance"].iloc[test]))
    assert accuracy > 0.7  # a usable classifier despite the missing standard errors
    proba = res.predict_proba(data[cols].iloc[test])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)


def test_chu_keerthi_solver_option_is_checked():
    X, y = small_data(n=20)
    with pytest.raises(ValueError, match="'solver' parameter of ChuKeerthi"):
        ChuKeerthi(y, X, solver="clarabel")


# --- case weights (frequencies): a weighted fit equals the fit on the repeated rows ----------
def _repeated(n=80, seed=1):
    X, y = make_nonlinear(n, d=2, random_state=0)
    w = np.random.default_rng(seed).integers(0, 4, size=n).astype(float)
    rows = np.repeat(np.arange(n), w.astype(int))
    return X, y, w, X.iloc[rows], y.iloc[rows]


def test_ordered_logit_case_weights_equal_repeated_rows():
    X, y, w, X_long, y_long = _repeated()
    weighted = OrderedLogit(y, X, weights=w).fit()
    long = OrderedLogit(y_long, X_long).fit()
    # one likelihood, two BFGS runs with gtol 1e-8: the optima agree to ~1e-8
    np.testing.assert_allclose(weighted.params, long.params, atol=1e-6)
    np.testing.assert_allclose(weighted.bse, long.bse, atol=1e-6)
    assert weighted.llf == pytest.approx(long.llf, abs=1e-8)
    # BIC counts the case weights, as polr's logLik(nobs = sum(w)): the repeated rows' BIC
    assert long.nobs == w.sum() != weighted.nobs
    assert weighted.bic == pytest.approx(long.bic, abs=1e-6)
    assert weighted.aic == pytest.approx(long.aic, abs=1e-6)


@pytest.mark.parametrize("scale", [False, True])
def test_ordinal_svr_case_weights_equal_repeated_rows(scale):
    X, y, w, X_long, y_long = _repeated()
    weighted = OrdinalSVR(y, X, weights=w, scale=scale, tol=1e-10).fit()
    long = OrdinalSVR(y_long, X_long, scale=scale, tol=1e-10).fit()
    # the default width and the scaling count the weights as frequencies
    assert weighted.model.spec.kernel.gamma == pytest.approx(long.model.spec.kernel.gamma,
                                                             rel=1e-12)
    np.testing.assert_allclose(weighted.predict_score(X), long.predict_score(X), atol=1e-8)


def test_competitor_case_weights_are_checked():
    X, y = make_nonlinear(30, d=2, random_state=0)
    with pytest.raises(ValueError, match="'weights' parameter of OrderedLogit must be "
                                         "nonnegative"):
        OrderedLogit(y, X, weights=np.r_[-1.0, np.ones(29)])
    with pytest.raises(ValueError, match="one weight per row"):
        OrdinalSVR(y, X, weights=np.ones(3))


def test_ordered_logit_with_large_case_weights_converges():
    # counts of the size of MASS::housing's (sum 1681 over 9 rows): statsmodels minimises
    # -loglike / rows, so the gradient tolerance must scale with sum(w) / rows to stop
    # where the fit to the repeated rows stops (it reported non-convergence before)
    levels = ["Low", "Medium", "High"]
    y = pd.Series(pd.Categorical(levels * 3, categories=levels, ordered=True))
    group = np.repeat(["a", "b", "c"], 3)
    X = pd.DataFrame({"b": (group == "b") * 1.0, "c": (group == "c") * 1.0})
    w = np.array([282, 170, 180, 190, 180, 266, 95, 96, 222], dtype=float)
    rows = np.repeat(np.arange(9), w.astype(int))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weighted = OrderedLogit(y, X, weights=w).fit()
        long = OrderedLogit(y.iloc[rows], X.iloc[rows]).fit()
    np.testing.assert_allclose(weighted.params, long.params, atol=1e-6)
