"""Validity diagnostics of the Bahadur sandwich and cov_type="auto".

Reference numbers come from the validity study (benchmarks/validity_study.py, stored in
benchmarks/results/validity_summary.csv): latent-logistic design, n = 1,500, 300 Monte
Carlo data sets; the Monte Carlo SDs of boundary 2|3 are 0.040-0.053.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from nordicstats import NORDIC
from nordicstats.diagnostics import (
    check_boundaries,
    departure_from_constant,
    distinct_patterns,
    is_lattice,
    margin_share,
    side_counts,
    standardized_gap,
    unconstrained_signal,
)
from nordicstats.exceptions import InferenceWarning

# Monte Carlo SDs of the NORDIC-1 estimates of boundary 2|3 (Intercept, x1, x2, x3) in the
# latent-logistic design at n = 1,500 (validity study, 300 replications).
MC_SD_23 = np.array([0.0402, 0.0528, 0.0432, 0.0424])


def _logit4(n=1500, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    z = X @ np.array([1.0, -0.5, 0.25]) + rng.logistic(size=n)
    return np.searchsorted([-1.0, 0.5, 2.0], z), X


def test_measures_on_small_arrays():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [0.0, 1.0]])
    assert distinct_patterns(X) == 3
    assert unconstrained_signal(X, np.array([[0.0], [0.0]])).tolist() == [0.0]
    np.testing.assert_allclose(unconstrained_signal(X, np.array([[1.0], [0.0]])),
                               np.std([0, 1, 2, 0], ddof=1))
    assert margin_share(np.array([[1e-9, 0.5], [0.3, -2e-6], [1.0, 0.0]])).tolist() == \
        pytest.approx([1 / 3, 2 / 3])
    assert side_counts(np.array([[1, -1], [1, -1], [-1, -1]])).tolist() == [1, 0]
    # exact agreement is 0 whatever the SE; a difference with a NaN SE is inf
    gap = standardized_gap(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0]]),
                           np.array([[np.nan, np.nan]]))
    assert gap.tolist() == [0.0, np.inf]


def _constant_is_kkt_optimal(X, y):
    """LP (HiGHS): is w = 0 a linear SVM solution?  Feasibility of
    sum_min x_i = sum_maj a_i x_i, sum_maj a_i = n_min, 0 <= a_i <= 1."""
    from scipy.optimize import linprog

    minority = 1 if (y > 0).sum() < (y < 0).sum() else -1
    low, high = X[y == minority], X[y != minority]
    A = np.vstack([high.T, np.ones(len(high))])
    b = np.append(low.sum(axis=0), len(low))
    res = linprog(np.zeros(len(high)), A_eq=A, b_eq=b, bounds=(0, 1), method="highs")
    return res.status == 0


def test_departure_from_constant_agrees_with_svm_and_kkt():
    """Checked against two solvers nobody here wrote: libsvm (scikit-learn's SVC) for
    the fit and HiGHS for the KKT conditions of the constant classifier.  Where the
    constant is optimal the statistic is 0 (constant fit) or <= 0; where libsvm finds
    a non-constant fit the KKT system is infeasible and the departure is positive."""
    from sklearn.svm import SVC

    kinds = set()
    for seed in range(12):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(80, 2))
        z = (0.15 * seed) * X @ np.array([1.0, -0.5]) + rng.logistic(size=80)
        y = np.where(z > np.quantile(z, 0.75), 1, -1)
        w = SVC(kernel="linear", C=1.0, tol=1e-5).fit(X, y).coef_.T
        constant_optimal = _constant_is_kkt_optimal(X, y)
        z_dep = departure_from_constant(X, y[:, None], w)[0]
        if np.abs(w).max() < 1e-4:
            assert constant_optimal and departure_from_constant(X, y[:, None], 0 * w)[0] == 0
            kinds.add("constant")
        else:
            assert not constant_optimal and z_dep > 0, (seed, w.ravel(), z_dep)
            kinds.add("regular")
        # any direction: D(u) <= 0 when the constant is optimal
        u = rng.normal(size=(2, 1))
        if constant_optimal:
            assert departure_from_constant(X, y[:, None], u)[0] <= 1e-9
    assert kinds == {"constant", "regular"}
    # frequency weights count a row w_i times
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + rng.logistic(size=60) > 1.0, 1, -1)
    f = rng.integers(1, 4, size=60)
    rows = np.repeat(np.arange(60), f)
    u = np.array([[1.0], [0.3]])
    assert departure_from_constant(X, y[:, None], u, f.astype(float))[0] == pytest.approx(
        departure_from_constant(X[rows], y[rows, None], u)[0], rel=1e-9)


def test_auto_withholds_intervals_where_the_constant_cannot_be_ruled_out():
    """A boundary whose separate SVM is constant in the population but not in the sample:
    the validity study's logit5rare 0|1 (data set 500028: signal 0.99, departure 0.48)."""
    rng = np.random.default_rng(500028)
    X = rng.normal(size=(500, 5))
    z = X @ np.array([1.0, -0.5, 0.25, 0.5, 0.0]) + rng.logistic(size=500)
    codes = np.searchsorted([-1.5, -0.3, 0.9, 3.3], z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        res = NORDIC(codes, X, kernel="linear", C=1.0, solver="primal").fit(
            cov_kwds={"n_boot": 30, "disable": True})
    sources = res.cov_sources
    assert sources["estimator"].tolist() == ["bootstrap", "bahadur", "bahadur", "bootstrap"]
    assert sources["intervals"].tolist() == [False, True, True, False]
    assert re.search(r"not distinguishable from the constant classifier \(departure z = "
                     r"0\.4\d* < 1\.645\)", sources.loc["0|1", "reason"])
    assert res.bse["0|1"].notna().all() and res.conf_int().loc["0|1"].isna().all().all()


def test_lattice_rule():
    base = {"patterns": 1500, "n": 1500, "d": 3, "margin_share": 4 / 1500}
    assert not is_lattice(base)  # a continuous design: ~d + 1 rows on the margin
    assert is_lattice({**base, "patterns": 24})  # housing: 24 covariate patterns
    assert is_lattice({**base, "margin_share": 0.64})  # whole cells on the margin
    # small n: 3 of 60 rows on the margin is 5% but only d + 1 rows -> not a lattice
    assert not is_lattice({"patterns": 60, "n": 60, "d": 2, "margin_share": 0.05})


def test_check_boundaries_reasons():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    signs = np.column_stack([np.where(X[:, 0] > 0, 1, -1), np.where(X[:, 0] > 2.5, 1, -1)])
    params = np.array([[0.1, -1.0], [1.0, 0.3], [0.0, 0.0]])
    params_u = np.array([[0.1, -1.0], [1.0, 0.0], [0.0, 0.0]])
    se_u = np.full((3, 2), 0.05)
    resid = 1 - signs * (np.column_stack([np.ones(400), X]) @ params)
    diags = check_boundaries(X, signs, params, params_u, se_u, resid, [2.0, 1e9])
    assert diags[0].ok and diags[0].measures["gap"] == 0.0
    text = " ".join(diags[1].reasons)
    assert "(nearly) constant" in text and "near-singular" in text and "observations on one" \
        in text
    # a finite gap beyond the threshold is reported when the unconstrained fit is regular
    params_u2 = params.copy()
    params_u2[1, 0] += 0.5
    d = check_boundaries(X, signs, params, params_u2, se_u, resid, [2.0, 2.0])[0]
    assert d.measures["gap"] == pytest.approx(10.0) and "differ by 10" in d.reasons[0]


@pytest.fixture(scope="module")
def logit4_fit():
    codes, X = _logit4()
    return NORDIC(codes, X, kernel="linear", C=1.0, solver="primal").fit(cov_type="none")


def test_auto_bootstraps_the_degenerate_boundary(logit4_fit):
    """A degenerate boundary: boundary 2|3's BSVM is the constant classifier."""
    with pytest.warns(InferenceWarning, match=r"Boundary 2\|3: bootstrap standard errors"):
        res = logit4_fit.get_robustcov_results("auto", {"n_boot": 60, "disable": True})
    sources = res.cov_sources
    assert sources.loc["0|1", "estimator"] == "bahadur"
    assert sources.loc["2|3", "estimator"] == "bootstrap"
    assert "(nearly) constant" in sources.loc["2|3", "reason"]
    # bootstrap SEs within the target band 0.67-1.5 of the Monte Carlo SDs (the sandwich
    # gives 0.5-2.1 here, 10-50 times too large)
    ratio = res.bse["2|3"].to_numpy() / MC_SD_23
    assert np.all((ratio > 0.67) & (ratio < 1.5)), ratio
    # boundaries whose diagnostics pass keep the Bahadur numbers exactly; 1|2 is moved by
    # the constraints (3.2 unconstrained SEs here, > max_gap = 2) and is bootstrapped too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        bah = logit4_fit.get_robustcov_results("bahadur")
    np.testing.assert_allclose(res.bse["0|1"], bah.bse["0|1"], rtol=1e-12)
    assert sources.loc["1|2", "estimator"] == "bootstrap" and sources.loc["1|2", "intervals"]
    assert "differ by 3.17 standard errors" in sources.loc["1|2", "reason"]
    assert bah.bse["1|2"].isna().all()
    # its estimates drift with n (constraint-determined): SEs, but no z, p or interval
    assert not sources.loc["2|3", "intervals"] and sources.loc["0|1", "intervals"]
    assert "drift with n" in sources.loc["2|3", "reason"]
    assert res.tvalues["2|3"].isna().all() and res.pvalues["2|3"].isna().all()
    assert res.conf_int().loc["2|3"].isna().all().all()
    assert res.conf_int().loc["1|2"].notna().all().all()
    assert "std err: bootstrap, no intervals" in str(res.summary())
    # the parallel test compares the boundaries with intervals only, and says so
    test = res.test_parallel()
    assert "among 0|1, 1|2 (2|3 left out" in test.title and test.df == 3
    expected = res.wald_test("x1@0|1 = x1@1|2, x2@0|1 = x2@1|2, x3@0|1 = x3@1|2")
    assert np.isfinite(test.statistic)
    assert test.statistic == pytest.approx(expected.statistic, rel=1e-12)
    with pytest.warns(InferenceWarning, match="not available"):
        assert np.isnan(res.wald_test("x1@2|3 = 0").statistic)
    frame = res.summary_frame()
    assert frame.loc["2|3", "se source"].eq("bootstrap").all()


def test_forced_bahadur_withholds_with_named_reason(logit4_fit):
    with pytest.warns(InferenceWarning) as record:
        res = logit4_fit.get_robustcov_results("bahadur")
    text = " ".join(str(w.message) for w in record)
    assert "Boundary 2|3 has no standard errors" in text and "(nearly) constant" in text
    assert res.bse["2|3"].isna().all() and res.bse["0|1"].notna().all()
    assert res.conf_int().loc["2|3"].isna().all().all()
    assert res.cov_sources.loc["2|3", "estimator"] == "none"


def test_factor_only_design_withheld_without_bootstrap():
    """Housing-like factor design: no standard errors, and no refits are spent on it."""
    rng = np.random.default_rng(3)
    levels = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], float)
    X = levels[rng.integers(0, 8, size=600)]
    codes = np.searchsorted([-0.5, 0.7], X @ [1.0, -0.6, 0.4] + rng.logistic(size=600))
    res = NORDIC(codes, X, kernel="linear", solver="primal").fit(cov_type="none")
    with pytest.warns(InferenceWarning, match="no continuous part"):
        auto = res.get_robustcov_results("auto", {"n_boot": 20, "disable": True})
    assert auto.cov_sources["estimator"].tolist() == ["none", "none"]
    assert auto.bse.isna().all().all() and "Replicates:" not in str(auto.summary())


