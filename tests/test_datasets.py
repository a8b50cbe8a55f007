"""Tests for nordicstats.datasets: the balance-scale data and the paper's designs."""

import numpy as np
import pandas as pd
import pytest

from nordicstats.datasets import (
    BALANCE_COLUMNS,
    donut_labels,
    load_balance_scale,
    make_donut,
    make_nonlinear,
    nonlinear_probabilities,
    nonlinear_scores,
    stratified_split,
)


def test_balance_scale_counts_and_types():
    df = load_balance_scale()
    assert df.shape == (625, 5)
    assert list(df.columns) == BALANCE_COLUMNS
    assert df["balance"].cat.ordered
    assert list(df["balance"].cat.categories) == ["L", "B", "R"]
    assert df["balance"].value_counts(sort=False).tolist() == [288, 49, 288]
    for col in BALANCE_COLUMNS[1:]:
        assert df[col].dtype == np.float64


def test_balance_scale_rule_and_uci_row_order():
    df = load_balance_scale()
    # every combination exactly once
    assert not df.iloc[:, 1:].duplicated().any()
    # independent row-by-row check of the defining rule
    for row in df.sample(60, random_state=3).itertuples(index=False):
        lw, ld, rw, rd = row[1:]
        expected = "L" if lw * ld > rw * rd else ("R" if lw * ld < rw * rd else "B")
        assert row[0] == expected
    # UCI file order: first rows are B,1,1,1,1 / R,1,1,1,2; right distance fastest
    assert df.iloc[0].tolist() == ["B", 1.0, 1.0, 1.0, 1.0]
    assert df.iloc[1].tolist() == ["R", 1.0, 1.0, 1.0, 2.0]
    assert df.iloc[5, 1:].tolist() == [1.0, 1.0, 2.0, 1.0]
    assert df.iloc[-1].tolist() == ["B", 5.0, 5.0, 5.0, 5.0]


