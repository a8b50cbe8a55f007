"""Cost-matrix Bayes rule and cost-weighted Fisher consistency (nordicstats.theory).

References are brute force written here: enumeration of the levels for the
Bayes rule, dense grids over f for the weighted population risk, the donut
crossing region worked out by hand, and the edge points of the proof of the
cross-ratio condition.
"""

import numpy as np
import pytest

from nordicstats.costs import absolute_cost
from nordicstats.metrics import BALANCE_COSTS, DONUT_COSTS
from nordicstats.theory import (
    bayes_boundary_signs,
    bayes_rule_cost,
    bayes_rule_multiclass,
    bayes_rule_ordinal,
    boundary_masses,
    conditional_risk,
    cost_crossing_triples,
    fisher_consistency,
    fisher_consistency_report,
    near_tie_probabilities,
    prediction_risks,
)

DONUT = DONUT_COSTS.to_numpy()
BALANCE = BALANCE_COSTS.to_numpy()


def _random_cost(rng, K, zero_share=0.25):
    """A valid ordinal cost matrix built from random nonnegative increments."""
    w = rng.exponential(size=(K, K - 1)) * (rng.random((K, K - 1)) > zero_share)
    return np.array([[w[t, min(t, j):max(t, j)].sum() for j in range(K)] for t in range(K)])


def _brute_bayes(eta, cost, tol=1e-12):
    """All levels of least expected cost, by a double loop."""
    K = len(eta)
    risks = [sum(eta[t] * cost[t][j] for t in range(K)) for j in range(K)]
    low = min(risks)
    return [j for j in range(K) if risks[j] - low <= tol * max(1.0, abs(low))]


def _etas(rng, K, n=40):
    return np.vstack([rng.dirichlet(np.full(K, a), size=n) for a in (0.3, 1.0, 5.0)])


# ------------------------------------------------------------------------- Bayes rule
@pytest.mark.parametrize("K", [2, 3, 4, 6])
def test_bayes_rule_cost_matches_enumeration(K):
    rng = np.random.default_rng(K)
    for cost in (_random_cost(rng, K), rng.uniform(0, 3, (K, K)), absolute_cost(K)):
        etas = np.vstack([_etas(rng, K), near_tie_probabilities(_random_cost(rng, K, 0), 30,
                                                                 random_state=K)])
        got = bayes_rule_cost(etas, cost)
        signs = bayes_boundary_signs(etas, cost)
        for eta, level, sign in zip(etas, got, signs, strict=True):
            best = _brute_bayes(eta, cost)
            assert level == best[0]  # lowest minimiser
            expect = [1 if min(best) > k else -1 if max(best) <= k else 0 for k in range(K - 1)]
            assert sign.tolist() == expect
        assert conditional_risk(etas, "bayes", cost) == pytest.approx(
            prediction_risks(etas, cost)[0].min(axis=1).to_numpy(), abs=1e-15)


def test_bayes_rule_cost_exact_ties_go_to_the_lowest_level():
    # balance, eta = (1/2, 0, 1/2): every level costs 1
    assert prediction_risks([0.5, 0.0, 0.5], BALANCE)[0].iloc[0].tolist() == [1.0, 1.0, 1.0]
    assert bayes_rule_cost([0.5, 0.0, 0.5], BALANCE) == 0
    assert bayes_boundary_signs([0.5, 0.0, 0.5], BALANCE).tolist() == [0, 0]
    # donut, eta = (1/4, 1/4, 1/2): R = (2, 3/4, 3/4), levels 2 and 3 (codes 1, 2) tie
    tie = [0.25, 0.25, 0.5]
    assert prediction_risks(tie, DONUT)[0].iloc[0].tolist() == [2.0, 0.75, 0.75]
    assert bayes_rule_cost(tie, DONUT) == 1
    assert bayes_boundary_signs(tie, DONUT).tolist() == [1, 0]
    # donut, eta = (3/4, 0, 1/4): R = (3/4, 1, 3/4), a tie of codes 0 and 2 around a dearer 1
    split = [0.75, 0.0, 0.25]
    assert prediction_risks(split, DONUT)[0].iloc[0].tolist() == [0.75, 1.0, 0.75]
    assert bayes_rule_cost(split, DONUT) == 0
    assert bayes_boundary_signs(split, DONUT).tolist() == [0, 0]


