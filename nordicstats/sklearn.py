"""A scikit-learn estimator around :class:`nordicstats.NORDIC`.

``NORDICClassifier`` stores its parameters in ``__init__`` and does all work in
``fit``, so it can be cloned, grid-searched and put in pipelines.  The class
order is taken from ``order=``, else from an ordered ``pandas.Categorical`` y,
else the sorted labels (``classes_``).  Fitting, prediction and the data checks
are those of the package's one adapter, :class:`nordicstats.adapter.OrdinalEstimator`.
"""

from __future__ import annotations

from nordicstats.adapter import OrdinalEstimator
from nordicstats.model import NORDIC

__all__ = ["NORDICClassifier"]

#: The parameters of NORDICClassifier that are NORDIC's options (the others go to fit).
_MODEL_OPTIONS = ("method", "kernel", "C", "gamma", "degree", "coef0", "noncrossing",
                  "penalty", "solver", "solver_options", "cost")


class NORDICClassifier(OrdinalEstimator):
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
        The underlying fit (summary, solver diagnostics), fitted for prediction with
        ``cov_type="none"``: for standard errors call
        ``results_.get_robustcov_results("auto")`` (no refit) or fit :class:`NORDIC`.
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

    def _model_class(self):
        return NORDIC

    def _model_options(self):
        return {name: getattr(self, name) for name in _MODEL_OPTIONS}

    def _fit_options(self):
        # predictions only: no covariance of the coefficients (results_.bse is not read)
        return {"probability": self.probability, "probability_kwds": self.probability_kwds,
                "cov_type": "none"}
