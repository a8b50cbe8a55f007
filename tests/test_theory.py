"""Tests of nordicstats.theory (Bayes rules, Fisher consistency, design truths) and its plot.

References are independent of the code under test: brute-force loops over
predictions and classes, sample medians of simulated labels, closed-form
population minimisers of margin losses from the literature, scikit-learn's
isotonic regression, the paper's score formulas typed in here, and Monte Carlo
sampling of the latent covariates given an observed point.
"""

import numpy as np
import pandas as pd
import pytest

from nordicstats.data import binary_signs
from nordicstats.metrics import DONUT_COSTS
from nordicstats.theory import (
    MarginLoss,
    bayes_error,
    bayes_rule_multiclass,
    bayes_rule_ordinal,
    conditional_risk,
    design_probabilities,
    donut_probabilities,
    excess_risk,
    fisher_consistency,
    fisher_consistency_report,
    loss_matrix,
    near_half_probabilities,
    nonlinear_observed_probabilities,
    prediction_risks,
    upper_tail,
)
from nordicstats.theory.consistency import _chain_dp, _pava
from nordicstats.theory.designs import _donut_far

FIG2_TOP = [0.40, 0.15, 0.25, 0.20]
FIG2_BOTTOM = [0.15, 0.10, 0.35, 0.40]


# --------------------------------------------------------------------------- Bayes rules
def test_figure2_examples_mode_and_median_differ_as_in_the_paper():
    # Paper, Section 2.3 (figure fig:eta, the paper's first figure): top -> mode class 1,
    # median class 2; bottom -> mode class 4, median class 3.
    eta = np.array([FIG2_TOP, FIG2_BOTTOM])
    assert bayes_rule_multiclass(eta).tolist() == [0, 3]
    assert bayes_rule_ordinal(eta).tolist() == [1, 2]
    # the paper's defining inequalities sum_{l<k} eta_l < 1/2 < sum_{l<=k} eta_l
    for row, k in zip(eta, bayes_rule_ordinal(eta), strict=True):
        assert row[:k].sum() < 0.5 < row[: k + 1].sum()


def test_ordinal_rule_is_the_median_of_a_simulated_sample():
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 40:
        K = int(rng.integers(2, 7))
        eta = rng.dirichlet(np.full(K, 0.7))
        # margin 0.02 from 1/2: the sample cdf (n = 20001) has sd <= 0.0036, so > 5 sd
        if np.min(np.abs(np.cumsum(eta)[:-1] - 0.5)) < 0.02:
            continue
        sample = np.sort(rng.choice(K, size=20001, p=eta))
        assert bayes_rule_ordinal(eta) == sample[10000]
        checked += 1


def test_tie_conventions():
    assert bayes_rule_ordinal([0.2, 0.3, 0.5]) == 1  # F_1 = 1/2 -> lower class
    assert bayes_rule_ordinal([0.5, 0.0, 0.5]) == 0
    assert bayes_rule_ordinal([0.3, 0.0, 0.7]) == 2  # empty class skipped
    assert bayes_rule_ordinal([0.25] * 4) == 1
    assert bayes_rule_multiclass([0.3, 0.3, 0.3, 0.1]) == 0
    # cumulative sums within 1e-12 of 1/2 count as ties, so rounding cannot flip the answer
    assert bayes_rule_ordinal([0.5 - 1e-14, 0.5 + 1e-14]) == 0
    assert bayes_rule_ordinal([0.5 - 1e-9, 0.5 + 1e-9]) == 1


def _brute_risks(eta, L):
    K = len(eta)
    return np.array([sum(eta[y] * L[y][c] for y in range(K)) for c in range(K)])


