"""The Python functions the R package calls (one implementation, R only formats).

The functions in :data:`API` are exposed to R under their own names; the bridge
(:mod:`nordicstats.r.bridge`) registers them, and this module does not import it.
Fits are kept in a small in-process cache keyed
by a random id that the R object stores.  When the id is missing -- the R
object came from ``readRDS()`` in a new session, or the cache evicted it --
the R side sends the training data and options it keeps and
:func:`refit_model` re-creates the fit.  Fits are deterministic, so the
refit's training decision values must equal the stored ones bit for bit; a
difference (say another solver version) raises a warning that states the
largest change.
"""

from __future__ import annotations

import dataclasses
import inspect
import uuid
import warnings
from collections import OrderedDict

import numpy as np
import pandas as pd

from nordicstats import theory as theory_helpers
from nordicstats.compare import OrderedLogit, OrdinalSVR, make_classifier
from nordicstats.data import binary_signs
from nordicstats.model import NORDIC
from nordicstats.r.convert import frame_to_matrix
from nordicstats.r.wording import r_message
from nordicstats.tuning import PAPER_C_GRID, default_grid, tune
from nordicstats.weighting import describe_weighting

__all__ = ["API", "fit_model", "refit_model", "has_fit", "forget_fits", "predict_model",
           "residuals_model", "coef_table", "vcov_model", "confint_model",
           "parallel_test_model", "tune_model", "echo", "theory", "FAMILIES", "R_NAMES",
           "THEORY", "CACHE_SIZE"]

#: Fits kept in memory; older ones are re-created on demand from the R object.
CACHE_SIZE = 32
_FITS = OrderedDict()



# ----------------------------------------------------------------------------- fitting
#: Model families R can fit: R front end -> Python model class.
FAMILIES = {"nordic": NORDIC, "svr": OrdinalSVR, "ologit": OrderedLogit}
#: The R function of each family (messages).
R_NAMES = {"nordic": "nordic", "svr": "ordinal_svr", "ologit": "ordered_logit"}


def fit_model(family, y, X, args=None, response="y", key=None):
    """Fit a model of ``family`` to an R response and design matrix.

    Parameters
    ----------
    family : {"nordic", "svr", "ologit"}
        :class:`nordicstats.model.NORDIC`, :class:`nordicstats.compare.OrdinalSVR`
        or :class:`nordicstats.compare.OrderedLogit`.
    y : pandas.Categorical
        The response, an R ordered factor (its levels give the order).
    X : pandas.DataFrame or ndarray
        The design matrix without the intercept column (R's model.matrix).
    args : dict, optional
        Arguments from R.  Those the model's constructor takes go there
        (validated by the model); the others go to ``fit()`` (e.g.
        ``cov_type``, solver options).
    response : str
        Name of the response (messages, summaries).
    key : str, optional
        Cache id (a refit reuses the original id).

    Returns
    -------
    dict
        The fields of the R object (see :func:`_describe`).
    """
    cls = _family(family)
    model_kw, fit_kw = _split_args(cls, args, R_NAMES[family])
    model = cls(_response(y, response), _design(X), **model_kw)
    res = model.fit(**fit_kw)
    key = key or uuid.uuid4().hex
    _remember(key, res)
    return _describe(family, key, res, _all_rows(res, X))


def _all_rows(res, X):
    """The design when the fit left rows out (case weight 0), so that R's fitted values
    cover every row of its model frame, as ``lm`` does; else None (the training rows)."""
    return _design(X) if getattr(res.model, "n_zero_weight", 0) else None


def refit_model(key, state, fitted_decision):
    """Re-create the fit ``key`` from the state an R object keeps; check it is the same fit.

    Returns
    -------
    bool
        True; a warning says so when the decision values differ from the stored ones.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the original fit already reported these
        fit_model(key=key, **state)
    refit = _decision(_FITS[key], _all_rows(_FITS[key], state["X"]))
    stored = np.asarray(fitted_decision, dtype=float)
    if stored.shape != refit.shape or not np.array_equal(stored, refit):
        diff = np.max(np.abs(stored - refit)) if stored.shape == refit.shape else np.inf
        warnings.warn(
            "re-creating the fit from the data kept in the R object gave different decision "
            f"values (largest difference {diff:.3g}); a package or solver version changed "
            "since the object was saved. Fit the model again to be safe.",
            stacklevel=2,
        )
    return True


def has_fit(key):
    """True when the fit ``key`` is in this Python process's cache."""
    return key in _FITS


