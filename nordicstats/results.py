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
        Covariance type of the linear coefficients (see :mod:`nordicstats.inference`):
        "auto" (default for linear fits, computed on first use: the Bahadur sandwich
        where its validity diagnostics pass, the bootstrap per boundary where they
        fail), "bahadur", "bootstrap", or
        None (kernel fits, or ``cov_type="none"``).

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
            # the model's own solver when it handles BSVM: build_problem left out the Gram
            # matrix for solver="primal", which "auto" may not pick
            solver = self.model.solver if self.model.solver in ("quadprog", "decomposition",
                                                                "primal") else "auto"
            bsvm = solve(problem, solver=solver)
        F = problem.decision_values(bsvm.dual_coef, bsvm.intercept, bsvm.coef)
        return {
            "bsvm_objective": bsvm.objective,
            "objective_increase": self.objective - bsvm.objective,
            "bsvm_crossing_rate": float(np.mean(count_crossings(F))),
        }

    # --- inference (issue 4) -----------------------------------------------------------------
    # Covariance of the linear coefficients (nordicstats.inference). Parameters are stacked
    # boundary-major; pandas views are indexed by boundary name and term.
    # The default (cov_type=None on a linear fit) is "auto", computed on first use so that
    # fits used only for prediction (tuning, the sklearn wrapper) pay nothing and see no
    # InferenceWarning; an explicit cov_type is computed (and validated) at fit time.
    def _init_covariance(self, cov_type, cov_kwds):
        from nordicstats.inference import check_cov_kwds, compute_covariance

        if cov_type is None and not cov_kwds and self.model.kernel.is_linear:
            self.cov_type, self.cov_kwds = "auto", check_cov_kwds("auto", None)
            return
        self._cov_value = compute_covariance(self, cov_type, cov_kwds)
        self.cov_type = None if self._cov_value is None else self._cov_value.cov_type
        self.cov_kwds = {} if self._cov_value is None else dict(self._cov_value.cov_kwds)

    @property
    def _cov(self):
        if "_cov_value" not in self.__dict__:
            from nordicstats.inference import compute_covariance

            self._cov_value = compute_covariance(self, self.cov_type, None, stacklevel=5)
        return self._cov_value

    def _require_cov(self):
        if self._cov is None:
            fix = ("refit with cov_type='bahadur' or use get_robustcov_results()"
                   if self.model.kernel.is_linear else "they exist for kernel='linear' fits only")
            raise AttributeError(f"This fit has no covariance (cov_type=None); {fix}.")
        return self._cov

    def cov_params(self):
        """Joint covariance of all coefficients, indexed by (boundary, term) on both axes.

        Cov(beta^_k, beta^_l) = H_k^{-1} G_kl H_l^{-1} / n for ``cov_type="bahadur"``
        (Koo et al. 2008 with the paper's Theorem 1), or the bootstrap covariance.
        """
        from nordicstats.inference import param_index

        index = param_index(self)
        return pd.DataFrame(self._require_cov().cov, index=index, columns=index)

    @property
    def bse(self):
        """Standard errors, shaped like ``params`` (NaN where not available, with a warning)."""
        from nordicstats.inference import as_table

        return as_table(self, np.sqrt(np.diag(self._require_cov().cov)))

    @property
    def tvalues(self):
        """z statistics params / bse."""
        return self.params / self.bse

    @property
    def pvalues(self):
        """Two-sided normal p-values of H0: coefficient = 0."""
        from scipy import stats

        z = self.tvalues
        return pd.DataFrame(2.0 * stats.norm.sf(np.abs(z.to_numpy())), index=z.index,
                            columns=z.columns)

    @property
    def cov_sources(self):
        """Per boundary: the estimator behind its standard errors and why.

        A DataFrame indexed by boundary with columns ``estimator`` ("bahadur",
        "bootstrap", or "none" for withheld standard errors) and ``reason`` (the
        validity diagnostics that failed, see :mod:`nordicstats.diagnostics`; empty
        when the Bahadur sandwich applies).
        """
        cov = self._require_cov()
        sources = cov.sources or ()
        return pd.DataFrame({"estimator": [c.estimator for c in sources],
                             "reason": [c.reason for c in sources]},
                            index=pd.Index(self.boundary_names[:len(sources)], name="boundary"))

    @property
    def bandwidth(self):
        """Bandwidth h_k of the Bahadur Hessian estimate per boundary (None for bootstrap)."""
        cov = self._require_cov()
        return None if cov.bandwidths is None else pd.Series(
            cov.bandwidths, index=self.boundary_names, name="bandwidth")

    def conf_int(self, alpha=0.05):
        """Wald intervals beta^ -+ z_{1-alpha/2} se, rows (boundary, term), columns lower/upper.

        ``.attrs["cov_sources"]`` is :attr:`cov_sources` as a dict
        ``{boundary: {"estimator": ..., "reason": ...}}``: the estimator behind each
        boundary's standard errors and why.
        """
        from scipy import stats

        from nordicstats.inference import param_index

        if not 0 < alpha < 1:
            raise ValueError(f"The 'alpha' parameter must be in (0, 1). Got {alpha!r} instead.")
        est, se = self.params.to_numpy().T.ravel(), self.bse.to_numpy().T.ravel()
        half = stats.norm.ppf(1 - alpha / 2) * se
        ci = pd.DataFrame({"lower": est - half, "upper": est + half}, index=param_index(self))
        # which estimator, per boundary, and why (a plain dict: pandas compares attrs)
        ci.attrs["cov_sources"] = self.cov_sources.to_dict(orient="index")
        return ci

    def summary_frame(self, alpha=0.05):
        """The summary's coefficient blocks as one DataFrame indexed by (boundary, term)."""
        from nordicstats.inference import summary_frame

        return summary_frame(self, alpha)

    def wald_test(self, r_matrix, q=None):
        """Chi-square Wald test of linear restrictions R beta = q across boundaries.

        Parameters
        ----------
        r_matrix : str, list of str, ndarray or DataFrame
            Text such as ``"x1@1|2 = x1@2|3, x2@1|2 = 0"`` (parameters are
            ``term@boundary``; see :func:`nordicstats.hypotheses.parse_restrictions`),
            or R with one column per parameter in ``cov_params()`` order (a DataFrame is
            aligned on those labels).
        q : array-like, optional
            Right-hand side for a matrix ``r_matrix``; default zeros.

        Returns
        -------
        WaldTestResult
        """
        from nordicstats.hypotheses import parse_restrictions, wald_test
        from nordicstats.inference import param_index, param_labels

        cov = self._require_cov().cov
        if isinstance(r_matrix, str) or (isinstance(r_matrix, (list, tuple)) and r_matrix
                                         and isinstance(r_matrix[0], str)):
            R, q = parse_restrictions(r_matrix, param_labels(self))
        elif isinstance(r_matrix, pd.DataFrame):
            R = r_matrix.reindex(columns=param_index(self), fill_value=0.0).to_numpy(float)
        else:
            R = r_matrix
        return wald_test(self.params.to_numpy().T.ravel(), cov, R, q, labels=param_labels(self))

    def test_parallel(self):
        """Wald test of parallel boundaries H0: w_1 = ... = w_{K-1} (slopes only).

        The SVM analogue of the Brant test of proportional odds; uses the joint
        covariance across boundaries.  Needs K >= 3.
        """
        from nordicstats.hypotheses import parallel_restrictions, wald_test
        from nordicstats.inference import param_labels

        R = parallel_restrictions(len(self.boundary_names), self.params.shape[0])
        from nordicstats.inference import sources_text

        cov = self._require_cov()
        return wald_test(self.params.to_numpy().T.ravel(), cov.cov, R,
                         labels=param_labels(self),
                         title="Wald test of parallel boundaries (w_1 = ... = w_K-1); "
                               f"covariance: {sources_text(self.boundary_names, cov)}")

    def get_robustcov_results(self, cov_type="bahadur", cov_kwds=None):
        """A new results object with another covariance; the point estimate is not refitted."""
        new = type(self)(self.model, self.solver_result, cov_type=cov_type, cov_kwds=cov_kwds,
                         fitted_at=self.fitted_at)
        if "price_of_noncrossing" in self.__dict__:  # cached BSVM comparison: no need to redo
            new.__dict__.setdefault("price_of_noncrossing", self.__dict__["price_of_noncrossing"])
        return new

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