def test_weighted_measures_equal_replicated_rows():
    """Frequency weights count row i w_i times in every measure (n = sum w)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 2))
    signs = np.column_stack([np.where(X[:, 0] > -0.5, 1, -1), np.where(X[:, 1] > 0.8, 1, -1)])
    params = np.array([[0.2, -0.9], [1.1, 0.1], [0.0, 0.8]])
    se = np.full((3, 2), 0.05)
    resid = 1 - signs * (np.column_stack([np.ones(200), X]) @ params)
    resid[:7, 0] = 0.0  # some rows on the margin
    w = rng.integers(1, 4, size=200)
    rows = np.repeat(np.arange(200), w)
    weighted = check_boundaries(X, signs, params, params * 0.9, se, resid, [2.0, 2.0],
                                weights=w.astype(float))
    replicated = check_boundaries(X[rows], signs[rows], params, params * 0.9, se, resid[rows],
                                  [2.0, 2.0])
    for a, b in zip(weighted, replicated, strict=True):
        assert a.measures == pytest.approx(b.measures) and a.reasons == b.reasons
    assert weighted[0].measures["n"] == w.sum()
    # a cost matrix that leaves rows out of a boundary's loss removes them from its sides
    loss = np.ones((200, 2))
    loss[signs[:, 1] > 0, 1] = 0.0
    d = check_boundaries(X, signs, params, params, se, resid, [2.0, 2.0], loss_weights=loss)
    assert d[1].measures["side"] == 0 and "only 0 observations" in " ".join(d[1].reasons)


def test_auto_with_case_weights_equals_replicated_data():
    """Integer case weights: the same sources and standard errors as the replicated rows
    (the weighted bootstrap draws the same resamples for the same random_state)."""
    codes, X = _logit4(n=500, seed=4)
    w = np.random.default_rng(6).integers(1, 4, size=500)
    rows = np.repeat(np.arange(500), w)
    kwds = {"n_boot": 30, "disable": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        weighted = NORDIC(codes, X, kernel="linear", weights=w, solver="primal").fit(
            cov_type="auto", cov_kwds=kwds)
        replicated = NORDIC(codes[rows], X[rows], kernel="linear", solver="primal").fit(
            cov_type="auto", cov_kwds=kwds)
    a, b = weighted.cov_sources, replicated.cov_sources
    assert a["estimator"].tolist() == b["estimator"].tolist()
    assert "bootstrap" in set(a["estimator"])
    # same reasons up to round-off in the numbers they quote (e.g. sd of x'w ~ 1e-11)
    assert [r[:40] for r in a["reason"]] == [r[:40] for r in b["reason"]]
    np.testing.assert_allclose(weighted.bse, replicated.bse, rtol=2e-3)


def test_assembled_covariance_keeps_every_variance_and_is_psd():
    """Cross blocks shrink only as far as positive semi-definiteness needs."""
    from nordicstats.auto_covariance import _assemble

    rng = np.random.default_rng(8)
    L = rng.normal(size=(6, 6))
    boot = L @ L.T / 6
    bahadur = boot.copy()
    bahadur[:3, :3] *= 0.05  # small sandwich variances: the bootstrap cross block is too big
    cov = _assemble(bahadur, boot, [1], 3)
    np.testing.assert_allclose(np.diag(cov)[:3], np.diag(bahadur)[:3], rtol=1e-12)
    np.testing.assert_allclose(np.diag(cov)[3:], np.diag(boot)[3:], rtol=1e-12)
    assert np.linalg.eigvalsh(cov).min() > -1e-10
    ratio = cov[:3, 3:] / boot[:3, 3:]
    assert np.allclose(ratio, ratio[0, 0]) and 0 < ratio[0, 0] < 1  # one common factor
    # consistent blocks (the bootstrap matrix itself) are kept as they are
    np.testing.assert_allclose(_assemble(boot, boot, [1], 3), boot, rtol=1e-12)


def test_docs_quote_the_stored_study_and_thresholds():
    """The validity page shows the table ``validity_study.py --summarise`` wrote from the
    stored replicates, and the thresholds the code uses."""
    from pathlib import Path

    from nordicstats.diagnostics import THRESHOLDS

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "notes" / "inference-validity.md").read_text()
    table = (root / "benchmarks" / "results" / "validity_table.md").read_text()
    assert table.count("\n") > 30 and table in page
    cells = [re.split(r"(?<!\\)\|", line) for line in page.splitlines() if line.startswith("| ")]
    rows = {c[1].strip(): c[3].strip() for c in cells if len(c) == 6}
    assert rows["constraints move the estimate"] == f"> {THRESHOLDS['max_gap']:g}"
    assert rows["degenerate unconstrained fit"] == f"< {THRESHOLDS['min_signal']:g}"
    assert rows["not distinguishable from the constant classifier"] == \
        f"< {THRESHOLDS['min_departure']:g}"
    assert rows["few observations on a side"] == f"< {THRESHOLDS['min_side']:g}"
