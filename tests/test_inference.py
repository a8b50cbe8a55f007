"""Tests of nordicstats.covariance / nordicstats.bootstrap.

Reference values: beta* and the asymptotic SDs of the two binary designs D1, D2 are the
values of docs/notes/inference-bandwidth.md (computed there independently); the
point estimates in the Monte Carlo come from libsvm (scikit-learn SVC, an independent solver
of the same C * hinge + 1/2 ||w||^2 problem) and, at n = 20000, from cvxpy/Clarabel on the
primal.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nordicstats.bootstrap import BootstrapCovariance, bootstrap_replicates
from nordicstats.covariance import (
    COND_MAX,
    BahadurCovariance,
    bandwidth,
    check_cov_kwds,
)
from nordicstats.data import binary_signs
from nordicstats.exceptions import InferenceWarning
from nordicstats.hypotheses import (
    WaldTestResult,
    parallel_restrictions,
    parse_restrictions,
    wald_test,
)
from nordicstats.theory import population_svm

S2 = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
# name: (P(Y=+1), mu+, mu-, S, beta* and asymptotic SD from docs/notes/inference-bandwidth.md)
DESIGNS = {
    "D1": (0.5, np.array([1.0, 0.0]), np.array([-1.0, 0.0]), np.eye(2),
           [0.0, 1.4339607462, 0.0], [2.3228758, 2.6275870, 2.3228758]),
    "D2": (0.7, np.array([1.0, 0.5, 0.0]), np.array([-0.5, 0.0, 0.0]), S2,
           [0.4042550388, 1.2409180487, -0.2481836097, 0.0],
           [2.2812109, 2.7319485, 2.5626370, 2.2129885]),
}


def draw(rng, n, design):
    p, mu_plus, mu_minus, S = DESIGNS[design][:4]
    y = np.where(rng.random(n) < p, 1.0, -1.0)
    X = rng.normal(size=(n, mu_plus.size)) @ np.linalg.cholesky(S).T
    return X + np.where(y[:, None] > 0, mu_plus, mu_minus), y


def svm_libsvm(X, y, C=1.0):
    """Binary linear SVM C * sum hinge + 1/2 ||w||^2 by libsvm; returns (b, w)."""
    from sklearn.svm import SVC

    fit = SVC(kernel="linear", C=C, tol=1e-7).fit(X, y)
    return np.concatenate([fit.intercept_, fit.coef_[0]])


def svm_cvxpy(X, y, C=1.0):
    cp = pytest.importorskip("cvxpy")
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    hinge = cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b)))
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * hinge)).solve(solver="CLARABEL")
    return np.concatenate([[b.value], w.value])


# --- population truths -------------------------------------------------------------------------
@pytest.mark.parametrize("design", ["D1", "D2"])
def test_population_svm_matches_notes(design):
    p, mu_plus, mu_minus, S, beta, sd = DESIGNS[design]
    out = population_svm([(p, mu_plus, S, 1.0), (1 - p, mu_minus, S, -1.0)])
    # The notes give 10 (beta) and 7-8 (SD) significant digits.
    np.testing.assert_allclose(out["beta"], beta, atol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.diag(out["avar"])), sd, rtol=1e-6)
    # At the optimum the hinge risk equals P(R >= 0) = G[0, 0] (notes' check).
    assert out["risk"] == pytest.approx(out["G"][0, 0], rel=1e-9)


def test_population_svm_risk_against_simulation():
    """The closed-form G and H agree with a large simulated sample at beta*."""
    p, mu_plus, mu_minus, S = DESIGNS["D2"][:4]
    out = population_svm([(p, mu_plus, S, 1.0), (1 - p, mu_minus, S, -1.0)])
    X, y = draw(np.random.default_rng(5), 400_000, "D2")
    Xa = np.column_stack([np.ones(len(y)), X])
    r = 1 - y * (Xa @ out["beta"])
    G_mc = (Xa * (r >= 0)[:, None]).T @ Xa / len(y)
    # Monte Carlo SE of the entries of G at n = 4e5 is below 0.003.
    np.testing.assert_allclose(G_mc, out["G"], atol=0.01)
    assert np.mean(np.maximum(r, 0)) == pytest.approx(out["risk"], abs=0.005)


# --- the plug-in sandwich ---------------------------------------------------------------------
def _ind(r):
    """1{r >= 0}, with 1/2 for rows on the margin (|r| <= 1e-5), as documented."""
    return 0.5 if abs(r) <= 1e-5 else float(r > 0)


def brute_force_cov(X, signs, params, h):
    """Koo et al. sandwich from its definition, one observation at a time."""
    n, d = X.shape
    m = signs.shape[1]
    p = d + 1
    G = np.zeros((p * m, p * m))
    Hs = [np.zeros((p, p)) for _ in range(m)]
    for i in range(n):
        x = np.concatenate([[1.0], X[i]])
        r = [1 - signs[i, k] * (x @ params[:, k]) for k in range(m)]
        for k in range(m):
            Hs[k] += stats.norm.pdf(r[k] / h[k]) / h[k] * np.outer(x, x) / n
            for j in range(m):
                both = _ind(r[k]) * _ind(r[j]) * signs[i, k] * signs[i, j]
                G[k * p:(k + 1) * p, j * p:(j + 1) * p] += both * np.outer(x, x) / n
    B = np.zeros_like(G)
    for k in range(m):
        B[k * p:(k + 1) * p, k * p:(k + 1) * p] = np.linalg.inv(Hs[k])
    return B @ G @ B / n


def test_bahadur_matches_definition_three_boundaries():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 2))
    codes = np.digitize(X @ [1.0, -0.5] + rng.normal(size=150), [-0.7, 0.0, 0.8])
    signs = binary_signs(codes, 4)
    params = np.array([[1.0, 0.1, -0.9], [1.1, 0.9, 1.2], [-0.4, -0.6, -0.5]])
    # Put two rows exactly on boundary 0's margin to exercise the 1/2 weight.
    for i in (0, 1):
        params_row = params[:, 0]
        X[i, 0] = (signs[i, 0] - params_row[0] - X[i, 1] * params_row[2]) / params_row[1]
    Xa = np.column_stack([np.ones(150), X])
    assert np.sum(np.abs(1 - signs[:, 0] * (Xa @ params[:, 0])) < 1e-12) == 2
    est = BahadurCovariance(X, signs, params)
    np.testing.assert_allclose(est.cov, brute_force_cov(X, signs, params, est.bandwidths),
                               rtol=1e-10, atol=1e-14)
    r = 1 - signs * (Xa @ params)
    expected_h = [min(c.std(ddof=1), stats.iqr(c) / 1.34) * 150 ** (-1 / 3) for c in r.T]
    np.testing.assert_allclose(est.bandwidths, expected_h, rtol=1e-12)


def test_user_bandwidth_and_constant():
    rng = np.random.default_rng(4)
    X, y = draw(rng, 300, "D1")
    params = svm_libsvm(X, y)[:, None]
    base = BahadurCovariance(X, y[:, None], params)
    fixed = BahadurCovariance(X, y[:, None], params, bandwidth=0.123)
    assert fixed.bandwidths.tolist() == [0.123]
    with pytest.raises(ValueError, match="one value or one per boundary"):
        BahadurCovariance(X, y[:, None], params, bandwidth=[0.1, 0.2])
    doubled = BahadurCovariance(X, y[:, None], params, constant=2.0)
    np.testing.assert_allclose(doubled.bandwidths, 2 * base.bandwidths)
    np.testing.assert_allclose(
        BahadurCovariance(X, y[:, None], params, bandwidth=float(base.bandwidths[0])).cov,
        base.cov)
    epa = BahadurCovariance(X, y[:, None], params, kernel="epanechnikov")
    # Both kernels have unit variance; their SEs agree to within the kernel's small effect.
    np.testing.assert_allclose(np.sqrt(np.diag(epa.cov)), np.sqrt(np.diag(base.cov)), rtol=0.15)
    assert not np.allclose(epa.cov, base.cov)


def test_bandwidth_rule_values():
    r = np.random.default_rng(0).standard_t(3, size=(1000, 2))
    h = bandwidth(r, constant=1.5)
    scale = np.minimum(r.std(axis=0, ddof=1), stats.iqr(r, axis=0) / 1.34)
    np.testing.assert_allclose(h, 1.5 * scale * 1000 ** (-1 / 3))


# --- guards ------------------------------------------------------------------------------------
def test_constant_classifier_gives_nan():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    signs = np.column_stack([np.where(rng.random(200) < 0.5, 1.0, -1.0),
                             np.where(X[:, 0] > 0, 1.0, -1.0)])
    params = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])  # boundary 0: w = 0, b = 1
    est = BahadurCovariance(X, signs, params)
    assert list(est.degenerate) == [0] and "constant" in est.degenerate[0]
    cov = est.cov
    assert np.all(np.isnan(cov[:3])) and np.all(np.isnan(cov[:, :3]))
    assert np.all(np.isfinite(cov[3:, 3:]))


def test_singular_hessian_gives_nan():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 1))
    X = np.hstack([x, x])  # duplicated column: H is singular
    y = np.where(x[:, 0] + rng.normal(size=300) > 0, 1.0, -1.0)
    est = BahadurCovariance(X, y[:, None], np.array([[0.0], [0.6], [0.6]]))
    assert "near-singular" in est.degenerate[0]
    assert f"{COND_MAX:.0e}" in est.degenerate[0]
    assert np.all(np.isnan(est.cov))


@pytest.mark.parametrize("cov_type, kwds, match", [
    ("sandwich", None, "'cov_type' parameter must be one of"),
    ("bahadur", {"bw": 1.0}, r"unknown option\(s\) \['bw'\]"),
    ("bahadur", {"kernel": "box"}, "kernel'\\] must be one of"),
    ("bahadur", {"bandwidth": "silverman"}, "'hall-sheather' or a positive number"),
    ("bahadur", {"bandwidth": -1.0}, "positive number"),
    ("bahadur", {"constant": 0}, "positive number"),
    ("bootstrap", {"n_boot": 5}, "integer >= 20"),
    ("bootstrap", {"n_boot": 50.5}, "integer >= 20"),
    ("bootstrap", {"bandwidth": 0.3}, r"unknown option\(s\) \['bandwidth'\]"),
])
def test_check_cov_kwds_errors(cov_type, kwds, match):
    with pytest.raises(ValueError, match=match):
        check_cov_kwds(cov_type, kwds)


def test_check_cov_kwds_defaults():
    assert check_cov_kwds("bahadur", None) == {"bandwidth": "hall-sheather",
                                               "kernel": "gaussian", "constant": 1.0}
    assert check_cov_kwds("bootstrap", {"n_boot": 50})["n_boot"] == 50
    # whole numbers as floats (R numerics through the bridge) are integers
    kwds = check_cov_kwds("auto", {"n_boot": 50.0, "random_state": 1.0, "n_jobs": 1.0})
    assert (kwds["n_boot"], kwds["random_state"], kwds["n_jobs"]) == (50, 1, 1)
    assert all(type(kwds[k]) is int for k in ("n_boot", "random_state", "n_jobs"))


# --- Wald tests and the restriction parser -------------------------------------------------------
LABELS = ["Intercept@1|2", "x1@1|2", "x1:x2@1|2", "Intercept@2|3", "x1@2|3", "x1:x2@2|3"]


def test_parse_restrictions():
    R, q = parse_restrictions("x1@1|2 = x1@2|3, 2*x1:x2@1|2 - x1:x2@2|3 = 0.5", LABELS)
    np.testing.assert_array_equal(R, [[0, 1, 0, 0, -1, 0], [0, 0, 2, 0, 0, -1]])
    np.testing.assert_array_equal(q, [0.0, 0.5])
    R, q = parse_restrictions(["-Intercept@1|2 + 1.5e0 * x1@2|3", "x1@1|2 - 2 = -x1@2|3"], LABELS)
    np.testing.assert_array_equal(R, [[-1, 0, 0, 0, 1.5, 0], [0, 1, 0, 0, 1, 0]])
    np.testing.assert_array_equal(q, [0.0, 2.0])


@pytest.mark.parametrize("text, match", [
    ("x3@1|2 = 0", "Cannot parse"),
    ("x1@1|2 = x1@2|3 = 0", "more than one"),
    ("x1@1|2 +", "ends with an operator"),
    ("x1@1|2 x1@2|3", "Unexpected"),
    ("2 * 3 = x1@1|2", "Expected a parameter after"),
    ("x1@1|2 * 2", "Unexpected"),
    ("", "empty"),
])
def test_parse_restrictions_errors(text, match):
    with pytest.raises(ValueError, match=match):
        parse_restrictions(text, LABELS)


def test_wald_test_against_hand_computation():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(4, 4))
    cov = A @ A.T + np.eye(4)
    params = rng.normal(size=4)
    R = np.array([[1.0, -1.0, 0, 0], [0, 0, 1.0, 1.0]])
    q = np.array([0.2, -0.1])
    res = wald_test(params, cov, R, q)
    d = R @ params - q
    stat = d @ np.linalg.inv(R @ cov @ R.T) @ d
    assert res.statistic == pytest.approx(stat, rel=1e-12)
    assert res.df == 2 and res.pvalue == pytest.approx(np.exp(-stat / 2), rel=1e-10)
    assert isinstance(res, WaldTestResult) and "chi2(2)" in str(res)
    with pytest.raises(ValueError, match="linearly dependent"):
        wald_test(params, cov, np.vstack([R, R[0]]))
    with pytest.raises(ValueError, match="must have shape"):
        wald_test(params, cov, R[:, :3])
    with pytest.warns(InferenceWarning, match="not available"):
        nan = wald_test(params, np.full((4, 4), np.nan), R)
    assert np.isnan(nan.statistic) and np.isnan(nan.pvalue)
    # NaN rows and columns of a parameter the restrictions do not involve do not matter
    blanked = cov.copy()
    blanked[3, :] = blanked[:, 3] = np.nan
    first = wald_test(params, blanked, R[:1])
    assert first.statistic == pytest.approx(wald_test(params, cov, R[:1]).statistic, rel=1e-12)


def test_parallel_restrictions_shape():
    R = parallel_restrictions(3, 3)
    assert R.shape == (4, 9)
    np.testing.assert_array_equal(R @ np.tile([5.0, 1.0, 2.0], 3), 0)  # parallel -> R beta = 0
    assert not np.any(R[:, [0, 3, 6]])  # intercepts unrestricted
    with pytest.raises(ValueError, match="K >= 3"):
        parallel_restrictions(1, 3)


# --- Monte Carlo: consistency, SE and coverage on D1, D2 ---------------------------------------
def test_point_estimate_consistent_large_n():
    """At n = 20000 the SVM solution is within 3.5 asymptotic SEs of beta* (notes' D2)."""
    X, y = draw(np.random.default_rng(11), 20_000, "D2")
    beta, sd = np.array(DESIGNS["D2"][4]), np.array(DESIGNS["D2"][5])
    est = svm_cvxpy(X, y)
    assert np.all(np.abs(est - beta) <= 3.5 * sd / np.sqrt(20_000))
    se = np.sqrt(np.diag(BahadurCovariance(X, y[:, None], est[:, None]).cov))
    # At n = 20000 the plug-in SE should be within 10% of the true asymptotic SE.
    np.testing.assert_allclose(se * np.sqrt(20_000), sd, rtol=0.10)


@pytest.mark.parametrize("design", ["D1", "D2"])
def test_monte_carlo_coverage_and_se(design):
    """200 replications at n = 500 (libsvm point estimates, Gaussian kernel, default bandwidth).

    Each coefficient's coverage must lie in the central 99.9% binomial range around 0.95
    for 200 reps ([0.905, 0.985]; an SE 20% too small gives ~0.90, 20% too large ~0.985).
    The mean estimated SE must be within 10% of the notes' asymptotic SD / sqrt(n); with
    2000 reps we measured ratios 0.96-1.02 (D1) and 0.98-1.02 (D2).
    """
    n, reps = 500, 200
    beta, sd = np.array(DESIGNS[design][4]), np.array(DESIGNS[design][5])
    rng = np.random.default_rng(2024 + len(design) + int(design[1]))
    covered, ses = [], []
    for _ in range(reps):
        X, y = draw(rng, n, design)
        est = svm_libsvm(X, y)
        se = np.sqrt(np.diag(BahadurCovariance(X, y[:, None], est[:, None]).cov))
        covered.append(np.abs(est - beta) <= 1.959964 * se)
        ses.append(se)
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.95) / reps
    coverage = np.mean(covered, axis=0)
    assert np.all((coverage >= lo) & (coverage <= hi)), (coverage, lo, hi)
    np.testing.assert_allclose(np.mean(ses, axis=0) * np.sqrt(n), sd, rtol=0.10)


