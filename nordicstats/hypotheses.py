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
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from nordicstats.exceptions import InferenceWarning

__all__ = ["WaldTestResult", "wald_test", "parallel_restrictions", "parse_restrictions"]


@dataclass(frozen=True)
class WaldTestResult:
    """A chi-square Wald test of R beta = q.

    Attributes
    ----------
    statistic : float
        (R beta^ - q)' (R V R')^{-1} (R beta^ - q).
    df : int
        Number of restrictions (rank of R).
    pvalue : float
        P(chi2_df >= statistic).
    hypothesis : tuple of str
        The restrictions in words.
    title : str
    """

    statistic: float
    df: int
    pvalue: float
    hypothesis: tuple = field(default_factory=tuple)
    title: str = "Wald test"

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
        NaN statistic and p-value (with an InferenceWarning) when the restricted
        covariance involves a NaN entry.

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
    middle = R @ cov @ R.T
    hypothesis = tuple(_describe_rows(R, q, labels))
    if not np.all(np.isfinite(middle)):
        warnings.warn("The covariance of the restricted combination is not available (NaN); "
                      "see the InferenceWarning raised when the covariance was computed.",
                      InferenceWarning, stacklevel=2)
        return WaldTestResult(np.nan, R.shape[0], np.nan, hypothesis, title)
    diff = R @ params - q
    stat = float(diff @ np.linalg.solve(middle, diff))
    return WaldTestResult(stat, R.shape[0], float(stats.chi2.sf(stat, R.shape[0])), hypothesis,
                          title)


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
    """Turn ``"x1@1|2 = x1@2|3, 2*x2@1|2 - x2@2|3 = 0.5"`` into (R, q).

    Syntax: restrictions separated by commas (or a list of strings); each is
    ``lhs = rhs`` (``= 0`` may be omitted), where each side is a sum of terms
    ``[number *] label`` or plain numbers joined by ``+``/``-``.  A label is
    ``term@boundary`` (e.g. ``Intercept@1|2``).  Labels are matched literally
    against the known ones, longest first, so names containing ``+``, ``-`` or ``:``
    (patsy interactions) work.

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
    index = {label: j for j, label in enumerate(labels)}
    token = re.compile("|".join([re.escape(lb) for lb in sorted(labels, key=len, reverse=True)]
                                + [_NUMBER, r"[-+*=]"]))
    R, q = np.zeros((len(pieces), len(labels))), np.zeros(len(pieces))
    for row, piece in enumerate(pieces):
        sides = _tokenize(piece, token, labels)
        if sides.count("=") > 1:
            raise ValueError(f"Restriction {piece!r} has more than one '='.")
        split = sides.index("=") if "=" in sides else len(sides)
        for side, tokens in ((1.0, sides[:split]), (-1.0, sides[split + 1:])):
            for coef, label in _linear_terms(tokens, piece):
                if label is None:
                    q[row] -= side * coef
                else:
                    R[row, index[label]] += side * coef
    return R, q


def _split_commas(piece, labels):
    """Split on commas that are not part of a label."""
    masked = piece
    for label in sorted(labels, key=len, reverse=True):
        if "," in label:
            masked = masked.replace(label, "\0" * len(label))
    cuts = [i for i, ch in enumerate(masked) if ch == ","]
    bounds = [-1, *cuts, len(piece)]
    return [piece[a + 1:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _tokenize(piece, token, labels):
    tokens, pos = [], 0
    while pos < len(piece):
        if piece[pos].isspace():
            pos += 1
            continue
        match = token.match(piece, pos)
        if match is None:
            shown = ", ".join(labels[:6]) + (", ..." if len(labels) > 6 else "")
            raise ValueError(f"Cannot parse {piece[pos:]!r} in restriction {piece!r}. Parameters "
                             f"are written term@boundary, e.g. one of: {shown}.")
        tokens.append(match.group())
        pos = match.end()
    return tokens


def _linear_terms(tokens, piece):
    """Yield (coefficient, label or None) from a token list like ['-', '2', '*', 'x@1|2']."""
    i, sign, expect_term = 0, 1.0, True
    while i < len(tokens):
        tok = tokens[i]
        if tok in ("+", "-"):
            sign = (sign if expect_term else 1.0) * (-1.0 if tok == "-" else 1.0)
            expect_term = True
            i += 1
            continue
        if tok in ("*", "=") or not expect_term:
            raise ValueError(f"Unexpected {tok!r} in restriction {piece!r}.")
        is_number = re.fullmatch(_NUMBER, tok) is not None
        if is_number and tokens[i + 1:i + 2] == ["*"]:
            if i + 2 >= len(tokens) or re.fullmatch(_NUMBER, tokens[i + 2]):
                raise ValueError(f"Expected a parameter after '*' in restriction {piece!r}.")
            yield sign * float(tok), tokens[i + 2]
            i += 3
        else:
            yield (sign * float(tok), None) if is_number else (sign, tok)
            i += 1
        expect_term = False
    if expect_term and tokens:
        raise ValueError(f"Restriction {piece!r} ends with an operator.")


