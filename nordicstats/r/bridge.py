"""The call path from R to Python: one dispatcher, errors and warnings as R conditions.

R reaches Python through a single function, registered as ``dispatch`` in the
environment ``.bridge`` of the R package's namespace::

    .bridge$dispatch(name, args)   # name: character(1); args: a named list

``dispatch`` converts ``args`` with :func:`nordicstats.r.convert.r_to_py`,
calls the Python function exposed under ``name`` and returns an *envelope*
(messages reworded for R users by :func:`nordicstats.r.wording.r_message`),
a named R list ``list(value, error, error_class, traceback, warnings,
warning_classes)``.  The R side (``R/bridge.R``) re-raises ``error`` with
``stop()`` and each warning with ``warning()``, so Python errors become R
errors that ``tryCatch`` catches (classes ``c("<Python class>",
"nordicstats_python_error", "error", "condition")``) and Python warnings R
warnings.  Raising R conditions from inside Python instead would unwind R's
stack through Python frames, which rpy2 does not support.
"""

from __future__ import annotations

import traceback
import warnings

from nordicstats.r import api
from nordicstats.r._rpy2 import initialize, ri
from nordicstats.r.convert import py_to_r, r_to_py
from nordicstats.r.wording import r_message

__all__ = ["expose", "exposed", "dispatch_python", "attach", "register"]

# The one place the R API is registered; expose() adds more (e.g. in tests).
_EXPOSED = {func.__name__: func for func in api.API}
# Warnings meant for developers (of nordicstats or its dependencies), not R users.
_DEVELOPER_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning)
# rpy2 trap: an rternalized function must stay referenced from Python, or the
# next call from R crashes the process.  The dispatcher lives here for good.
_KEEP_ALIVE = []


def expose(func=None, *, name=None):
    """Make a Python function callable from R as ``.py("<name>", ...)``.

    Arguments arrive converted by :func:`~nordicstats.r.convert.r_to_py` and
    the return value is converted by :func:`~nordicstats.r.convert.py_to_r`.
    """
    def decorate(f):
        _EXPOSED[name or f.__name__] = f
        return f
    return decorate(func) if func is not None else decorate


def exposed():
    """Names of the Python functions callable from R, sorted."""
    return sorted(_EXPOSED)


def dispatch_python(name, kwargs):
    """Call the exposed function ``name`` and build the envelope (Python objects).

    Returns
    -------
    dict
        ``value`` (an R object), ``error`` (message or None), ``error_class``,
        ``traceback``, ``warnings`` (messages) and ``warning_classes``.
    """
    out = {"value": None, "error": None, "error_class": None, "traceback": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every call reports its warnings, not only the first
        for category in _DEVELOPER_WARNINGS:
            warnings.simplefilter("ignore", category)
        try:
            func = _EXPOSED.get(name)
            if func is None:
                raise ValueError(f"no Python function '{name}' is exposed to R; "
                                 f"exposed: {exposed()}.")
            out["value"] = py_to_r(func(**kwargs), name="result")
        except Exception as exc:  # every Python error becomes an R condition
            out["error"] = r_message(str(exc) or type(exc).__name__)
            out["error_class"] = type(exc).__name__
            out["traceback"] = "".join(traceback.format_exception(exc))
    out["warnings"] = [r_message(w.message) for w in caught]
    out["warning_classes"] = [w.category.__name__ for w in caught]
    return out


def _envelope(out):
    items = {
        "value": out["value"],
        "error": _str_or_null(out["error"]),
        "error_class": _str_or_null(out["error_class"]),
        "traceback": _str_or_null(out["traceback"]),
        "warnings": ri.StrSexpVector(out["warnings"]),
        "warning_classes": ri.StrSexpVector(out["warning_classes"]),
    }
    env = ri.ListSexpVector([v if v is not None else ri.NULL for v in items.values()])
    env.do_slot_assign("names", ri.StrSexpVector(list(items)))
    return env


def _str_or_null(value):
    return ri.NULL if value is None else ri.StrSexpVector([value])


def _dispatch(name, args):
    try:
        fname = str(name[0])
        kwargs = r_to_py(args) if args is not ri.NULL and len(args) else {}
        if not isinstance(kwargs, dict):
            raise TypeError("the bridge expects a named list of arguments.")
        out = dispatch_python(fname, kwargs)
    except Exception as exc:  # conversion of the arguments failed
        out = {"value": None, "error": r_message(exc), "error_class": type(exc).__name__,
               "traceback": "".join(traceback.format_exception(exc)),
               "warnings": [], "warning_classes": []}
    return _envelope(out)


def register(env):
    """Store the dispatcher as ``dispatch`` in the R environment ``env``."""
    if not _KEEP_ALIVE:
        _KEEP_ALIVE.append(ri.rternalize(_dispatch))
    env["dispatch"] = _KEEP_ALIVE[0]
    return env


def attach(package="nordicstats"):
    """Attach to (or start) R, load the R package and register the dispatcher.

    Called by the R package through reticulate (R hosts Python) and by
    ``python -m nordicstats.r`` (Python hosts R).

    Returns
    -------
    rpy2.rinterface.SexpEnvironment
        The package's ``.bridge`` environment.
    """
    initialize()
    ns = ri.baseenv["loadNamespace"](ri.StrSexpVector([package]))
    return register(ns.find(".bridge"))
