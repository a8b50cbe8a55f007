"""The Python functions the R package calls (one implementation, R only formats).

Each function here is exposed to R under its own name (see
:mod:`nordicstats.r.bridge`).  Fits are kept in a small in-process cache keyed
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

from nordicstats.r.bridge import expose
from nordicstats.r.convert import frame_to_matrix

__all__ = ["fit_model", "refit_model", "has_fit", "forget_fits", "predict_model",
           "coef_table", "vcov_model", "confint_model", "echo", "theory", "FAMILIES",
           "THEORY", "CACHE_SIZE"]

#: Fits kept in memory; older ones are re-created on demand from the R object.
CACHE_SIZE = 32
_FITS = OrderedDict()



# ----------------------------------------------------------------------------- fitting
def _nordic_class():
    from nordicstats.model import NORDIC

    return NORDIC


def _competitor_class(name):
    def load():
        from nordicstats import compare

        return getattr(compare, name)
    return load


#: Model families R can fit: R front end -> Python model class.
FAMILIES = {"nordic": _nordic_class, "svr": _competitor_class("OrdinalSVR"),
            "ologit": _competitor_class("OrderedLogit")}


@expose
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
    cls = _family(family)()
    model_kw, fit_kw = _split_args(cls, args)
    model = cls(_response(y, response), _design(X), **model_kw)
    res = model.fit(**fit_kw)
    key = key or uuid.uuid4().hex
    _remember(key, res)
    return _describe(family, key, res)


@expose
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
    refit = _decision(_FITS[key], None)
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


@expose
def has_fit(key):
    """True when the fit ``key`` is in this Python process's cache."""
    return key in _FITS


@expose
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
@expose
def predict_model(key, X, type="class"):
    """Predictions for new rows: the user's ordered levels, or a matrix/vector.

    ``type`` is passed to the results' ``predict(X, which=type)``: ``"class"``
    and ``"decision"`` for every family, ``"prob"`` for ``ologit`` and
    ``"score"`` for ``svr``.
    """
    res = _get(key)
    out = res.predict(_design(X), which=type)
    if type == "class":
        return pd.Categorical(out)
    if type == "decision":
        return _boundary_matrix(res, out)
    if isinstance(out, pd.DataFrame):
        return frame_to_matrix(out.reset_index(drop=True))
    return np.asarray(out, dtype=float)


@expose
def coef_table(key):
    """Coefficient table for R's summary, one row per (block, term).

    Columns ``block`` (a boundary name for NORDIC, ``"coefficients"`` or
    ``"thresholds"`` for the ordered logit), ``term``, ``Estimate`` and, when
    the results provide inference, ``Std. Error``, ``z value``, ``Pr(>|z|)``
    (taken from ``bse``/``pvalues`` when the results have them, else from the
    diagonal of ``cov_params()``).  ``note`` says why standard errors are absent;
    ``sources`` (NORDIC) gives, per boundary, the estimator behind its standard errors
    ("bahadur", "bootstrap" or "none") and the reason.
    """
    res = _get(key)
    if hasattr(res, "thresholds"):  # ordered logit: beta then zeta, as polr
        est = res.params
        blocks = ["coefficients"] * res.coef.size + ["thresholds"] * res.thresholds.size
        table = pd.DataFrame({"block": blocks, "term": list(map(str, est.index)),
                              "Estimate": est.to_numpy()})
    else:
        table = _nordic_table(res)
    note = None
    try:
        se = _standard_errors(res, len(table))
    except Exception as exc:  # no inference for this fit: say why, show the estimates
        se, note = None, str(exc)
    if se is not None:
        from scipy import stats

        table["Std. Error"] = se
        table["z value"] = table["Estimate"] / se
        table["Pr(>|z|)"] = 2 * stats.norm.sf(np.abs(table["z value"]))
    return {"table": table, "note": note, "sources": _cov_sources(res, se)}


def _cov_sources(res, se):
    """Per boundary: the estimator behind the standard errors and why (NORDIC fits)."""
    if se is None or not hasattr(res, "cov_sources"):
        return None
    sources = res.cov_sources
    if sources.empty:
        return None
    return pd.DataFrame({"boundary": list(map(str, sources.index)),
                         "estimator": sources["estimator"].to_numpy(),
                         "reason": sources["reason"].to_numpy()})


