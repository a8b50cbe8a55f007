"""Data sets and simulation designs of the paper (Sections 6 and 7).

* :func:`load_balance_scale` -- the UCI balance-scale data (Section 7), generated
  exactly from its defining rule, so no download is needed.
* :func:`make_nonlinear` -- the nonlinear three-class design (Section 6.1), with a
  documented K-class generalisation.
* :func:`make_donut` -- the high-dimensional donut design (Section 6.2).
* :func:`stratified_split` -- class-proportional train/tuning/test partition
  (the balance-scale protocol of Section 7).

The misclassification costs used by the paper live in :mod:`nordicstats.metrics`
(``DONUT_COSTS``, ``BALANCE_COSTS``) next to :func:`~nordicstats.metrics.weighted_error`.

Every random design draws from ``numpy.random.default_rng(random_state)`` (or
uses a ``Generator`` passed in), so equal ``random_state`` gives equal data.
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np
import pandas as pd

from nordicstats._validation import check_int

__all__ = [
    "load_balance_scale",
    "make_nonlinear",
    "nonlinear_scores",
    "nonlinear_probabilities",
    "make_donut",
    "donut_labels",
    "stratified_split",
    "BALANCE_COLUMNS",
]

BALANCE_COLUMNS = ["balance", "left_weight", "left_distance", "right_weight", "right_distance"]

# Donut geometry (Section 6.2): a disc of radius 4; class 2 inside the circle
# centred (1.9, 0) with radius 2; class 3 inside the circle centred
# (sqrt(3) + 0.1, 0) with radius sqrt(3), which lies inside the class-2 circle.
_DONUT_RADIUS = 4.0
_DONUT_CIRCLE2 = (1.9, 2.0)
_DONUT_CIRCLE3 = (np.sqrt(3.0) + 0.1, np.sqrt(3.0))


def load_balance_scale():
    """The balance-scale data of Siegler (1976), as in the UCI repository.

    Every combination of left weight, left distance, right weight and right
    distance in 1..5 occurs once (5^4 = 625 rows).  The scale tips to the left
    (``L``) when ``LW * LD > RW * RD``, to the right (``R``) when it is smaller,
    and is balanced (``B``) when they are equal: 288 ``L``, 49 ``B``, 288 ``R``.

    Rows follow the UCI file: lexicographic in (LW, LD, RW, RD), left weight
    varying slowest and right distance fastest.  UCI stores the columns as
    ``class, LW, LD, RW, RD``; here they are named :data:`BALANCE_COLUMNS`.

    Returns
    -------
    pandas.DataFrame
        Columns ``balance`` (ordered categorical ``L < B < R``, the order used in
        the paper, Section 7) and the four attributes as float.

    Examples
    --------
    >>> df = load_balance_scale()
    >>> df.shape
    (625, 5)
    >>> df["balance"].value_counts(sort=False).tolist()
    [288, 49, 288]
    """
    grid = np.array(list(itertools.product(range(1, 6), repeat=4)), dtype=float)
    left = grid[:, 0] * grid[:, 1]
    right = grid[:, 2] * grid[:, 3]
    labels = np.where(left > right, "L", np.where(left < right, "R", "B"))
    balance = pd.Categorical(labels, categories=["L", "B", "R"], ordered=True)
    frame = pd.DataFrame(grid, columns=BALANCE_COLUMNS[1:])
    frame.insert(0, "balance", balance)
    return frame


def nonlinear_scores(x1, x2, K=3):
    """Class scores f_1..f_K of the nonlinear design (Section 6.1).

    For K = 3 these are the paper's

        f_1 = -2 x1 + 0.2 x1^2 - 0.1 x2^2 + 0.2
        f_2 = -0.4 x1^2 + 0.2 x2^2 - 0.4
        f_3 =  2 x1 + 0.2 x1^2 - 0.1 x2^2 + 0.2

    with ``x1, x2`` the uncontaminated coordinates.  For general K they are
    written ``f_k = 2 t_k x1 + (3 t_k^2 - 2) g`` with ``g = 0.2 x1^2 - 0.1 x2^2 + 0.2``
    and ``t_k = -1 + 2 (k - 1) / (K - 1)`` equally spaced in [-1, 1]; K = 3 gives
    ``t = (-1, 0, 1)`` and exactly the paper's scores.  Where ``g < 0`` the score
    is concave in ``t`` and the most likely class rises with ``x1``, which gives
    the design its ordinal structure (this is the package's K-class extension,
    not part of the paper).

    Parameters
    ----------
    x1, x2 : array-like of shape (n,)
    K : int, default=3

    Returns
    -------
    ndarray of shape (n, K)
    """
    x1 = np.asarray(x1, dtype=float)
    x2 = np.asarray(x2, dtype=float)
    t = np.linspace(-1.0, 1.0, _check_k(K))
    g = 0.2 * x1**2 - 0.1 * x2**2 + 0.2
    return 2.0 * x1[:, None] * t[None, :] + g[:, None] * (3.0 * t**2 - 2.0)[None, :]


def nonlinear_probabilities(x1, x2, K=3):
    """P(Y = k | x~) proportional to exp(f_k) (Section 6.1); shape (n, K).

    The Bayes rule under 0-1 loss is the row-wise argmax.

    Examples
    --------
    >>> p = nonlinear_probabilities([0.0], [0.0])
    >>> bool(abs(p.sum() - 1.0) < 1e-12)
    True
    """
    scores = nonlinear_scores(x1, x2, K)
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=1, keepdims=True)


def make_nonlinear(n, d=10, sigma=1.0, random_state=None, K=3, return_latent=False):
    """Simulate the nonlinear three-class example (paper, Section 6.1).

    ``x~1 ~ U(-3, 3)``, ``x~2 ~ U(-6, 6)``; the observed covariates are
    ``X1 = x~1 + sigma e1``, ``X2 = x~2 + sigma e2`` and ``X3..Xd ~ N(0, 1)``
    (pure noise).  The label is ``k`` with probability proportional to
    ``exp(f_k(x~))``; see :func:`nonlinear_scores` (K = 3 is the paper's design;
    other K use the documented extension).

    Parameters
    ----------
    n : int
        Number of observations (the paper: 100 training, 100 tuning, 10000 test).
    d : int, default=10
        Number of covariates, at least 2 (the paper: 10 to 50).
    sigma : float, default=1.0
        Standard deviation of the measurement error (the paper: 0.5, 1, 1.5).
    random_state : int, numpy Generator or None
    K : int, default=3
        Number of ordered classes.
    return_latent : bool, default=False
        Also return the uncontaminated ``x~`` and the true class probabilities.

    Returns
    -------
    X : pandas.DataFrame, columns ``x1..xd``
    y : pandas.Series of ordered categorical with levels ``1..K``
    latent : pandas.DataFrame, only if ``return_latent``
        Columns ``x1_tilde``, ``x2_tilde`` and ``p1..pK``.

    Examples
    --------
    >>> X, y = make_nonlinear(5, d=3, random_state=0)
    >>> X.shape, list(y.cat.categories)
    ((5, 3), [1, 2, 3])
    """
    n, d = check_int(n, "n", 1), check_int(d, "d", 2)
    sigma = _check_sigma(sigma)
    rng = np.random.default_rng(random_state)
    x1 = rng.uniform(-3.0, 3.0, n)
    x2 = rng.uniform(-6.0, 6.0, n)
    X = np.empty((n, d))
    X[:, 0] = x1 + sigma * rng.standard_normal(n)
    X[:, 1] = x2 + sigma * rng.standard_normal(n)
    X[:, 2:] = rng.standard_normal((n, d - 2))
    prob = nonlinear_probabilities(x1, x2, K)
    codes = _sample_classes(prob, rng)
    X, y = _package(X, codes, K)
    if not return_latent:
        return X, y
    latent = pd.DataFrame({"x1_tilde": x1, "x2_tilde": x2})
    for k in range(prob.shape[1]):
        latent[f"p{k + 1}"] = prob[:, k]
    return X, y, latent


def donut_labels(z):
    """Noise-free donut class (1, 2 or 3) of points ``z`` in the plane (Section 6.2).

    Class 3 inside the circle centred ``(sqrt(3) + 0.1, 0)`` of radius
    ``sqrt(3)``; otherwise class 2 inside the circle centred ``(1.9, 0)`` of
    radius 2; otherwise class 1.

    Examples
    --------
    >>> donut_labels(np.array([[-3.0, 0.0], [0.0, 0.0], [2.0, 0.0]])).tolist()
    [1, 2, 3]
    """
    z = np.asarray(z, dtype=float)
    labels = np.ones(z.shape[0], dtype=int)
    for label, (centre, radius) in ((2, _DONUT_CIRCLE2), (3, _DONUT_CIRCLE3)):
        inside = (z[:, 0] - centre) ** 2 + z[:, 1] ** 2 <= radius**2
        labels[inside] = label
    return labels


def make_donut(n, d=10, sigma=0.4, random_state=None, return_latent=False):
    """Simulate the high-dimensional donut example (paper, Section 6.2).

    Points are uniform on the disc of radius 4 in the first two coordinates and
    labelled by :func:`donut_labels` (expected shares 75%, 6.25%, 18.75%); the
    other ``d - 2`` coordinates are 0.  Every coordinate is then perturbed by
    independent ``N(0, sigma^2)`` noise.  The paper writes ``N_d(0, sigma I)``
    and calls sigma the perturbation; we read ``sigma`` as the noise standard
    deviation (the paper: 0.2, 0.4, 0.6).

    Parameters
    ----------
    n : int
    d : int, default=10
        At least 2 (the paper: 10 to 75).
    sigma : float, default=0.4
    random_state : int, numpy Generator or None
    return_latent : bool, default=False
        Also return the noise-free plane coordinates ``z1, z2``.

    Returns
    -------
    X : pandas.DataFrame, columns ``x1..xd``
    y : pandas.Series of ordered categorical with levels ``[1, 2, 3]``
    latent : pandas.DataFrame, only if ``return_latent``

    Examples
    --------
    >>> X, y = make_donut(4, d=3, random_state=1)
    >>> X.shape
    (4, 3)
    """
    n, d = check_int(n, "n", 1), check_int(d, "d", 2)
    sigma = _check_sigma(sigma)
    rng = np.random.default_rng(random_state)
    radius = _DONUT_RADIUS * np.sqrt(rng.uniform(size=n))
    angle = rng.uniform(0.0, 2.0 * np.pi, n)
    z = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    X = np.zeros((n, d))
    X[:, :2] = z
    X += sigma * rng.standard_normal((n, d))
    X, y = _package(X, donut_labels(z) - 1, 3)
    if not return_latent:
        return X, y
    return X, y, pd.DataFrame(z, columns=["z1", "z2"])


def stratified_split(y, sizes, random_state=None):
    """Partition indices into parts of given sizes, keeping class proportions.

    (Not ``train_test_split(stratify=)``: scikit-learn's stratified shuffle split
    refuses classes with one member and parts smaller than the number of classes,
    and cannot return an empty part; this split takes any sizes that fit.)

    The balance-scale protocol of Section 7: ``n`` points for training, ``n``
    for tuning and the remaining ``N - 2n`` for testing, with the class
    proportions preserved.  Each part's per-class counts are the
    largest-remainder rounding of ``size * (class count remaining) / (points
    remaining)``, so every part is as close to proportional as integers allow;
    the members are then drawn without replacement within each class.

    Parameters
    ----------
    y : array-like of shape (N,)
        Class labels (any hashable values; ordered categoricals are fine).
    sizes : sequence of int
        Sizes of the first parts; the remaining indices form one final part
        (empty if the sizes add up to N).
    random_state : int, numpy Generator or None

    Returns
    -------
    tuple of ndarray of int
        ``len(sizes) + 1`` sorted index arrays that partition ``range(N)``.

    Examples
    --------
    >>> y = ["a"] * 6 + ["b"] * 3
    >>> train, tune, test = stratified_split(y, [3, 3], random_state=0)
    >>> [len(train), len(tune), len(test)]
    [3, 3, 3]
    """
    codes = pd.factorize(pd.Series(np.asarray(y, dtype=object)))[0]
    if np.any(codes < 0):
        raise ValueError("y has missing values; stratified_split needs a label for every row.")
    sizes = _check_sizes(sizes, codes.size)
    rng = np.random.default_rng(random_state)
    pools = [rng.permutation(np.flatnonzero(codes == c)) for c in range(codes.max() + 1)]
    parts = []
    for size in sizes:
        counts = _proportional_counts(size, np.array([p.size for p in pools]))
        parts.append(np.sort(np.concatenate([p[:m] for p, m in zip(pools, counts)])))
        pools = [p[m:] for p, m in zip(pools, counts)]
    parts.append(np.sort(np.concatenate(pools)))
    return tuple(part.astype(int) for part in parts)


def _proportional_counts(size, available):
    """Largest-remainder allocation of ``size`` over classes, capped by availability."""
    if size == 0:
        return np.zeros(available.size, dtype=int)
    quota = size * available / available.sum()
    counts = np.floor(quota).astype(int)
    remainder = quota - counts
    for c in np.argsort(-remainder, kind="stable")[: size - counts.sum()]:
        counts[c] += 1
    return np.minimum(counts, available)


def _check_sizes(sizes, total):
    if isinstance(sizes, numbers.Integral):
        sizes = [sizes]
    sizes = list(sizes)
    if not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0
               for s in sizes):
        raise ValueError(f"sizes must be non-negative integers; got {sizes!r}.")
    if sum(sizes) > total:
        raise ValueError(f"sizes {sizes} add up to {sum(sizes)}, more than the {total} "
                         "observations in y; reduce them.")
    return [int(s) for s in sizes]


def _sample_classes(prob, rng):
    """Draw one class code per row from the row probabilities (inverse CDF)."""
    u = rng.uniform(size=prob.shape[0])
    codes = (u[:, None] > np.cumsum(prob, axis=1)).sum(axis=1)
    return np.minimum(codes, prob.shape[1] - 1)


def _package(X, codes, K):
    columns = [f"x{j + 1}" for j in range(X.shape[1])]
    levels = list(range(1, K + 1))
    y = pd.Series(pd.Categorical.from_codes(codes, categories=levels, ordered=True), name="y")
    return pd.DataFrame(X, columns=columns), y




def _check_k(K):
    return check_int(K, "K", 2)


def _check_sigma(sigma):
    if not isinstance(sigma, numbers.Real) or not np.isfinite(sigma) or sigma < 0:
        raise ValueError(f"The 'sigma' parameter must be a finite float >= 0. Got {sigma!r}.")
    return float(sigma)