def test_risks_match_brute_force_and_rules_are_the_minimisers():
    rng = np.random.default_rng(3)
    for _ in range(200):
        K = int(rng.integers(2, 7))
        eta = rng.dirichlet(np.full(K, 0.5))
        if rng.uniform() < 0.2:  # force exact ties now and then
            eta = np.round(eta * 4) / 4
            if eta.sum() == 0:
                continue
            eta = eta / eta.sum()
        zero_one = [[float(y != c) for c in range(K)] for y in range(K)]
        absolute = [[float(abs(y - c)) for c in range(K)] for y in range(K)]
        for L, rule in ((zero_one, bayes_rule_multiclass), (absolute, bayes_rule_ordinal)):
            brute = _brute_risks(eta, L)
            risks, best = prediction_risks(eta, np.array(L))
            np.testing.assert_allclose(risks.iloc[0].to_numpy(), brute, atol=1e-13)
            minimisers = np.flatnonzero(brute <= brute.min() + 1e-12)
            assert best[0] == minimisers[0] == rule(eta)
        cost = rng.uniform(0, 3, (K, K))
        brute = _brute_risks(eta, cost)
        _, best = prediction_risks(eta, cost)
        assert brute[best[0]] <= brute.min() + 1e-12
        assert conditional_risk(eta, int(best[0]), cost) == pytest.approx(brute.min(), abs=1e-12)


