"""The covariance of a fitted NORDIC: the one entry point from a fit to the estimators.

:func:`fit_covariance` takes the model, the solver result and ``cov_type`` /
``cov_kwds`` (as linearmodels' ``IVResults`` receive a covariance estimator built from
the model and its fit): it states the fit as arrays
(:class:`~nordicstats.covariance.FitArrays`: X, the level codes, the coefficients, case
weights, cost weights, the unconstrained BSVM coefficients for the validity
diagnostics, and the model's refit ``model.refit_params`` for the bootstrap), calls
:func:`~nordicstats.covariance.estimate_covariance`, adds the note on binding
noncrossing constraints and raises the notes as warnings.

The model is read through its public attributes and methods (``kernel``, ``exog``,
``response``, ``weights``, ``cost``, ``method``, ``penalty``, ``C``, ``refit_params``,
``fit_unconstrained``); this module imports no model, so it sits in the covariance
layer (docs/notes/layering.md).  :func:`linear_weights` and
:func:`price_of_noncrossing` are the two statements on a fit that the results and the
covariance share.
"""

from __future__ import annotations

import dataclasses
import warnings
from functools import partial

import numpy as np

from nordicstats.class_rule import count_crossings
from nordicstats.costs import cost_to_boundary_weights
from nordicstats.covariance import FitArrays, check_cov_kwds, estimate_covariance
from nordicstats.exceptions import InferenceWarning

__all__ = ["fit_covariance", "linear_weights", "price_of_noncrossing"]


def linear_weights(model, solver_result):
    """Weights w_k of a linear fit, shape (d, K-1): the solver's primal weights, or X'omega_k.

    Raises
    ------
    AttributeError
        For a non-linear kernel, whose boundaries have no finite weight vector.
    """
    if not model.kernel.is_linear:
        raise AttributeError(
            f"coef and params exist for kernel='linear' only; this fit used the "
            f"{model.kernel.describe()} kernel, whose boundaries are described by "
            "dual_coef (omega) and intercept."
        )
    if solver_result.coef is not None:
        return np.asarray(solver_result.coef)
    return model.exog.T @ solver_result.dual_coef


def price_of_noncrossing(fit, unconstrained):
    """Comparison of a fit with the unconstrained fit (BSVM) on the same data and C.

    Parameters
    ----------
    fit : SolverResult
        The constrained fit.
    unconstrained : tuple (NordicProblem, SolverResult)
        The BSVM problem and its solution (``model.fit_unconstrained()``).

    Returns
    -------
    dict
        ``bsvm_objective``, ``objective_increase`` (the fit's objective minus BSVM's,
        >= 0 up to solver tolerance) and ``bsvm_crossing_rate`` (share of training rows
        where the separate SVMs cross, :func:`~nordicstats.class_rule.count_crossings`).
    """
    problem, bsvm = unconstrained
    F = problem.decision_values(bsvm.dual_coef, bsvm.intercept, bsvm.coef)
    return {
        "bsvm_objective": bsvm.objective,
        "objective_increase": fit.objective - bsvm.objective,
        "bsvm_crossing_rate": float(np.mean(count_crossings(F))),
    }


def _nonlinear_error(model, cov_type):
    return ValueError(
        f"cov_type={cov_type!r} needs kernel='linear'. Wald inference (bse, z-tests, conf_int) "
        "is for the coefficients b_k, w_k of linear NORDIC (the paper's Theorem 1, Section 5.2); "
        f"this fit uses the {model.kernel.describe()} kernel, whose boundaries have no finite "
        "coefficient vector, so cov_type='bootstrap' has no coefficients to resample either. "
        "Refit with kernel='linear', or fit with cov_type=None."
    )


