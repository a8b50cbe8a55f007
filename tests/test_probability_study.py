"""The calibration check of the class-probability study (benchmarks/bench_probabilities.py).

The stored rows (``benchmarks/results/probabilities.jsonl``) are reduced here again, with
pandas on a long table rather than the script's per-group loop, and compared with the stored
per-bin table (``probabilities_calibration.csv``) and summary; the numbers that
docs/notes/probabilities.md quotes are asserted from the rows.  The script's
``procedure_calibration`` is also checked on simulated forecasts whose calibration is known:
Bernoulli outcomes drawn from the forecast itself (calibrated) and from a sharpened forecast
(overconfident).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAPER_DESIGNS = ("nonlinear d=2", "nonlinear d=10", "donut d=10", "balance")


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location(
        "bench_probabilities", ROOT / "benchmarks" / "bench_probabilities.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows():
    lines = (RESULTS / "probabilities.jsonl").read_text().splitlines()
    return pd.DataFrame([row for row in map(json.loads, lines) if "bin_n" in row])


@pytest.fixture(scope="module")
def recomputed(rows):
    """Per (design, method, bin): mean over replications of the bin's gap, SE, z."""
    return _reduce(rows)


@pytest.fixture(scope="module")
def screen():
    """The screen's rows (``--screen``) reduced like the study's."""
    lines = (RESULTS / "probabilities_screen.jsonl").read_text().splitlines()
    return _reduce(pd.DataFrame([json.loads(line) for line in lines]))


def _reduce(rows):
    """Per (design, method, bin) of a long table: mean gap over replications, SE, z."""
    long = rows[["design", "method", "rep", "bin_n", "bin_pred", "bin_obs"]].explode(
        ["bin_n", "bin_pred", "bin_obs"])
    long["bin"] = long.groupby(["design", "method", "rep"]).cumcount()
    long = long[long.bin_n.astype(float) > 0]
    long["gap"] = (long.bin_obs.astype(float) - long.bin_pred.astype(float)) / long.bin_n.astype(
        float)
    stats = long.groupby(["design", "method", "bin"]).gap.agg(["mean", "std", "count"])
    stats["se"] = stats["std"] / np.sqrt(stats["count"])
    stats["z"] = stats["mean"] / stats["se"]
    return stats


@pytest.fixture(scope="module")
def stored():
    return pd.read_csv(RESULTS / "probabilities_calibration.csv").set_index(
        ["design", "method", "bin"])