def test_monte_carlo_coverage_through_model():
    """The whole pipeline: NORDIC(kernel="linear", method="bsvm").fit().conf_int() on D2.

    200 replications at n = 500 (K = 2, the package's own solver); same binomial band
    as above for every coefficient.
    """
    from nordicstats import NORDIC

    beta = np.array(DESIGNS["D2"][4])
    rng = np.random.default_rng(77)
    covered = []
    for _ in range(200):
        X, y = draw(rng, 500, "D2")
        with warnings.catch_warnings():
            warnings.simplefilter("error", InferenceWarning)  # min side ~150: no warning due
            ci = NORDIC(y, X, kernel="linear", method="bsvm").fit().conf_int()
        covered.append((ci["lower"].to_numpy() <= beta) & (beta <= ci["upper"].to_numpy()))
    lo, hi = stats.binom.ppf([0.0005, 0.9995], 200, 0.95) / 200
    coverage = np.mean(covered, axis=0)
    assert np.all((coverage >= lo) & (coverage <= hi)), coverage


def test_monte_carlo_parallel_test_level_needs_cross_terms():
    """K = 3 with truly parallel boundaries (symmetric design, see benchmarks/mc_coverage.py).

    Overlapping classes with a small middle class, so that many points lie inside both
    margins and the cross-boundary block G_12 matters (at beta* it shrinks Var(w_1 - w_2)
    to ~0.4 of its block-diagonal value).  BSVM (two libsvm fits) at n = 600, 200 reps:
    the joint-covariance Wald test of w_1 = w_2 must reject at a rate in the 99.9%
    binomial range of 5% ([0.01, 0.10]; measured 0.075); dropping G_12 makes the test
    far too conservative (measured 0.005), which is checked too so that the test can fail.
    """
    priors, S = np.array([0.45, 0.1, 0.45]), np.array([[1.0, 0.4], [0.4, 1.0]])
    means = np.array([[-0.75, -0.25], [0.0, 0.0], [0.75, 0.25]])
    rng = np.random.default_rng(99)
    R = parallel_restrictions(2, 3)
    reject, reject_blockdiag = [], []
    for _ in range(200):
        codes = rng.choice(3, size=600, p=priors)
        X = rng.normal(size=(600, 2)) @ np.linalg.cholesky(S).T + means[codes]
        signs = binary_signs(codes, 3)
        params = np.column_stack([svm_libsvm(X, signs[:, k]) for k in range(2)])
        cov = BahadurCovariance(X, signs, params).cov
        reject.append(wald_test(params.T.ravel(), cov, R).pvalue < 0.05)
        block = cov.copy()
        block[:3, 3:] = block[3:, :3] = 0.0
        reject_blockdiag.append(wald_test(params.T.ravel(), block, R).pvalue < 0.05)
    lo, hi = stats.binom.ppf([0.0005, 0.9995], 200, 0.05) / 200
    assert lo <= np.mean(reject) <= hi, np.mean(reject)
    assert np.mean(reject_blockdiag) < lo


