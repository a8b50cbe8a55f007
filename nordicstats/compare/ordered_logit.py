"""Proportional-odds (ordered logit) model, the classical statistical competitor.

The model is ``MASS::polr``'s

    logit P(Y <= k | x) = zeta_k - x' beta,    k = 1..K-1,  zeta_1 < ... < zeta_{K-1},

so a positive ``beta_j`` moves observations towards higher levels.  The fit is
statsmodels' ``OrderedModel(distr="logit")``, which estimates ``zeta_1`` and
the log-increments ``log(zeta_k - zeta_{k-1})``; here the thresholds are
reported on their natural scale, named ``"a|b"`` like R, with standard errors
by the delta method: with ``theta`` the statsmodels parameters and
``J = d(beta, zeta) / d theta``, ``Cov(beta, zeta) = J Cov(theta) J'``, where
``d zeta_k / d theta_1 = 1`` and ``d zeta_k / d theta_j = exp(theta_j)`` for
``2 <= j <= k``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from scipy import special

from nordicstats.compare.base import CompetitorModel, CompetitorResults
from nordicstats.exceptions import ConvergenceWarning
from nordicstats.wald import WaldMixin

__all__ = ["OrderedLogit", "OrderedLogitResults"]


class OrderedLogit(CompetitorModel):
    """Ordered logit (proportional odds) model with polr's sign convention.

    Parameters
    ----------
    endog : array-like of shape (n,)
        Ordinal response.
    exog : array-like of shape (n, d)
        Covariates without a constant (the thresholds are the intercepts).
    order : sequence, optional
        Levels from lowest to highest.
    weights : array-like of shape (n,), optional
        Nonnegative case weights: the fit maximises ``sum_i w_i log P(Y = y_i | x_i)``,
        as ``MASS::polr(weights = )`` does, so integer weights give the fit on the data
        with row i repeated w_i times.

    Examples
    --------
    >>> from nordicstats.datasets import make_nonlinear
    >>> X, y = make_nonlinear(200, d=2, random_state=0)
    >>> res = OrderedLogit(y, X).fit()
    >>> list(res.params.index)
    ['x1', 'x2', '1|2', '2|3']
    """

    def __init__(self, endog, exog, order=None, weights=None):
        super().__init__(endog, exog, order=order)
        self._set_case_weights(weights)
        X = self.exog
        constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
        if constant.size:
            raise ValueError(
                f"exog column(s) {[self.exog_names[j] for j in constant]} are constant; the "
                "ordered logit thresholds already play the role of an intercept. Drop them.")

    def fit(self, method="bfgs", maxiter=2000, gtol=1e-8, **kwargs):
        """Maximum likelihood fit with statsmodels.

        Parameters
        ----------
        method : str, default="bfgs"
            Optimiser of statsmodels ``LikelihoodModel.fit``.
        maxiter : int, default=2000
        gtol : float, default=1e-8
            Gradient tolerance (for the gradient-based methods).
        **kwargs
            Passed to ``OrderedModel.fit``.

        Returns
        -------
        OrderedLogitResults
        """
        start = time.perf_counter()
        exog = pd.DataFrame(self.exog, columns=self.exog_names)
        endog = pd.Series(pd.Categorical(self.response.codes, categories=range(self.n_levels),
                                         ordered=True))
        sm_model = _ordered_model(endog, exog, self.weights)
        if method in ("bfgs", "cg"):
            # statsmodels minimises -loglike / (rows); with case weights that is
            # sum(w) / rows times the per-observation mean, so the tolerance scales alike
            # (the stopping rule of the fit to the repeated rows)
            scale = 1.0 if self.weights is None else self.weights.sum() / self.weights.size
            kwargs.setdefault("gtol", gtol * scale)
        sm_res = sm_model.fit(method=method, maxiter=maxiter, disp=False, **kwargs)
        if not sm_res.mle_retvals.get("converged", True):
            warnings.warn(f"OrderedModel ({method}) did not converge in {maxiter} iterations; "
                          "estimates may be inaccurate. Increase maxiter or try method='newton'.",
                          ConvergenceWarning, stacklevel=2)
        return OrderedLogitResults(self, sm_res, time.perf_counter() - start)


def _ordered_model(endog, exog, weights=None):
    """statsmodels' logit ``OrderedModel``; with case weights its log-likelihood terms are
    ``w_i log P(Y = y_i | x_i)`` (statsmodels differentiates ``loglike`` numerically, so the
    score and the observed information follow the weighted likelihood)."""
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    if weights is None:
        return OrderedModel(endog, exog, distr="logit")

    class WeightedOrderedModel(OrderedModel):
        def loglikeobs(self, params):
            return weights * super().loglikeobs(params)

    return WeightedOrderedModel(endog, exog, distr="logit")


def _natural_cov(sm_results, jac):
    """Delta-method covariance on the natural scale, NaN (with a warning) if not estimable.

    With small samples or (quasi-)separated classes the observed information can be
    singular; the point estimates and predictions are still usable.
    """
    try:
        raw_cov = np.asarray(sm_results.cov_params(), dtype=float)
    except ValueError as exc:  # statsmodels: "need covariance of parameters ..."
        warnings.warn(f"ordered logit: the information matrix is singular ({exc}); standard "
                      "errors are NaN, estimates and predictions are still reported.",
                      ConvergenceWarning, stacklevel=4)
        return np.full(jac.shape, np.nan)
    return jac @ raw_cov @ jac.T


class OrderedLogitResults(WaldMixin, CompetitorResults):
    """Fitted :class:`OrderedLogit`.

    Attributes
    ----------
    params : pandas.Series
        Coefficients ``beta`` then thresholds ``zeta`` (named ``"a|b"``).
    llf : float
        Maximised log-likelihood.
    sm_results : statsmodels OrderedResults
        The underlying statsmodels fit (raw parameterisation).
    """

    method_name = "Ordered logit (proportional odds)"

    def __init__(self, model, sm_results, fit_time):
        super().__init__(model, fit_time)
        self.sm_results = sm_results
        d = model.exog.shape[1]
        raw = np.asarray(sm_results.params, dtype=float)
        natural = np.concatenate([raw[:d], np.cumsum(np.r_[raw[d], np.exp(raw[d + 1:])])])
        jac = _jacobian(raw, d)
        names = list(model.exog_names) + model.boundary_names
        self.params = pd.Series(natural, index=names, name="params")
        self._cov = pd.DataFrame(_natural_cov(sm_results, jac), index=names, columns=names)
        self.llf = float(sm_results.llf)

    @property
    def coef(self):
        """``beta`` (Series)."""
        return self.params.iloc[: self.model.exog.shape[1]]

    @property
    def thresholds(self):
        """``zeta`` on the natural scale (Series named ``"a|b"``)."""
        return self.params.iloc[self.model.exog.shape[1]:]

    def cov_params(self):
        """Covariance of ``(beta, zeta)`` from the observed information (delta method)."""
        return self._cov.copy()

    def _wald_covariance(self):  # WaldMixin: bse, tvalues, pvalues, conf_int, summary_frame
        return self._cov.to_numpy()

    def _wald_index(self):
        return self.params.index

    def _summary_index(self):
        """(block, term): the coefficients, then the thresholds."""
        d = self.model.exog.shape[1]
        blocks = ["coefficients"] * d + ["thresholds"] * (self.params.size - d)
        return pd.MultiIndex.from_arrays([blocks, list(self.params.index)],
                                         names=["block", "term"])

    @property
    def aic(self):
        """``-2 llf + 2 p``."""
        return -2 * self.llf + 2 * self.params.size

    @property
    def bic(self):
        """``-2 llf + p log n``, n the sum of the case weights when there are any.

        As ``MASS::polr``: integer weights give the BIC of the data with each row
        repeated w_i times.
        """
        weights = self.model.weights
        n = self.nobs if weights is None else float(np.sum(weights))
        return -2 * self.llf + np.log(n) * self.params.size

    def linear_predictor(self, X=None):
        """``eta = x' beta``, ndarray (m,)."""
        return self.model.check_new_exog(X) @ self.coef.to_numpy()

    def _decision(self, values):
        """``f_k(x) = eta - zeta_k = logit P(Y > k | x)``, ndarray (m, K-1).

        ``#{k : f_k >= 0}`` is the median class; :meth:`predict` uses the most
        probable class, as ``predict.polr`` does.
        """
        return self.linear_predictor(values)[:, None] - self.thresholds.to_numpy()[None, :]

    def _proba(self, values):
        cum = special.expit(-self._decision(values))  # P(Y <= k) = logistic(zeta_k - eta)
        m = cum.shape[0]
        return np.diff(np.hstack([np.zeros((m, 1)), cum, np.ones((m, 1))]), axis=1)

    def predict_proba(self, X=None):
        """Class probabilities ``P(Y = k | x)``, DataFrame (m, K) with the level labels."""
        return pd.DataFrame(self._proba(self.model.check_new_exog(X)), columns=list(self.levels))

    def _codes(self, values):
        """Most probable level (0-based codes)."""
        return np.argmax(self._proba(values), axis=1)

    def _predictions(self):
        """Classes, decision values, or probabilities (``which="proba"``, alias ``"prob"``)."""
        proba = (self._proba, list(self.levels))
        return {**super()._predictions(), "proba": proba, "prob": proba}

    def _summary_parts(self):
        table = self.summary_frame().droplevel("block")
        right = [("Log-Likelihood:", f"{self.llf:.4f}"), ("AIC:", f"{self.aic:.4f}"),
                 ("BIC:", f"{self.bic:.4f}")]
        notes = ["logit P(Y <= k | x) = zeta_k - x'beta (MASS::polr convention); thresholds "
                 "on the natural scale, SEs by the delta method."]
        return [("Link:", "logit")], right, [table], notes


def _jacobian(raw, d):
    """d(beta, zeta) / d(beta, theta) for zeta = cumsum(theta_1, exp(theta_2), ...)."""
    p = raw.size
    jac = np.eye(p)
    m = p - d
    increments = np.r_[1.0, np.exp(raw[d + 1:])]
    for k in range(m):
        jac[d + k, d:d + k + 1] = increments[: k + 1]
    return jac