def forget_fits():
    """Empty the cache (a test hook for the readRDS path); returns how many were dropped."""
    n = len(_FITS)
    _FITS.clear()
    return n


def _remember(key, res):
    _FITS[key] = res
    _FITS.move_to_end(key)
    while len(_FITS) > CACHE_SIZE:
        _FITS.popitem(last=False)


def _get(key):
    try:
        return _FITS[key]
    except KeyError:
        raise KeyError(f"fit '{key}' is not in the Python cache; the R side refits it "
                       "from the data the object keeps.") from None


# ----------------------------------------------------------------------------- results
def predict_model(key, X, type="class"):
    """Predictions for new rows: ``predict(X, which=...)`` of the fit, as R values.

    ``type`` is R's name: ``"class"`` and ``"decision"`` for every family,
    ``"probs"`` (a matrix, one column per level, like ``MASS::polr``) for the fits
    that have class probabilities, ``"score"`` for ``svr``; rows with a missing
    covariate give NA.
    """
    res = _get(key)
    which = _probability_kind(res) if type == "probs" else type
    out = res.predict(_design(X), which=which)
    if isinstance(out, pd.DataFrame):
        return frame_to_matrix(out.reset_index(drop=True))
    if isinstance(out, pd.Series) and not isinstance(out.dtype, pd.CategoricalDtype):
        return out.to_numpy(dtype=float)
    return pd.Categorical(out)


def _probability_kind(res):
    """Python's name of the class probabilities of a fit: ``"proba"``, or the ordered
    logit's older ``"prob"`` where ``"proba"`` is not offered."""
    return "proba" if "proba" in res._predictions() else "prob"


def residuals_model(key, X, y):
    """Residuals of a fit at the rows ``(X, y)`` of its model frame (R's ``residuals()``).

    NORDIC: the hinge slacks ``xi_ik = (1 - y_i^(k) f_k(x_i))_+`` of every row and
    boundary (paper, eq. (2.3): the loss the fit minimises), with ``y_i^(k) = +1`` when
    ``y_i`` is above boundary k, else -1; a matrix with one column per boundary.
    SVR: the level number minus the fitted score, ``(1..K)_i - g(x_i)``.  The ordered
    logit has no residuals of one accepted kind (as ``MASS::polr``), so it raises.
    """
    res = _get(key)
    codes = np.asarray(_response(y, "y").cat.codes, dtype=int)
    if isinstance(res.model, NORDIC):
        F = _decision(res, X)
        return _boundary_matrix(res, np.maximum(0.0, 1.0 - binary_signs(codes, F.shape[1] + 1)
                                                * F))
    if isinstance(res.model, OrdinalSVR):
        return codes + 1.0 - res.predict_score(_design(X))
    raise ValueError("ordered_logit() fits have no residuals (nor have MASS::polr fits): use "
                     "predict(fit, type = \"probs\") for fitted probabilities.")


#: summary_frame() columns -> the names R's summary prints.
_R_COLUMNS = {"coef": "Estimate", "std err": "Std. Error", "z": "z value", "P>|z|": "Pr(>|z|)"}


def coef_table(key):
    """``summary_frame()`` of the fit for R's summary, one row per (block, term).

    Columns ``block`` (a boundary name for NORDIC, ``"coefficients"`` or
    ``"thresholds"`` for the ordered logit), ``term``, ``Estimate`` and, when the
    results provide inference, ``Std. Error``, ``z value``, ``Pr(>|z|)`` -- the
    numbers Python computed.  ``note`` says why standard errors are absent;
    ``sources`` (NORDIC) gives, per boundary, the estimator behind its standard errors
    ("bahadur", "bootstrap" or "none"), whether intervals are reported, and the reason
    (``cov_sources``).
    """
    res = _get(key)
    frame = res.summary_frame()
    blocks, terms = (frame.index.get_level_values(i) for i in (0, 1))
    table = pd.DataFrame({"block": list(map(str, blocks)),
                          "term": ["(Intercept)" if t == "Intercept" else str(t) for t in terms]})
    for column, r_name in _R_COLUMNS.items():
        if column in frame.columns:
            table[r_name] = frame[column].to_numpy(dtype=float)
    has_se = "std err" in frame.columns
    return {"table": table, "note": None if has_se else _no_se_reason(res),
            "sources": _cov_sources(res) if has_se else None}


