"""Validation of user options, one message format for the whole package.

Messages follow scikit-learn's template: "The 'C' parameter of NORDIC must be a
float in (0, inf). Got -1 instead."
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_scalar

__all__ = ["check_positive", "check_choice", "check_int"]


def check_positive(value, name, owner="NORDIC"):
    """Return ``value`` as a float in (0, inf) or raise a ValueError naming it.

    Booleans and strings are refused even when they would convert.

    Examples
    --------
    >>> check_positive(2, "C")
    2.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) \
            or value <= 0:
        raise ValueError(f"The '{name}' parameter of {owner} must be a float in (0, inf). "
                         f"Got {value!r} instead.")
    return float(value)


def check_choice(value, name, allowed, owner="NORDIC"):
    """Return ``value`` if it is one of ``allowed``, else raise a ValueError listing them.

    Examples
    --------
    >>> check_choice("rbf", "kernel", ("linear", "rbf"))
    'rbf'
    """
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"The '{name}' parameter of {owner} must be one of {list(allowed)}. "
                         f"Got {value!r} instead.")
    return value


def check_int(value, name, minimum):
    """Return ``value`` as an int >= ``minimum`` (scikit-learn's ``check_scalar``).

    Raises ``TypeError`` for a non-integer (booleans included) and ``ValueError`` below
    ``minimum``, both naming the parameter.

    Examples
    --------
    >>> check_int(3, "n", 1)
    3
    """
    if isinstance(value, bool):
        raise TypeError(f"The '{name}' parameter must be an int >= {minimum}. Got {value!r}.")
    return int(check_scalar(value, f"The '{name}' parameter", numbers.Integral, min_val=minimum))
