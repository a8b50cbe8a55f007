"""Cost matrices and the hinge weights they induce (nordicstats.costs)."""

import numpy as np
import pandas as pd
import pytest

from nordicstats import NORDIC
from nordicstats.costs import absolute_cost, check_cost_matrix, cost_to_boundary_weights
from nordicstats.metrics import BALANCE_COSTS, DONUT_COSTS, weighted_error
from nordicstats.tuning import make_scorer


def _rebuild(weights):
    """cost[l, j] = sum of the weights of the boundaries between l and j."""
    K = weights.shape[0]
    return np.array([[weights[t, min(t, j):max(t, j)].sum() for j in range(K)]
                     for t in range(K)])


def test_absolute_cost_gives_unit_weights():
    for K in (2, 3, 6):
        np.testing.assert_array_equal(cost_to_boundary_weights(absolute_cost(K)),
                                      np.ones((K, K - 1)))


def test_paper_matrices_encode_the_paper():
    donut = DONUT_COSTS.to_numpy()
    # class 1 misclassified costs 1; class 2 -> 1 or 3 costs 2; class 3 -> 2 costs 1, -> 1 costs 3
    assert donut[0, 1] == donut[0, 2] == 1
    assert donut[1, 0] == donut[1, 2] == 2
    assert (donut[2, 1], donut[2, 0]) == (1, 3)
    balance = BALANCE_COSTS.to_numpy()
    # L <-> R costs 2, every other error 1
    assert balance[0, 2] == balance[2, 0] == 2
    assert balance[0, 1] == balance[1, 0] == balance[1, 2] == balance[2, 1] == 1
    assert np.all(np.diag(donut) == 0) and np.all(np.diag(balance) == 0)
    np.testing.assert_array_equal(cost_to_boundary_weights(DONUT_COSTS),
                                  [[1, 0], [2, 2], [2, 1]])
    np.testing.assert_array_equal(cost_to_boundary_weights(BALANCE_COSTS), np.ones((3, 2)))


def test_weights_rebuild_random_valid_matrices():
    rng = np.random.default_rng(0)
    for K in range(2, 7):
        weights = rng.exponential(size=(K, K - 1)) * (rng.random((K, K - 1)) > 0.2)
        cost = _rebuild(weights)
        np.testing.assert_allclose(cost_to_boundary_weights(cost), weights, atol=1e-12)


@pytest.mark.parametrize("cost, match", [
    ([[0, 1, 2]], "square"),
    ([[0.0]], "K >= 2"),
    ([[0, 1], [np.nan, 0]], "finite nonnegative"),
    ([[0, -1], [1, 0]], "finite nonnegative"),
    ([[0, 1], [1, 0.5]], r"diagonal.*row 1 has cost 0.5"),
    ([[0, 2, 1], [1, 0, 1], [2, 1, 0]], r"cost row 0 decreases .*\[0.0, 2.0, 1.0\]"),
    ([[0, 1, 2], [1, 0, 1], [1, 2, 0]], r"cost row 2 decreases"),
    ([["a", "b"], ["c", "d"]], "numeric"),
])
def test_bad_matrices_raise(cost, match):
    with pytest.raises(ValueError, match=match):
        cost_to_boundary_weights(cost)


def test_dataframe_rows_named_by_level():
    bad = pd.DataFrame([[0, 1, 2], [1, 0, 1], [1, 2, 0]], index=list("LBR"), columns=list("LBR"))
    with pytest.raises(ValueError, match=r"row 2 \(level 'R'\)"):
        check_cost_matrix(bad)
    swapped = bad.loc[:, ["B", "L", "R"]]
    with pytest.raises(ValueError, match="same levels in the same order"):
        check_cost_matrix(swapped, name="cost_matrix")


def test_one_validator_for_fitting_and_scoring():
    """NORDIC's cost, the metric's table and tune's scoring raise the same messages."""
    X, codes = np.arange(24.0).reshape(12, 2), np.repeat([0, 1, 2], 4)
    negative = [[0, 1, 2], [1, 0, -1], [2, 1, 0]]
    calls = (lambda c: NORDIC(codes, X, cost=c),
             lambda c: weighted_error([0, 1, 2], [2, 1, 0], c, labels=[0, 1, 2]),
             lambda c: make_scorer(c, levels=[0, 1, 2])[1]([0, 1, 2], [2, 1, 0]))
    for call in calls:
        with pytest.raises(ValueError, match=r"must hold finite nonnegative costs; got "
                                             r"\[\[0.0, 1.0, 2.0\], \[1.0, 0.0, -1.0\]"):
            call(negative)
        with pytest.raises(ValueError, match=r"must be \(3, 3\), one row and column per level"):
            call(np.zeros((2, 2)))
    for call in calls[:2]:  # (tune takes a labelled table's order from its index)
        with pytest.raises(ValueError, match=r"labelled by the levels \[0, 1, 2\].*its row "
                                             r"labels are \['a', 'b', 'c'\]"):
            call(pd.DataFrame(absolute_cost(3), index=list("abc"), columns=[0, 1, 2]))


def test_scoring_tables_need_not_be_ordinal():
    # a nonzero diagonal and a row that falls away from it: fine to average, not to fit
    table = [[1, 3, 2], [1, 0, 1], [2, 1, 0]]
    assert check_cost_matrix(table, ordinal=False).tolist() == np.asarray(table, float).tolist()
    with pytest.raises(ValueError, match="zero on the diagonal"):
        check_cost_matrix(table)


def test_labelled_matrices_are_aligned_to_the_levels():
    levels = ["lo", "mid", "hi"]
    A = np.array([[0, 1, 4], [2, 0, 1], [5, 3, 0]], dtype=float)
    frame = pd.DataFrame(A, index=levels, columns=levels)
    shuffled = frame.loc[["hi", "lo", "mid"], ["mid", "hi", "lo"]]
    np.testing.assert_array_equal(check_cost_matrix(shuffled, levels=levels), A)
    # labels of no level are ignored: the rows and columns of the levels remain
    wider = pd.DataFrame(np.arange(16.0).reshape(4, 4), index=levels + ["x"],
                         columns=["x"] + levels)
    wider.loc[levels, levels] = A
    np.testing.assert_array_equal(check_cost_matrix(wider, levels=levels), A)
    repeated = pd.DataFrame(np.zeros((3, 3)), index=["lo", "lo", "hi"], columns=levels)
    with pytest.raises(ValueError, match=r"no row for level\(s\) \['mid'\]"):
        check_cost_matrix(repeated, levels=levels)
    twice = pd.concat([frame, frame.loc[["hi"]]])
    with pytest.raises(ValueError, match=r"repeated labels \['hi'\]"):
        check_cost_matrix(twice, levels=levels)
    # an array is read in the order of the levels, and messages name them
    with pytest.raises(ValueError, match=r"row 2 \(level 'hi'\) decreases"):
        check_cost_matrix([[0, 1, 2], [1, 0, 1], [1, 2, 0]], levels=levels)