def _cov_sources(res):
    """Per boundary: the estimator behind the standard errors and why (NORDIC fits)."""
    if not hasattr(res, "cov_sources"):
        return None
    sources = res.cov_sources
    return pd.DataFrame({"boundary": list(map(str, sources.index)),
                         "estimator": sources["estimator"].to_numpy(),
                         "intervals": sources["intervals"].to_numpy(dtype=bool),
                         "reason": [r_message(r) for r in sources["reason"]]})


def _no_se_reason(res):
    if _is_kernel_nordic(res):
        return _kernel_reason(res)
    try:
        res.cov_params()
    except Exception as exc:  # the results say why they have no covariance
        return r_message(exc)
    return None


def _is_kernel_nordic(res):
    return isinstance(res.model, NORDIC) and not res.model.kernel.is_linear


def _kernel_reason(res):
    return (f"this fit used the {res.model.kernel.describe()} kernel, whose boundaries have "
            "no coefficients (hence no standard errors or tests); fit kernel = \"linear\" "
            "for inference.")


def _linear_fit(key, what):
    """The fit ``key``; a kernel NORDIC fit raises, since ``what`` needs coefficients."""
    res = _get(key)
    if _is_kernel_nordic(res):
        raise ValueError(f"{what} needs a nordic() fit with kernel = \"linear\": "
                         + _kernel_reason(res))
    return res


def vcov_model(key):
    """``cov_params()`` of the fit as a matrix with the parameter names."""
    return _as_matrix(_linear_fit(key, "vcov()").cov_params(), "cov_params()")


def confint_model(key, level=0.95):
    """``conf_int(alpha = 1 - level)`` of the fit as a two-column matrix."""
    res = _linear_fit(key, "confint()")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1); got {level!r}.")
    return _as_matrix(res.conf_int(alpha=1.0 - level), "conf_int()")


def parallel_test_model(key):
    """``test_parallel()`` of a linear NORDIC fit: statistic, df, p-value and method text."""
    res = _linear_fit(key, "parallel_test()")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        test = res.test_parallel()
    statistic = float(test.statistic)
    if np.isfinite(statistic):
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        reason = None
    else:
        reason = _parallel_unavailable(res)
    return {"statistic": statistic, "df": int(test.df), "p_value": float(test.pvalue),
            "method": r_message(test.title), "reason": reason}


def _parallel_unavailable(res):
    """Why the parallel test has no statistic: the boundaries whose intervals are withheld."""
    sources = res.cov_sources
    withheld = [str(name) for name, row in sources.iterrows() if not row.intervals]
    return ("the test needs standard errors with intervals for at least two boundaries, and "
            f"they are withheld for {', '.join(withheld)} (summary() gives the reasons).")


def _flat_labels(index):
    """(boundary, term) MultiIndex -> ``"term@boundary"``, the labels of ``wald_test``."""
    if isinstance(index, pd.MultiIndex) and index.nlevels == 2:
        return pd.Index([f"{term}@{boundary}" for boundary, term in index])
    return index


def _as_matrix(value, what):
    if isinstance(value, pd.DataFrame):
        value = value.set_axis(_flat_labels(value.index), axis=0)
        value = value.set_axis(_flat_labels(value.columns), axis=1)
        return frame_to_matrix(value)
    raise TypeError(f"{what} returned {type(value).__name__}; the bridge expects a DataFrame.")