def fit_covariance(model, solver_result, cov_type=None, cov_kwds=None, *, boundary_names,
                   unconstrained=None, stacklevel=5):
    """Covariance of the coefficients of a fitted linear NORDIC, with its guards.

    Parameters
    ----------
    model : NORDIC
        The fitted model (read, not changed).
    solver_result : SolverResult
        Its solution.
    cov_type : {None, "auto", "bahadur", "bootstrap", "none"}
        ``None`` means ``"auto"`` for linear fits and no covariance for kernel fits;
        ``"none"`` skips the covariance (bootstrap refits use it).
    cov_kwds : dict, optional
        See :func:`~nordicstats.covariance.check_cov_kwds`.
    boundary_names : sequence of str
        Names of the K-1 boundaries (``"a|b"``).
    unconstrained : callable, optional
        ``unconstrained() -> (NordicProblem, SolverResult)``: the BSVM fit on the same
        data (a cached one, so that it is solved once); default
        ``model.fit_unconstrained``.  Not called for BSVM itself.
    stacklevel : int, default=5
        ``stacklevel`` of the warnings (5: the caller of ``NORDIC.fit``).

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
    unconstrained = model.fit_unconstrained if unconstrained is None else unconstrained
    codes = model.response.codes
    weights, cost = getattr(model, "weights", None), getattr(model, "cost", None)
    scale = None  # non-integer weights: n rows drawn with p ~ w, loss scaled by sum(w)/n
    if weights is not None and not np.all(weights == np.round(weights)):
        scale = weights.sum() / weights.size
    params = np.vstack([solver_result.intercept[None, :], linear_weights(model, solver_result)])
    fit = FitArrays(X=model.exog, codes=codes, params=params,
                    boundary_names=tuple(boundary_names),
                    refit=partial(model.refit_params, scale=scale),
                    weights=weights,
                    loss_weights=None if cost is None else cost_to_boundary_weights(cost)[codes],
                    **(_unconstrained_arrays(model, unconstrained)
                       if cov_type != "bootstrap" else {}))
    cov = estimate_covariance(fit, cov_type, cov_kwds)
    active = (_active_note(model, solver_result, unconstrained) if cov_type == "bahadur"
              else None)
    notes = tuple(note for note in [*cov.notes, active] if note)
    for note in notes:
        warnings.warn(note, InferenceWarning, stacklevel=stacklevel)
    return dataclasses.replace(cov, notes=notes)


def _unconstrained_arrays(model, unconstrained):
    """FitArrays fields for the validity diagnostics: the BSVM coefficients (same data,
    weights, costs and C; none when the fit is BSVM), and no gap check for l1 NORDIC-2,
    whose unconstrained counterpart is another problem class."""
    if model.method == "bsvm":
        return {}
    _, bsvm = unconstrained()
    out = {"params_unconstrained": np.vstack([bsvm.intercept[None, :],
                                              linear_weights(model, bsvm)])}
    if model.method == "nordic2" and model.penalty == "l1":
        out["thresholds"] = {"max_gap": np.inf}
    return out


def _active_note(model, solver_result, unconstrained, tol=1e-8):
    """InferenceWarning text when noncrossing constraints bind at the solution, else None."""
    if model.method == "bsvm" or model.response.n_levels < 3:
        return None
    count = solver_result.info.get("active_noncrossing")
    multipliers = solver_result.multipliers
    if count is None and "phi" in multipliers:
        scale = tol * max(1.0, model.C)
        count = int(np.sum(np.asarray(multipliers["phi"]) > scale)
                    + np.sum(np.asarray(multipliers.get("gamma", [])) > scale))
    if count is None:
        if model.method == "nordic2" and model.penalty == "l1":
            return ("whether the noncrossing constraints bind could not be checked for this "
                    "solver; if they do, Theorem 1 (same limit law as the unconstrained SVM) is "
                    "only asymptotic and the intervals may be distorted.")
        price = price_of_noncrossing(solver_result, unconstrained())
        count = int(price["bsvm_crossing_rate"] > 0
                    or price["objective_increase"] > 1e-6 * max(1.0, abs(price["bsvm_objective"])))
    if not count:
        return None
    return (f"{count} noncrossing constraint(s) are active at the solution. Theorem 1 (the "
            "constrained fit has the unconstrained SVM's limit law) is asymptotic, so at this "
            "sample size the Bahadur intervals may be distorted, and test_parallel() tends to "
            "be conservative (binding constraints pull the boundaries together); compare with "
            "cov_type='bootstrap'.")
