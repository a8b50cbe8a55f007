"""NORDIC: the model specification, its formula front end and ``fit()``.

The model holds the data (ordinal response coded 0..K-1, covariates) and the
specification (method, kernel, C, ...); ``fit()`` builds the optimisation
problem, hands it to a solver and wraps the answer in :class:`NORDICResults`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from nordicstats._validation import check_choice, check_positive
from nordicstats.costs import check_cost_matrix
from nordicstats.data import binary_signs
from nordicstats.kernels import KERNELS, KernelMatrix, check_gram, make_kernel
from nordicstats.ordinal import OrdinalModel
from nordicstats.probability import check_probability_kwds, cross_fit_decision, fit_calibration
from nordicstats.results import NORDICResults
from nordicstats.solvers import (
    DENSE_GRAM_MAX_ROWS,
    METHODS,
    NONCROSSING,
    NordicProblem,
    handles,
    needs_gram,
    refit_solver,
    solve,
    takes_kernel_rows,
)
from nordicstats.weighting import check_case_weights, hinge_weights

__all__ = ["NORDIC"]

PENALTIES = ("l2", "l1")


class NORDIC(OrdinalModel):
    """Noncrossing ordinal classification (Qiao): K-1 jointly trained SVM boundaries.

    Boundary k separates levels ``1..k`` from ``k+1..K``; its discriminant is

        f_k(x) = sum_j omega_{k,j} K(x_j, x) + b_k      (representer form, Section 3.1)

    and the fit minimises (eq. primal_problem, C = 1/lambda)

        sum_k 1/2 omega_k' K omega_k + C sum_{k,i} c_{i,k} (1 - y_i^(k) f_k(x_i))_+

    with hinge weights c_{i,k} = w_i ``|cost[y_i, k+1] - cost[y_i, k]|`` (all ones without
    ``weights`` and ``cost``; see :mod:`nordicstats.weighting`), subject to the method's
    noncrossing constraints:

    * ``"bsvm"``: none (Frank & Hall's K-1 separate SVMs, the paper's BSVM);
    * ``"nordic0"``: b_k >= b_{k+1}, omega_{k,i} >= omega_{k+1,i} (eqs. constraint_b,
      constraint_omega); needs a kernel that is never negative;
    * ``"nordic1"``: ``noncrossing="separate"`` (kernel default): b_k >= b_{k+1} and
      K omega_k >= K omega_{k+1} (eqs. primal_constraint3-4); ``noncrossing="joint"``
      (linear default, eq. linearNORDIC): f_k(x_i) >= f_{k+1}(x_i);
    * ``"nordic2"``: not (f_k(x_i) < 0 and f_{k+1}(x_i) > 0) for every i, k
      (Section 4), with the l1 penalty ``sum_k ||omega_k||_1`` by default or the
      l2 penalty (``penalty="l2"``), solved by SCIP (``pip install nordicstats[milp]``).

    Parameters
    ----------
    endog : array-like of shape (n,)
        Ordinal response.  An ordered ``pandas.Categorical`` gives the order;
        other labels need ``order=`` or are sorted (the summary shows which).
    exog : array-like of shape (n, d)
        Numeric covariates.
    method : {"nordic1", "nordic0", "nordic2", "bsvm"}, default="nordic1"
    kernel : {"rbf", "linear", "poly"} or callable, default="rbf"
        RBF is exp(-gamma ||x - x'||^2); a callable maps (A, B) to the Gram matrix.
    C : float, default=1.0
        Weight of the hinge loss, C = 1/lambda in the paper.
    gamma : float, optional
        Kernel scale.  RBF default: the paper's rule with the median pairwise
        distance sigma, gamma = 1/(2 sigma^2); poly default 1/d.
    degree, coef0 : int, float
        Polynomial kernel (gamma x'x' + coef0)^degree.
    order : sequence, optional
        Levels of ``endog`` from lowest to highest.
    noncrossing : {"separate", "joint"}, optional
        Form of the NORDIC-1 constraints (see above).
    penalty : {"l1", "l2"}, optional
        NORDIC-2 only; default "l1" as in the paper.
    solver : str, default="auto"
        ``"auto"`` picks by method and size; see :mod:`nordicstats.solvers`.
    solver_options : dict, optional
        Passed to the solver (e.g. ``{"time_limit": 60}`` for SCIP).
    weights : array-like of shape (n,), optional
        Nonnegative case weights; row i's hinge terms are multiplied by w_i.  Integer
        weights give the fit on the data with each row repeated w_i times (the rbf
        width rule counts them as frequencies too); rows of weight 0 are left out
        (counted in the summary).
        In :meth:`from_formula`, the name of a column of ``data``.
    cost : array-like of shape (K, K) or pandas.DataFrame, optional
        cost[l, j] = cost of predicting level j for a case of level l: zero diagonal,
        nondecreasing away from it along every row; a DataFrame is labelled by the
        levels.  Boundary k of a level-l case gets the increment
        ``|cost[l, k+1] - cost[l, k]|``, so the fit minimises a convex surrogate of the
        expected cost.  ``|l - j|`` reproduces the unweighted fit.

    Examples
    --------
    >>> from nordicstats.datasets import load_balance_scale
    >>> data = load_balance_scale()
    >>> model = NORDIC.from_formula("balance ~ left_weight * left_distance + "
    ...                             "right_weight * right_distance", data.iloc[::5], C=1.0)
    >>> res = model.fit()
    >>> res.crossing_rate()
    0.0
    """

    def __init__(self, endog, exog, method="nordic1", kernel="rbf", C=1.0, gamma=None, degree=3,
                 coef0=1.0, order=None, noncrossing=None, penalty=None, solver="auto",
                 solver_options=None, weights=None, cost=None):
        self._init_kwds = {k: v for k, v in locals().items()
                           if k not in ("self", "endog", "exog", "weights")}
        self.method = check_choice(method, "method", METHODS)
        self.C = check_positive(C, "C")
        self._set_data(endog, exog, order)
        self._set_weighting(weights, cost)
        self.kernel = make_kernel(kernel, self.exog, gamma=gamma, degree=degree, coef0=coef0,
                                  weights=self.weights)
        default_form = "joint" if self.kernel.is_linear else "separate"
        self.noncrossing = check_choice(noncrossing or default_form, "noncrossing", NONCROSSING)
        self.penalty = check_choice(penalty or ("l1" if self.method == "nordic2" else "l2"),
                                     "penalty", PENALTIES)
        if self.penalty == "l1" and self.method != "nordic2":
            raise ValueError(f"penalty='l1' is only available for method='nordic2'; "
                             f"method={self.method!r} is a QP with the l2 penalty.")
        if self.method == "nordic0" and self.kernel.name not in ("rbf", "callable") \
                and not self.kernel.never_negative:
            raise ValueError(
                f"method='nordic0' needs a kernel that is never negative (omega ordering implies "
                f"f_k >= f_k+1 only then, paper Section 3.1); the {self.kernel.describe()} kernel "
                "can be negative. Use kernel='rbf', or method='nordic1', which needs no sign "
                "condition."
            )
        self.solver = solver
        self.solver_options = dict(solver_options or {})
        self._gram = None

    def _get_init_kwds(self):
        """Constructor options without the data, to build the same model on other rows
        (statsmodels' name; the bootstrap refits with them)."""
        return dict(self._init_kwds)

    def _set_weighting(self, weights, cost):
        """Check ``weights`` and ``cost``, drop rows of weight 0, form the hinge weights c_{i,k}.

        A row of weight 0 is a row repeated 0 times: it is left out entirely (its loss
        and, for NORDIC-1/2, the noncrossing constraints at its x), and counted in
        ``n_zero_weight``.
        """
        levels = self.response.levels
        self.weights = None if weights is None else check_case_weights(
            weights, self.response.codes.size, self.response.codes, levels)
        self.n_zero_weight = 0
        if self.weights is not None and np.any(self.weights == 0):
            keep = self.weights > 0
            self.n_zero_weight = int((~keep).sum())
            self.response = dataclasses.replace(self.response, codes=self.response.codes[keep])
            self.exog, self.weights = self.exog[keep], self.weights[keep]
        self.cost = None if cost is None else check_cost_matrix(
            cost, name="The 'cost' parameter of NORDIC", levels=levels)
        self.hinge_weights = hinge_weights(self.response.codes, levels, self.weights, self.cost)

    # --- fitting -----------------------------------------------------------------------------
    @property
    def gram(self):
        """Training kernel matrix K (computed once, checked once)."""
        if self._gram is None:
            G = self.kernel(self.exog, self.exog)
            if self.kernel.name == "callable":
                check_gram(G, self.kernel)
                if self.method == "nordic0" and np.min(G) < 0:
                    raise ValueError(
                        "method='nordic0' needs a kernel that is never negative, but the callable "
                        f"kernel has negative Gram entries (min {np.min(G):.3g}). Use method="
                        "'nordic1'."
                    )
            self._gram = G
        return self._gram

    def build_problem(self, method=None, C=None):
        """The :class:`NordicProblem` of this model (optionally with another method or C).

        Linear problems carry X; their n x n Gram matrix is formed only when the
        solver that will be used needs it (:func:`~nordicstats.solvers.needs_gram`; the
        sparse primal solver does not, which keeps n = 10^5 fits within memory).  Above
        :data:`~nordicstats.solvers.DENSE_GRAM_MAX_ROWS` rows a named kernel is passed
        as a :class:`~nordicstats.kernels.KernelMatrix` (rows on demand) to the solvers
        that take one (:func:`~nordicstats.solvers.takes_kernel_rows`).
        """
        method = self.method if method is None else method
        rows_on_demand = (self.kernel.name in KERNELS and self.exog.shape[0] > DENSE_GRAM_MAX_ROWS
                          and self._gram is None)
        problem = NordicProblem(
            gram=None if self.kernel.is_linear else (
                KernelMatrix(self.kernel, self.exog) if rows_on_demand else self.gram),
            signs=binary_signs(self.response.codes, self.response.n_levels),
            C=self.C if C is None else C, method=method, noncrossing=self.noncrossing,
            penalty=self.penalty if method == "nordic2" else "l2",
            X=self.exog if self.kernel.is_linear else None, hinge_weights=self.hinge_weights,
        )
        if (problem.gram is None and needs_gram(self.solver, problem)) or (
                isinstance(problem.gram, KernelMatrix)
                and not takes_kernel_rows(self.solver, problem)):
            problem = dataclasses.replace(problem, gram=self.gram)
        return problem

    def fit(self, cov_type=None, cov_kwds=None, fitted_at=None, probability=False,
            probability_kwds=None, **solver_options):
        """Fit the model.

        Parameters
        ----------
        cov_type : {None, "auto", "bahadur", "bootstrap", "none"}, optional
            Covariance of the linear coefficients (see :mod:`nordicstats.covariance`),
            computed now and kept in the results.  None (default) means "auto" for a
            linear fit and no covariance for a kernel fit; "none" computes none (fits
            used only for prediction: no standard errors, so no BSVM fit for the
            validity diagnostics and no bootstrap).
        cov_kwds : dict, optional
            Options of the covariance estimator.
        fitted_at : datetime, optional
            Time stamp shown in the summary (default: now); set it for
            reproducible summaries.
        probability : bool, default=False
            Also fit the map from decision values to class probabilities
            (:mod:`nordicstats.probability`), for ``predict(X, which="proba")`` and
            ``predict(X, cost=...)``: the model is refitted on ``n_folds`` - 1 folds at a
            time (same C and kernel width) and the map is fitted on the held-out
            decision values, so this costs ``n_folds`` more fits.
        probability_kwds : dict, optional
            ``method`` ("logistic" (default): one slope, ordered offsets; "pooled": the
            same plus a slope on the row mean of the decision values; "platt": per
            boundary, projected onto the monotone set; "isotonic"), ``n_folds``
            (default 5) and ``random_state`` (default 0, the fold assignment).
        **solver_options
            Override ``solver_options`` given to the constructor.

        Returns
        -------
        NORDICResults
        """
        if not isinstance(probability, (bool, np.bool_)):
            raise ValueError(f"The 'probability' parameter of NORDIC.fit must be True or False. "
                             f"Got {probability!r} instead.")
        if probability_kwds is not None and not probability:
            raise ValueError("probability_kwds is used only with probability=True; pass "
                             "fit(probability=True, probability_kwds=...).")
        kwds = check_probability_kwds(probability_kwds) if probability else None
        options = {**self.solver_options, **solver_options}
        solver_result = solve(self.build_problem(), solver=self.solver, **options)
        calibration = self._calibrate(kwds, options) if probability else None
        return NORDICResults(self, solver_result, cov_type=cov_type, cov_kwds=cov_kwds,
                             fitted_at=fitted_at, calibration=calibration)

    def fit_unconstrained(self):
        """The unconstrained fit (BSVM) on the same data, case weights, costs and C.

        The K-1 separate SVMs without the noncrossing constraints (for NORDIC-2 with
        the l1 penalty: the l2 BSVM).  Results use it for the price of noncrossing and
        the validity diagnostics of the covariance.

        Returns
        -------
        problem : NordicProblem
            The BSVM problem.
        solver_result : SolverResult
            Its solution, by this model's solver when that solver handles BSVM
            (:func:`~nordicstats.solvers.handles`), else by ``solver="auto"``.
        """
        problem = self.build_problem(method="bsvm")
        # the model's own solver when it handles BSVM: build_problem leaves out the Gram
        # matrix for a solver that does not need it, which "auto" may not pick at small n
        solver = self.solver if handles(self.solver, "bsvm") else "auto"
        return problem, solve(problem, solver=solver)

    def refit_params(self, rows, scale=None):
        """Coefficients of this specification refitted on the rows ``rows`` (the bootstrap's refit).

        Repeated rows are fitted once with their count as case weight, which is the
        same fit: row i drawn m_i times enters the loss as m_i * c_{i,k} xi_{k,i}.  The
        response is the level codes, the costs the checked cost matrix; no covariance
        is computed.

        Parameters
        ----------
        rows : array-like of int
            Row numbers of the training data, with repeats (a bootstrap resample).
        scale : float, optional
            Multiplies the counts (the bootstrap of non-integer case weights draws rows
            with probability proportional to w_i and scales the loss by sum(w) / n).

        Returns
        -------
        ndarray of shape (1 + d, K-1)
            b_k (first row) and w_k of the refitted linear model, like ``params``.
        """
        rows, counts = np.unique(rows, return_counts=True)
        weights = counts if scale is None else counts * scale
        kwds = {**self._get_init_kwds(), "order": None,
                "solver": refit_solver(self.solver, self.method)}
        if self.cost is not None:
            kwds["cost"] = self.cost  # checked and ordered like the codes
        refitted = type(self)(self.response.codes[rows], self.exog[rows], weights=weights, **kwds)
        return refitted.fit(cov_type="none").params.to_numpy()

    def _calibrate(self, kwds, solver_options):
        """Cross-fitted calibration map: refits on folds, the map on held-out f_k(x_i)."""
        codes = self.response.codes

        def held_out_decision(train, test):
            fold = self._on_rows(train).fit(cov_type="none", **solver_options)
            return fold.decision_function(self.exog[test])

        F = cross_fit_decision(held_out_decision, codes, self.levels, kwds["n_folds"],
                               kwds["random_state"])
        calibration = fit_calibration(F, codes, self.weights, kwds["method"])
        return dataclasses.replace(calibration, held_out=F, options=kwds)

    def _on_rows(self, rows):
        """The same specification on a subset of the training rows: codes as the response,
        the kernel width of this fit (not re-derived from the subset), the checked cost."""
        kwds = {**self._get_init_kwds(), "order": list(range(self.n_levels)),
                "gamma": self.kernel.gamma, "cost": self.cost}
        weights = None if self.weights is None else self.weights[rows]
        return NORDIC(self.response.codes[rows], self.exog[rows], weights=weights, **kwds)
