"""Ordinal response coding and covariate checks."""

import numpy as np
import pandas as pd
import pytest

from nordicstats.data import (
    binary_signs,
    boundary_names,
    check_consistent_length,
    check_exog,
    encode_ordinal,
)


def test_ordered_categorical_defines_the_order():
    y = pd.Series(pd.Categorical(["b", "a", "c", "a"], categories=["c", "b", "a"], ordered=True))
    r = encode_ordinal(y)
    assert r.levels == ("c", "b", "a")
    assert r.codes.tolist() == [1, 2, 0, 2]
    assert r.order_source == "categorical"


def test_explicit_order_and_sorted_fallback():
    r = encode_ordinal([3, 1, 2, 2], order=[3, 2, 1])
    assert r.codes.tolist() == [0, 2, 1, 1] and r.order_source == "explicit"
    r = encode_ordinal([3, 1, 2, 2])
    assert r.levels == (1, 2, 3) and r.order_source == "sorted"


def test_labels_round_trip():
    r = encode_ordinal(["lo", "hi", "mid"], order=["lo", "mid", "hi"])
    back = r.labels(r.codes)
    assert list(back) == ["lo", "hi", "mid"] and back.ordered


@pytest.mark.parametrize("y,kwargs,message", [
    (["a", "a", "a"], {}, "only one class"),
    (["a", None, "b"], {}, "missing value"),
    ([1.0, np.nan, 2.0], {}, "missing value"),
    (["a", "b", "z"], {"order": ["a", "b"]}, r"labels \['z'\] that are not in order"),
    (["a", "b"], {"order": ["a", "b", "a"]}, "repeated levels"),
    (pd.Categorical(["a", "b"]), {}, "unordered pandas Categorical"),
    (pd.Categorical(["a", "c"], categories=["a", "b", "c"], ordered=True), {},
     r"level\(s\) \['b'\] of endog have no observations"),
])
def test_bad_responses_get_clear_errors(y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        encode_ordinal(y, **kwargs)


def test_binary_signs_follow_the_paper():
    # y^(k) = -1 if y <= k and +1 if y > k (paper Section 2.2), k = 1..K-1
    signs = binary_signs(np.array([0, 1, 2, 3]), 4)
    expected = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [1, 1, 1]])
    np.testing.assert_array_equal(signs, expected)


def test_boundary_names_use_r_convention():
    assert boundary_names(["L", "B", "R"]) == ["L|B", "B|R"]


def test_check_exog():
    values, names = check_exog(pd.DataFrame({"u": [1, 2], "v": [3.0, 4.0]}))
    assert names == ["u", "v"] and values.dtype == float
    values, names = check_exog(np.arange(3.0))
    assert values.shape == (3, 1) and names == ["x1"]
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_exog(np.array([[1.0, np.inf]]))
    with pytest.raises(ValueError, match="must be numeric"):
        check_exog(pd.DataFrame({"u": ["a", "b"]}))
    with pytest.raises(ValueError, match="is empty"):
        check_exog(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="endog has 3 observations but exog has 2 rows"):
        check_consistent_length(3, 2)