# --- bootstrap ---------------------------------------------------------------------------------
def _libsvm_refit(X, y):
    def refit(idx):
        return svm_libsvm(X[idx], y[idx])[:, None]
    return refit


def test_bootstrap_deterministic_and_close_to_truth():
    X, y = draw(np.random.default_rng(8), 400, "D1")
    codes = (y > 0).astype(int)
    reps1, failed = bootstrap_replicates(_libsvm_refit(X, y), codes, n_boot=100, random_state=3)
    reps2, _ = bootstrap_replicates(_libsvm_refit(X, y), codes, n_boot=30, random_state=3,
                                    n_jobs=2)
    assert failed == 0
    np.testing.assert_array_equal(reps1[:30], reps2)  # same replicates whatever n_jobs
    boot = BootstrapCovariance(reps1, random_state=3)
    flat = reps1[:, :, 0]
    np.testing.assert_allclose(boot.cov, np.cov(flat, rowvar=False), rtol=1e-12)
    # One sample's bootstrap SE scatters ~10-15% around the true SD at n = 400 (we saw
    # ratios 0.81-1.18 over four samples); [0.7, 1.4] catches scale errors (a missing
    # sqrt(n) or a variance reported as an SD) but not sampling noise.
    ratio = np.sqrt(np.diag(boot.cov)) * np.sqrt(400) / np.array(DESIGNS["D1"][5])
    assert np.all((ratio > 0.7) & (ratio < 1.4)), ratio
    other, _ = bootstrap_replicates(_libsvm_refit(X, y), codes, n_boot=20, random_state=4)
    assert not np.allclose(other, reps1[:20])