def _nordic_table(res):
    params = res.params if res.model.kernel.is_linear else res.intercept.to_frame().T
    rows = [(b, t) for b in params.columns for t in params.index]
    return pd.DataFrame({"block": [b for b, _ in rows],
                         "term": ["(Intercept)" if t == "Intercept" else str(t) for _, t in rows],
                         "Estimate": params.to_numpy().T.ravel()})


def _standard_errors(res, size):
    kernel = getattr(res.model, "kernel", None)
    if kernel is not None and not kernel.is_linear:
        raise ValueError("standard errors exist for kernel = \"linear\" only; kernel fits "
                         "have no coefficients to test.")
    if hasattr(res, "bse"):
        se = np.asarray(res.bse, dtype=float).T.ravel()
    elif hasattr(res, "cov_params"):
        se = np.sqrt(np.diag(np.asarray(res.cov_params(), dtype=float)))
    else:
        raise AttributeError(_no_inference(res, "summary()"))
    if se.size != size:
        raise ValueError(f"the results give {se.size} standard errors for {size} estimates.")
    return se


def _no_inference(res, caller):
    return (f"{type(res).__name__} has no cov_params() in this version of nordicstats, so "
            f"{caller} has no standard errors to use.")


@expose
def vcov_model(key):
    """``cov_params()`` of the fit as a matrix with the parameter names."""
    res = _get(key)
    if not hasattr(res, "cov_params"):
        raise AttributeError(_no_inference(res, "vcov()"))
    return _as_matrix(res.cov_params(), "cov_params()")


@expose
def confint_model(key, level=0.95):
    """``conf_int(alpha = 1 - level)`` of the fit as a two-column matrix."""
    res = _get(key)
    if not hasattr(res, "conf_int"):
        raise AttributeError(_no_inference(res, "confint()").replace("cov_params", "conf_int"))
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1); got {level!r}.")
    return _as_matrix(res.conf_int(alpha=1.0 - level), "conf_int()")


@expose
def parallel_test_model(key):
    """``test_parallel()`` of a linear NORDIC fit: statistic, df, p-value and method text."""
    test = _get(key).test_parallel()
    return {"statistic": float(test.statistic), "df": int(test.df),
            "p_value": float(test.pvalue), "method": str(test.title)}


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


@expose
def echo(x):
    """Return ``x`` unchanged: R -> Python -> R, for the round-trip tests."""
    return x


#: Theory helpers callable from R (nordicstats.theory).
THEORY = ("bayes_rule_ordinal", "bayes_rule_multiclass", "upper_tail", "conditional_risk",
          "prediction_risks", "loss_matrix", "fisher_consistency")


@expose
def theory(name, args=None):
    """Call ``nordicstats.theory.<name>(**args)``; results become plain R values."""
    from nordicstats import theory as th

    if name not in THEORY:
        raise ValueError(f"unknown theory helper {name!r}; available: {list(THEORY)}.")
    out = getattr(th, name)(**dict(args or {}))
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


def _split_args(cls, args):
    """Constructor arguments of ``cls`` vs the rest (for ``fit()``)."""
    args = dict(args or {})
    taken = set(inspect.signature(cls.__init__).parameters) - {"self", "endog", "exog"}
    for bad in ("order",):
        if bad in args:
            raise ValueError(f"'{bad}' cannot be set from R: the levels of the ordered factor "
                             "response give the order.")
    if isinstance(args.get("degree"), float) and args["degree"].is_integer():
        args["degree"] = int(args["degree"])  # R's 2 is a double
    model_kw = {k: v for k, v in args.items() if k in taken}
    fit_kw = {k: v for k, v in args.items() if k not in taken}
    return model_kw, fit_kw


def _strings(values):
    """A character vector for R (a Python list would become an R list)."""
    return pd.array([str(v) for v in values], dtype="str")


def _decision(res, X):
    return np.asarray(res.decision_function(X), dtype=float)


def _boundary_matrix(res, values):
    names = list(res.model.boundary_names)
    return frame_to_matrix(pd.DataFrame(np.asarray(values, dtype=float), columns=names))


def _describe(family, key, res):
    """Fields of the R object: common ones plus the family's own."""
    common = {
        "key": key,
        "family": family,
        "levels": _strings(res.model.levels),
        "boundaries": _strings(res.model.boundary_names),
        "nobs": int(res.nobs),
        "fitted_decision": _boundary_matrix(res, _decision(res, None)),
        "fitted_class": pd.Categorical(res.predict(which="class")),
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
