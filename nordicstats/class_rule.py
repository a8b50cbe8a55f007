"""The class rule of K-1 ordinal boundaries: one class per x, and when the boundaries cross.

Boundary k splits the levels into {1..k} (f_k(x) < 0) and {k+1..K} (f_k(x) >= 0)
(paper, Section 2.2).  The predicted level is the number of boundaries with
f_k(x) >= 0 (:func:`predict_codes`); a row is *crossed* when the K-1 prediction sets
have an empty intersection, that is when a nonnegative f_{k+1} follows a negative f_k
(:func:`count_crossings`).

Both are statements on arrays of decision values, so this module sits at the bottom
of the package's layering: the ordinal layer predicts with it and the solver layer
counts crossings of a solution with it (docs/notes/layering.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["predict_codes", "count_crossings"]


def count_crossings(F):
    """Boolean per row: does the sign sequence of f_1..f_{K-1} increase somewhere?

    The prediction set of boundary k is {1..k} when f_k < 0 and {k+1..K}
    otherwise (paper, Section 2.2); their intersection is empty exactly when a
    nonnegative f_{k+1} follows a negative f_k for some k.

    Parameters
    ----------
    F : array-like of shape (n, K-1)
        Decision values f_k(x_i).

    Returns
    -------
    ndarray of bool, shape (n,)

    Examples
    --------
    >>> count_crossings(np.array([[1.0, -1.0], [-1.0, 1.0]])).tolist()
    [False, True]
    """
    positive = np.asarray(F) >= 0
    return np.any(~positive[:, :-1] & positive[:, 1:], axis=1)


def predict_codes(F):
    """Level codes from decision values: the number of boundaries with f_k(x) >= 0.

    code(x) = #{k : f_k(x) >= 0} in 0..K-1.  With noncrossing boundaries this is the
    unique class in the intersection of the K-1 prediction sets; with crossing (BSVM)
    it is Frank & Hall's counting rule, which still returns one of the K levels.

    Parameters
    ----------
    F : array-like of shape (n, K-1)
        Decision values f_k(x_i).

    Returns
    -------
    ndarray of int, shape (n,)

    Examples
    --------
    >>> predict_codes(np.array([[2.0, 0.5], [1.0, -1.0], [-3.0, -4.0]])).tolist()
    [2, 1, 0]
    """
    return np.sum(np.asarray(F) >= 0, axis=1).astype(int)