def test_named_losses_reduce_to_median_and_mode():
    rng = np.random.default_rng(3)
    etas = rng.dirichlet(np.ones(5), size=300)
    np.testing.assert_array_equal(bayes_rule_cost(etas, "absolute"), bayes_rule_ordinal(etas))
    np.testing.assert_array_equal(bayes_rule_cost(etas, absolute_cost(5)),
                                  bayes_rule_ordinal(etas))
    np.testing.assert_array_equal(bayes_rule_cost(etas, "zero_one"), bayes_rule_multiclass(etas))
    p = np.cumsum(etas[:, ::-1], axis=1)[:, ::-1][:, 1:]
    np.testing.assert_array_equal(bayes_boundary_signs(etas), np.sign(p - 0.5).astype(int))


def test_boundary_masses_by_hand():
    eta = np.array([0.2, 0.3, 0.1, 0.4])
    cost = _random_cost(np.random.default_rng(5), 4, 0)
    A, B = boundary_masses(eta, cost)
    for k in range(3):
        inc = [abs(cost[t, k + 1] - cost[t, k]) for t in range(4)]
        assert A[k] == pytest.approx(sum(eta[t] * inc[t] for t in range(k + 1, 4)))
        assert B[k] == pytest.approx(sum(eta[t] * inc[t] for t in range(k + 1)))
        # B_k - A_k is the change of expected cost from level k to level k+1
        assert B[k] - A[k] == pytest.approx(eta @ cost[:, k + 1] - eta @ cost[:, k])


# ------------------------------------------------------- weighted population minimiser
def _hinge(u):
    return np.maximum(0.0, 1.0 - u)


def _logistic(u):
    return np.logaddexp(0.0, -u)


def _grid_risk(eta, cost, V, axes):
    """Weighted population risk on the product grid, summed over cases and boundaries."""
    K = len(eta)
    mesh = np.meshgrid(*axes, indexing="ij")
    risk = np.zeros_like(mesh[0])
    for t in range(K):
        for k in range(K - 1):
            weight = abs(cost[t, k + 1] - cost[t, k])
            y = 1.0 if t > k else -1.0
            risk += eta[t] * weight * V(y * mesh[k])
    return mesh, risk


def _ordered(mesh):
    ok = np.ones_like(mesh[0], dtype=bool)
    for a, b in zip(mesh[:-1], mesh[1:], strict=True):
        ok &= a >= b
    return ok


CASES = [(DONUT, [0.7, 0.05, 0.25]), (DONUT, [0.2, 0.5, 0.3]), (DONUT, [0.75, 0.02, 0.23]),
         (BALANCE, [0.3, 0.3, 0.4]), (BALANCE, [0.45, 0.1, 0.45]), (DONUT, [0.75, 0.0, 0.25])]