def test_absolute_loss_is_the_aggregated_binary_zero_one_loss():
    K = 5
    codes = np.arange(K)
    signs = binary_signs(codes, K)
    aggregated = (signs[:, None, :] != signs[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(aggregated, loss_matrix("absolute", K))


def test_median_beats_mode_under_absolute_loss_and_vice_versa():
    rng = np.random.default_rng(5)
    eta = rng.dirichlet(np.ones(4), size=500)
    for rule_best, rule_other, loss in (("median", "mode", "absolute"),
                                        ("mode", "median", "zero_one")):
        best = conditional_risk(eta, rule_best, loss)
        other = conditional_risk(eta, rule_other, loss)
        assert np.all(best <= other + 1e-12)
        assert np.any(best < other - 0.05)


def test_vectorised_rules_match_rowwise_calls():
    eta = np.random.default_rng(0).dirichlet(np.ones(5), size=30)
    assert bayes_rule_ordinal(eta).tolist() == [bayes_rule_ordinal(r) for r in eta]
    assert bayes_rule_multiclass(eta).tolist() == [bayes_rule_multiclass(r) for r in eta]
    tail = upper_tail(eta)
    np.testing.assert_allclose(tail, 1 - np.cumsum(eta, axis=1)[:, :-1], atol=1e-14)
    np.testing.assert_array_equal(bayes_rule_ordinal(eta), (tail > 0.5).sum(axis=1))


@pytest.mark.parametrize("eta, match", [
    ([0.5, -0.1, 0.6], "negative"),
    ([0.5, 0.6], "sum to 1"),
    ([0.5, np.nan], "NaN"),
    ([1.0], "K >= 2"),
    ([[[0.5, 0.5]]], "shape"),
    (["a", "b"], "numeric"),
])
def test_bad_probabilities_raise(eta, match):
    with pytest.raises(ValueError, match=match):
        bayes_rule_ordinal(eta)


def test_bad_rule_loss_and_predictions_raise():
    with pytest.raises(ValueError, match="rule_or_predictions"):
        conditional_risk(FIG2_TOP, "mean")
    with pytest.raises(ValueError, match="'loss'"):
        conditional_risk(FIG2_TOP, "mode", "hinge")
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        conditional_risk(FIG2_TOP, "mode", np.ones((3, 3)))
    with pytest.raises(ValueError, match="0..3"):
        conditional_risk(FIG2_TOP, 4)


# ------------------------------------------------------------------ Fisher consistency
@pytest.mark.parametrize("loss", ["hinge", "logistic", "exponential"])
@pytest.mark.parametrize("constrained", [True, False])
def test_known_consistent_losses_have_no_failures(loss, constrained):
    report = fisher_consistency_report(loss, n_draws=15, K=4, random_state=1,
                                       constrained=constrained)
    assert report.n_failures == 0
    assert report.counts.loc["total", "n_eta"] == 60
    assert report.counts.loc["near_half", "n_boundaries"] == 45
    # the adversarial cases really are near 1/2 and were judged (non-zero sign)
    near = report.table[report.table["source"] == "near_half"]
    closest = (near["p_upper"] - 0.5).abs().groupby(near["draw"]).min()
    assert closest.max() <= 1e-3 and closest.min() >= 1e-5 - 1e-12


@pytest.mark.parametrize("p", [0.03, 0.3, 0.499, 0.5004, 0.7, 0.97])
def test_closed_form_minimisers(p):
    # population minimisers of p V(f) + (1 - p) V(-f) (Lin 2004; Zhang 2004)
    eta = [1 - p, p]
    expect = {"hinge": np.sign(p - 0.5), "logistic": np.log(p / (1 - p)),
              "exponential": 0.5 * np.log(p / (1 - p)), "squared": 2 * p - 1}
    for loss, value in expect.items():
        res = fisher_consistency(loss, eta, constrained=False)
        assert res.f_star[0] == pytest.approx(value, abs=1e-7)
        assert res.is_consistent


def test_kinked_hinge_fails_exactly_for_p_in_the_kink_window():
    # V'(0-) = -2, V'(0+) = -1/2: f = 0 minimises p V(f) + (1-p) V(-f) for 0.2 <= p <= 0.8
    res = fisher_consistency("kinked_hinge", [0.1, 0.3, 0.6])  # P(Y > k) = 0.9, 0.6
    assert res.failing == (1,)
    assert res.failing_boundaries == ("2|3",)
    assert res.f_star[1] == pytest.approx(0.0, abs=1e-9)
    assert res.f_star[0] == pytest.approx(2.0, abs=1e-7)
    assert "sign undetermined" in res.boundary_notes[1]
    assert fisher_consistency("kinked_hinge", [0.05, 0.05, 0.9]).is_consistent
    report = fisher_consistency_report("kinked_hinge", n_draws=10, K=4, random_state=2)
    gap = (report.table["p_upper"] - 0.5).abs()
    expected_fail = (gap > 1e-12) & (gap < 0.3)
    assert report.n_failures > 0
    np.testing.assert_array_equal(~report.table["consistent"], expected_fail)


def test_perceptron_never_recovers_the_sign():
    res = fisher_consistency("perceptron", [0.1, 0.3, 0.6], constrained=False)
    assert res.failing == (0, 1)
    np.testing.assert_allclose(res.f_star, 0.0, atol=1e-9)
    assert np.all(res.risk_gap == 0.0)


def test_minimiser_at_infinity_is_reported_without_hanging():
    res = fisher_consistency("exponential", [0.0, 0.3, 0.7])  # P(Y > 0) = 1
    assert res.f_star[0] == 20.0 and res.is_consistent
    assert "box bound" in res.boundary_notes[0]
    res = fisher_consistency("unhinged", [0.2, 0.5, 0.3], bound=5.0)  # linear: +-bound
    assert res.f_star.tolist() == [5.0, -5.0] and res.is_consistent


def test_flat_and_tied_minima():
    res = fisher_consistency("hinge", [0.25, 0.25, 0.5])  # P(Y > 1) = 1/2 exactly
    assert res.expected_sign.tolist() == [1, 0] and res.is_consistent
    assert np.isnan(res.risk_gap[1]) and "both signs" in res.boundary_notes[1]
    res = fisher_consistency("hinge", [0.0, 0.4, 0.6], constrained=False)  # p = 1: [1, inf)
    assert "flat minimum" in res.boundary_notes[0] and res.is_consistent
    res = fisher_consistency("truncated_hinge", [0.1, 0.3, 0.6], constrained=False)
    assert "flat minimum" in res.boundary_notes[1] and res.is_consistent
    assert res.risk_gap[1] == pytest.approx(2 * 0.6 - 1, abs=1e-9)  # V(0)=1 vs 2(1-p)


def test_nonconvex_losses_are_consistent_constrained_and_not():
    for loss in ("psi", "truncated_hinge"):
        for constrained in (True, False):
            rep = fisher_consistency_report(loss, n_draws=5, K=4, random_state=4,
                                            constrained=constrained)
            assert rep.n_failures == 0


def test_user_callables():
    exp_loss = fisher_consistency(lambda u: np.exp(-u), FIG2_BOTTOM)  # treated as nonconvex
    ref = fisher_consistency("exponential", FIG2_BOTTOM)
    np.testing.assert_allclose(exp_loss.f_star, ref.f_star, atol=1e-6)
    convex = MarginLoss("my_exp", lambda u: np.exp(-u), convex=True)
    np.testing.assert_allclose(fisher_consistency(convex, FIG2_BOTTOM).f_star, ref.f_star,
                               atol=1e-6)
    with pytest.raises(TypeError, match="failed on a numpy array"):
        fisher_consistency(lambda u: float(u), FIG2_TOP)
    with pytest.raises(ValueError, match="finite values"):
        fisher_consistency(lambda u: np.full_like(u, np.inf), FIG2_TOP)
    with pytest.raises(ValueError, match="'loss' parameter"):
        fisher_consistency("savage", FIG2_TOP)
    with pytest.raises(ValueError, match="one probability vector"):
        fisher_consistency("hinge", [FIG2_TOP, FIG2_TOP])


def test_isotonic_solvers_match_scikit_learn():
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(9)
    for _ in range(10):
        a, w = rng.normal(0, 2, 6), rng.uniform(0.5, 2, 6)
        funcs = [lambda t, a=ak, w=wk: w * (t - a) ** 2 for ak, wk in zip(a, w, strict=True)]
        ref = IsotonicRegression(increasing=False).fit_transform(np.arange(6), a, sample_weight=w)
        domains = [(-20.0, 20.0)] * 6
        f_pava, _ = _pava(funcs, domains, 401)
        f_dp, _ = _chain_dp(funcs, domains, 20.0, 4001)
        np.testing.assert_allclose(f_pava, ref, atol=1e-7)
        np.testing.assert_allclose(f_dp, ref, atol=1e-6)


def test_near_half_generator():
    eta = near_half_probabilities(5, 40, random_state=0)
    np.testing.assert_allclose(eta.sum(axis=1), 1.0, atol=1e-14)
    dist = np.abs(np.cumsum(eta, axis=1)[:, :-1] - 0.5)
    assert np.all(dist.min(axis=1) <= 1e-3) and np.all(dist.min(axis=1) >= 1e-5 - 1e-15)
    straddle = np.sort(dist, axis=1)[1::2, :2]  # odd rows: two cumulative sums near 1/2
    assert np.all(straddle <= 1e-3)


# -------------------------------------------------------------- designs (Section 6)
def _paper_softmax(t1, t2):
    f = np.column_stack([-2 * t1 + 0.2 * t1**2 - 0.1 * t2**2 + 0.2,
                         -0.4 * t1**2 + 0.2 * t2**2 - 0.4,
                         2 * t1 + 0.2 * t1**2 - 0.1 * t2**2 + 0.2])
    e = np.exp(f - f.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _paper_donut_class(t):
    c3 = (t[:, 0] - np.sqrt(3) - 0.1) ** 2 + t[:, 1] ** 2 <= 3.0
    c2 = (t[:, 0] - 1.9) ** 2 + t[:, 1] ** 2 <= 4.0
    return np.where(c3, 2, np.where(c2, 1, 0))


def test_sigma_zero_is_the_softmax_and_small_sigma_is_close():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(-3, 3, 50), rng.uniform(-6, 6, 50), rng.normal(size=50)])
    exact = _paper_softmax(X[:, 0], X[:, 1])
    np.testing.assert_allclose(nonlinear_observed_probabilities(X, 0.0), exact, atol=1e-14)
    # E[softmax(x + sigma e)] - softmax(x) = O(sigma^2 * curvature); curvature < 50 here
    inner = (np.abs(X[:, 0]) < 2.9) & (np.abs(X[:, 1]) < 5.9)
    near = nonlinear_observed_probabilities(X[inner], 1e-3)
    np.testing.assert_allclose(near, exact[inner], atol=1e-4)


def test_quadrature_converges():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.uniform(-5, 5, 60), rng.uniform(-8, 8, 60)])
    for sigma in (0.05, 0.5, 1.5):
        a = nonlinear_observed_probabilities(X, sigma)
        b = nonlinear_observed_probabilities(X, sigma, n_nodes=64)
        assert np.abs(a - b).max() < 1e-6
        np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-12)