def tune_model(y, X, args=None, C=None, gamma=None, quantiles=(0.1, 0.5, 0.9), folds=5,
               seed=None, y_tune=None, X_tune=None, scoring="error", weights=None,
               response="y"):
    """:func:`nordicstats.tuning.tune` of a NORDIC method for R's ``tune_nordic()``.

    Parameters
    ----------
    y, X : the response (ordered factor) and design matrix, as for :func:`fit_model`.
    args : dict, optional
        Fixed options of the NORDIC model (``method``, ``kernel``, ``cost``, ...).
    C : sequence of float, optional
        The C grid (default the paper's 2^-4..2^4).
    gamma : sequence of float, optional
        The width grid; default the rbf widths at ``quantiles`` of the pairwise
        distances (case weights as frequencies).  Non-rbf kernels tune only C unless
        ``gamma`` is given.
    folds, seed : stratified k-fold cross-validation (when there is no tuning set).
    y_tune, X_tune : optional
        A tuning set (the paper's protocol) instead of cross-validation.
    scoring : {"error", "mae"} or a (K, K) cost matrix
    weights : case weights of the training rows.

    Returns
    -------
    dict
        ``scores`` (data frame), ``best`` (the chosen parameters), ``best_score``,
        ``protocol``, ``scoring`` and ``fold`` (the 1-based fold of each row under CV).
    """
    fixed, _ = _split_args(NORDIC, args, "tune_nordic")  # fit() options apply to the refit
    method = fixed.pop("method", "nordic1")
    make_classifier(method, **fixed)  # checks the options once, before the grid
    grid = {"C": list(PAPER_C_GRID if C is None else np.atleast_1d(C))}
    if gamma is not None:
        grid["gamma"] = list(np.atleast_1d(gamma))
    elif fixed.get("kernel", "rbf") == "rbf":
        grid["gamma"] = default_grid(method, _design(X), quantiles=list(np.atleast_1d(
            quantiles)), weights=weights)["gamma"]
    holdout = {} if X_tune is None else {"X_tune": _design(X_tune),
                                         "y_tune": _response(y_tune, response)}
    result = tune(lambda **params: make_classifier(method, **fixed, **params), _design(X),
                  _response(y, response), param_grid=grid,
                  cv=None if holdout else int(folds),
                  scoring=(scoring if isinstance(scoring, (str, pd.DataFrame))
                           else np.asarray(scoring, float)),
                  random_state=None if seed is None else int(seed), refit=False,
                  weights=weights, **holdout)
    fold = None
    if result.folds is not None:
        fold = np.zeros(len(y), dtype=int)
        for j, (_, test) in enumerate(result.folds):
            fold[test] = j + 1
    scores = result.scores.drop(columns=["fit_time"]).rename(
        columns=lambda c: f"fold{int(c[5:]) + 1}" if c.startswith("split") else c)
    return {"scores": scores, "best": result.best_params, "best_score": result.best_score,
            "protocol": result.protocol, "scoring": result.scoring, "fold": fold}


def echo(x):
    """Return ``x`` unchanged: R -> Python -> R, for the round-trip tests."""
    return x


#: Theory helpers callable from R (nordicstats.theory).
THEORY = ("bayes_rule_ordinal", "bayes_rule_multiclass", "upper_tail", "conditional_risk",
          "prediction_risks", "loss_matrix", "fisher_consistency")


def theory(name, args=None):
    """Call ``nordicstats.theory.<name>(**args)``; results become plain R values."""
    if name not in THEORY:
        raise ValueError(f"unknown theory helper {name!r}; available: {list(THEORY)}.")
    out = getattr(theory_helpers, name)(**dict(args or {}))
    if dataclasses.is_dataclass(out):
        fields = {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}
        fields["table"] = out.to_frame() if hasattr(out, "to_frame") else None
        return fields
    if isinstance(out, tuple):
        return list(out)
    return out


# ----------------------------------------------------------------------------- helpers
def _family(family):
    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}; available: {sorted(FAMILIES)}.")
    return FAMILIES[family]


def _response(y, name):
    if isinstance(y, pd.Categorical) and not y.ordered:
        raise ValueError(
            f"the response '{name}' is an unordered factor, so the order of its levels "
            f"({', '.join(map(str, y.categories))}) is not known. Make it ordered, e.g. "
            f"{name} <- ordered({name}, levels = c(...)), or factor(..., ordered = TRUE)."
        )
    return pd.Series(y, name=name)


def _design(X):
    if isinstance(X, pd.DataFrame):
        return X.reset_index(drop=True)
    return np.asarray(X, dtype=float)


