"""A scikit-learn estimator around :class:`nordicstats.NORDIC`.

``NORDICClassifier`` stores its parameters in ``__init__`` and does all work in
``fit``, so it can be cloned, grid-searched and put in pipelines.  The class
order is taken from ``order=``, else from an ordered ``pandas.Categorical`` y,
else the sorted labels (``classes_``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from nordicstats.model import NORDIC
from nordicstats.solvers.problem import predict_codes

__all__ = ["NORDICClassifier"]


class NORDICClassifier(ClassifierMixin, BaseEstimator):
    """Noncrossing ordinal classifier with the scikit-learn API.

    Parameters
    ----------
    method : {"nordic1", "nordic0", "nordic2", "bsvm"}, default="nordic1"
    kernel : {"rbf", "linear", "poly"} or callable, default="rbf"
    C : float, default=1.0
    gamma : float, optional
        Default: the paper's median pairwise-distance rule (rbf), 1/d (poly).
    degree : int, default=3
    coef0 : float, default=1.0
    order : sequence, optional
        Class labels from lowest to highest.
    noncrossing : {"separate", "joint"}, optional
    penalty : {"l1", "l2"}, optional
    solver : str, default="auto"
    solver_options : dict, optional
    cost : array-like of shape (K, K) or pandas.DataFrame, optional
        Train with this cost matrix (cost[true, predicted]; see :class:`~nordicstats.NORDIC`):
        boundary k of a level-l case gets the hinge weight ``|cost[l, k+1] - cost[l, k]|``.
    probability : bool, default=False
        Fit the cross-fitted calibration map too (``NORDIC.fit(probability=True)``), which
        enables :meth:`predict_proba`; costs ``n_folds`` more fits.
    probability_kwds : dict, optional
        ``method``, ``n_folds``, ``random_state`` of the calibration
        (:func:`nordicstats.probability.check_probability_kwds`).

    Attributes
    ----------
    classes_ : ndarray
        Labels in their ordinal order (lowest first).
    results_ : NORDICResults
        The underlying fit (summary, solver diagnostics).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> clf = NORDICClassifier(kernel="linear", C=10.0).fit(X, ["a", "a", "b", "b", "c", "c"])
    >>> clf.predict([[0.2], [4.8]]).tolist()
    ['a', 'c']
    """

    def __init__(self, method="nordic1", kernel="rbf", C=1.0, gamma=None, degree=3, coef0=1.0,
                 order=None, noncrossing=None, penalty=None, solver="auto", solver_options=None,
                 cost=None, probability=False, probability_kwds=None):
        self.method = method
        self.kernel = kernel
        self.C = C
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.order = order
        self.noncrossing = noncrossing
        self.penalty = penalty
        self.solver = solver
        self.solver_options = solver_options
        self.cost = cost
        self.probability = probability
        self.probability_kwds = probability_kwds

    def fit(self, X, y, sample_weight=None):
        """Fit the K-1 noncrossing boundaries.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Nonnegative case weights (NORDIC's ``weights``): integer weights give
            the fit on repeated rows, weight 0 drops a row's loss.

        Returns
        -------
        self
        """
        order = self.order
        if order is None and isinstance(getattr(y, "dtype", None), pd.CategoricalDtype) \
                and y.dtype.ordered:
            order = list(y.dtype.categories)
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
            # rows of weight 0 contribute nothing; leaving them out also lets a label that
            # only they carry drop out of classes_ (NORDIC refuses levels of weight 0)
            keep = sample_weight > 0
            X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
        if order is None:
            order = list(np.unique(y))
        model = NORDIC(y, X, method=self.method, kernel=self.kernel, C=self.C, gamma=self.gamma,
                       degree=self.degree, coef0=self.coef0, order=order,
                       noncrossing=self.noncrossing, penalty=self.penalty, solver=self.solver,
                       solver_options=self.solver_options, weights=sample_weight,
                       cost=self.cost)
        self.results_ = model.fit(probability=self.probability,
                                  probability_kwds=self.probability_kwds)
        self.classes_ = np.asarray(order)
        return self

    def boundary_decision(self, X):
        """Decision values f_k(x), shape (n_samples, K-1): positive = above boundary k.

        (Named differently from scikit-learn's ``decision_function``, whose
        multiclass contract is one column per class.)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.results_.decision_function(X)

    def predict(self, X):
        """Predicted labels: the number of boundaries with f_k(x) >= 0 indexes ``classes_``."""
        check_is_fitted(self)
        return self.classes_[predict_codes(self.boundary_decision(X))]

    def _has_probability(self):
        if not self.probability:
            raise AttributeError("predict_proba is available when probability=True.")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, K), columns in ``classes_`` order.

        From the calibration map fitted on held-out decision values
        (:mod:`nordicstats.probability`): rows are nonnegative and sum to one, and the
        cumulative probabilities P(Y > k) are nonincreasing in k at every x.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.results_.predict(X, which="proba").to_numpy()