def _posterior_frequencies(x, sigma, inside, label, rng, n=400_000):
    """Exact posterior sampling: t ~ N(x, sigma^2 I) kept if in the uniform prior's support."""
    t = x + sigma * rng.standard_normal((n, 2))
    t = t[inside(t)]
    codes = label(t, rng)
    freq = np.bincount(codes, minlength=3) / codes.size
    se = np.sqrt(np.maximum(freq * (1 - freq), 1e-4) / codes.size)
    return freq, se


def _sample_nonlinear_class(t, rng):
    p = _paper_softmax(t[:, 0], t[:, 1])
    return (rng.uniform(size=len(t))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)


@pytest.mark.parametrize("sigma", [0.5, 1.5])
def test_nonlinear_probabilities_match_monte_carlo(sigma):
    rng = np.random.default_rng(7)
    points = np.array([[0.5, 1.0], [-1.0, 4.0], [2.8, -5.5], [3.6, 0.0], [0.0, 0.0]])
    eta = nonlinear_observed_probabilities(points, sigma)
    def in_box(t):
        return (np.abs(t[:, 0]) <= 3) & (np.abs(t[:, 1]) <= 6)
    for x, expected in zip(points, eta, strict=True):
        freq, se = _posterior_frequencies(x, sigma, in_box, _sample_nonlinear_class, rng)
        # 5 sd: 30 comparisons, chance of a false alarm ~ 2e-5; se <= 0.0009 here, while the
        # naive softmax of the observed point is off by up to 0.2 at these points
        np.testing.assert_array_less(np.abs(freq - expected), 5 * se)


