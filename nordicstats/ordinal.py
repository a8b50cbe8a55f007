"""The ordinal model and results bases shared by NORDIC and every competitor.

A model holds an ordinal response coded once (:func:`~nordicstats.data.encode_ordinal`)
and numeric covariates, built from arrays or from a formula; its results predict.
Every model describes its fit by K-1 decision values per row,

    f_k(x) > 0  <=>  x is placed above boundary k (between levels k and k+1),

so the names (levels, ``"a|b"`` boundaries), the new-data path and the shape of every
prediction are defined here once:

* ``decision_function(X)``: ndarray (m, K-1);
* ``predict(X, which="class")``: the user's labels -- a ``pandas.Categorical``, or a
  categorical ``Series`` indexed like a DataFrame ``X``;
* ``predict(X, which="decision")``: a DataFrame with one column per boundary (and
  ``"score"`` where a model has it: a Series, one number per row), indexed like a
  DataFrame ``X``;
* ``predict(X, which="proba")``: class probabilities, a DataFrame with one column per
  level (rows summing to one), for the models that have them (the ordered logit;
  NORDIC fitted with ``probability=True``); ``predict(X, cost=...)`` then gives the
  level of least expected cost (:func:`~nordicstats.probability.cost_bayes_codes`).

Rows of new data with a missing covariate get a missing prediction (a missing label,
NaN decision values) and keep their place in the index, or raise with
``missing="raise"``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nordicstats.data import (
    boundary_names,
    check_consistent_length,
    check_exog,
    design_for_new_data,
    design_from_formula,
    encode_ordinal,
    weights_from_data,
)
from nordicstats.probability import cost_bayes_codes
from nordicstats.solvers.problem import predict_codes
from nordicstats.weighting import check_cost

__all__ = ["OrdinalModel", "OrdinalResults", "PREDICT_MISSING"]

#: What ``predict`` does with rows that have a missing covariate.
PREDICT_MISSING = ("propagate", "raise")


class OrdinalModel:
    """Data and names of an ordinal model; subclasses add the specification and ``fit``.

    Subclasses call :meth:`_set_data` first in ``__init__``.
    """

    def _set_data(self, endog, exog, order=None):
        """Code the response, check the covariates, and reset the formula fields."""
        self.response = encode_ordinal(endog, order=order)
        self.exog, self.exog_names = check_exog(exog)
        check_consistent_length(self.response.codes.size, self.exog.shape[0])
        self.design_info = None
        self.formula = None
        self.n_dropped = 0

    @classmethod
    def from_formula(cls, formula, data, subset=None, missing="drop", weights=None, **kwargs):
        """Create a model from a formula ``"response ~ terms"`` and a DataFrame.

        The response must be a column name (ideally an ordered categorical);
        the right-hand side is expanded by patsy (dummies for categorical
        terms, interactions, transforms).  The intercept column is dropped
        because every model has its own intercepts or thresholds.

        Parameters
        ----------
        formula : str
        data : pandas.DataFrame
        subset : array-like of bool or index, optional
            Rows to use.
        missing : {"drop", "raise"}, default="drop"
            Rows with a missing response, covariate or weight are dropped (and
            counted in the summary) or raise.
        weights : str or array-like, optional
            Case weights for models that take them (:class:`~nordicstats.NORDIC`):
            a column name of ``data`` or one weight per row of ``data``; ``subset``
            and the missing-value rule apply to them as to the other columns.
        **kwargs
            Passed to the model's constructor.
        """
        n_missing_weight = 0
        if weights is not None:
            data, weights, n_missing_weight = weights_from_data(data, weights, subset, missing)
            subset = None
        endog, exog, design_info, n_dropped = design_from_formula(formula, data, subset,
                                                                  missing)
        if weights is not None:
            kwargs["weights"] = weights.loc[exog.index].to_numpy()
        model = cls(endog, exog, **kwargs)
        model.design_info = design_info
        model.formula = formula
        model.n_dropped = n_dropped + n_missing_weight
        return model

    # --- names -------------------------------------------------------------------------------
    @property
    def levels(self):
        """The K ordered levels of the response, lowest first."""
        return self.response.levels

    @property
    def n_levels(self):
        """K."""
        return self.response.n_levels

    @property
    def boundary_names(self):
        """``["a|b", ...]``: the K-1 boundaries between adjacent levels."""
        return boundary_names(self.levels)

    @property
    def endog_names(self):
        """Name of the response."""
        return self.response.name

    @property
    def nobs(self):
        """Number of observations used."""
        return int(self.exog.shape[0])

    # --- new data ----------------------------------------------------------------------------
    def exog_for(self, X):
        """Covariates of new data in the training layout (formula models apply the design).

        Returns an (m, d) float array; rows with a missing covariate are NaN rows.

        Raises
        ------
        ValueError
            Wrong number of columns, missing columns, non-numeric or infinite values.
        """
        if self.design_info is not None and isinstance(X, pd.DataFrame):
            X = design_for_new_data(self.design_info, X)
        elif isinstance(X, pd.DataFrame) and set(self.exog_names) <= set(map(str, X.columns)):
            X = X.rename(columns=str)[self.exog_names]
        values, _ = check_exog(X, name="X", allow_missing=True)
        if values.shape[1] != self.exog.shape[1]:
            raise ValueError(
                f"X has {values.shape[1]} columns but the model was fitted with "
                f"{self.exog.shape[1]} ({self.exog_names})."
            )
        return values

    def check_new_exog(self, X):
        """Covariates for prediction: ``None`` means the training data."""
        return self.exog if X is None else self.exog_for(X)


class OrdinalResults:
    """Prediction and names shared by every ordinal results class.

    Subclasses set ``self.model`` and implement :meth:`_decision`; they may override
    :meth:`_codes` (the class rule) and add prediction kinds in :meth:`_predictions`.
    """

    # --- names -------------------------------------------------------------------------------
    @property
    def levels(self):
        """The K ordered levels of the response."""
        return self.model.levels

    @property
    def boundary_names(self):
        """``["a|b", ...]`` names of the K-1 boundaries."""
        return self.model.boundary_names

    @property
    def nobs(self):
        """Number of observations used in the fit."""
        return self.model.nobs

    # --- what subclasses provide -------------------------------------------------------------
    def _decision(self, values):  # pragma: no cover - abstract
        """Decision values f_k at the rows of a finite (m, d) array, ndarray (m, K-1)."""
        raise NotImplementedError

    def _codes(self, values):
        """Predicted level codes 0..K-1: ``#{k : f_k(x) >= 0}`` (paper, Section 2.2)."""
        return predict_codes(self._decision(values))

    def _require_probabilities(self):
        """Raise when the fit has no class probabilities (``which="proba"``, ``cost=``)."""
        if "proba" not in self._predictions():
            raise ValueError(f"{type(self).__name__} gives no class probabilities, so "
                             "which='proba' and cost= are not available; the ordered logit "
                             "and NORDIC(...).fit(probability=True) give them.")

    def _predictions(self):
        """``which`` -> (function of a finite (m, d) array, column labels or None)."""
        return {"class": (self._codes, None),
                "decision": (self._decision, list(self.boundary_names))}

    # --- the shared prediction path ----------------------------------------------------------
    def _new_rows(self, X, missing):
        """(values, rows without a missing covariate, index) of new data (None: training)."""
        if missing not in PREDICT_MISSING:
            raise ValueError(f"The 'missing' parameter of predict must be one of "
                             f"{list(PREDICT_MISSING)}. Got {missing!r} instead.")
        values = self.model.check_new_exog(X)
        ok = ~np.isnan(values).any(axis=1)
        index = X.index if isinstance(X, (pd.DataFrame, pd.Series)) else None
        if missing == "raise" and not ok.all():
            bad = np.flatnonzero(~ok)
            shown = (index[bad] if index is not None else bad)[:5].tolist()
            raise ValueError(
                f"X has a missing covariate in {bad.size} row(s) (first {shown}); with "
                "missing='propagate' (the default) those rows get a missing prediction.")
        return values, ok, index

    def decision_function(self, X=None, missing="propagate"):
        """Decision values f_k(x), ndarray (m, K-1); positive means above boundary k.

        Parameters
        ----------
        X : array-like or DataFrame, optional
            New covariates (raw data for formula models); default the training data.
        missing : {"propagate", "raise"}, default="propagate"
            Rows with a missing covariate get NaN, or raise.
        """
        values, ok, _ = self._new_rows(X, missing)
        return _on_rows(self._decision, values, ok, len(self.boundary_names), np.nan)

    def predict(self, X=None, which="class", missing="propagate", cost=None):
        """Predicted levels, decision values, class probabilities (or a model's other predictions).

        Parameters
        ----------
        X : array-like or DataFrame, optional
            New covariates (raw data for formula models); default the training data.
        which : str, default="class"
            ``"class"``: the user's labels (a categorical Series indexed like a
            DataFrame ``X``, else a ``pandas.Categorical``); ``"decision"``: a
            DataFrame of f_k(x) with one column per boundary; ``"proba"``: a DataFrame
            of P(Y = level | x) with one column per level (models with probabilities:
            the ordered logit, which also accepts ``"prob"``, and NORDIC fitted with
            ``probability=True``); ``"score"`` for the SVR.
        missing : {"propagate", "raise"}, default="propagate"
            Rows with a missing covariate get a missing prediction, or raise.
        cost : array-like of shape (K, K) or pandas.DataFrame, optional
            With ``which="class"``: the cost-weighted Bayes rule on the estimated class
            probabilities, argmin_j sum_l p_l(x) cost[l, j] (``cost[true, predicted]``,
            zero diagonal, rows nondecreasing away from it; a DataFrame labelled by the
            levels); the lowest level on ties.

        Returns
        -------
        pandas.Categorical, pandas.Series or pandas.DataFrame
        """
        kinds = self._predictions()
        if which not in kinds:
            raise ValueError(f"The 'which' parameter of predict must be one of "
                             f"{list(kinds)}. Got {which!r} instead.")
        func, columns = kinds[which]
        if which == "proba":
            self._require_probabilities()
        if cost is not None:
            func = self._cost_rule(which, cost)
        values, ok, index = self._new_rows(X, missing)
        if which == "class":
            labels = self.model.response.labels(_on_rows(func, values, ok, None, -1))
            return labels if index is None else pd.Series(labels, index=index,
                                                          name=self.model.endog_names)
        out = _on_rows(func, values, ok, None if columns is None else len(columns), np.nan)
        if columns is None:
            return pd.Series(out, index=index, name=which)
        return pd.DataFrame(out, columns=columns, index=index)

    def _cost_rule(self, which, cost):
        """Level codes of least expected cost under the estimated class probabilities."""
        if which != "class":
            raise ValueError(f"cost= applies to which='class' (the decision of least expected "
                             f"cost); got which={which!r}. Drop cost= for other predictions.")
        self._require_probabilities()
        matrix = check_cost(cost, self.levels, owner="predict")
        proba = self._predictions()["proba"][0]
        return lambda values: cost_bayes_codes(proba(values), matrix)


def _on_rows(func, values, ok, width, fill):
    """func on the complete rows of values; the other rows get ``fill``."""
    if ok.all():
        return np.asarray(func(values))
    shape = (values.shape[0],) if width is None else (values.shape[0], width)
    out = np.full(shape, fill, dtype=float if fill is np.nan else int)
    if ok.any():
        out[ok] = np.asarray(func(values[ok]))
    return out
