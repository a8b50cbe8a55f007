"""Wald tests of linear restrictions on the coefficients of linear NORDIC.

The parameter vector is stacked boundary-major, ``params.T.ravel()`` for the
(1 + d) x (K-1) coefficient table, and every parameter has the label
``term@boundary`` (``"x1@1|2"``, ``"Intercept@2|3"``).  Restrictions are given as a
matrix R (with q) or as text parsed by :func:`parse_restrictions`.  The statistic

    W = (R beta^ - q)' (R V^ R')^{-1} (R beta^ - q)  ~  chi2(m) under H0

uses the joint covariance V^ across boundaries (:mod:`nordicstats.covariance`), so
restrictions that compare boundaries, such as parallel boundaries
H0: w_1 = ... = w_{K-1} (:func:`parallel_restrictions`, the SVM analogue of the
Brant test of proportional odds), are tested with the right cross terms.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
from patsy import PatsyError
from patsy.constraint import linear_constraint
from statsmodels.stats.contrast import ContrastResults

from nordicstats.exceptions import InferenceWarning

__all__ = ["WaldTestResult", "wald_test", "parallel_restrictions", "parse_restrictions"]


class WaldTestResult(ContrastResults):
    """A chi-square Wald test of R beta = q: statsmodels' ``ContrastResults`` (chi2).

    Parameters
    ----------
    statistic : float
        (R beta^ - q)' (R V R')^{-1} (R beta^ - q).
    df : int
        Number of restrictions (rank of R); statsmodels keeps it as ``df_denom``.
    hypothesis : tuple of str
        The restrictions in words.
    title : str

    Attributes
    ----------
    statistic, df, pvalue : float, int, float
        ``pvalue`` = P(chi2_df >= statistic), computed by statsmodels.
    hypothesis : tuple of str
    title : str
    """

    def __init__(self, statistic, df, hypothesis=(), title="Wald test"):
        super().__init__(statistic=float(statistic), df_denom=int(df), distribution="chi2",
                         dist_args=(int(df),))
        self.pvalue = float(self.pvalue)
        self.hypothesis = tuple(hypothesis)
        self.title = title

    @property
    def df(self):
        """Degrees of freedom of the chi-square reference distribution."""
        return self.df_denom

    def __str__(self):
        h0 = "\n".join(f"    {h}" for h in self.hypothesis)
        return (f"{self.title}\nH0:\n{h0}\nchi2({self.df}) = {self.statistic:.4f}, "
                f"p-value = {self.pvalue:.4g}")


def wald_test(params, cov, R, q=None, labels=None, title="Wald test"):
    """Chi-square Wald test of the linear restrictions R beta = q.

    Parameters
    ----------
    params : ndarray of shape (p,)
        Boundary-major parameter vector.
    cov : ndarray of shape (p, p)
    R : ndarray of shape (m, p)
    q : ndarray of shape (m,), optional
        Defaults to zeros.
    labels : sequence of str, optional
        Parameter names used to state the hypothesis in words.
    title : str, default="Wald test"

    Returns
    -------
    WaldTestResult
        NaN statistic and p-value (with an InferenceWarning) when the covariance of a
        restricted parameter has a NaN entry (NaN entries of other parameters do not
        matter).

    Raises
    ------
    ValueError
        Wrong shapes or linearly dependent restrictions.

    Examples
    --------
    >>> str(wald_test(np.array([1.0, 0.0]), np.eye(2), np.array([[1.0, -1.0]])).df)
    '1'
    """
    params = np.asarray(params, dtype=float).ravel()
    R = np.atleast_2d(np.asarray(R, dtype=float))
    q = np.zeros(R.shape[0]) if q is None else np.atleast_1d(np.asarray(q, dtype=float))
    if R.shape[1] != params.size or q.shape != (R.shape[0],):
        raise ValueError(
            f"R must have shape (m, {params.size}) and q shape (m,); got R {R.shape}, q {q.shape}."
        )
    if np.linalg.matrix_rank(R) < R.shape[0]:
        raise ValueError(f"The {R.shape[0]} restrictions in R are linearly dependent; drop the "
                         "redundant rows.")
    used = np.any(R != 0.0, axis=0)  # NaN blocks of parameters not restricted do not matter
    middle = R[:, used] @ np.asarray(cov, dtype=float)[np.ix_(used, used)] @ R[:, used].T
    hypothesis = tuple(_describe_rows(R, q, labels))
    if not np.all(np.isfinite(middle)):
        warnings.warn("The covariance of the restricted combination is not available (NaN); "
                      "see the InferenceWarning raised when the covariance was computed.",
                      InferenceWarning, stacklevel=2)
        return WaldTestResult(np.nan, R.shape[0], hypothesis, title)
    diff = R @ params - q
    return WaldTestResult(diff @ np.linalg.solve(middle, diff), R.shape[0], hypothesis, title)


def _describe_rows(R, q, labels=None):
    """Restrictions in words, e.g. ``"x1@1|2 - x1@2|3 = 0"``."""
    for row, value in zip(R, q, strict=True):
        text = ""
        for j in np.flatnonzero(row):
            name = labels[j] if labels is not None else f"p[{j}]"
            c = row[j]
            sign = "-" if c < 0 else ("+" if text else "")
            mult = "" if abs(c) == 1 else f"{abs(c):g}*"
            text += f"{' ' if text else ''}{sign}{' ' if text else ''}{mult}{name}"
        yield f"{text} = {value:g}"


def parallel_restrictions(n_boundaries, n_terms):
    """R for H0: w_1 = ... = w_{K-1} (slopes only), boundary-major layout.

    Row (k, j) is w_{k,j} - w_{k+1,j} = 0 for k = 1..K-2 and slopes j = 1..d.

    Examples
    --------
    >>> parallel_restrictions(3, 2).tolist()
    [[0.0, 1.0, 0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0, -1.0]]
    """
    if n_boundaries < 2:
        raise ValueError("test_parallel needs at least two boundaries (K >= 3 classes).")
    rows = []
    for k in range(n_boundaries - 1):
        for j in range(1, n_terms):
            row = np.zeros(n_boundaries * n_terms)
            row[k * n_terms + j], row[(k + 1) * n_terms + j] = 1.0, -1.0
            rows.append(row)
    return np.array(rows)


_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"


def parse_restrictions(text, labels):
    """Turn ``"x1@1|2 = x1@2|3, 2*x2@1|2 - x2@2|3 = 0.5"`` into (R, q) with patsy.

    Syntax: restrictions separated by commas (or a list of strings); each is
    ``lhs = rhs`` (``= 0`` may be omitted), where each side is a sum of terms
    ``[number *] label`` or plain numbers joined by ``+``/``-``.  A label is
    ``term@boundary`` (e.g. ``Intercept@1|2``).  patsy's ``linear_constraint`` parses
    each restriction, matching labels literally, longest first, so names containing
    ``+``, ``-`` or ``:`` (patsy interactions) work; it accepts more than this syntax
    (chained ``=``, products of numbers, ``label * number``), which is refused here so
    that every restriction reads as one linear equation.

    Parameters
    ----------
    text : str or sequence of str
    labels : sequence of str
        The ``term@boundary`` labels in boundary-major order.

    Returns
    -------
    R : ndarray of shape (m, p)
    q : ndarray of shape (m,)

    Examples
    --------
    >>> R, q = parse_restrictions("a@1|2 = a@2|3 + 1", ["a@1|2", "a@2|3"])
    >>> R.tolist(), q.tolist()
    ([[1.0, -1.0]], [1.0])
    """
    pieces = [text] if isinstance(text, str) else list(text)
    pieces = [p.strip() for piece in pieces for p in _split_commas(piece, labels) if p.strip()]
    if not pieces:
        raise ValueError("The hypothesis string is empty; write e.g. 'x1@1|2 = x1@2|3'.")
    rows = [_one_restriction(piece, list(labels)) for piece in pieces]
    return (np.vstack([r.coefs for r in rows]).astype(float),
            np.concatenate([r.constants.ravel() for r in rows]).astype(float) + 0.0)


def _one_restriction(piece, labels):
    masked = _mask_labels(piece, labels, "\0")
    if masked.count("=") > 1:
        raise ValueError(f"Restriction {piece!r} has more than one '='.")
    if re.search(r"\0\s*\*", masked):
        raise ValueError(f"Unexpected '*' after a parameter in restriction {piece!r}; write "
                         "the number first, e.g. 2*x1@1|2.")
    if re.search(rf"{_NUMBER}\s*\*\s*(?![\s\0])", masked):
        raise ValueError(f"Expected a parameter after '*' in restriction {piece!r}.")
    try:
        return linear_constraint(piece, labels)
    except PatsyError as exc:
        reason = str(exc).splitlines()[0]
        if "unrecognized token" in reason:
            shown = ", ".join(labels[:6]) + (", ..." if len(labels) > 6 else "")
            raise ValueError(f"Cannot parse restriction {piece!r}. Parameters are written "
                             f"term@boundary, e.g. one of: {shown}.") from None
        if "expression ended" in reason:
            raise ValueError(f"Restriction {piece!r} ends with an operator.") from None
        raise ValueError(f"Unexpected token in restriction {piece!r}: {reason}.") from None


def _mask_labels(piece, labels, fill):
    """``piece`` with every label (longest first) replaced by ``fill`` characters."""
    for label in sorted(labels, key=len, reverse=True):
        piece = piece.replace(label, fill * len(label))
    return piece


def _split_commas(piece, labels):
    """Split on commas that are not part of a label."""
    masked = _mask_labels(piece, [label for label in labels if "," in label], "\0")
    cuts = [i for i, ch in enumerate(masked) if ch == ","]
    bounds = [-1, *cuts, len(piece)]
    return [piece[a + 1:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
