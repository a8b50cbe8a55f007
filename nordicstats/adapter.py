"""The one scikit-learn adapter of an ordinal model: ``fit(X, y)``, ``predict(X)``.

:class:`OrdinalEstimator` turns any ordinal model of the package (``Model(endog, exog,
**options).fit()`` returning :class:`~nordicstats.ordinal.OrdinalResults`) into a
scikit-learn classifier.  A subclass says which model it builds and with which options
(``_model_class``, ``_model_options``, ``_fit_options``); the adapter owns the rest,
once:

* ``build(X, y, sample_weight)`` -- the unfitted model (case weights only for models
  that take them);
* ``fit`` -- data checks, the class order, case weights, the fit, ``results_`` and
  ``classes_``;
* ``predict`` (the results' class rule, :mod:`nordicstats.class_rule`),
  ``boundary_decision`` (f_k(x), shape (m, K-1)) and ``predict_proba`` (fits with
  class probabilities);
* the not-fitted error.

Two data policies exist, chosen by a subclass through ``check_input``:

* ``True`` (:class:`nordicstats.sklearn.NORDICClassifier`): X and y go through
  scikit-learn's ``validate_data`` and the model gets arrays -- the contract that
  ``parametrize_with_checks`` tests;
* ``False`` (:class:`nordicstats.compare.OrdinalClassifier`): the model gets the caller's
  objects as they are (a DataFrame keeps its column names, an ordered categorical y its
  order), and the model checks them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

__all__ = ["OrdinalEstimator", "EstimatorNotFittedError"]


class EstimatorNotFittedError(NotFittedError, RuntimeError):
    """``predict`` before ``fit``: scikit-learn's ``NotFittedError``, also a ``RuntimeError``.

    (``make_classifier``'s estimators raised ``RuntimeError`` before they shared this
    adapter; both ``except`` clauses keep working.)
    """


def _class_order(y, order):
    """The class order: ``order``, else an ordered categorical y's categories, else None."""
    if order is not None:
        return list(order)
    dtype = getattr(y, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype) and dtype.ordered:
        return list(dtype.categories)
    return None


class OrdinalEstimator(ClassifierMixin, BaseEstimator):
    """Base of the scikit-learn estimators of ordinal models (see the module docstring).

    Subclasses store their parameters in ``__init__`` and implement ``_model_class()``
    and ``_model_options()``; ``_fit_options()`` (default none) are passed to
    ``model.fit``.

    Attributes
    ----------
    results_ : OrdinalResults
        The underlying fit (after :meth:`fit`).
    classes_ : ndarray
        Labels in their ordinal order, lowest first.
    """

    #: Check X and y with scikit-learn's ``validate_data`` and fit on arrays (True), or hand
    #: the model the caller's objects (False).
    check_input = True

    # --- what subclasses provide -------------------------------------------------------------
    def _model_class(self):  # pragma: no cover - abstract
        """The model class built by :meth:`build`."""
        raise NotImplementedError

    def _model_options(self):  # pragma: no cover - abstract
        """Keyword options of the model class (a dict)."""
        raise NotImplementedError

    def _fit_options(self):
        """Keyword options of ``model.fit`` (a dict)."""
        return {}

    def _check_takes_case_weights(self):
        """Raise ``ValueError`` when the model class takes no case weights (``weights=``)."""

    # --- the adapter -------------------------------------------------------------------------
    def build(self, X, y, sample_weight=None, order=None):
        """The unfitted model for data (X, y), with case weights and a class order if given.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Case weights, for the models that take them.
        order : sequence, optional
            Class labels from lowest to highest (overrides an ``order`` option).

        Returns
        -------
        An unfitted model.
        """
        options = self._model_options()
        if sample_weight is not None:
            self._check_takes_case_weights()
            options["weights"] = sample_weight
        if order is not None:
            options["order"] = order
        return self._model_class()(y, X, **options)

    def fit(self, X, y, sample_weight=None):
        """Build the model on (X, y), fit it and keep its results.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels; their order comes from the ``order`` parameter, else an ordered
            ``pandas.Categorical`` y, else the sorted labels.
        sample_weight : array-like of shape (n_samples,), optional
            Nonnegative case weights: integer weights give the fit on repeated rows;
            rows of weight 0 are left out.

        Returns
        -------
        self
        """
        order = None  # unchecked data: the model reads the order off y itself
        if self.check_input:
            order = _class_order(y, getattr(self, "order", None))
            X, y, sample_weight = self._checked_training_data(X, y, sample_weight)
            if order is None:
                order = list(np.unique(y))
        self.results_ = self.build(X, y, sample_weight, order).fit(**self._fit_options())
        self.classes_ = np.asarray(self.results_.levels if order is None else order)
        return self

    def _checked_training_data(self, X, y, sample_weight):
        """scikit-learn's checks of (X, y, sample_weight); rows of weight 0 left out."""
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
            # rows of weight 0 contribute nothing; leaving them out also lets a label that
            # only they carry drop out of classes_ (NORDIC refuses levels of weight 0)
            keep = sample_weight > 0
            X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
        return X, y, sample_weight

    def _fitted_results(self, X):
        """(results, X ready for them); raises when not fitted."""
        if not hasattr(self, "results_"):
            raise EstimatorNotFittedError(f"This {self._display_name()} is not fitted yet; "
                                          "call fit(X, y) first.")
        if self.check_input:
            X = validate_data(self, X, reset=False)
        return self.results_, X

    def boundary_decision(self, X):
        """Decision values f_k(x), shape (n_samples, K-1): positive = above boundary k.

        (Named differently from scikit-learn's ``decision_function``, whose
        multiclass contract is one column per class.)
        """
        results, X = self._fitted_results(X)
        return results.decision_function(X)

    def predict(self, X):
        """Predicted labels, an ndarray of ``classes_``: the fit's class rule at each row."""
        results, X = self._fitted_results(X)
        return self.classes_[pd.Categorical(results.predict(X)).codes]

    def _has_probability(self):
        if not getattr(self, "probability", False):
            raise AttributeError("predict_proba is available when probability=True.")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, K), columns in ``classes_`` order.

        From the fit's class probabilities (for NORDIC the calibration map fitted on
        held-out decision values, :mod:`nordicstats.probability`): rows are nonnegative
        and sum to one, and the cumulative probabilities P(Y > k) are nonincreasing in k.
        """
        results, X = self._fitted_results(X)
        return results.predict(X, which="proba").to_numpy()

    def _display_name(self):
        return type(self).__name__
