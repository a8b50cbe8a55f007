"""NORDICResults: the record of a NORDIC fit, with pandas views.

A results object is the record of a fit: the model, the solver result, the calibration
map and the covariance that ``fit(cov_type=...)`` asked for, computed when the results
are built by the covariance layer's entry point
(:func:`nordicstats.fit_covariance.fit_covariance`); it fits nothing itself and computes
no covariance later.  Fits used only for prediction (tuning, the scikit-learn adapter,
the cross-fitted probabilities) pass ``cov_type="none"`` and pay for no covariance.  The
BSVM fit behind :attr:`NORDICResults.price_of_noncrossing` comes from
``NORDIC.fit_unconstrained()`` when first needed (or from the covariance's validity
diagnostics, which need it too) and is kept.
"""

from __future__ import annotations

import datetime as _dt
from functools import cached_property

import numpy as np
import pandas as pd

from nordicstats._summary import build_summary, sources_text
from nordicstats.auto_covariance import blank_boundaries
from nordicstats.class_rule import count_crossings
from nordicstats.fit_covariance import fit_covariance, linear_weights, price_of_noncrossing
from nordicstats.hypotheses import parallel_restrictions, parse_restrictions, wald_test
from nordicstats.ordinal import OrdinalResults
from nordicstats.wald import WaldMixin

__all__ = ["NORDICResults"]