def _split_args(cls, args, r_name):
    """Constructor arguments of ``cls`` vs those of its ``fit()``; any other name raises."""
    args = dict(args or {})
    taken = set(inspect.signature(cls.__init__).parameters) - {"self", "endog", "exog"}
    fit_params = inspect.signature(cls.fit).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in fit_params.values()):
        known = (taken | set(fit_params)) - {"self", "order"}
        unknown = sorted(set(args) - known - {"order"})
        if unknown:
            raise ValueError(f"unused argument(s) {', '.join(unknown)} in {r_name}(); its "
                             f"arguments are: {', '.join(sorted(known))}.")
    for bad in ("order",):
        if bad in args:
            raise ValueError(f"'{bad}' cannot be set from R: the levels of the ordered factor "
                             "response give the order.")
    args = _whole_numbers_as_int(args, ("degree",))  # R's 2 is a double
    if isinstance(args.get("probability_kwds"), dict):
        args["probability_kwds"] = _whole_numbers_as_int(args["probability_kwds"],
                                                         ("n_folds", "random_state"))
    model_kw = {k: v for k, v in args.items() if k in taken}
    fit_kw = {k: v for k, v in args.items() if k not in taken}
    return model_kw, fit_kw


def _whole_numbers_as_int(args, names):
    """``args`` with the whole-number doubles under ``names`` as ints (R's 10 is 10.0)."""
    return {k: int(v) if k in names and isinstance(v, float) and v.is_integer() else v
            for k, v in args.items()}


def _strings(values):
    """A character vector for R (a Python list would become an R list)."""
    return pd.array([str(v) for v in values], dtype="str")


def _decision(res, X):
    return np.asarray(res.decision_function(X), dtype=float)


def _boundary_matrix(res, values):
    return frame_to_matrix(pd.DataFrame(values, columns=list(res.boundary_names)))


def _describe(family, key, res, X=None):
    """Fields of the R object: common ones plus the family's own (fitted values at X)."""
    common = {
        "key": key,
        "family": family,
        "levels": _strings(res.model.levels),
        "boundaries": _strings(res.model.boundary_names),
        "nobs": int(res.nobs),
        "fitted_decision": _boundary_matrix(res, _decision(res, X)),
        "fitted_class": pd.Categorical(res.predict(X, which="class")),
    }
    return {**common, **_DESCRIBE[family](res)}


def _describe_nordic(res):
    model = res.model
    kernel = model.kernel
    return {
        "method": model.method,
        "kernel": kernel.name,
        "kernel_description": kernel.describe(),
        "gamma": kernel.gamma,
        "C": model.C,
        "intercepts": res.intercept,
        "coefficients": frame_to_matrix(res.coef) if kernel.is_linear else None,
        "n_support": res.n_support.astype(float),
        "objective": float(res.objective),
        "solver": res.solver_result.solver,
        "status": res.solver_result.status,
        "crossing_rate": res.crossing_rate(),
        "noncrossing": model.noncrossing,
        "penalty": model.penalty,
        "weighting": describe_weighting(model.weights, model.cost, model.levels)[1],
    }


def _describe_svr(res):
    model = res.model
    return {
        "kernel": model.spec.kernel.name,
        "kernel_description": model.spec.kernel.describe(),
        "C": model.spec.C,
        "epsilon": model.epsilon,
        "scale": model.scale,
        "intercept": res.intercept,
        "n_support": int(res.support.size),
        "cutoffs": res.cutoffs,
        "fitted_score": np.asarray(res.fittedvalues, dtype=float),
    }


def _describe_ologit(res):
    return {
        "coefficients": res.coef,
        "zeta": res.thresholds,
        "logLik": res.llf,
        "aic": res.aic,
        "bic": res.bic,
    }


_DESCRIBE = {"nordic": _describe_nordic, "svr": _describe_svr, "ologit": _describe_ologit}


#: The functions R calls, by their own names (registered by :mod:`nordicstats.r.bridge`).
API = (fit_model, refit_model, has_fit, forget_fits, predict_model, residuals_model,
       coef_table, vcov_model, confint_model, parallel_test_model, tune_model, echo, theory)
