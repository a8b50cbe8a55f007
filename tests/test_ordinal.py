"""The shared ordinal model/results bases: one prediction path for NORDIC and every competitor."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nordicstats import NORDIC
from nordicstats.compare import COMPETITORS, OrderedLogit
from nordicstats.datasets import make_nonlinear
from nordicstats.ordinal import OrdinalModel, OrdinalResults

FAMILIES = {"nordic": NORDIC, **COMPETITORS}


@pytest.fixture(scope="module")
def data():
    X, y = make_nonlinear(60, d=2, sigma=0.5, random_state=3)
    return X.assign(grade=y)


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def formula_fit(request, data):
    cls = FAMILIES[request.param]
    options = {} if request.param == "ologit" else {"C": 1.0}
    return cls.from_formula("grade ~ x1 + x2", data, **options).fit()


def test_every_family_shares_the_bases(formula_fit):
    assert isinstance(formula_fit.model, OrdinalModel)
    assert isinstance(formula_fit, OrdinalResults)
    assert formula_fit.boundary_names == ["1|2", "2|3"] and formula_fit.nobs == 60


def test_missing_covariate_gives_missing_prediction_with_index_kept(formula_fit, data):
    new = data.iloc[[4, 7, 9]].copy()
    new.index = ["a", "b", "c"]
    new.loc["b", "x1"] = np.nan
    complete = formula_fit.predict(new.drop(index="b"))
    pred = formula_fit.predict(new)
    assert isinstance(pred, pd.Series) and list(pred.index) == ["a", "b", "c"]
    assert pd.isna(pred["b"]) and list(pred.cat.categories) == [1, 2, 3]
    assert pred.drop(index="b").tolist() == complete.tolist()
    dec = formula_fit.predict(new, which="decision")
    assert isinstance(dec, pd.DataFrame) and list(dec.columns) == ["1|2", "2|3"]
    assert dec.loc["b"].isna().all() and np.isfinite(dec.drop(index="b").to_numpy()).all()
    # equal up to rounding: BLAS may block a 3-row product differently from a 2-row one
    np.testing.assert_allclose(dec.drop(index="b").to_numpy(),
                               formula_fit.decision_function(new.drop(index="b")),
                               rtol=1e-12, atol=1e-12)
    if hasattr(formula_fit, "crossing_rate"):
        assert formula_fit.crossing_rate(new) == formula_fit.crossing_rate(new.drop(index="b"))
    with pytest.raises(ValueError, match=r"missing covariate in 1 row\(s\) \(first \['b'\]\)"):
        formula_fit.predict(new, missing="raise")
    with pytest.raises(ValueError, match="'missing' parameter"):
        formula_fit.predict(new, missing="drop")


def test_array_rows_with_nan_and_one_return_type(formula_fit):
    X = formula_fit.model.exog[:3].copy()
    X[1, 0] = np.nan
    dec = formula_fit.decision_function(X)
    assert isinstance(dec, np.ndarray) and dec.shape == (3, 2) and np.isnan(dec[1]).all()
    pred = formula_fit.predict(X)
    assert isinstance(pred, pd.Categorical) and pd.isna(pred[1]) and not pd.isna(pred[0])
    table = formula_fit.predict(X, which="decision")
    assert isinstance(table, pd.DataFrame) and list(table.columns) == ["1|2", "2|3"]


def test_summary_frame_everywhere(formula_fit):
    frame = formula_fit.summary_frame()
    assert isinstance(frame, pd.DataFrame) and frame.index.nlevels == 2
    assert "coef" in frame.columns


def test_ologit_summary_frame_matches_its_attributes(data):
    res = OrderedLogit.from_formula("grade ~ x1 + x2", data).fit()
    frame = res.summary_frame(alpha=0.1)
    np.testing.assert_array_equal(frame["coef"], res.params)
    np.testing.assert_array_equal(frame["P>|z|"], res.pvalues)
    np.testing.assert_allclose(frame["[0.05"], res.conf_int(0.1)["lower"])
    assert frame.index.get_level_values("block").tolist() == ["coefficients"] * 2 + \
        ["thresholds"] * 2
    prob = res.predict(data.iloc[:4], which="prob")
    assert list(prob.columns) == [1, 2, 3]
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, atol=1e-12)