class NORDICResults(WaldMixin, OrdinalResults):
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
        Covariance type of the linear coefficients that ``fit(cov_type=...)`` computed
        (see :mod:`nordicstats.covariance`): "auto" (default for linear fits: the
        Bahadur sandwich where its validity diagnostics pass, the bootstrap per
        boundary where they fail), "bahadur", "bootstrap", or None (kernel fits, and
        ``cov_type="none"``: no covariance was computed; ``bse``, ``conf_int()`` and
        the tests raise, ``summary()`` and ``summary_frame()`` show the estimates only).
    covariance : nordicstats.covariance.CovarianceResult or None
        The covariance computed at fit time (None when ``cov_type`` is None).
    calibration : nordicstats.probability.Calibration or None
        The map from decision values to class probabilities, fitted on held-out
        decision values by ``fit(probability=True)``; None otherwise.

    Notes
    -----
    f_k(x) = sum_j omega_{k,j} K(x_j, x) + b_k, or x'w_k + b_k for the linear
    kernel; the predicted level is the number of boundaries with f_k(x) >= 0
    (paper, Section 2.2), which is the unique level in the intersection of the
    K-1 prediction sets whenever the boundaries do not cross at x.
    """

    def __init__(self, model, solver_result, cov_type=None, cov_kwds=None, fitted_at=None,
                 calibration=None):
        self.model = model
        self.solver_result = solver_result
        self.calibration = calibration
        self.fitted_at = fitted_at or _dt.datetime.now().replace(microsecond=0)
        self._init_covariance(cov_type, cov_kwds)

    # --- coefficients ------------------------------------------------------------------------
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
        return linear_weights(self.model, self.solver_result)

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
        """f_k(x) = K(x, X_train) omega_k + b_k, or x'w_k + b_k for the linear kernel."""
        b = self.solver_result.intercept
        if self.model.kernel.is_linear:
            return X @ self._linear_weights() + b
        return self.model.kernel(X, self.model.exog) @ self.solver_result.dual_coef + b

    def _proba(self, X):
        """Class probabilities P(Y = level | x), (m, K), from the fitted calibration map."""
        return self.calibration.class_probabilities(self._decision(X))

    def _require_probabilities(self):
        if self.calibration is None:
            raise ValueError("This fit has no class probabilities: refit with "
                             "fit(probability=True) (options in probability_kwds) to use "
                             "which='proba' or cost=.")

    def _predictions(self):
        """Classes, decision values and class probabilities (``which="proba"``)."""
        return {**super()._predictions(), "proba": (self._proba, list(self.levels))}

    def crossing_rate(self, X=None):
        """Share of rows whose sign sequence f_1, ..., f_{K-1} is not non-increasing.

        A crossing row has an empty intersection of prediction sets (paper,
        Section 3): 0 for NORDIC on its training data.  Rows with a missing covariate
        are left out.
        """
        F = self.decision_function(X)
        return float(np.mean(count_crossings(F[~np.isnan(F).any(axis=1)])))

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
        if self.model.method == "nordic2" and self.model.penalty == "l1":
            return {}
        return price_of_noncrossing(self.solver_result, self._unconstrained_fit)

    @cached_property
    def _unconstrained_fit(self):
        """(problem, SolverResult) of BSVM on the same data, weights, costs and C.

        Shared by the price of noncrossing and the validity diagnostics of the
        covariance (for NORDIC-2 with the l1 penalty: the l2 BSVM).
        """
        if self.model.method == "bsvm":
            return self.model.build_problem(), self.solver_result
        kept = self.solver_result.info.get("unconstrained")
        if kept is not None:  # the sparse primal solved BSVM on its way (joint NORDIC-1)
            return self.model.build_problem(method="bsvm"), kept
        return self.model.fit_unconstrained()

    # --- inference ------------------------------------------------------------------------------
    # Covariance of the linear coefficients (nordicstats.covariance), computed once, when the
    # results are built (by fit() or get_robustcov_results()). Parameters are stacked
    # boundary-major; pandas views are indexed by boundary name and term.
    def _init_covariance(self, cov_type, cov_kwds):
        """Compute the covariance ``cov_type`` asks for (None: "auto" for a linear fit,
        nothing for a kernel fit; "none": nothing) and record what was computed."""
        self.covariance = fit_covariance(self.model, self.solver_result, cov_type, cov_kwds,
                                         boundary_names=self.boundary_names,
                                         unconstrained=lambda: self._unconstrained_fit,
                                         stacklevel=5)
        self.cov_type = None if self.covariance is None else self.covariance.cov_type
        self.cov_kwds = {} if self.covariance is None else dict(self.covariance.cov_kwds)

    def _require_cov(self):
        if self.covariance is None:
            if not self.model.kernel.is_linear:
                raise AttributeError("This fit has no covariance: standard errors, tests and "
                                     "intervals exist for kernel='linear' fits only.")
            raise AttributeError("This fit has no covariance: it was fitted with "
                                 "cov_type='none'. Refit with fit(cov_type='auto') (or "
                                 "'bahadur', 'bootstrap'), or call "
                                 "get_robustcov_results('auto') on this fit.")
        return self.covariance

    def cov_params(self):
        """Joint covariance of all coefficients, indexed by (boundary, term) on both axes.

        Cov(beta^_k, beta^_l) = H_k^{-1} G_kl H_l^{-1} / n for ``cov_type="bahadur"``
        (Koo et al. 2008 with the paper's Theorem 1), the bootstrap covariance, or
        (``"auto"``) the sandwich for the boundaries passing the validity diagnostics
        and the bootstrap for the others (see :attr:`cov_sources`).
        """
        index = param_index(self)
        return pd.DataFrame(self._require_cov().cov, index=index, columns=index)

    def _wald_covariance(self):  # WaldMixin: bse, tvalues, pvalues, conf_int, summary_frame
        return self._require_cov().cov

    def _wald_index(self):
        return param_index(self)

    def _withheld(self):
        """Per estimate: withheld z, p-value and interval (``cov_sources["intervals"]`` False:
        a boundary set by the noncrossing constraints, whose estimates have no fixed limit)."""
        withheld = [not c.intervals for c in self._require_cov().sources]
        return np.repeat(withheld, self.params.shape[0])

    def _interval_cov(self):
        """The joint covariance with NaN rows and columns where intervals are withheld."""
        cov = self._require_cov()
        withheld = [k for k, c in enumerate(cov.sources) if not c.intervals]
        return blank_boundaries(cov.cov, withheld, self.params.shape[0])

    @property
    def bandwidth(self):
        """Bandwidth h_k of the Bahadur Hessian estimate per boundary (None for bootstrap)."""
        cov = self._require_cov()
        return None if cov.bandwidths is None else pd.Series(
            cov.bandwidths, index=self.boundary_names, name="bandwidth")

    @property
    def cov_sources(self):
        """Per boundary: the estimator behind its standard errors and why.

        A DataFrame indexed by boundary with columns ``estimator`` ("bahadur",
        "bootstrap", or "none" for withheld standard errors), ``intervals`` (False where
        z values, p-values and intervals are withheld although a standard error is
        given: a boundary set by the noncrossing constraints, whose estimates drift with
        n) and ``reason`` (the validity diagnostics that failed, see
        :mod:`nordicstats.diagnostics`; empty when the estimator's conditions hold).
        """
        sources = self._require_cov().sources
        return pd.DataFrame({"estimator": [c.estimator for c in sources],
                             "intervals": [c.intervals for c in sources],
                             "reason": [c.reason for c in sources]},
                            index=pd.Index(list(self.boundary_names), name="boundary"))

    def _conf_int_attrs(self):
        """``conf_int().attrs["cov_sources"]``: :attr:`cov_sources` as a dict ``{boundary:
        {"estimator": ..., "intervals": ..., "reason": ...}}`` (a plain dict: pandas
        compares attrs)."""
        return {"cov_sources": self.cov_sources.to_dict(orient="index")}

    def summary_frame(self, alpha=0.05):
        """The summary's coefficient blocks as one DataFrame indexed by (boundary, term).

        Columns coef, std err, z, P>|z|, the interval and ``se source`` (the estimator
        of the boundary's standard errors, see :attr:`cov_sources`); a fit without a covariance
        (kernel fits, ``cov_type="none"``) has the estimates only (``coef``: b_k, and
        w_k for the linear kernel).
        """
        if self.covariance is None:
            table = (self.params if self.model.kernel.is_linear
                     else self.intercept.to_frame().T.rename(index={"intercept": "Intercept"}))
            index = pd.MultiIndex.from_product([list(self.boundary_names), list(table.index)],
                                               names=["boundary", "term"])
            return pd.DataFrame({"coef": table.to_numpy().T.ravel()}, index=index)
        frame = super().summary_frame(alpha)
        frame["se source"] = np.repeat(self.cov_sources["estimator"].to_numpy(),
                                       self.params.shape[0])
        return frame

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
            NaN (with an InferenceWarning) when a restriction involves a boundary
            without valid standard errors or with intervals withheld.
        """
        cov = self._interval_cov()
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
        covariance across boundaries.  Needs K >= 3.  Boundaries whose intervals are
        withheld (see :attr:`cov_sources`) are left out when at least two others remain;
        the title names them.
        """
        names = list(self.boundary_names)
        keep = self._parallel_subset()
        p = self.params.shape[0]
        rows = parallel_restrictions(len(keep), p)  # raises for K = 2
        R = np.zeros((rows.shape[0], len(names) * p))
        for i, k in enumerate(keep):
            R[:, k * p:(k + 1) * p] = rows[:, i * p:(i + 1) * p]
        left_out = [names[k] for k in range(len(names)) if k not in keep]
        which = ("" if not left_out else
                 f" among {', '.join(names[k] for k in keep)} ({', '.join(left_out)} left out: "
                 "intervals withheld)")
        return wald_test(self.params.to_numpy().T.ravel(), self._interval_cov(), R,
                         labels=param_labels(self),
                         title=f"Wald test of parallel boundaries (w_1 = ... = w_K-1){which}; "
                               f"covariance: {sources_text(self)}")

    def _parallel_subset(self):
        """Boundaries (0-based) compared by :meth:`test_parallel`: those with intervals,
        or all of them when fewer than two have."""
        keep = [k for k, c in enumerate(self._require_cov().sources) if c.intervals]
        return keep if len(keep) >= 2 else list(range(len(self.boundary_names)))

    def get_robustcov_results(self, cov_type="bahadur", cov_kwds=None):
        """A new results object with another covariance; the point estimate is not refitted."""
        new = type(self)(self.model, self.solver_result, cov_type=cov_type, cov_kwds=cov_kwds,
                         fitted_at=self.fitted_at)
        for cached in ("_unconstrained_fit", "price_of_noncrossing"):  # BSVM: no need to redo
            if cached in self.__dict__:
                new.__dict__.setdefault(cached, self.__dict__[cached])
        return new

    # --- summary -----------------------------------------------------------------------------
    def summary(self, alpha=0.05):
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` of the fit.

        Text with ``print(res.summary())``, HTML with ``.as_html()``, LaTeX with
        ``.as_latex()``.
        """
        return build_summary(self, alpha=alpha)

    def __repr__(self):
        return (f"<NORDICResults: {self.model.method}, {self.model.kernel.describe()}, "
                f"C={self.model.C:g}, K={len(self.levels)}, n={self.nobs}, "
                f"objective={self.objective:.6g}>")


# --- pandas views and summary pieces ---------------------------------------------------------
def param_index(results):
    """MultiIndex (boundary, term) of the boundary-major parameter vector."""
    return pd.MultiIndex.from_product([list(results.boundary_names), list(results.params.index)],
                                      names=["boundary", "term"])


def param_labels(results):
    """``term@boundary`` labels used by the restriction parser."""
    return [f"{term}@{boundary}" for boundary, term in param_index(results)]