def test_stored_table_equals_the_rows_reduced_again(recomputed, stored):
    again = recomputed.rename(columns=lambda c: f"{c}_again")
    joined = stored.join(again, how="outer")
    np.testing.assert_array_equal(joined["reps"], joined["count_again"])
    with_se = joined.dropna(subset=["se"])
    assert len(with_se) == int(recomputed["se"].notna().sum()) > 500
    # the CSV keeps 8 significant digits
    np.testing.assert_allclose(with_se["gap"], with_se["mean_again"], rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(with_se["se"], with_se["se_again"], rtol=1e-6)
    np.testing.assert_array_equal(with_se["within_2se"],
                                  (with_se["z_again"].abs() <= 2).astype(float))


def test_summary_shares_equal_the_per_bin_table(stored):
    summary = pd.read_csv(RESULTS / "probabilities_summary.csv").set_index(["design", "method"])
    share = stored.groupby(["design", "method"]).within_2se.mean()
    np.testing.assert_allclose(summary.loc[share.index, "procedure_bins_within_2se"], share,
                               rtol=1e-5)


def test_true_probabilities_pass_every_bin(recomputed):
    for design in ("latent logistic", "latent logistic n=500"):
        z = recomputed.loc[(design, "truth"), "z"]
        assert len(z) == 10 and (z.abs() <= 2).all(), z


@pytest.mark.parametrize("design", PAPER_DESIGNS + ("latent logistic",))
def test_no_fitted_method_is_calibrated_at_n_100(recomputed, design):
    """The documented verdict: every fitted method has a bin more than 3 SEs off."""
    part = recomputed.loc[design]
    for method in ("NORDIC-1 + logistic", "NORDIC-1 + platt", "BSVM + platt (raw)",
                   "ordered logit", "SVC one-vs-one"):
        assert part.loc[method, "z"].abs().max() > 3, (design, method)


@pytest.mark.parametrize("design, method, bin_, gap", [
    # the bins docs/notes/probabilities.md quotes (gap to 3 decimals)
    ("nonlinear d=2", "NORDIC-1 + logistic", 2, 0.0147),
    ("nonlinear d=10", "NORDIC-1 + logistic", 0, -0.0106),
    ("donut d=10", "NORDIC-1 + logistic", 4, -0.0408),
    ("balance", "NORDIC-1 + logistic", 8, 0.1279),
    ("latent logistic", "NORDIC-1 + logistic", 6, -0.1207),
    ("latent logistic", "ordered logit", 5, -0.0549),
    ("latent logistic", "NORDIC-1 linear + logistic", 5, -0.0660),
    ("nonlinear d=2 n=500", "NORDIC-1 + logistic", 2, 0.0326),
    ("latent logistic n=500", "NORDIC-1 + logistic", 5, -0.0809),
])
def test_quoted_gaps(recomputed, design, method, bin_, gap):
    assert recomputed.loc[(design, method, bin_), "mean"] == pytest.approx(gap, abs=5e-4)


def test_largest_gaps_as_documented(recomputed):
    """The largest |gap| the docs quote: the ordered logit's shrinks with n on its own design,
    NORDIC-1's does not on the nonlinear design."""
    def largest(design, method):
        return recomputed.loc[(design, method), "mean"].abs().max()

    assert largest("latent logistic", "ordered logit") == pytest.approx(0.055, abs=5e-4)
    assert largest("latent logistic n=500", "ordered logit") == pytest.approx(0.007, abs=5e-4)
    assert largest("nonlinear d=2", "NORDIC-1 + logistic") == pytest.approx(0.015, abs=5e-4)
    assert largest("nonlinear d=2 n=500", "NORDIC-1 + logistic") == pytest.approx(0.033,
                                                                                 abs=5e-4)
    for design in ("latent logistic", "latent logistic n=500"):
        assert largest(design, "truth") < 0.003


def test_per_fit_check_as_documented(rows, study):
    """The per-fit shares the docs quote: truth 0.96, NORDIC-1 + logistic 0.36-0.39."""
    def share(design, method):
        part = rows[(rows.design == design) & (rows.method == method)]
        counts = np.array([study.bins_within_2se(n, p, o) for n, p, o in
                           zip(part.bin_n, part.bin_pred, part.bin_obs, strict=True)])
        return counts[:, 1].sum() / counts[:, 0].sum()

    assert share("latent logistic", "truth") == pytest.approx(0.96, abs=0.01)
    assert share("balance", "NORDIC-1 + logistic") == pytest.approx(0.94, abs=0.01)
    for design in ("nonlinear d=2", "nonlinear d=10", "donut d=10"):
        assert 0.35 <= share(design, "NORDIC-1 + logistic") <= 0.40


def _simulated_rows(study, sharpen, reps=40, n=3000, seed=7):
    """Study rows of a two-level forecast p = expit(sharpen * eta), outcomes from expit(eta)."""
    rng = np.random.default_rng(seed)
    out = []
    for rep in range(reps):
        eta = rng.normal(scale=1.5, size=n)
        y = (rng.random(n) < special.expit(eta)).astype(int)
        forecast = special.expit(sharpen * eta)
        proba = np.column_stack([1 - forecast, forecast])
        out.append({"design": "sim", "method": f"x{sharpen}", "rep": rep,
                    **study.scores(proba, y)})
    return pd.DataFrame(out)


def test_procedure_check_passes_a_calibrated_and_fails_an_overconfident_forecast(study):
    # A calibrated forecast is outside 2 SEs in a bin with probability about 0.05 (the
    # t(39) tail), so some of 10 bins may fail; |z| > 3.5 has probability 0.001 per bin.
    calibrated = study.procedure_calibration(_simulated_rows(study, 1.0))
    assert len(calibrated) == 10 and (calibrated.reps == 40).all()
    assert calibrated.within_2se.sum() >= 8 and calibrated.z.abs().max() < 3.5, calibrated
    sharpened = study.procedure_calibration(_simulated_rows(study, 1.5))
    # overconfident: observed above prediction below 1/2, below it above 1/2
    low, high = sharpened[sharpened.bin.isin([1, 2, 3])], sharpened[sharpened.bin.isin([6, 7, 8])]
    assert (low.gap > 0).all() and (high.gap < 0).all()
    assert (sharpened.z.abs() > 3.5).sum() >= 7, sharpened


@pytest.mark.parametrize("design, method, largest", [
    # the screen's largest |gap| that docs/notes/probabilities.md quotes (3 decimals)
    ("nonlinear d=2", "logistic k=5 refit", 0.014),
    ("nonlinear d=2", "logistic tuning-set map", 0.013),
    ("nonlinear d=2", "logistic oracle map", 0.023),
    ("nonlinear d=2", "spline oracle map", 0.007),
    ("nonlinear d=2", "spline k=5 refit", 0.016),
    ("latent logistic", "logistic k=5 refit", 0.117),
    ("latent logistic", "logistic tuning-set map", 0.125),
    ("latent logistic", "logistic oracle map", 0.127),
    ("latent logistic", "logistic k=5 ensemble", 0.083),
    ("latent logistic", "pooled k=5 refit", 0.024),
    ("latent logistic", "pooled oracle map", 0.013),
    ("balance", "logistic k=5 refit", 0.128),
    ("balance", "logistic raw k=5 refit", 0.073),
    ("balance", "pooled k=5 refit", 0.151),
])
def test_screen_largest_gaps_as_documented(screen, design, method, largest):
    assert screen.loc[(design, method), "mean"].abs().max() == pytest.approx(largest, abs=5e-4)


@pytest.mark.parametrize("design", ["nonlinear d=2", "nonlinear d=10", "donut d=10",
                                    "latent logistic"])
def test_a_map_fitted_on_5000_fresh_rows_is_not_calibrated_either(screen, design):
    """The screen's verdict: neither cross-fitting nor the map's estimation error is why
    the one-slope map fails; with 5,000 fresh rows of the full fit a bin is > 3 SEs off."""
    assert screen.loc[(design, "logistic oracle map"), "z"].abs().max() > 3
    tuned_map = screen.loc[(design, "logistic tuning-set map"), "mean"].abs().max()
    cross_fitted = screen.loc[(design, "logistic k=5 refit"), "mean"].abs().max()
    assert abs(tuned_map - cross_fitted) < 0.012


def test_per_fit_share_at_a_smaller_test_set(study):
    """A calibrated forecast passes ~95% of bins at any test size; an overconfident one
    passes more bins the fewer test points there are."""
    calibrated = _simulated_rows(study, 1.0)
    for size in (100, 1000, 3000):
        assert study.per_fit_share_at(calibrated, size, 3000) == pytest.approx(0.95, abs=0.03)
    sharpened = _simulated_rows(study, 1.5)
    shares = [study.per_fit_share_at(sharpened, size, 3000) for size in (30, 300, 3000)]
    # measured 0.92, 0.68, 0.30
    assert shares[0] > 0.9 and shares[0] > shares[1] > shares[2] and shares[2] < 0.35, shares


@pytest.mark.parametrize("design, largest", [
    # NORDIC-1 + pooled's largest |gap| as docs/notes/probabilities.md quotes it
    ("nonlinear d=2", 0.013), ("nonlinear d=10", 0.013), ("donut d=10", 0.026),
    ("balance", 0.151), ("latent logistic", 0.024), ("nonlinear d=2 n=500", 0.025),
    ("latent logistic n=500", 0.017),
])
def test_pooled_largest_gaps_as_documented(recomputed, design, largest):
    gap = recomputed.loc[(design, "NORDIC-1 + pooled"), "mean"].abs().max()
    assert gap == pytest.approx(largest, abs=5e-4)


def test_pooled_rps_against_the_ordered_logit_as_documented(rows):
    """Latent logistic: RPS ratio to the ordered logit, linear 1.008 and RBF 1.064."""
    rps = rows[rows.design == "latent logistic"].groupby("method").rps.mean()
    assert rps["NORDIC-1 linear + pooled"] / rps["ordered logit"] == pytest.approx(1.008,
                                                                                   abs=5e-4)
    assert rps["NORDIC-1 + pooled"] / rps["ordered logit"] == pytest.approx(1.064, abs=5e-4)
    assert rps["NORDIC-1 + pooled"] < rps["NORDIC-1 + logistic"] - 0.003


def test_per_fit_shares_at_smaller_test_sets_as_documented(rows, study):
    """The truth passes ~0.95 at every size; NORDIC-1 + logistic 0.92-0.93 at 100 test
    points on the paper's simulated designs and at most 0.76 at 1,000."""
    def share(design, method, size):
        part = rows[(rows.design == design) & (rows.method == method)]
        return study.per_fit_share_at(part, size, 10_000)

    for size in (100, 1000, 10_000):
        assert share("latent logistic", "truth", size) == pytest.approx(0.955, abs=0.01)
    for design in ("nonlinear d=2", "nonlinear d=10", "donut d=10"):
        assert 0.915 <= share(design, "NORDIC-1 + logistic", 100) <= 0.935
        assert share(design, "NORDIC-1 + logistic", 1000) <= 0.765
