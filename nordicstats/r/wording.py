"""Python's messages in R's vocabulary, for every error and warning the R package shows.

The Python classes validate their options once and word their messages for Python
users: ``"The 'C' parameter of NORDIC must be a float in (0, inf). Got -1 instead."``.
An R user called ``nordic(C = -1)``, so the bridge rewrites the message before R
sees it: ``"The 'C' argument of nordic() must be a number in (0, Inf). Got -1
instead."``.  The rewriting is textual and conservative: Python class names become
the R functions that build them, Python argument names (``which``, ``endog``,
``exog``, ``sample_weight``) the R ones, Python literals (``True``, ``None``,
``['a', 'b']``, ``inf``, ``np.float64(1.5)``) R literals, 0-based row numbers
1-based ones, whole-number doubles as R prints them (``-1.0`` -> ``-1``), keyword
arguments in R's spelling (``solver='smo'`` -> ``solver = "smo"``), dict entries as list
elements (``probability_kwds['n_folds']`` -> ``probability_kwds$n_folds``), and method names
(``cov_params()``) the R generics.  The Python class of an error stays available to R
as the condition's class (``tryCatch(..., ValueError = )``), its traceback in the
condition's ``traceback`` field, never in the message.
"""

from __future__ import annotations

import re

__all__ = ["r_message", "R_FUNCTIONS"]

#: Python classes (and functions) -> the R function a user called to reach them.
R_FUNCTIONS = {
    "NORDICResults": "the nordic() fit",
    "OrdinalSVRResults": "the ordinal_svr() fit",
    "OrderedLogitResults": "the ordered_logit() fit",
    "OrderedModel": "ordered_logit()",
    "NORDIC": "nordic()",
    "OrdinalSVR": "ordinal_svr()",
    "OrderedLogit": "ordered_logit()",
}

#: Whole-word replacements, applied in this order.
_WORDS = (
    (r"'which' parameter of predict", "'type' argument of predict()"),
    (r"\bwhich=", "type = "),
    (r"\bof tune\b", "of tune_nordic()"),
    (r"\bsample_weight\b", "weights"),
    (r"\bn_splits\b", "folds"),
    (r"\brandom_state\b", "seed"),
    (r"\bexog\b", "covariates"),
    (r"\bendog\b", "response"),
    (r"\bndarray\b", "matrix"),
    (r"\bDataFrame\b", "data frame"),
    (r"\bcov_params\(\)", "vcov()"),
    (r"\bconf_int\(\)", "confint()"),
    (r"\btest_parallel\b(\(\))?", "parallel_test()"),
    (r"\bsummary_frame\(\)", "summary()"),
    (r"\ba float\b", "a number"),
    (r"\ban int\b", "a whole number"),
    (r"\bTrue\b", "TRUE"),
    (r"\bFalse\b", "FALSE"),
    (r"\bNone\b", "NULL"),
    (r"(?<![\w.])inf\b", "Inf"),
    (r"('[\w.$]+') parameter\b", r"\1 argument"),
    (r"\bnp\.\w+\(([^()]*)\)", r"\1"),
    (r"\brow (\d+)\b", lambda m: f"row {int(m.group(1)) + 1}"),  # Python counts from 0
    (r"(?<![\w.])(-?\d+)\.0(?![\d.])", r"\1"),  # R prints the double 1.0 as 1
    (r"\b(\w+)='([^']*)'", r'\1 = "\2"'),  # keyword arguments: solver='smo'
    (r"\bsolver=(\w+)", r'solver = "\1"'),
    (r"\. Check mle_retvals\b", "."),
)
_CLASS = re.compile(r"\b(" + "|".join(sorted(R_FUNCTIONS, key=len, reverse=True)) + r")\b"
                    r"(?![(-])")
_PY_LIST = re.compile(r"\[((?:'[^'\[\]]*'|\"[^\"\[\]]*\"|[-\w.]+)"
                      r"(?:, (?:'[^'\[\]]*'|\"[^\"\[\]]*\"|[-\w.]+))*)?\]")
_QUOTED = re.compile(r"'([^']*)'")
#: A dict entry ``name['key']``: R's list element ``name$key``.
_SUBSCRIPT = re.compile(r"(\w+)\[['\"](\w+)['\"]\]")


def r_message(text):
    """Reword a Python message for R users.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> r_message("The 'C' parameter of NORDIC must be a float in (0, inf). Got -1 instead.")
    "The 'C' argument of nordic() must be a number in (0, Inf). Got -1 instead."
    >>> r_message("The 'which' parameter of predict must be one of ['class', 'decision'].")
    'The \\'type\\' argument of predict() must be one of c("class", "decision").'
    """
    text = _SUBSCRIPT.sub(r"\1$\2", str(text))  # probability_kwds['n_folds'], not a list
    text = _PY_LIST.sub(_r_vector, text)
    text = _CLASS.sub(lambda m: R_FUNCTIONS[m.group(1)], text)
    for pattern, replacement in _WORDS:
        text = re.sub(pattern, replacement, text)
    return text


def _r_vector(match):
    """``['a', 'b']`` -> ``c("a", "b")``; ``[1, 2]`` -> ``c(1, 2)``."""
    inner = match.group(1) or ""
    return "c(" + _QUOTED.sub(r'"\1"', inner) + ")"