@pytest.mark.parametrize("sigma", [0.2, 0.6])
def test_donut_probabilities_match_monte_carlo(sigma):
    rng = np.random.default_rng(8)
    points = np.array([[3.3, 0.1], [0.0, 0.0], [1.8, 1.9], [3.95, 0.0], [-4.2, 0.5], [4.4, 0.3]])
    eta = donut_probabilities(np.column_stack([points, np.zeros((6, 3))]), sigma)
    def in_disc(t):
        return np.hypot(t[:, 0], t[:, 1]) <= 4.0
    for x, expected in zip(points, eta, strict=True):
        freq, se = _posterior_frequencies(x, sigma, in_disc, lambda t, _: _paper_donut_class(t),
                                          rng)
        np.testing.assert_array_less(np.abs(freq - expected), 5 * se)


def test_donut_limits_and_far_points():
    inner = np.array([[2.0, 0.0], [-2.0, 1.0], [0.0, 0.0], [1.9, 1.95]])
    exact = np.eye(3)[_paper_donut_class(inner)]
    np.testing.assert_array_equal(donut_probabilities(inner, 0.0), exact)
    np.testing.assert_allclose(donut_probabilities(inner[:3], 1e-3), exact[:3], atol=1e-12)
    # the log-grid fallback used beyond underflow agrees with the exact formula where both work
    for x, sigma in (([6.0, 0.0], 0.4), ([10.0, 0.0], 1.0), ([0.0, 9.0], 1.0)):
        np.testing.assert_allclose(_donut_far(np.array(x), sigma),
                                   donut_probabilities([x], sigma)[0], atol=1e-3)
    far = donut_probabilities([[60.0, 0.0], [-60.0, 0.0]], 0.5)  # masses underflow
    np.testing.assert_allclose(far.sum(axis=1), 1.0)
    assert far[0, 0] > 0.99 and far[1, 0] == pytest.approx(1.0)


def test_design_validation():
    with pytest.raises(ValueError, match="d >= 2"):
        donut_probabilities([1.0, 2.0])
    with pytest.raises(ValueError, match="'sigma'"):
        nonlinear_observed_probabilities([[0.0, 0.0]], sigma=-1)
    with pytest.raises(ValueError, match="'design'"):
        bayes_error("spiral")
    with pytest.raises(ValueError, match="Shift labels"):
        excess_risk(np.array([1, 3]), [[0.0, 0.0], [1.0, 1.0]], "donut")


def test_bayes_error_nonlinear_noise_free_matches_quadrature():
    # E[1 - max_k eta_k(x~)] over the uniform rectangle, by a 1200 x 2400 midpoint rule
    t1 = (np.arange(1200) + 0.5) / 1200 * 6 - 3
    t2 = (np.arange(2400) + 0.5) / 2400 * 12 - 6
    g1, g2 = np.meshgrid(t1, t2)
    truth = 1 - _paper_softmax(g1.ravel(), g2.ravel()).max(axis=1).mean()
    res = bayes_error("nonlinear", sigma=0.0, n=60_000, random_state=3)
    assert abs(res.error - truth) < 4 * res.se
    assert abs(res.error_empirical - res.error) < 4 * 0.5 / np.sqrt(res.n)


