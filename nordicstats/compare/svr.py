"""Support vector regression on the 1..K coding, cut at 1.5, 2.5, ... (paper, Section 7).

The paper's SVR competitor (Smola and Schoelkopf, 2004) regresses the level
number ``1..K`` on the covariates with an epsilon-insensitive loss and
classifies a prediction ``g(x)`` by the cut-offs ``k + 1/2``:

    class(x) = 1 + #{k = 1..K-1 : g(x) >= k + 1/2}.

The fit is libsvm's epsilon-SVR (scikit-learn ``SVR``), the same code as R's
``e1071::svm(type = "eps-regression")``, with the same kernel formulas
(rbf ``exp(-gamma ||x - x'||^2)``).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from nordicstats.compare.base import CompetitorModel, CompetitorResults, KernelSpec, check_positive

__all__ = ["OrdinalSVR", "OrdinalSVRResults"]


class OrdinalSVR(CompetitorModel):
    """Epsilon-SVR on the level numbers with cut-offs at 1.5, 2.5, ... (paper, Section 7).

    Parameters
    ----------
    endog : array-like of shape (n,)
        Ordinal response.
    exog : array-like of shape (n, d)
        Covariates.
    kernel : {"rbf", "linear", "poly"} or callable, default="rbf"
    C : float, default=1.0
        Cost of the epsilon-insensitive loss.
    gamma : float, optional
        Kernel scale.  Default: the paper's median pairwise-distance rule on the
        (scaled, if ``scale=True``) training covariates.  Note that e1071's
        default is ``1 / d``; pass it explicitly to reproduce e1071.
    degree : int, default=3
    coef0 : float, default=1.0
        Polynomial offset (e1071's default is 0).
    epsilon : float, default=0.1
        Width of the insensitive zone, e1071's default.
    scale : bool, default=False
        ``False`` fits the data as given.  ``True`` does what ``e1071::svm``
        does by default: standardise every non-constant covariate with the
        training mean and standard deviation (n-1 denominator) and also the
        response (so ``epsilon`` acts on the standardised level numbers);
        predictions are transformed back.  One difference: e1071 switches
        scaling off altogether (with a warning) when any covariate is
        constant; here constant columns are left as they are and the others
        are still standardised.
    tol : float, default=1e-3
        libsvm stopping tolerance (e1071's ``tolerance``).
    order : sequence, optional
        Levels from lowest to highest.
    weights : array-like of shape (n,), optional
        Nonnegative case weights: row i's epsilon-insensitive loss is multiplied by
        w_i (libsvm's per-row cost ``C w_i``), so integer weights give the fit on the
        data with row i repeated w_i times; ``scale=True`` and the default ``gamma``
        count them as frequencies too.

    Examples
    --------
    >>> from nordicstats.datasets import make_nonlinear
    >>> X, y = make_nonlinear(60, d=3, random_state=0)
    >>> res = OrdinalSVR(y, X, gamma=0.5).fit()
    >>> res.predict(X.iloc[:3]).cat.categories.tolist()
    [1, 2, 3]
    """

    def __init__(self, endog, exog, kernel="rbf", C=1.0, gamma=None, degree=3, coef0=1.0,
                 epsilon=0.1, scale=False, tol=1e-3, order=None, weights=None):
        super().__init__(endog, exog, order=order)
        self._set_case_weights(weights)
        if not isinstance(scale, (bool, np.bool_)):
            raise ValueError(f"The 'scale' parameter of OrdinalSVR must be True or False. "
                             f"Got {scale!r} instead.")
        self.scale = bool(scale)
        self.x_center, self.x_scale = _column_scaling(self.exog, self.scale, self.weights)
        y = self.response.codes + 1.0
        self.y_center, self.y_scale = (_column_scaling(y[:, None], True, self.weights)
                                       if self.scale else (0.0, 1.0))
        self.y_center, self.y_scale = float(np.squeeze(self.y_center)), float(np.squeeze(
            self.y_scale))
        self.spec = KernelSpec("OrdinalSVR", self.scaled_exog(self.exog), kernel, C, gamma,
                               degree, coef0, weights=self.weights)
        self.epsilon = float(epsilon) if epsilon == 0 else check_positive(epsilon, "epsilon",
                                                                          "OrdinalSVR")
        self.tol = check_positive(tol, "tol", "OrdinalSVR")

    def scaled_exog(self, X):
        """Covariates on the fitting scale, ``(X - center) / scale``."""
        return (X - self.x_center) / self.x_scale

    def fit(self):
        """Fit the epsilon-SVR with libsvm; returns :class:`OrdinalSVRResults`."""
        from sklearn.svm import SVR

        start = time.perf_counter()
        target = (self.response.codes + 1.0 - self.y_center) / self.y_scale
        svr = SVR(C=self.spec.C, epsilon=self.epsilon, tol=self.tol, shrinking=True,
                  **self.spec.sklearn_kwargs())
        svr.fit(self.scaled_exog(self.exog), target, sample_weight=self.weights)
        return OrdinalSVRResults(self, svr, time.perf_counter() - start)


class OrdinalSVRResults(CompetitorResults):
    """Fitted :class:`OrdinalSVR`.

    Attributes
    ----------
    estimator : sklearn.svm.SVR
        The fitted libsvm model (on the scaled data if ``scale=True``).
    support : ndarray of int
        Indices of the support vectors.
    dual_coef : ndarray of shape (n,)
        ``alpha_i - alpha_i^*`` for every training point (0 off the support),
        on the fitting scale.
    intercept : float
        The constant of ``g`` on the fitting scale (libsvm's ``-rho``).
    """

    method_name = "SVR (cut-offs k + 1/2)"

    def __init__(self, model, estimator, fit_time):
        super().__init__(model, fit_time)
        self.estimator = estimator
        self.support = np.asarray(estimator.support_, dtype=int)
        coef = np.zeros(model.nobs)
        coef[self.support] = estimator.dual_coef_.ravel()
        self.dual_coef = coef
        self.intercept = float(estimator.intercept_[0])

    @property
    def cutoffs(self):
        """The cut-offs ``1.5, ..., K - 0.5`` as a Series indexed by boundary name."""
        K = len(self.levels)
        return pd.Series(np.arange(1, K) + 0.5, index=self.model.boundary_names)

    def predict_score(self, X=None):
        """Regression function ``g(x)`` on the 1..K scale, ndarray (m,)."""
        X = self.model.check_new_exog(X)
        raw = self.estimator.predict(self.model.scaled_exog(X))
        return raw * self.model.y_scale + self.model.y_center

    @property
    def fittedvalues(self):
        """``g(x_i)`` at the training points."""
        return self.predict_score()

    def _decision(self, values):
        """``f_k(x) = g(x) - (k + 1/2)``, ndarray (m, K-1); never crossing."""
        return self.predict_score(values)[:, None] - self.cutoffs.to_numpy()[None, :]

    def _predictions(self):
        """Classes, decision values, or the score ``g(x)`` (``which="score"``)."""
        return {**super()._predictions(), "score": (self.predict_score, None)}

    def _summary_parts(self):
        model = self.model
        left = [("Kernel:", model.spec.kernel.describe()), ("C:", model.spec.C),
                ("epsilon:", model.epsilon)]
        right = [("Scaled (e1071):", model.scale), ("Support vectors:", self.support.size),
                 ("Intercept:", f"{self.intercept:.4g}")]
        table = pd.DataFrame({"cut-off": self.cutoffs})
        notes = ["Classes: 1 + #{k : g(x) >= k + 1/2} with g fitted to the codes 1..K."]
        return left, right, [table], notes


def _column_scaling(X, scale, weights=None):
    """Training mean and SD per column (n-1 denominator, case weights as frequencies:
    n = sum w); constant columns are left unscaled (as e1071)."""
    if not scale:
        return np.zeros(X.shape[1]), np.ones(X.shape[1])
    if (X.shape[0] if weights is None else weights.sum()) < 2:
        raise ValueError("scale=True needs at least two observations.")
    if weights is None:
        center, sd = X.mean(axis=0), X.std(axis=0, ddof=1)
    else:
        center = weights @ X / weights.sum()
        sd = np.sqrt(weights @ (X - center) ** 2 / (weights.sum() - 1))
    constant = sd == 0
    center[constant] = 0.0
    sd[constant] = 1.0
    return center, sd