def test_nonlinear_scores_match_paper_for_three_classes():
    rng = np.random.default_rng(0)
    x1, x2 = rng.uniform(-3, 3, 50), rng.uniform(-6, 6, 50)
    f = nonlinear_scores(x1, x2)
    np.testing.assert_allclose(f[:, 0], -2 * x1 + 0.2 * x1**2 - 0.1 * x2**2 + 0.2, atol=1e-12)
    np.testing.assert_allclose(f[:, 1], -0.4 * x1**2 + 0.2 * x2**2 - 0.4, atol=1e-12)
    np.testing.assert_allclose(f[:, 2], 2 * x1 + 0.2 * x1**2 - 0.1 * x2**2 + 0.2, atol=1e-12)
    p = nonlinear_probabilities(x1, x2)
    e = np.exp(f)
    np.testing.assert_allclose(p, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


def test_make_nonlinear_design_and_determinism():
    X, y, latent = make_nonlinear(4000, d=6, sigma=0.5, random_state=11, return_latent=True)
    X2, y2 = make_nonlinear(4000, d=6, sigma=0.5, random_state=11)
    pd.testing.assert_frame_equal(X, X2)
    pd.testing.assert_series_equal(y, y2)
    assert list(X.columns) == [f"x{j}" for j in range(1, 7)]
    assert list(y.cat.categories) == [1, 2, 3] and y.cat.ordered
    assert latent["x1_tilde"].between(-3, 3).all() and latent["x2_tilde"].between(-6, 6).all()
    # measurement error has SD sigma = 0.5 (SE of the SD estimate ~ 0.006)
    assert np.std(X["x1"] - latent["x1_tilde"]) == pytest.approx(0.5, abs=0.03)
    assert np.std(X["x4"]) == pytest.approx(1.0, abs=0.05)
    # labels follow the stated probabilities: mean of p_y versus empirical frequencies
    probs = latent[["p1", "p2", "p3"]].to_numpy()
    freq = y.value_counts(sort=False).to_numpy() / 4000
    np.testing.assert_allclose(freq, probs.mean(axis=0), atol=0.025)  # ~3 binomial SEs


def test_make_nonlinear_other_k_and_sigma_zero():
    X, y, latent = make_nonlinear(300, d=2, sigma=0.0, random_state=2, K=5, return_latent=True)
    assert list(y.cat.categories) == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(X["x1"], latent["x1_tilde"])
    assert latent.filter(like="p").shape[1] == 5
    X3, _ = make_nonlinear(10, random_state=np.random.default_rng(5))
    assert X3.shape == (10, 10)


def test_make_donut_geometry_and_proportions():
    X, y, z = make_donut(40000, d=5, sigma=0.2, random_state=4, return_latent=True)
    assert (np.hypot(z["z1"], z["z2"]) <= 4).all()
    share = y.value_counts(sort=False).to_numpy() / 40000
    # areas: class 3 3pi, class 2 4pi-3pi, class 1 16pi-4pi over 16pi
    np.testing.assert_allclose(share, [0.75, 0.0625, 0.1875], atol=0.01)
    noise = X.to_numpy() - np.column_stack([z.to_numpy(), np.zeros((40000, 3))])
    np.testing.assert_allclose(noise.std(axis=0), 0.2, atol=0.005)
    X2, y2 = make_donut(40000, d=5, sigma=0.2, random_state=4)
    pd.testing.assert_frame_equal(X, X2)


def test_donut_labels_boundaries():
    pts = np.array([[3.85, 0.0], [3.95, 0.0], [0.05, 0.0], [-0.15, 0.0], [0, 1.95], [0, 0.5]])
    # (3.85,0): in circle 2 (|3.85-1.9|=1.95<2), outside circle 3 (|3.85-1.832|=2.018>1.732)
    assert donut_labels(pts).tolist() == [2, 1, 2, 1, 1, 2]


def test_stratified_split_balance_protocol():
    y = load_balance_scale()["balance"]
    for n in (52, 79, 125, 208):
        train, tune, test = stratified_split(y, [n, n], random_state=n)
        assert len(train) == n and len(tune) == n and len(test) == 625 - 2 * n
        allidx = np.concatenate([train, tune, test])
        assert np.array_equal(np.sort(allidx), np.arange(625))
        for part in (train, tune):
            counts = y.iloc[part].value_counts(sort=False).to_numpy()
            np.testing.assert_array_less(np.abs(counts - n * np.array([288, 49, 288]) / 625), 1)
    a = stratified_split(y, [52, 52], random_state=7)
    b = stratified_split(y, [52, 52], random_state=7)
    c = stratified_split(y, [52, 52], random_state=8)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_bad_inputs():
    with pytest.raises(ValueError, match="'n' parameter"):
        make_nonlinear(0)
    with pytest.raises(ValueError, match="'d' parameter"):
        make_donut(10, d=1)
    with pytest.raises(ValueError, match="'sigma' parameter"):
        make_donut(10, sigma=-1)
    with pytest.raises(ValueError, match="'K' parameter"):
        make_nonlinear(10, K=1)
    with pytest.raises(ValueError, match="add up to"):
        stratified_split([1, 2, 1], [2, 2])
    with pytest.raises(ValueError, match="non-negative integers"):
        stratified_split([1, 2, 1], [0.5])
    with pytest.raises(ValueError, match="missing"):
        stratified_split([1, None, 1], [1])


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=60), st.data())
def test_stratified_split_is_a_near_proportional_partition(labels, data):
    N = len(labels)
    first = data.draw(st.integers(0, N))
    second = data.draw(st.integers(0, N - first))
    parts = stratified_split(labels, [first, second], random_state=0)
    assert [len(parts[0]), len(parts[1])] == [first, second]
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(N))
    y = np.asarray(labels)
    totals = np.array([np.sum(y == c) for c in range(4)])
    counts = np.array([np.sum(y[parts[0]] == c) for c in range(4)])
    # largest-remainder rounding: every class within one of its proportional share
    assert np.all(np.abs(counts - first * totals / N) < 1 + 1e-12)
