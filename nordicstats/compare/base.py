"""Shared model/results plumbing for the competitor methods.

Every competitor follows the interface of :class:`nordicstats.NORDIC`:
``Model(endog, exog, ...)`` stores the data and the specification, ``fit()``
returns a results object with ``predict(X)``, ``decision_function(X)``,
``summary()``, ``summary_frame()`` and ``nobs``, all from the shared bases in
:mod:`nordicstats.ordinal` (one prediction path, one return type per ``which``).

Decision values follow the NORDIC convention: an ``(n, K-1)`` array whose
column ``k`` is positive when the observation is placed above boundary ``k``,
and the class is ``#{k : f_k(x) >= 0}`` (:func:`nordicstats.class_rule.predict_codes`).
"""

from __future__ import annotations

import pandas as pd

from nordicstats._summary import make_summary
from nordicstats._validation import check_positive
from nordicstats.kernels import make_kernel
from nordicstats.ordinal import OrdinalModel, OrdinalResults
from nordicstats.weighting import check_case_weights

__all__ = ["CompetitorModel", "CompetitorResults", "KernelSpec", "check_positive"]


class CompetitorModel(OrdinalModel):
    """Data and ordinal coding common to all competitors (see :class:`OrdinalModel`).

    Parameters
    ----------
    endog : array-like of shape (n,)
        Ordinal response (ordered categorical, or labels with ``order``).
    exog : array-like of shape (n, d)
        Numeric covariates, without a constant column.
    order : sequence, optional
        Levels from lowest to highest (see :func:`nordicstats.data.encode_ordinal`).
    """

    def __init__(self, endog, exog, order=None):
        self._set_data(endog, exog, order)
        self.weights = None

    def _set_case_weights(self, weights):
        """Check case weights (frequencies) of the rows; ``None`` keeps the unweighted fit."""
        self.weights = None if weights is None else check_case_weights(
            weights, self.response.codes.size, self.response.codes, list(self.levels),
            owner=type(self).__name__)


class KernelSpec:
    """Kernel and cost options shared by the kernel competitors (SVR, DR, CK).

    Validates ``C`` and builds a :class:`nordicstats.kernels.Kernel`; ``gamma=None``
    applies the paper's median pairwise-distance rule to the training covariates
    (as :class:`nordicstats.NORDIC` does; case ``weights`` count as frequencies).
    """

    def __init__(self, owner, X, kernel="rbf", C=1.0, gamma=None, degree=3, coef0=1.0,
                 weights=None):
        self.C = check_positive(C, "C", owner)
        self.kernel = make_kernel(kernel, X=X, gamma=gamma, degree=degree, coef0=coef0,
                                  owner=owner, weights=weights)

    def sklearn_kwargs(self):
        """Keyword arguments for scikit-learn's libsvm estimators (same kernel formulas)."""
        k = self.kernel
        if k.name == "callable":
            return {"kernel": k}
        out = {"kernel": k.name}
        if k.name in ("rbf", "poly"):
            out["gamma"] = k.gamma
        if k.name == "poly":
            out.update(degree=k.degree, coef0=k.coef0)
        return out


class CompetitorResults(OrdinalResults):
    """Base results of the competitors: prediction from the ``(n, K-1)`` decision values.

    Subclasses implement ``_decision(values)`` and ``_summary_parts``.
    """

    method_name = "competitor"

    def __init__(self, model, fit_time):
        self.model = model
        self.fit_time = float(fit_time)

    def predict_codes(self, X=None):
        """Predicted level codes 0..K-1 (``#{k : f_k(x) >= 0}`` unless the model says otherwise)."""
        return self._codes(self.model.check_new_exog(X))

    def cov_params(self):
        """Covariance of the estimates; methods without one raise ``AttributeError`` saying so."""
        raise AttributeError(f"{self.method_name} has no covariance of its estimates, so there "
                             "are no standard errors, intervals or tests for it.")

    def conf_int(self, alpha=0.05):
        """Wald intervals; methods without a covariance raise ``AttributeError``."""
        return self.cov_params()

    def summary_frame(self, alpha=0.05):
        """The estimates of the summary's tables, one row per (table, term), column ``coef``."""
        tables = self._summary_parts()[2]
        if not tables:
            return pd.DataFrame({"coef": []}, index=pd.MultiIndex.from_tuples(
                [], names=["block", "term"]))
        return pd.concat({str(t.columns[0]): t.iloc[:, 0].rename("coef").to_frame()
                          for t in tables}, names=["block", "term"])

    def summary(self, title=None):
        """A statsmodels ``Summary`` with the fit description and estimates."""
        left = [("Dep. Variable:", self.model.response.name), ("Method:", self.method_name),
                ("Levels:", " < ".join(map(str, self.levels))), ("No. Observations:", self.nobs)]
        left_extra, right, tables, notes = self._summary_parts()
        return make_summary(title or f"{self.method_name} Results", left + left_extra,
                            right + [("Fit time (s):", f"{self.fit_time:.3g}")], tables, notes)

    def _summary_parts(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self):
        return (f"<{type(self).__name__}: {self.method_name}, n={self.nobs}, "
                f"K={len(self.levels)}>")