def test_bayes_error_orderings_and_excess_risk():
    n = 20_000
    kwargs = dict(design="donut", sigma=0.4, n=n, random_state=5)
    median = bayes_error(loss="absolute", rule="ordinal", **kwargs)
    best_abs = bayes_error(loss="absolute", **kwargs)
    mode_abs = bayes_error(loss="absolute", rule="multiclass", **kwargs)
    assert best_abs.error == pytest.approx(median.error, abs=1e-15)
    assert median.error <= mode_abs.error
    best01 = bayes_error(loss="zero_one", **kwargs)
    assert best01.error <= bayes_error(loss="zero_one", rule="ordinal", **kwargs).error
    costs = bayes_error(loss=DONUT_COSTS, **kwargs)
    for rule in ("ordinal", "multiclass"):
        assert costs.error <= bayes_error(loss=DONUT_COSTS, rule=rule, **kwargs).error
    assert bayes_error("donut", sigma=0.0, n=2000).error == 0.0
    # excess risk: zero for the Bayes rule, positive for "always class 1"
    from nordicstats.datasets import make_donut
    X, _ = make_donut(3000, d=4, sigma=0.4, random_state=6)
    eta = donut_probabilities(X, 0.4)
    assert excess_risk(bayes_rule_multiclass(eta), X, "donut", 0.4) == pytest.approx(0.0)
    labels = pd.Categorical.from_codes(bayes_rule_ordinal(eta), categories=[1, 2, 3],
                                       ordered=True)
    assert excess_risk(labels, X, "donut", 0.4, loss="absolute") == pytest.approx(0.0)
    worst = excess_risk(np.zeros(3000, dtype=int), X, "donut", 0.4)
    assert worst == pytest.approx(eta[:, 1:].sum(axis=1).mean() - (1 - eta.max(axis=1)).mean())
    assert worst > 0.1


# ---------------------------------------------------------------------------- plot
def test_plot_mode_vs_median_writes_png(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from nordicstats.plotting import plot_mode_vs_median

    ax = plot_mode_vs_median([FIG2_TOP, FIG2_BOTTOM], row_labels=["top", "bottom"])
    assert len(ax.patches) == 8
    mode_marks, median_marks = ax.collections[0], ax.collections[1]
    # block centres: top mode = class 1 (0.2), median = class 2 (0.475); bottom 4 (0.8), 3 (0.425)
    np.testing.assert_allclose(mode_marks.get_offsets()[:, 0], [0.2, 0.8])
    np.testing.assert_allclose(median_marks.get_offsets()[:, 0], [0.475, 0.425])
    assert any(line.get_xdata()[0] == 0.5 for line in ax.lines)
    path = tmp_path / "fig2.png"
    ax.figure.savefig(path)
    assert path.stat().st_size > 5000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    matplotlib.pyplot.close(ax.figure)


def test_one_class_code_check_for_rules_and_predictions():
    """conditional_risk and excess_risk read predictions the same way (codes or categoricals)."""
    X = [[2.0, 0.0], [-3.0, 0.0]]
    eta = design_probabilities("donut", X, 0.0)
    labels = pd.Categorical([3, 1], categories=[1, 2, 3], ordered=True)
    # a categorical gives its codes: labels 3, 1 are codes 2, 0, the Bayes classes here
    assert excess_risk(labels, X, "donut", sigma=0.0) == 0.0
    np.testing.assert_array_equal(conditional_risk(eta, labels), conditional_risk(eta, [2, 0]))
    # one int stands for every row in both
    np.testing.assert_array_equal(conditional_risk(eta, 0), conditional_risk(eta, [0, 0]))
    assert excess_risk(0, X, "donut", sigma=0.0) == pytest.approx(
        float(np.mean(1 - eta[:, 0] - (1 - eta.max(axis=1)))), abs=1e-15)
    for call in (lambda p: conditional_risk(eta, p), lambda p: excess_risk(p, X, "donut")):
        with pytest.raises(ValueError, match=r"class codes in 0..2; got values from 1 to 3\. "
                                             "Shift labels 1..K down by one"):
            call(np.array([1, 3]))
        with pytest.raises(ValueError, match=r"2 integer class codes in 0..2 \(or a categorical\)"
                                             r"; got shape \(2,\) and dtype float64"):
            call(np.array([0.0, 1.0]))