def test_bootstrap_failed_refits():
    codes = np.array([0, 1] * 20)
    calls = iter(range(10_000))

    def flaky(idx):
        from nordicstats.exceptions import SolverError
        if next(calls) % 2:
            raise SolverError("boom", solver="x", status="failed")
        return np.array([[float(codes[idx].mean())]])

    reps, failed = bootstrap_replicates(flaky, codes, n_boot=40, random_state=0)
    assert failed == 20 and reps.shape == (20, 1, 1)
    boot = BootstrapCovariance(reps, n_failed=failed)
    assert np.all(np.isnan(boot.cov)) and boot.degenerate
    with pytest.warns(InferenceWarning, match="1 of 21 bootstrap refits failed"):
        assert np.all(np.isfinite(BootstrapCovariance(reps, n_failed=1).cov))


def test_bootstrap_resamples_keep_every_level(capsys):
    codes = np.r_[np.zeros(30, int), np.ones(30, int), 2 * np.ones(3, int)]
    seen = []

    def refit(idx):
        seen.append(np.unique(codes[idx]).size)
        return np.zeros((1, 2))

    bootstrap_replicates(refit, codes, n_boot=50, random_state=1, disable=False)
    assert seen == [3] * 50
    assert "bootstrap" in capsys.readouterr().err  # the tqdm bar
    bootstrap_replicates(refit, codes, n_boot=20, random_state=1, disable=True)
    assert capsys.readouterr().err == ""


