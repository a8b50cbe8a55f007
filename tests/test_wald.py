"""The one Wald mixin (nordicstats.wald): every ordinal results class with a covariance uses it,
and its numbers agree with statsmodels' own Wald statistics and with a hand computation."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nordicstats import NORDIC
from nordicstats.compare import OrderedLogit, OrderedLogitResults
from nordicstats.datasets import make_nonlinear
from nordicstats.exceptions import InferenceWarning
from nordicstats.results import NORDICResults
from nordicstats.wald import WaldMixin

WALD = ("bse", "tvalues", "pvalues", "conf_int", "summary_frame")


def test_one_definition_for_every_results_class_with_a_covariance():
    for cls in (NORDICResults, OrderedLogitResults):
        assert issubclass(cls, WaldMixin)
        for name in WALD[:4]:
            assert getattr(cls, name) is getattr(WaldMixin, name), (cls, name)
    # NORDIC's summary_frame only adds its "se source" column (and the no-covariance frame)
    assert OrderedLogitResults.summary_frame is WaldMixin.summary_frame


def test_ordered_logit_slopes_match_statsmodels_wald():
    # the slopes are not reparameterised, so statsmodels' OrderedResults gives the same Wald
    # statistics for them (its own code: bse, tvalues, pvalues, conf_int); the thresholds
    # go through the delta method and are checked in test_compare against MASS::polr.
    X, y = make_nonlinear(300, d=3, random_state=4)
    res = OrderedLogit(y, X).fit()
    sm, d = res.sm_results, 3
    np.testing.assert_allclose(res.bse.iloc[:d], np.asarray(sm.bse)[:d], rtol=1e-12)
    np.testing.assert_allclose(res.tvalues.iloc[:d], np.asarray(sm.tvalues)[:d], rtol=1e-12)
    np.testing.assert_allclose(res.pvalues.iloc[:d], np.asarray(sm.pvalues)[:d], rtol=1e-10)
    np.testing.assert_allclose(res.conf_int(0.1).to_numpy()[:d],
                               np.asarray(sm.conf_int(0.1))[:d], rtol=1e-12)
    assert (res.bse.name, res.tvalues.name, res.pvalues.name) == ("bse", "z", "P>|z|")
    assert list(res.conf_int().index) == list(res.params.index)


def test_nordic_wald_by_hand_with_withheld_boundaries():
    # the data set of test_diagnostics: "auto" withholds the intervals of 0|1 and 3|4
    rng = np.random.default_rng(500028)
    X = rng.normal(size=(500, 5))
    z = X @ np.array([1.0, -0.5, 0.25, 0.5, 0.0]) + rng.logistic(size=500)
    y = np.searchsorted([-1.5, -0.3, 0.9, 3.3], z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        res = NORDIC(y, X, kernel="linear", C=1.0, solver="primal").fit(
            cov_kwds={"n_boot": 30, "disable": True})
    cov = res.cov_params().to_numpy()
    theta = res.params.to_numpy().T.ravel()  # boundary-major, as cov_params
    se = np.sqrt(np.diag(cov))
    np.testing.assert_array_equal(res.bse.to_numpy().T.ravel(), se)
    withheld = np.repeat(~res.cov_sources["intervals"].to_numpy(), res.params.shape[0])
    assert withheld.any() and not withheld.all()
    z = np.where(withheld, np.nan, theta / se)
    np.testing.assert_array_equal(res.tvalues.to_numpy().T.ravel(), z)
    np.testing.assert_allclose(res.pvalues.to_numpy().T.ravel(), 2 * stats.norm.sf(np.abs(z)),
                               rtol=1e-14)
    half = stats.norm.ppf(0.975) * np.where(withheld, np.nan, se)
    ci = res.conf_int()
    np.testing.assert_array_equal(ci["lower"], theta - half)
    np.testing.assert_array_equal(ci["upper"], theta + half)
    assert ci.attrs["cov_sources"] == res.cov_sources.to_dict(orient="index")
    frame = res.summary_frame(alpha=0.1)
    assert list(frame.columns) == ["coef", "std err", "z", "P>|z|", "[0.05", "0.95]",
                                   "se source"]
    pd.testing.assert_index_equal(frame.index, ci.index)


def test_one_message_for_a_bad_alpha():
    X, y = make_nonlinear(120, d=2, random_state=1)
    for res in (OrderedLogit(y, X).fit(), NORDIC(y, X, kernel="linear").fit()):
        for alpha in (0.0, 1.0, -0.5):
            with pytest.raises(ValueError, match=r"The 'alpha' parameter must be in \(0, 1\)"):
                res.conf_int(alpha)
