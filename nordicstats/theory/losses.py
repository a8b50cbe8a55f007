"""Margin losses V(u) of the margin u = y f for Fisher-consistency checks (paper, Section 5.1).

A large-margin classifier with loss V trains f by minimising the empirical mean
of ``V(y f(x))``; at a fixed x with ``p = P(Y = +1 | x)`` the population problem
is ``min_f  p V(f) + (1 - p) V(-f)``.  The library below holds the usual convex
losses, two bounded nonconvex ones and two losses that are **not** consistent,
kept to show that :func:`~nordicstats.theory.fisher_consistency` can tell.

===================  =========================================  =======  ==============
name                 V(u)                                       convex   consistent
===================  =========================================  =======  ==============
``hinge``            max(0, 1 - u)  (SVM, NORDIC)               yes      yes
``squared_hinge``    max(0, 1 - u)^2                            yes      yes
``logistic``         log(1 + exp(-u))                           yes      yes
``exponential``      exp(-u)  (AdaBoost)                        yes      yes
``squared``          (1 - u)^2                                  yes      yes
``dwd``              1 - u for u <= 1/2, 1/(4u) otherwise       yes      yes
``unhinged``         1 - u  (unbounded below)                   yes      yes (at +-inf)
``psi``              2 for u < 0, 2(1 - u) on [0, 1), 0 after   no       yes
``truncated_hinge``  max(0, 1 - u) - max(0, s - u), s = -1      no       yes
``perceptron``       max(0, -u)                                 yes      **no**
``kinked_hinge``     max(0, 1 - u/2, 1 - 2u)                    yes      **no**
===================  =========================================  =======  ==============

Why the last two fail.  ``perceptron``: ``p V(f) + (1 - p) V(-f)`` equals
``(1 - p) f`` for ``f > 0`` and ``p |f|`` for ``f < 0``, so f = 0 is always a
minimiser and the sign of the Bayes rule is never recovered.  ``kinked_hinge``
is convex but has slopes -2 (left) and -1/2 (right) at 0, so for
``0.2 <= p <= 0.8`` the expected loss has its kink minimum at f = 0 (a convex
margin loss is classification-calibrated iff it is differentiable at 0 with
``V'(0) < 0``; Bartlett, Jordan & McAuliffe, 2006); it is consistent only for
p outside [0.2, 0.8].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MarginLoss", "MARGIN_LOSSES", "get_margin_loss", "truncated_hinge_loss"]


@dataclass(frozen=True)
class MarginLoss:
    """A margin loss ``V(u)``, vectorised over numpy arrays.

    Attributes
    ----------
    name : str
    func : callable
        ``func(u) -> ndarray`` of the same shape as ``u``.
    convex : bool
        Convex losses are minimised exactly (1-D Brent search and
        pool-adjacent-violators); nonconvex ones by a grid plus local refinement.
    formula : str
        The formula, for reports.

    Examples
    --------
    >>> hinge = get_margin_loss("hinge")
    >>> hinge(np.array([-1.0, 0.5, 2.0])).tolist()
    [2.0, 0.5, 0.0]
    """

    name: str
    func: Callable = field(repr=False)
    convex: bool = False
    formula: str = ""

    def __call__(self, u):
        return np.asarray(self.func(np.asarray(u, dtype=float)), dtype=float)


def _hinge(u):
    return np.maximum(0.0, 1.0 - u)


def _squared_hinge(u):
    return np.maximum(0.0, 1.0 - u) ** 2


def _logistic(u):
    return np.logaddexp(0.0, -u)


def _exponential(u):
    return np.exp(-u)


def _squared(u):
    return (1.0 - u) ** 2


def _dwd(u):
    safe = np.maximum(u, 0.5)
    return np.where(u <= 0.5, 1.0 - u, 0.25 / safe)


def _unhinged(u):
    return 1.0 - u


def _psi(u):
    return np.where(u < 0, 2.0, np.where(u < 1.0, 2.0 * (1.0 - u), 0.0))


def _perceptron(u):
    return np.maximum(0.0, -u)


def _kinked_hinge(u):
    return np.maximum(0.0, np.maximum(1.0 - 0.5 * u, 1.0 - 2.0 * u))


def truncated_hinge_loss(s=-1.0):
    """Truncated hinge ``T_s(u) = max(0, 1 - u) - max(0, s - u)`` (Wu & Liu, 2007), s <= 0.

    Bounded by ``1 - s`` and nonconvex; ``s = 0`` is the ramp loss.

    Examples
    --------
    >>> truncated_hinge_loss(-1.0)(np.array([-3.0, 0.0, 2.0])).tolist()
    [2.0, 1.0, 0.0]
    """
    if not np.isfinite(s) or s > 0:
        raise ValueError(f"The 's' parameter of truncated_hinge_loss must be a finite float <= 0. "
                         f"Got {s!r} instead.")
    s = float(s)

    def func(u):
        return np.maximum(0.0, 1.0 - u) - np.maximum(0.0, s - u)

    return MarginLoss(f"truncated_hinge(s={s:g})", func, convex=False,
                      formula=f"max(0, 1 - u) - max(0, {s:g} - u)")


#: The library of named margin losses (see the module table).
MARGIN_LOSSES = {
    "hinge": MarginLoss("hinge", _hinge, True, "max(0, 1 - u)"),
    "squared_hinge": MarginLoss("squared_hinge", _squared_hinge, True, "max(0, 1 - u)^2"),
    "logistic": MarginLoss("logistic", _logistic, True, "log(1 + exp(-u))"),
    "exponential": MarginLoss("exponential", _exponential, True, "exp(-u)"),
    "squared": MarginLoss("squared", _squared, True, "(1 - u)^2"),
    "dwd": MarginLoss("dwd", _dwd, True, "1 - u if u <= 1/2 else 1/(4u)"),
    "unhinged": MarginLoss("unhinged", _unhinged, True, "1 - u"),
    "psi": MarginLoss("psi", _psi, False, "2 if u < 0; 2(1 - u) if 0 <= u < 1; 0 if u >= 1"),
    "truncated_hinge": truncated_hinge_loss(-1.0),
    "perceptron": MarginLoss("perceptron", _perceptron, True, "max(0, -u)"),
    "kinked_hinge": MarginLoss("kinked_hinge", _kinked_hinge, True, "max(0, 1 - u/2, 1 - 2u)"),
}


def get_margin_loss(loss):
    """Resolve a loss name, :class:`MarginLoss` or callable to a :class:`MarginLoss`.

    A plain callable is treated as nonconvex (grid search plus refinement), the
    safe choice; wrap it in ``MarginLoss(name, func, convex=True)`` to use the
    exact convex solvers.  The callable must map a float array to finite values
    of the same shape.

    Examples
    --------
    >>> get_margin_loss("logistic").convex
    True
    >>> get_margin_loss(lambda u: np.exp(-u)).convex
    False
    """
    if isinstance(loss, MarginLoss):
        resolved = loss
    elif isinstance(loss, str):
        if loss not in MARGIN_LOSSES:
            raise ValueError(f"The 'loss' parameter must be one of {sorted(MARGIN_LOSSES)}, a "
                             f"MarginLoss or a callable V(u). Got {loss!r} instead.")
        resolved = MARGIN_LOSSES[loss]
    elif callable(loss):
        resolved = MarginLoss(getattr(loss, "__name__", "custom"), loss, convex=False,
                              formula="user callable")
    else:
        raise TypeError(f"The 'loss' parameter must be a loss name, a MarginLoss or a callable "
                        f"V(u); got an object of type {type(loss).__name__}.")
    _check_vectorised(resolved)
    return resolved


def _check_vectorised(loss):
    probe = np.linspace(-3.0, 3.0, 7)
    try:
        values = loss(probe)
    except Exception as exc:  # the user's function, any failure is a usage error
        raise TypeError(f"margin loss {loss.name!r} failed on a numpy array ({exc!r}); it must "
                        "accept an array u and return V(u) elementwise.") from exc
    if values.shape != probe.shape or not np.all(np.isfinite(values)):
        raise ValueError(f"margin loss {loss.name!r} must return finite values of the same shape "
                         f"as its input; on u = {probe.tolist()} it returned {values!r}.")
