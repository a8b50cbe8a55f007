"""NORDICResults: a fitted NORDIC model, as an immutable snapshot with pandas views."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import importlib.util
import warnings
from functools import cached_property, partial

import numpy as np
import pandas as pd
from scipy import stats

from nordicstats._summary import build_summary, sources_text
from nordicstats.auto_covariance import blank_boundaries
from nordicstats.costs import cost_to_boundary_weights
from nordicstats.covariance import FitArrays, check_cov_kwds, estimate_covariance
from nordicstats.exceptions import InferenceWarning
from nordicstats.hypotheses import parallel_restrictions, parse_restrictions, wald_test
from nordicstats.ordinal import OrdinalResults
from nordicstats.solvers import solve
from nordicstats.solvers.problem import count_crossings

__all__ = ["NORDICResults"]

class NORDICResults(OrdinalResults):
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
        Covariance type of the linear coefficients (see :mod:`nordicstats.covariance`):
        "auto" (default for linear fits, computed on first use: the Bahadur sandwich
        where its validity diagnostics pass, the bootstrap per boundary where they
        fail), "bahadur", "bootstrap", or None (kernel fits, or ``cov_type="none"``).
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
        problem, bsvm = self._unconstrained_fit
        F = problem.decision_values(bsvm.dual_coef, bsvm.intercept, bsvm.coef)
        return {
            "bsvm_objective": bsvm.objective,
            "objective_increase": self.objective - bsvm.objective,
            "bsvm_crossing_rate": float(np.mean(count_crossings(F))),
        }

    @cached_property
    def _unconstrained_fit(self):
        """(problem, SolverResult) of BSVM on the same data, weights, costs and C.

        Shared by the price of noncrossing and the validity diagnostics of the
        covariance (for NORDIC-2 with the l1 penalty: the l2 BSVM).
        """
        if self.model.method == "bsvm":
            return self.model.build_problem(), self.solver_result
        problem = self.model.build_problem(method="bsvm")
        # the model's own solver when it handles BSVM: build_problem left out the Gram
        # matrix for solver="primal", which "auto" may not pick at small n
        solver = self.model.solver if self.model.solver in ("quadprog", "decomposition",
                                                            "primal") else "auto"
        return problem, solve(problem, solver=solver)

    # --- inference ------------------------------------------------------------------------------
    # Covariance of the linear coefficients (nordicstats.covariance). Parameters are stacked
    # boundary-major; pandas views are indexed by boundary name and term.
    # The default (cov_type=None on a linear fit) is "auto", computed on first use so that
    # fits used only for prediction (tuning, the sklearn wrapper) pay nothing and see no
    # InferenceWarning; an explicit cov_type is computed (and validated) at fit time.
    def _init_covariance(self, cov_type, cov_kwds):
        if cov_type is None and not cov_kwds and self.model.kernel.is_linear:
            self.cov_type, self.cov_kwds = "auto", check_cov_kwds("auto", None)
            return
        self._cov_value = compute_covariance(self, cov_type, cov_kwds)
        self.cov_type = None if self._cov_value is None else self._cov_value.cov_type
        self.cov_kwds = {} if self._cov_value is None else dict(self._cov_value.cov_kwds)

    @property
    def covariance(self):
        """The :class:`~nordicstats.covariance.CovarianceResult` (None without inference).

        The default covariance ("auto") is computed here on first use.
        """
        if "_cov_value" not in self.__dict__:
            self._cov_value = compute_covariance(self, self.cov_type, None, stacklevel=5)
        return self._cov_value

    def _require_cov(self):
        if self.covariance is None:
            fix = ("refit with cov_type='bahadur' or use get_robustcov_results()"
                   if self.model.kernel.is_linear else "they exist for kernel='linear' fits only")
            raise AttributeError(f"This fit has no covariance (cov_type=None); {fix}.")
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

    @property
    def bse(self):
        """Standard errors, shaped like ``params`` (NaN where not available, with a warning)."""
        return as_table(self, np.sqrt(np.diag(self._require_cov().cov)))

    @property
    def tvalues(self):
        """z statistics params / bse (NaN where :attr:`cov_sources` withholds intervals)."""
        return self.params / self._interval_se()

    def _interval_se(self):
        """``bse`` with NaN for the boundaries whose estimates have no fixed limit to test
        or cover (``cov_sources["intervals"]`` False: set by the noncrossing constraints)."""
        se = self.bse
        withheld = [not c.intervals for c in self._require_cov().sources]
        return se.where(~np.broadcast_to(withheld, se.shape))

    def _interval_cov(self):
        """The joint covariance with NaN rows and columns where intervals are withheld."""
        cov = self._require_cov()
        withheld = [k for k, c in enumerate(cov.sources) if not c.intervals]
        return blank_boundaries(cov.cov, withheld, self.params.shape[0])

    @property
    def pvalues(self):
        """Two-sided normal p-values of H0: coefficient = 0."""
        z = self.tvalues
        return pd.DataFrame(2.0 * stats.norm.sf(np.abs(z.to_numpy())), index=z.index,
                            columns=z.columns)

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

    def conf_int(self, alpha=0.05):
        """Wald intervals beta^ -+ z_{1-alpha/2} se, rows (boundary, term), columns lower/upper.

        NaN where :attr:`cov_sources` withholds intervals.  ``.attrs["cov_sources"]`` is
        :attr:`cov_sources` as a dict ``{boundary: {"estimator": ..., "intervals": ...,
        "reason": ...}}``.
        """
        if not 0 < alpha < 1:
            raise ValueError(f"The 'alpha' parameter must be in (0, 1). Got {alpha!r} instead.")
        est, se = self.params.to_numpy().T.ravel(), self._interval_se().to_numpy().T.ravel()
        half = stats.norm.ppf(1 - alpha / 2) * se
        ci = pd.DataFrame({"lower": est - half, "upper": est + half}, index=param_index(self))
        # which estimator, per boundary, and why (a plain dict: pandas compares attrs)
        ci.attrs["cov_sources"] = self.cov_sources.to_dict(orient="index")
        return ci

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
        return _summary_frame(self, alpha)

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


# --- covariance of a fitted model: glue between the fit and nordicstats.covariance ---------
def _nonlinear_error(model, cov_type):
    return ValueError(
        f"cov_type={cov_type!r} needs kernel='linear'. Wald inference (bse, z-tests, conf_int) "
        "is for the coefficients b_k, w_k of linear NORDIC (the paper's Theorem 1, Section 5.2); "
        f"this fit uses the {model.kernel.describe()} kernel, whose boundaries have no finite "
        "coefficient vector, so cov_type='bootstrap' has no coefficients to resample either. "
        "Refit with kernel='linear', or fit with cov_type=None."
    )


def compute_covariance(results, cov_type=None, cov_kwds=None, stacklevel=5):
    """Covariance of the coefficients of a fitted linear NORDIC, with its guards.

    Builds the arrays (:class:`~nordicstats.covariance.FitArrays`, with a refit function
    for the bootstrap), calls :func:`~nordicstats.covariance.estimate_covariance`, adds the
    note on binding noncrossing constraints and raises the notes as warnings.

    Parameters
    ----------
    results : NORDICResults
    cov_type : {None, "auto", "bahadur", "bootstrap", "none"}
        ``None`` means ``"auto"`` for linear fits and no covariance for kernel fits;
        ``"none"`` skips the covariance (bootstrap refits use it).
    cov_kwds : dict, optional
        See :func:`~nordicstats.covariance.check_cov_kwds`.

    Returns
    -------
    CovarianceResult or None

    Raises
    ------
    ValueError
        A covariance requested for a non-linear kernel, or invalid options.

    Warns
    -----
    InferenceWarning
        Every boundary failing the validity diagnostics (bootstrap standard errors
        under ``"auto"``, NaN otherwise), with the reason; under ``"bahadur"``,
        noncrossing constraints active at the solution.
    """
    model = results.model
    if cov_type is None:
        if not model.kernel.is_linear:
            if cov_kwds:
                raise _nonlinear_error(model, "auto")
            return None
        cov_type = "auto"
    if cov_type == "none":
        return None
    check_cov_kwds(cov_type, cov_kwds)
    if not model.kernel.is_linear:
        raise _nonlinear_error(model, cov_type)
    codes = model.response.codes
    weights, cost = getattr(model, "weights", None), getattr(model, "cost", None)
    scale = None  # non-integer weights: n rows drawn with p ~ w, loss scaled by sum(w)/n
    if weights is not None and not np.all(weights == np.round(weights)):
        scale = weights.sum() / weights.size
    init_kwds = {**model._get_init_kwds(), "order": None, "solver": _refit_solver(model)}
    if cost is not None:
        init_kwds["cost"] = cost  # checked and ordered like the codes
    fit = FitArrays(X=model.exog, codes=codes, params=results.params.to_numpy(),
                    boundary_names=tuple(results.boundary_names),
                    refit=partial(_refit_params, type(model), init_kwds, model.exog, codes,
                                  scale=scale),
                    weights=weights,
                    loss_weights=None if cost is None else cost_to_boundary_weights(cost)[codes],
                    **(_unconstrained_arrays(results) if cov_type != "bootstrap" else {}))
    cov = estimate_covariance(fit, cov_type, cov_kwds)
    notes = list(cov.notes) + ([_active_note(results)] if cov_type == "bahadur" else [])
    notes = tuple(note for note in notes if note)
    for note in notes:
        warnings.warn(note, InferenceWarning, stacklevel=stacklevel)
    return dataclasses.replace(cov, notes=notes)


def _refit_solver(model):
    """Solver of the bootstrap refits: the sparse primal (PIQP) for linear BSVM/NORDIC-1
    left on solver="auto", whatever the size.  A resample has ~0.63 n distinct rows, which
    can fall below the primal's "auto" threshold; the decomposition solver then takes
    minutes per refit at n = 1,500, K = 4 where the primal takes ~0.05 s (same optimum)."""
    if (model.solver == "auto" and model.method in ("bsvm", "nordic1")
            and importlib.util.find_spec("piqp") is not None):
        return "primal"
    return model.solver


def _unconstrained_arrays(results):
    """FitArrays fields for the validity diagnostics: the BSVM coefficients (same data,
    weights, costs and C; none when the fit is BSVM), and no gap check for l1 NORDIC-2,
    whose unconstrained counterpart is another problem class."""
    model = results.model
    if model.method == "bsvm":
        return {}
    problem, bsvm = results._unconstrained_fit
    w = bsvm.coef if bsvm.coef is not None else model.exog.T @ bsvm.dual_coef
    out = {"params_unconstrained": np.vstack([bsvm.intercept[None, :], w])}
    if model.method == "nordic2" and model.penalty == "l1":
        out["thresholds"] = {"max_gap": np.inf}
    return out


def _refit_params(model_class, init_kwds, X, codes, idx, scale=None):
    """Refit the model on the rows idx (codes as the response) and return its coefficients.

    Repeated rows are fitted once with their count as case weight (the same fit);
    ``scale`` multiplies those counts (the bootstrap of non-integer case weights).
    """
    rows, counts = np.unique(idx, return_counts=True)
    weights = counts if scale is None else counts * scale
    res = model_class(codes[rows], X[rows], weights=weights, **init_kwds).fit(cov_type="none")
    return res.params.to_numpy()


def _active_note(results, tol=1e-8):
    """InferenceWarning text when noncrossing constraints bind at the solution, else None."""
    model, sr = results.model, results.solver_result
    if model.method == "bsvm" or model.response.n_levels < 3:
        return None
    count = sr.info.get("active_noncrossing")
    if count is None and "phi" in sr.multipliers:
        scale = tol * max(1.0, model.C)
        count = int(np.sum(np.asarray(sr.multipliers["phi"]) > scale)
                    + np.sum(np.asarray(sr.multipliers.get("gamma", [])) > scale))
    if count is None:
        price = results.price_of_noncrossing
        if not price:
            return ("whether the noncrossing constraints bind could not be checked for this "
                    "solver; if they do, Theorem 1 (same limit law as the unconstrained SVM) is "
                    "only asymptotic and the intervals may be distorted.")
        count = int(price["bsvm_crossing_rate"] > 0
                    or price["objective_increase"] > 1e-6 * max(1.0, abs(price["bsvm_objective"])))
    if not count:
        return None
    return (f"{count} noncrossing constraint(s) are active at the solution. Theorem 1 (the "
            "constrained fit has the unconstrained SVM's limit law) is asymptotic, so at this "
            "sample size the Bahadur intervals may be distorted, and test_parallel() tends to "
            "be conservative (binding constraints pull the boundaries together); compare with "
            "cov_type='bootstrap'.")


# --- pandas views and summary pieces ---------------------------------------------------------
def param_index(results):
    """MultiIndex (boundary, term) of the boundary-major parameter vector."""
    return pd.MultiIndex.from_product([list(results.boundary_names), list(results.params.index)],
                                      names=["boundary", "term"])


def param_labels(results):
    """``term@boundary`` labels used by the restriction parser."""
    return [f"{term}@{boundary}" for boundary, term in param_index(results)]


def as_table(results, vector):
    """Boundary-major vector -> DataFrame shaped like ``results.params``."""
    params = results.params
    return pd.DataFrame(np.asarray(vector).reshape(params.shape[1], params.shape[0]).T,
                        index=params.index, columns=params.columns)


def _summary_frame(results, alpha=0.05):
    """One row per (boundary, term): coef, std err, z, P>|z| and the interval."""
    lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    ci = results.conf_int(alpha)
    frame = pd.DataFrame({
        "coef": results.params.to_numpy().T.ravel(),
        "std err": results.bse.to_numpy().T.ravel(),
        "z": results.tvalues.to_numpy().T.ravel(),
        "P>|z|": results.pvalues.to_numpy().T.ravel(),
    }, index=param_index(results))
    frame[lo], frame[hi] = ci["lower"].to_numpy(), ci["upper"].to_numpy()
    frame["se source"] = np.repeat(results.cov_sources["estimator"].to_numpy(),
                                   results.params.shape[0])
    return frame

