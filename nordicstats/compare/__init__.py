"""Competitors of NORDIC used in the paper (Sections 6 and 7), with NORDIC's interface.

========  =========================================  ==========================================
name      class                                      method
========  =========================================  ==========================================
"svr"     :class:`OrdinalSVR`                        epsilon-SVR on 1..K, cut-offs k + 1/2
"ologit"  :class:`OrderedLogit`                      proportional odds (``MASS::polr``)
"dr"      :class:`DataReplication`                   Cardoso & Pinto da Costa (2007)
"ck"      :class:`ChuKeerthi`                        Chu & Keerthi (2005), SVOR-EXC / SVOR-IMC
========  =========================================  ==========================================

Each model is built as ``Model(endog, exog, **options)`` and fitted with
``.fit()``, like :class:`nordicstats.NORDIC`.  :func:`make_classifier` wraps any
of them, and NORDIC's own methods (``"bsvm"``, ``"nordic0"``, ``"nordic1"``,
``"nordic2"``), as a scikit-learn style estimator with ``fit(X, y)`` /
``predict(X)`` for tuning and simulation loops.
"""

from __future__ import annotations

import inspect

import pandas as pd

from nordicstats.adapter import OrdinalEstimator
from nordicstats.compare.base import CompetitorModel, CompetitorResults
from nordicstats.compare.ck import ChuKeerthi, ChuKeerthiResults
from nordicstats.compare.dr import DataReplication, DataReplicationResults
from nordicstats.compare.ordered_logit import OrderedLogit, OrderedLogitResults
from nordicstats.compare.svr import OrdinalSVR, OrdinalSVRResults
from nordicstats.model import NORDIC
from nordicstats.solvers.problem import METHODS

__all__ = [
    "COMPETITORS",
    "NORDIC_METHODS",
    "OrdinalClassifier",
    "make_classifier",
    "classifier_names",
    "CompetitorModel",
    "CompetitorResults",
    "OrdinalSVR",
    "OrdinalSVRResults",
    "OrderedLogit",
    "OrderedLogitResults",
    "DataReplication",
    "DataReplicationResults",
    "ChuKeerthi",
    "ChuKeerthiResults",
]

#: Competitor models by short name.
COMPETITORS = {"svr": OrdinalSVR, "ologit": OrderedLogit, "dr": DataReplication,
               "ck": ChuKeerthi}

#: Names that map to :class:`nordicstats.NORDIC` with ``method=name``.
NORDIC_METHODS = METHODS


def classifier_names():
    """All names accepted by :func:`make_classifier`."""
    return list(COMPETITORS) + list(NORDIC_METHODS)


def _model_class(name):
    if name in COMPETITORS:
        return COMPETITORS[name]
    if name in NORDIC_METHODS:
        return NORDIC
    raise ValueError(f"Unknown classifier {name!r}; choose one of {classifier_names()}.")


def _signature_defaults(cls, name):
    # case weights are data (fit's sample_weight), not an option
    skip = {"self", "endog", "exog", "weights"} | ({"method"} if name in NORDIC_METHODS else set())
    params = inspect.signature(cls.__init__).parameters
    return {key: p.default for key, p in params.items()
            if key not in skip and p.kind is p.POSITIONAL_OR_KEYWORD}


class OrdinalClassifier(OrdinalEstimator):
    """Estimator wrapper: ``fit(X, y)`` builds and fits the model, ``predict(X)`` predicts.

    The package's scikit-learn adapter (:class:`nordicstats.adapter.OrdinalEstimator`)
    for any competitor or NORDIC method, whose parameters are ``name`` and the options
    of the model class (so ``get_params``, ``set_params`` and ``clone`` work).  The model
    gets the caller's data as they are (``check_input = False``): a DataFrame keeps its
    column names, an ordered categorical y its order.

    Parameters
    ----------
    name : str
        One of :func:`classifier_names`.
    **params
        Options of the model class (validated against its signature now, and
        by the model itself at ``fit``).

    Attributes
    ----------
    results_ : results object
        The fitted model's results (after :meth:`fit`); a NORDIC method is fitted for
        prediction, with ``cov_type="none"`` (no standard errors).
    classes_ : ndarray
        The fitted model's levels, lowest first.
    """

    check_input = False

    def __init__(self, name, **params):
        defaults = _signature_defaults(_model_class(name), name)
        unknown = sorted(set(params) - set(defaults))
        if unknown:
            raise ValueError(f"Unknown parameter(s) {unknown} for classifier {name!r}; valid "
                             f"parameters are {sorted(defaults)}.")
        self.name = name
        self._option_names = tuple(defaults)
        for key, value in {**defaults, **params}.items():
            setattr(self, key, value)

    @property
    def model_class(self):
        """The model class this wrapper builds."""
        return _model_class(self.name)

    def get_params(self, deep=True):
        """All model options (defaults included) as a dict; ``name`` is fixed.

        (Overrides BaseEstimator's, which reads the parameters off the ``__init__``
        signature: here they are the model class's.  ``set_params`` is BaseEstimator's.)
        """
        return {key: getattr(self, key) for key in self._option_names}

    def __sklearn_clone__(self):
        """``clone``: a new unfitted wrapper with the same name and options.

        (BaseEstimator's clone would call ``type(self)(**get_params())``, which lacks
        the fixed ``name``.)
        """
        return type(self)(self.name, **self.get_params())

    def _model_class(self):
        return self.model_class

    def _model_options(self):
        return {**self.get_params(), **({"method": self.name}
                                        if self.name in NORDIC_METHODS else {})}

    def _fit_options(self):
        # predictions only: a NORDIC fit computes no covariance of its coefficients
        return {"cov_type": "none"} if self.name in NORDIC_METHODS else {}

    def _check_takes_case_weights(self):
        if self.name not in NORDIC_METHODS:
            raise ValueError(f"classifier {self.name!r} does not take case weights; "
                             f"sample_weight works with {list(NORDIC_METHODS)}.")

    def _display_name(self):
        return f"classifier {self.name!r}"

    def predict(self, X):
        """Predicted classes, a ``pandas.Categorical`` of the training labels."""
        results, X = self._fitted_results(X)
        return pd.Categorical(results.predict(X))

    def decision_function(self, X):
        """Decision values, ndarray (m, K-1) (:meth:`boundary_decision`)."""
        return self.boundary_decision(X)

    def __repr__(self, N_CHAR_MAX=700):
        shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"OrdinalClassifier({self.name!r}, {shown})"


def make_classifier(name, **params):
    """A fit/predict estimator for a competitor or a NORDIC method.

    Parameters
    ----------
    name : {"svr", "ologit", "dr", "ck", "bsvm", "nordic0", "nordic1", "nordic2"}
    **params
        Options of the model (e.g. ``C``, ``gamma``, ``kernel``).

    Returns
    -------
    OrdinalClassifier

    Examples
    --------
    >>> from nordicstats.datasets import make_nonlinear
    >>> X, y = make_nonlinear(80, d=3, random_state=0)
    >>> clf = make_classifier("dr", C=1.0, gamma=0.5).fit(X, y)
    >>> len(clf.predict(X.iloc[:5]))
    5
    """
    if not isinstance(name, str):
        raise TypeError(f"classifier name must be a str, one of {classifier_names()}; "
                        f"got {type(name).__name__}.")
    return OrdinalClassifier(name, **params)