@pytest.mark.parametrize("loss, V", [("hinge", _hinge), ("logistic", _logistic)])
@pytest.mark.parametrize("constrained", [False, True])
def test_minimiser_matches_dense_grid_k3(loss, V, constrained):
    rng = np.random.default_rng(7)
    cases = CASES + [(DONUT, e) for e in rng.dirichlet(np.full(3, 0.7), 12)] \
        + [(BALANCE, e) for e in rng.dirichlet(np.full(3, 0.7), 6)]
    axis = np.round(np.linspace(-4, 4, 801), 10)  # contains -1, 0, 1
    for cost, eta in cases:
        eta = np.asarray(eta) / np.sum(eta)
        mesh, risk = _grid_risk(eta, cost, V, [axis, axis])
        allowed = _ordered(mesh) if constrained else np.ones_like(risk, dtype=bool)
        risk = np.where(allowed, risk, np.inf)
        res = fisher_consistency(loss, eta, constrained=constrained, bound=4.0, cost=cost)
        best = risk.min()
        ours = float(np.sum([(eta[t] * abs(cost[t, k + 1] - cost[t, k])
                              * V((1.0 if t > k else -1.0) * res.f_star[k]))
                             for t in range(3) for k in range(2)]))
        tol = 1e-9 if loss == "hinge" else 1e-4  # hinge minimisers sit on grid points
        assert ours <= best + tol and ours >= best - 1e-3
        # verdict: can a wrong sign be optimal?  brute gap per boundary
        for k in range(2):
            s = res.expected_sign[k]
            if s == 0:
                continue
            wrong = np.where(s * mesh[k] <= 0, risk, np.inf).min()
            assert res.consistent[k] == (wrong - best > 1e-9), (eta, k)
            if loss == "hinge":
                assert res.risk_gap[k] == pytest.approx(wrong - best, abs=1e-9)
        level = int(np.sum(res.f_star > 0))
        if res.is_consistent and res.noncrossing:
            assert level == bayes_rule_cost(eta, cost)


def test_minimiser_matches_dense_grid_k4_hinge():
    rng = np.random.default_rng(11)
    axis = np.round(np.linspace(-2, 2, 81), 10)
    for _ in range(6):
        cost = _random_cost(rng, 4)
        eta = rng.dirichlet(np.full(4, 0.8))
        mesh, risk = _grid_risk(eta, cost, _hinge, [axis] * 3)
        for constrained in (False, True):
            r = np.where(_ordered(mesh), risk, np.inf) if constrained else risk
            res = fisher_consistency("hinge", eta, constrained=constrained, bound=2.0, cost=cost)
            for k in range(3):
                s = res.expected_sign[k]
                if s != 0:
                    wrong = np.where(s * mesh[k] <= 0, r, np.inf).min()
                    assert res.risk_gap[k] == pytest.approx(wrong - r.min(), abs=1e-9)


def test_absolute_cost_is_the_unweighted_check():
    rng = np.random.default_rng(2)
    for eta in rng.dirichlet(np.ones(4), 10):
        for constrained in (False, True):
            plain = fisher_consistency("logistic", eta, constrained=constrained)
            costed = fisher_consistency("logistic", eta, constrained=constrained,
                                        cost=absolute_cost(4))
            np.testing.assert_allclose(costed.f_star, plain.f_star, atol=1e-9)
            np.testing.assert_array_equal(costed.expected_sign, plain.expected_sign)
            np.testing.assert_allclose(plain.p_weighted, plain.p_upper, atol=1e-15)


# --------------------------------------------------------------------- the findings
def test_donut_separate_fails_exactly_on_the_crossing_region():
    # D_0 = 2(eta_2 + eta_3) - eta_1 < 0 and D_1 = eta_3 - 2 eta_2 > 0 (classes 1..3):
    # the weighted SVMs cross; expected costs fall from class 2 to 3 and rise from 1 to 2,
    # so the cost-Bayes level is class 1 or 3, never class 2 (which counting would give)
    rep = fisher_consistency_report("hinge", n_draws=60, constrained=False, cost=DONUT_COSTS,
                                    random_state=3)
    per_eta = rep.table.groupby(["source", "draw"], sort=False)
    failed = per_eta["consistent"].all().eq(False)
    first = per_eta.first()
    e1, e2, e3 = first["eta1"], first["eta2"], first["eta3"]
    region = (2 * (e2 + e3) - e1 < 0) & (e3 - 2 * e2 > 0)
    assert failed.sum() > 5
    np.testing.assert_array_equal(failed.to_numpy(), region.to_numpy())
    assert (first.loc[region, "bayes_level"] != 1).all()
    assert set(first.loc[region, "bayes_level"]) == {0, 2}
    ordered = fisher_consistency_report("hinge", n_draws=60, cost=DONUT_COSTS, random_state=3)
    assert ordered.n_failures == 0


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared_hinge"])
def test_paper_costs_ordered_always_consistent_separate_only_for_balance(loss):
    for constrained in (True, False):
        rep = fisher_consistency_report(loss, n_draws=15, constrained=constrained,
                                        cost=BALANCE_COSTS, random_state=1)
        assert rep.n_failures == 0
        assert rep.counts.loc["near_tie", "n_eta"] == 15
    rep = fisher_consistency_report(loss, n_draws=15, cost=DONUT_COSTS, random_state=1)
    assert rep.n_failures == 0


