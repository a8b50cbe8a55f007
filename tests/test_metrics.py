"""Tests for nordicstats.metrics: hand-computed small cases and input validation."""

import numpy as np
import pandas as pd
import pytest

from nordicstats.metrics import (
    BALANCE_COSTS,
    DONUT_COSTS,
    confusion_matrix,
    error_rate,
    mean_absolute_error,
    ordinal_codes,
    paper_confusion,
    weighted_error,
)

LEVELS = ["L", "B", "R"]
# six observations: true / predicted
TRUE = ["L", "L", "B", "R", "R", "R"]
PRED = ["L", "R", "L", "B", "R", "L"]


def cat(values, levels=LEVELS):
    return pd.Categorical(values, categories=levels, ordered=True)


def test_error_rate_hand_case():
    assert error_rate(TRUE, PRED) == pytest.approx(4 / 6, abs=1e-15)
    assert error_rate(cat(TRUE), pd.Series(cat(PRED))) == pytest.approx(4 / 6, abs=1e-15)
    assert error_rate([1, 2, 3], [1, 2, 3]) == 0.0


def test_mean_absolute_error_uses_level_codes():
    # |differences| in codes L=0,B=1,R=2: 0, 2, 1, 1, 0, 2 -> 6/6
    assert mean_absolute_error(cat(TRUE), cat(PRED)) == pytest.approx(1.0, abs=1e-15)
    assert mean_absolute_error(TRUE, PRED, labels=LEVELS) == pytest.approx(1.0, abs=1e-15)
    # numeric labels 1, 2, 10: distances count levels, not values
    assert mean_absolute_error([1, 10, 2], [10, 1, 2]) == pytest.approx(4 / 3, abs=1e-15)
    with pytest.raises(ValueError, match="order of the labels"):
        mean_absolute_error(TRUE, PRED)


def test_weighted_error_balance_and_donut_costs():
    # costs (true, pred): LL 0, LR 2, BL 1, RB 1, RR 0, RL 2 -> 6/6
    assert weighted_error(TRUE, PRED, BALANCE_COSTS) == pytest.approx(1.0, abs=1e-15)
    assert weighted_error(cat(TRUE), cat(PRED), BALANCE_COSTS.to_numpy()) == pytest.approx(1.0)
    # donut: (1,2) 1, (2,1) 2, (2,3) 2, (3,2) 1, (3,1) 3, (1,1) 0 -> 9/6
    t, p = [1, 2, 2, 3, 3, 1], [2, 1, 3, 2, 1, 1]
    assert weighted_error(t, p, DONUT_COSTS) == pytest.approx(1.5, abs=1e-15)
    # row = true, column = predicted: the transpose gives a different answer
    assert weighted_error(t, p, DONUT_COSTS.to_numpy().T) == pytest.approx(7 / 6, abs=1e-15)


def test_paper_cost_tables():
    assert DONUT_COSTS.loc[3, 1] == 3 and DONUT_COSTS.loc[3, 2] == 1
    assert DONUT_COSTS.loc[2, 1] == 2 and DONUT_COSTS.loc[2, 3] == 2
    assert (DONUT_COSTS.loc[1, [2, 3]] == 1).all() and np.all(np.diag(DONUT_COSTS) == 0)
    assert BALANCE_COSTS.loc["L", "R"] == 2 and BALANCE_COSTS.loc["R", "L"] == 2
    assert BALANCE_COSTS.loc["B", "L"] == 1 and np.all(np.diag(BALANCE_COSTS) == 0)


def test_confusion_matrix_counts_and_views():
    cm = confusion_matrix(cat(TRUE), PRED)
    expected = np.array([[1, 0, 1], [1, 0, 0], [1, 1, 1]])  # rows true L,B,R; cols predicted
    np.testing.assert_array_equal(cm.to_numpy(), expected)
    assert list(cm.index) == LEVELS and cm.index.name == "true"
    assert cm.columns.name == "predicted"
    np.testing.assert_allclose(confusion_matrix(cat(TRUE), PRED, normalize="true").to_numpy(),
                               expected / np.array([[2], [1], [3]]))
    np.testing.assert_allclose(confusion_matrix(cat(TRUE), PRED, normalize="pred").to_numpy(),
                               expected / np.array([[3, 1, 2]]))
    np.testing.assert_allclose(confusion_matrix(cat(TRUE), PRED, normalize="all").to_numpy(),
                               expected / 6)
    paper = paper_confusion(cat(TRUE), PRED)
    assert paper.index.name == "predicted" and paper.columns.name == "true"
    np.testing.assert_allclose(paper.to_numpy(), (expected / np.array([[2], [1], [3]])).T)
    np.testing.assert_allclose(paper.sum(axis=0).to_numpy(), 1.0)
    pd.testing.assert_frame_equal(
        paper, confusion_matrix(cat(TRUE), PRED, normalize="true", view="paper"))


def test_confusion_matrix_unobserved_level():
    cm = confusion_matrix([1, 1], [1, 2], labels=[1, 2, 3], normalize="true")
    np.testing.assert_allclose(cm.loc[1].to_numpy(), [0.5, 0.5, 0.0])
    assert cm.loc[3].isna().all()


def test_ordinal_codes_prefers_categorical_order():
    t, p, lev = ordinal_codes(cat(TRUE), np.array(PRED, dtype=object))
    assert lev == LEVELS
    assert t.tolist() == [0, 0, 1, 2, 2, 2] and p.tolist() == [0, 2, 0, 1, 2, 0]


def test_invalid_inputs():
    with pytest.raises(ValueError, match="6 labels but y_pred has 5"):
        error_rate(TRUE, PRED[:5])
    with pytest.raises(ValueError, match=r"y_pred has labels \['X'\]"):
        error_rate(cat(TRUE), ["X"] * 6)
    with pytest.raises(ValueError, match="missing"):
        error_rate([1, None], [1, 2])
    with pytest.raises(ValueError, match=r"must be \(3, 3\)"):
        weighted_error(TRUE, PRED, np.zeros((2, 2)), labels=LEVELS)
    with pytest.raises(ValueError, match="finite nonnegative"):
        weighted_error(TRUE, PRED, -BALANCE_COSTS)
    with pytest.raises(ValueError, match=r"labelled by the levels \[1, 2\].*no row for "
                       r"level\(s\) \[1, 2\]"):
        weighted_error([1, 2], [1, 2], BALANCE_COSTS, labels=[1, 2])
    with pytest.raises(ValueError, match="'normalize' parameter"):
        confusion_matrix(TRUE, PRED, normalize="columns")
    with pytest.raises(ValueError, match="'view' parameter"):
        confusion_matrix(TRUE, PRED, view="transposed")
    with pytest.raises(ValueError, match="empty"):
        error_rate([], [])


# Property checks: the three measures agree where their definitions coincide.
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40))
def test_measures_agree_with_cost_matrices(pairs):
    t = [a for a, _ in pairs]
    p = [b for _, b in pairs]
    levels = [0, 1, 2, 3]
    zero_one = 1.0 - np.eye(4)
    distance = np.abs(np.subtract.outer(np.arange(4), np.arange(4))).astype(float)
    assert weighted_error(t, p, zero_one, labels=levels) == pytest.approx(error_rate(t, p))
    assert weighted_error(t, p, distance, labels=levels) == pytest.approx(
        mean_absolute_error(t, p, labels=levels))
    cm = confusion_matrix(t, p, labels=levels)
    assert cm.to_numpy().sum() == len(t)
    assert 1 - np.trace(cm.to_numpy()) / len(t) == pytest.approx(error_rate(t, p))
