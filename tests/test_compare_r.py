"""R parity of the competitors, computed live through rpy2 (no stored values).

* OrdinalSVR  vs  e1071::svm(type = "eps-regression")   (both are libsvm)
* OrderedLogit vs MASS::polr and ordinal::clm (coefficients, SEs, predict(type = "probs"))

Data go to R as plain numeric vectors/matrices and integer factors built here
(no pandas conversion).  Skipped with a reason when rpy2, R or a package is missing.
"""

import numpy as np
import pytest

from nordicstats.compare import OrderedLogit, OrdinalSVR
from nordicstats.datasets import load_balance_scale, make_nonlinear

pytestmark = pytest.mark.r


@pytest.fixture(scope="module")
def r():
    try:
        # R started by the package (which keeps R's library path out of the environment
        # of child processes) before rpy2.robjects, which would start it on import
        from nordicstats.r import initialize

        initialize()
        import rpy2.robjects as ro
        from rpy2.robjects.packages import importr
    except Exception as exc:  # ImportError, or R itself failing to load
        pytest.skip(f"rpy2/R not available: {exc}")
    packages = {}
    for name in ("e1071", "MASS", "ordinal"):
        try:
            packages[name] = importr(name)
        except Exception as exc:  # noqa: BLE001 - any failure means: not installed
            pytest.skip(f"R package {name} not available: {exc}")
    return ro


def r_matrix(ro, X):
    X = np.asarray(X, dtype=float)
    return ro.r["matrix"](ro.FloatVector(X.ravel(order="F")), nrow=X.shape[0], ncol=X.shape[1])


def r_ordered(ro, codes, K):
    return ro.r["factor"](ro.IntVector(np.asarray(codes) + 1), levels=ro.IntVector(range(1, K + 1)),
                          ordered=True)


def e1071_predict(ro, X, y, Xt, **options):
    fit = ro.r["svm"](r_matrix(ro, X), ro.FloatVector(y), type="eps-regression", **options)
    return np.asarray(ro.r["predict"](fit, r_matrix(ro, Xt)), dtype=float)


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_svr_matches_e1071(r, scale, kernel):
    X, y = make_nonlinear(120, d=4, sigma=1.0, random_state=21)
    Xt, _ = make_nonlinear(300, d=4, sigma=1.0, random_state=22)
    codes = np.asarray(y.cat.codes)
    gamma = 1.0 / X.shape[1]  # e1071's default, passed explicitly to both
    ours = OrdinalSVR(y, X, kernel=kernel, C=2.0, gamma=gamma, epsilon=0.1, scale=scale).fit()
    theirs = e1071_predict(r, X, codes + 1.0, Xt, kernel="radial" if kernel == "rbf" else "linear",
                           gamma=gamma, cost=2.0, epsilon=0.1, scale=scale, tolerance=0.001)
    # same libsvm code and stopping rule: agreement to rounding (measured ~1e-15)
    np.testing.assert_allclose(ours.predict_score(Xt), theirs, atol=1e-10)


def test_svr_matches_e1071_on_balance_scale(r):
    df = load_balance_scale()
    X, y = df.drop(columns="balance"), df["balance"]
    ours = OrdinalSVR(y, X, C=4.0, gamma=0.25, scale=True).fit()
    theirs = e1071_predict(r, X, np.asarray(y.cat.codes) + 1.0, X, kernel="radial", gamma=0.25,
                           cost=4.0, epsilon=0.1, scale=True)
    np.testing.assert_allclose(ours.predict_score(), theirs, atol=1e-10)