def test_no_warning_for_ordinary_fit():
    X, y = draw(np.random.default_rng(6), 500, "D2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = BahadurCovariance(X, y[:, None], svm_libsvm(X, y)[:, None])
    assert est.degenerate == {} and np.all(np.isfinite(est.cov))


# --- NORDICResults integration --------------------------------------------------------------------
def _k3_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    codes = np.digitize(X @ [1.0, -0.5] + 0.7 * rng.normal(size=n), [-0.5, 0.5])
    return X, codes


@pytest.fixture(scope="module")
def k3_results():
    from nordicstats import NORDIC

    X, codes = _k3_data(400)  # >= 100 rows on each side of both boundaries
    with warnings.catch_warnings():
        warnings.simplefilter("error", InferenceWarning)  # every diagnostic passes
        res = NORDIC(codes, X, kernel="linear", method="nordic1").fit()  # "auto", at fit time
    return res


def test_results_default_bahadur_matches_estimator(k3_results):
    """Default cov_type="auto": the diagnostics pass, so both boundaries use the sandwich."""
    res = k3_results
    assert res.cov_type == "auto"
    assert res.cov_sources["estimator"].tolist() == ["bahadur", "bahadur"]
    assert res.cov_sources["reason"].tolist() == ["", ""]
    X, codes = _k3_data(400)
    est = BahadurCovariance(X, binary_signs(codes, 3), res.params.to_numpy())
    np.testing.assert_allclose(res.cov_params().to_numpy(), est.cov, rtol=1e-12)
    assert res.cov_params().index.names == ["boundary", "term"]
    assert list(res.cov_params().index[:3]) == [("0|1", "Intercept"), ("0|1", "x1"), ("0|1", "x2")]
    assert res.bse.shape == res.params.shape and list(res.bse.columns) == ["0|1", "1|2"]
    np.testing.assert_allclose(res.bse.to_numpy().T.ravel(), np.sqrt(np.diag(est.cov)))
    np.testing.assert_allclose(res.tvalues, res.params / res.bse)
    np.testing.assert_allclose(res.pvalues, 2 * stats.norm.sf(np.abs(res.tvalues)))
    np.testing.assert_allclose(res.bandwidth.to_numpy(), est.bandwidths)


def test_results_conf_int_and_summary_frame(k3_results):
    res = k3_results
    ci = res.conf_int(alpha=0.1)
    assert list(ci.columns) == ["lower", "upper"]
    est, se = res.params.to_numpy().T.ravel(), res.bse.to_numpy().T.ravel()
    np.testing.assert_allclose(ci["upper"] - est, stats.norm.ppf(0.95) * se)
    np.testing.assert_allclose(ci["lower"] - est, -stats.norm.ppf(0.95) * se)
    frame = res.summary_frame()
    assert list(frame.columns) == ["coef", "std err", "z", "P>|z|", "[0.025", "0.975]",
                                   "se source"]
    assert set(frame["se source"]) == {"bahadur"}
    assert ci.attrs["cov_sources"] == {
        "0|1": {"estimator": "bahadur", "intervals": True, "reason": ""},
        "1|2": {"estimator": "bahadur", "intervals": True, "reason": ""}}
    pd.concat({"a": ci, "b": res.conf_int(alpha=0.2)}, axis=1)  # attrs must not break concat
    np.testing.assert_allclose(frame["0.975]"], res.conf_int()["upper"])
    np.testing.assert_allclose(frame.loc[("1|2", "x1"), "coef"], res.params.loc["x1", "1|2"])
    with pytest.raises(ValueError, match="'alpha' parameter"):
        res.conf_int(alpha=1.5)


def test_results_wald_tests(k3_results):
    res = k3_results
    by_text = res.wald_test("x1@0|1 = x1@1|2, x2@0|1 = x2@1|2")
    parallel = res.test_parallel()
    assert parallel.df == 2 and parallel.statistic == pytest.approx(by_text.statistic, rel=1e-12)
    R = pd.DataFrame([[1.0, -1.0]], columns=pd.MultiIndex.from_tuples([("0|1", "x1"),
                                                                       ("1|2", "x1")]))
    single = res.wald_test(R)
    d = res.params.loc["x1", "0|1"] - res.params.loc["x1", "1|2"]
    V = res.cov_params()
    var = V.loc[("0|1", "x1"), ("0|1", "x1")] + V.loc[("1|2", "x1"), ("1|2", "x1")] \
        - 2 * V.loc[("0|1", "x1"), ("1|2", "x1")]
    assert single.statistic == pytest.approx(d * d / var, rel=1e-10)
    assert "x1@0|1 - x1@1|2 = 0" in str(single)
    assert "parallel" in str(parallel) and "p-value" in str(parallel)


def test_get_robustcov_results_keeps_fit(k3_results):
    res = k3_results
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        other = res.get_robustcov_results("bahadur", {"bandwidth": 0.5, "kernel": "epanechnikov"})
    assert other.solver_result is res.solver_result and other.fitted_at == res.fitted_at
    pd.testing.assert_frame_equal(other.params, res.params)
    assert other.bandwidth.tolist() == [0.5, 0.5] and res.bandwidth.tolist() != [0.5, 0.5]
    assert other.cov_kwds["kernel"] == "epanechnikov" and res.cov_kwds["kernel"] == "gaussian"
    assert not np.allclose(other.bse, res.bse)


def test_results_bootstrap_deterministic():
    """K = 2 (an ordinary linear SVM through the NORDIC BSVM path), 40 replicates."""
    from nordicstats import NORDIC

    X, y = draw(np.random.default_rng(21), 100, "D1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        res = NORDIC(y, X, kernel="linear", method="bsvm").fit()
        kw = {"n_boot": 40, "random_state": 7}
        boot1 = res.get_robustcov_results("bootstrap", kw)
        boot2 = res.get_robustcov_results("bootstrap", {**kw, "n_jobs": 2})
    assert boot1.cov_type == "bootstrap" and boot1.bandwidth is None
    pd.testing.assert_frame_equal(boot1.cov_params(), boot2.cov_params())
    # 40 replicates estimate an SD to ~11%; at n = 100 the slopes' sampling SD exceeds the
    # asymptotic one (notes), so a wide band around the asymptotic SD / sqrt(n).
    ratio = boot1.bse.to_numpy()[:, 0] * np.sqrt(100) / np.array(DESIGNS["D1"][5])
    assert np.all((ratio > 0.6) & (ratio < 1.6)), ratio
    assert "Replicates:" in str(boot1.summary())


def test_nonlinear_kernel_has_no_wald_inference():
    from nordicstats import NORDIC

    X, codes = _k3_data(40)
    res = NORDIC(codes, X, kernel="rbf").fit()
    assert res.cov_type is None
    with pytest.raises(AttributeError, match="kernel='linear' fits only"):
        _ = res.bse
    for cov_type in ("bahadur", "bootstrap"):
        with pytest.raises(ValueError, match="needs kernel='linear'.*bootstrap"):
            res.get_robustcov_results(cov_type)
    with pytest.raises(ValueError, match="needs kernel='linear'"):
        NORDIC(codes, X, kernel="rbf").fit(cov_type="bahadur")


def test_warnings_active_constraints_and_small_n():
    """The 'separate' NORDIC-1 form forces X w_1 >= X w_2 at every point, which binds here."""
    from nordicstats import NORDIC

    X, codes = _k3_data(60, seed=3)
    model = NORDIC(codes, X, kernel="linear", method="nordic1", noncrossing="separate")
    with pytest.warns(InferenceWarning) as record:
        res = model.fit(cov_type="bahadur")  # explicit: computed and checked at fit time
    text = " ".join(str(w.message) for w in record)
    assert "are active at the solution" in text
    # n = 60: fewer than 100 rows on a side of both boundaries -> withheld, named, with a fix
    for name in ("0|1", "1|2"):
        assert f"Boundary {name} has no standard errors: only" in text
    assert "(< 100)" in text and "Use cov_type='auto' or 'bootstrap'" in text
    assert res.bse.isna().all().all()
    assert res.cov_sources["estimator"].tolist() == ["none", "none"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert res.get_robustcov_results("none").cov_type is None
    with pytest.warns(InferenceWarning) as record:
        auto = res.get_robustcov_results("auto", {"n_boot": 40, "disable": True})
    text = " ".join(str(w.message) for w in record)
    assert "Boundary 0|1: bootstrap standard errors" in text and "Boundary 1|2: boot" in text
    assert auto.cov_sources["estimator"].tolist() == ["bootstrap", "bootstrap"]
    assert np.all(np.isfinite(auto.bse)) and np.all(auto.bse.to_numpy() > 0)
    assert "std err: bootstrap" in str(auto.summary())


def test_default_covariance_is_computed_by_fit():
    """The results are a record: fit() computes the default covariance (and warns then);
    reading it later computes nothing and warns no more."""
    from nordicstats import NORDIC

    X, codes = _k3_data(60, seed=3)  # < 100 rows on a side: "auto" bootstraps, with warnings
    model = NORDIC(codes, X, kernel="linear", method="nordic1")
    with pytest.warns(InferenceWarning, match="bootstrap standard errors"):
        res = model.fit(cov_kwds={"n_boot": 20, "disable": True})
    assert res.cov_type == "auto" and "covariance" in vars(res)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bse, summary = res.bse, str(res.summary())
    assert np.all(np.isfinite(bse.to_numpy()))
    assert "std err: bootstrap" in summary
    assert res.covariance is vars(res)["covariance"]  # the same record, not recomputed


def test_results_singular_hessian_nan_with_warning():
    """A duplicated covariate makes H singular: NaN everywhere, a warning, no number."""
    from nordicstats import NORDIC

    rng = np.random.default_rng(0)
    x = rng.normal(size=120)
    X = np.column_stack([x, x, rng.normal(size=120)])
    y = np.where(x + rng.normal(size=120) > 0, 1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # cov_type="none": no covariance, so no warning
        fit = NORDIC(y, X, kernel="linear", method="bsvm").fit(cov_type="none")
    assert fit.cov_type is None and fit.covariance is None
    with pytest.raises(AttributeError, match=r"cov_type='none'.*fit\(cov_type='auto'\)"):
        _ = fit.bse
    assert "No standard errors: fitted with cov_type='none'" in str(fit.summary())
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = fit.get_robustcov_results("bahadur")
        bse = res.bse
    assert record[0].filename == __file__  # the warning points at the user's line
    messages = [str(w.message) for w in record if w.category is InferenceWarning]
    assert any("Boundary 0|1 has no standard errors" in m and "singular" in m for m in messages)
    assert bse.isna().all().all() and res.conf_int().isna().all().all()
    assert np.isfinite(res.params.to_numpy()).all()
    assert "nan" in str(res.summary()) and "near-singular" in str(res.summary())


def test_summary_golden_text():
    """Compare with tests/results/inference_summary.txt (make_inference_summary.py)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parent / "results" / "make_inference_summary.py"
    spec = importlib.util.spec_from_file_location("make_inference_summary", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    res = module.build_results()
    assert str(res.summary()) + "\n" == module.GOLDEN.read_text()
    html = res.summary().as_html()
    assert "Boundary low|mid" in html and "std err" in html
    # The coefficient blocks render as LaTeX (Summary.as_latex() itself stacks all tables
    # into one tabular, which needs equal column counts: reported to the summary's owner).
    blocks = [t for t in res.summary().tables if str(t.title).startswith("Boundary ")]
    assert len(blocks) == 2
    assert all("std err" in t.as_latex_tabular() for t in blocks)