def test_cross_ratio_condition_decides_the_separate_problem():
    rng = np.random.default_rng(13)
    seen = {True: 0, False: 0}
    for K in (3, 4, 5):
        for _ in range(5):
            cost = _random_cost(rng, K)
            c = np.abs(np.diff(cost, axis=1))
            triples = cost_crossing_triples(cost)
            assert triples == [(lo, k, hi) for k in range(K - 2) for lo in range(k + 1)
                               for hi in range(k + 2, K)
                               if c[lo, k] * c[hi, k + 1] - c[hi, k] * c[lo, k + 1] > 0]
            seen[bool(triples)] += 1
            for lo, k, hi in triples:  # the edge point of the proof crosses
                r_lo = c[hi, k] / c[lo, k]  # D_k = 0 at t / (1 - t) = r_lo
                r_hi = c[hi, k + 1] / c[lo, k + 1] if c[lo, k + 1] > 0 else 10 * r_lo + 10
                ratio = np.sqrt(r_lo * r_hi) if r_lo > 0 else r_hi / 2
                eta = np.zeros(K)
                eta[lo], eta[hi] = ratio / (1 + ratio), 1 / (1 + ratio)
                D = np.subtract(*boundary_masses(eta, cost))
                assert D[k] < 0 < D[k + 1]
                assert not fisher_consistency("hinge", eta, False, cost=cost).is_consistent
                assert fisher_consistency("hinge", eta, True, cost=cost).is_consistent
            if not triples:
                rep = fisher_consistency_report("hinge", n_draws=15, constrained=False,
                                                cost=cost, random_state=K)
                assert rep.n_failures == 0
    assert seen[True] > 0 and seen[False] > 0


def test_near_tie_generator_is_near_ties():
    etas = near_tie_probabilities(DONUT_COSTS, 40, random_state=0)
    np.testing.assert_allclose(etas.sum(axis=1), 1.0, atol=1e-14)
    assert np.all(etas >= 0)
    risks = etas @ DONUT
    gaps = np.abs(risks[:, :, None] - risks[:, None, :])
    D = np.subtract(*boundary_masses(etas, DONUT_COSTS))
    closest = np.minimum(np.sort(gaps.reshape(40, -1), axis=1)[:, 3], np.abs(D).min(axis=1))
    assert np.all(closest <= 1e-3 + 1e-12) and np.all(closest >= 1e-5 - 1e-12)


def test_bad_costs_raise():
    with pytest.raises(ValueError, match=r"must be \(3, 3\)"):
        fisher_consistency("hinge", [0.2, 0.3, 0.5], cost=absolute_cost(4))
    with pytest.raises(ValueError, match="cost row 2 decreases"):
        fisher_consistency("hinge", [0.2, 0.3, 0.5], cost=[[0, 1, 2], [1, 0, 0.5], [0.5, 1, 0]])
    with pytest.raises(ValueError, match=r"must be \(4, 4\)"):
        fisher_consistency_report("hinge", 2, K=4, cost=DONUT_COSTS)
    with pytest.raises(ValueError, match="no ties"):
        near_tie_probabilities([[0, 0], [0, 0]], 3)
