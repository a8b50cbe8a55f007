"""NORDICResults: a fitted NORDIC model, as an immutable snapshot with pandas views."""

from __future__ import annotations

import datetime as _dt
from functools import cached_property

import numpy as np
import pandas as pd

from nordicstats.solvers import solve
from nordicstats.solvers.problem import count_crossings, predict_codes

__all__ = ["NORDICResults"]

_PREDICT_WHICH = ("class", "decision")


class NORDICResults:
    """Results of :meth:`NORDIC.fit`.

    Attributes
    ----------
    model : NORDIC
        The model that was fitted.
    solver_result : SolverResult
        Solver status, objective, time, iterations, violations, multipliers.
    fitted_at : datetime.datetime
        When the fit finished (shown in the summary; settable for reproducible text).
    cov_type : str or None
        Covariance type of the linear coefficients (see :mod:`nordicstats.inference`).

    Notes
    -----
    f_k(x) = sum_j omega_{k,j} K(x_j, x) + b_k, or x'w_k + b_k for the linear
    kernel; the predicted level is the number of boundaries with f_k(x) >= 0
    (paper, Section 2.2), which is the unique level in the intersection of the
    K-1 prediction sets whenever the boundaries do not cross at x.
    """

    def __init__(self, model, solver_result, cov_type=None, cov_kwds=None, fitted_at=None):
        self.model = model
        self.solver_result = solver_result
        self.fitted_at = fitted_at or _dt.datetime.now().replace(microsecond=0)
        self._init_covariance(cov_type, cov_kwds)

    # --- coefficients ------------------------------------------------------------------------
    @property
    def boundary_names(self):
        """``["a|b", ...]`` names of the K-1 boundaries."""
        return self.model.boundary_names

    @property
    def levels(self):
        """The ordered levels of the response."""
        return self.model.levels

    @property
    def nobs(self):
        """Number of observations used in the fit."""
        return self.model.nobs

    @property
    def objective(self):
        """Primal objective at the solution (penalty + C * hinge slacks)."""
        return self.solver_result.objective

    @property
    def dual_coef(self):
        """Kernel expansion coefficients omega, shape (n, K-1) (None for primal-only fits)."""
        return self.solver_result.dual_coef

    @property
    def intercept(self):
        """Intercepts b_k as a Series indexed by boundary name."""
        return pd.Series(self.solver_result.intercept, index=self.boundary_names, name="intercept")

    @property
    def coef(self):
        """Linear kernel only: weights w_k as a DataFrame (terms x boundaries)."""
        w = self._linear_weights()
        return pd.DataFrame(w, index=self.model.exog_names, columns=self.boundary_names)

    @property
    def params(self):
        """Linear kernel only: (1 + d) x (K-1) table of b_k (row "Intercept") and w_k."""
        table = np.vstack([self.solver_result.intercept[None, :], self._linear_weights()])
        return pd.DataFrame(table, index=["Intercept", *self.model.exog_names],
                            columns=self.boundary_names)

    def _linear_weights(self):
        if not self.model.kernel.is_linear:
            raise AttributeError(
                f"coef and params exist for kernel='linear' only; this fit used the "
                f"{self.model.kernel.describe()} kernel, whose boundaries are described by "
                "dual_coef (omega) and intercept."
            )
        if self.solver_result.coef is not None:
            return np.asarray(self.solver_result.coef)
        return self.model.exog.T @ self.solver_result.dual_coef

    @cached_property
    def n_support(self):
        """Support vectors per boundary: rows with a nonzero expansion coefficient."""
        omega = self.dual_coef
        if omega is None:
            alpha = self.solver_result.multipliers.get("alpha")
            if alpha is None:
                return pd.Series(np.nan, index=self.boundary_names)
            omega = alpha
        tol = 1e-8 * max(1.0, self.model.C)
        return pd.Series(np.sum(np.abs(omega) > tol, axis=0), index=self.boundary_names,
                         name="n_support")

    # --- prediction --------------------------------------------------------------------------
    @cached_property
    def fittedvalues(self):
        """Decision values f_k(x_i) on the training data, shape (n, K-1)."""
        return self._decision(self.model.exog)

    def _decision(self, X):
        b = self.solver_result.intercept
        if self.model.kernel.is_linear:
            return X @ self._linear_weights() + b
        return self.model.kernel(X, self.model.exog) @ self.solver_result.dual_coef + b

    def decision_function(self, X=None):
        """Decision values f_k(x), shape (n, K-1); positive means above boundary k.

        Parameters
        ----------
        X : array-like or DataFrame, optional
            New covariates (raw data for formula models); default the training data.
        """
        if X is None:
            return self.fittedvalues.copy()
        return self._decision(self.model.exog_for(X))

    def predict(self, X=None, which="class"):
        """Predicted levels, or decision values.

        Parameters
        ----------
        X : array-like or DataFrame, optional
            New covariates; default the training data.
        which : {"class", "decision"}, default="class"
            ``"class"``: the user's labels (a categorical Series indexed like a
            DataFrame ``X``, else a ``pandas.Categorical``); ``"decision"``: a
            DataFrame of f_k(x) with one column per boundary.

        Returns
        -------
        pandas.Categorical, pandas.Series or pandas.DataFrame
        """
        if which not in _PREDICT_WHICH:
            raise ValueError(f"The 'which' parameter of predict must be one of "
                             f"{list(_PREDICT_WHICH)}. Got {which!r} instead.")
        F = self.decision_function(X)
        index = X.index if isinstance(X, pd.DataFrame) else None
        if which == "decision":
            return pd.DataFrame(F, columns=self.boundary_names, index=index)
        labels = self.model.response.labels(predict_codes(F))
        if index is not None:
            return pd.Series(labels, index=index, name=self.model.endog_names)
        return labels

    def crossing_rate(self, X=None):
        """Share of rows whose sign sequence f_1, ..., f_{K-1} is not non-increasing.

        A crossing row has an empty intersection of prediction sets (paper,
        Section 3): 0 for NORDIC on its training data.
        """
        return float(np.mean(count_crossings(self.decision_function(X))))

    # --- price of noncrossing ----------------------------------------------------------------
    @cached_property
    def price_of_noncrossing(self):
        """Comparison with the unconstrained fit (BSVM) on the same data and C.

        Returns
        -------
        dict
            ``bsvm_objective``, ``objective_increase`` (this objective minus
            BSVM's, >= 0 up to solver tolerance) and ``bsvm_crossing_rate``
            (training rows where the separate SVMs cross).  Empty for NORDIC-2
            with the l1 penalty, whose unconstrained counterpart is another
            problem class.
        """
        if self.model.method == "bsvm":
            problem, bsvm = self.model.build_problem(), self.solver_result
        elif self.model.method == "nordic2" and self.model.penalty == "l1":
            return {}
        else:
            problem = self.model.build_problem(method="bsvm")
            bsvm = solve(problem)
        F = problem.decision_values(bsvm.dual_coef, bsvm.intercept, bsvm.coef)
        return {
            "bsvm_objective": bsvm.objective,
            "objective_increase": self.objective - bsvm.objective,
            "bsvm_crossing_rate": float(np.mean(count_crossings(F))),
        }

    # --- inference (issue 4) -----------------------------------------------------------------
    def _init_covariance(self, cov_type, cov_kwds):
        self.cov_type = cov_type
        self.cov_kwds = dict(cov_kwds or {})
        if cov_type is not None:
            raise ValueError(
                f"cov_type={cov_type!r} is not available in this version: standard errors "
                "for linear NORDIC are not implemented yet. Fit with cov_type=None."
            )

    # --- summary -----------------------------------------------------------------------------
    def summary(self, alpha=0.05):
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` of the fit.

        Text with ``print(res.summary())``, HTML with ``.as_html()``, LaTeX with
        ``.as_latex()``.
        """
        from nordicstats._summary import build_summary

        return build_summary(self, alpha=alpha)

    def __repr__(self):
        return (f"<NORDICResults: {self.model.method}, {self.model.kernel.describe()}, "
                f"C={self.model.C:g}, K={len(self.levels)}, n={self.nobs}, "
                f"objective={self.objective:.6g}>")