def polr_and_clm(ro, X, codes, K):
    frame = ro.r["data.frame"](x=r_matrix(ro, X))
    ro.globalenv["parity_x"] = frame
    ro.globalenv["parity_y"] = r_ordered(ro, codes, K)
    ro.r("parity_d <- data.frame(y = parity_y, parity_x)")
    polr = ro.r("MASS::polr(y ~ ., data = parity_d, Hess = TRUE, "
                "control = list(reltol = 1e-12, maxit = 1000))")
    polr_coef = np.asarray(ro.r["coef"](polr))
    polr_zeta = np.asarray(polr.rx2("zeta"))
    polr_se = np.sqrt(np.diag(np.asarray(ro.r["vcov"](polr))))
    clm = ro.r("ordinal::clm(y ~ ., data = parity_d)")
    clm_est = np.asarray(ro.r["coef"](clm))  # thresholds first, then coefficients
    clm_se = np.sqrt(np.diag(np.asarray(ro.r["vcov"](clm))))
    d = X.shape[1]
    return (np.r_[polr_coef, polr_zeta], polr_se,
            np.r_[clm_est[K - 1:], clm_est[:K - 1]], np.r_[clm_se[K - 1:], clm_se[:K - 1]], d)


@pytest.mark.parametrize("K", [3, 5])
def test_ordered_logit_matches_polr_and_clm(r, K):
    X, y = make_nonlinear(400, d=3, sigma=0.5, random_state=30 + K, K=K)
    codes = np.asarray(y.cat.codes)
    ours = OrderedLogit(y, X).fit()
    polr, polr_se, clm, clm_se, _ = polr_and_clm(r, X.to_numpy(), codes, K)
    # clm (Newton, tight gradient tolerance) is the accurate reference: measured ~1e-8,
    # asserted 1e-6.  polr (BFGS) itself is only ~4e-6 from clm: asserted 1e-4.
    np.testing.assert_allclose(ours.params.to_numpy(), clm, atol=1e-6)
    np.testing.assert_allclose(ours.params.to_numpy(), polr, atol=1e-4)
    # SEs from numerical (statsmodels, polr) or analytic (clm) Hessians: measured ~1e-6 rel
    np.testing.assert_allclose(ours.bse.to_numpy(), clm_se, rtol=1e-4)
    np.testing.assert_allclose(ours.bse.to_numpy(), polr_se, rtol=1e-4)


def test_ordered_logit_matches_polr_on_balance_scale(r):
    df = load_balance_scale()
    X, y = df.drop(columns="balance"), df["balance"]
    ours = OrderedLogit(y, X).fit()
    _, _, clm, clm_se, _ = polr_and_clm(r, X.to_numpy(), np.asarray(y.cat.codes), 3)
    np.testing.assert_allclose(ours.params.to_numpy(), clm, atol=1e-6)
    np.testing.assert_allclose(ours.bse.to_numpy(), clm_se, rtol=1e-4)
    assert list(ours.params.index[-2:]) == ["L|B", "B|R"]


def test_ordered_logit_probabilities_match_polr_and_clm(r):
    X, y = make_nonlinear(300, d=3, sigma=0.5, random_state=41, K=4)
    Xt, _ = make_nonlinear(200, d=3, sigma=0.5, random_state=42, K=4)
    codes = np.asarray(y.cat.codes)
    ours = OrderedLogit(y, X).fit().predict(Xt, which="proba").to_numpy()
    polr_and_clm(r, X.to_numpy(), codes, 4)  # leaves the training frame parity_d in R
    r.globalenv["parity_new"] = r.r["data.frame"](x=r_matrix(r, Xt))
    polr = np.asarray(r.r("predict(MASS::polr(y ~ ., data = parity_d, control = list("
                          "reltol = 1e-12, maxit = 1000)), parity_new, type = 'probs')"))
    clm = np.asarray(r.r("as.matrix(predict(ordinal::clm(y ~ ., data = parity_d), "
                         "parity_new, type = 'prob')$fit)"))
    # measured max differences 1.7e-9 (clm, Newton) and 1.0e-6 (polr, BFGS), following the
    # parameter differences above: asserted 1e-7 and 1e-5
    np.testing.assert_allclose(ours, clm, atol=1e-7)
    np.testing.assert_allclose(ours, polr, atol=1e-5)
