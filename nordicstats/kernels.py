"""Kernel functions and the paper's kernel-width rule.

Conventions (those of scikit-learn and R's ``e1071``):

* linear: k(x, x') = x'x'
* rbf:    k(x, x') = exp(-gamma ||x - x'||^2)
* poly:   k(x, x') = (gamma x'x' + coef0)^degree
* a callable ``k(A, B) -> ndarray`` returning the Gram matrix of the rows of A and B.

The width rule of the paper (Section 6): candidate Gaussian widths sigma are the
10%, 50% and 90% quantiles of the pairwise distances between training vectors.
A width sigma corresponds to ``gamma = 1 / (2 sigma^2)``; the median is the
default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.distance import cdist, pdist

from nordicstats._validation import check_positive

__all__ = [
    "Kernel",
    "make_kernel",
    "pairwise_distance_quantiles",
    "width_to_gamma",
    "gamma_candidates",
    "KERNELS",
    "KernelMatrix",
]

KERNELS = ("linear", "rbf", "poly")

# Pairwise distances are quantiled on at most this many rows (a fixed-seed
# subsample), so the rule costs O(1) memory in n; 1000 rows give 499,500 distances.
_MAX_ROWS_FOR_QUANTILES = 1000


@dataclass(frozen=True)
class Kernel:
    """A kernel with its parameters fixed.

    Attributes
    ----------
    name : str
        ``"linear"``, ``"rbf"``, ``"poly"`` or ``"callable"``.
    gamma : float or None
        Scale (rbf, poly).
    degree : int
        Polynomial degree (poly).
    coef0 : float
        Polynomial offset (poly).
    function : callable or None
        User Gram function for ``name == "callable"``.
    """

    name: str
    gamma: float | None = None
    degree: int = 3
    coef0: float = 1.0
    function: object = field(default=None, compare=False)

    def __call__(self, A, B):
        """Gram matrix ``G[i, j] = k(A[i], B[j])``."""
        A = np.asarray(A, dtype=float)
        B = np.asarray(B, dtype=float)
        if self.name == "linear":
            return A @ B.T
        if self.name == "rbf":
            return np.exp(-self.gamma * cdist(A, B, "sqeuclidean"))
        if self.name == "poly":
            return (self.gamma * (A @ B.T) + self.coef0) ** self.degree
        G = np.asarray(self.function(A, B), dtype=float)
        if G.shape != (A.shape[0], B.shape[0]):
            raise ValueError(
                f"the kernel callable returned shape {G.shape} for inputs with {A.shape[0]} and "
                f"{B.shape[0]} rows; it must return the ({A.shape[0]}, {B.shape[0]}) Gram matrix."
            )
        return G

    @property
    def is_linear(self):
        """True for the linear kernel, whose fits have primal weights w_k."""
        return self.name == "linear"

    @property
    def never_negative(self):
        """True when k(x, x') >= 0 for all inputs (needed by NORDIC-0).

        Holds for the Gaussian kernel and for ``poly`` with an even degree; a
        user callable is checked on the training Gram matrix instead.
        """
        return self.name == "rbf" or (self.name == "poly" and self.degree % 2 == 0)

    def describe(self):
        """Short text for summaries, e.g. ``"rbf (gamma=0.25)"``."""
        if self.name == "linear":
            return "linear"
        if self.name == "rbf":
            return f"rbf (gamma={self.gamma:.4g})"
        if self.name == "poly":
            return f"poly (degree={self.degree}, gamma={self.gamma:.4g}, coef0={self.coef0:.4g})"
        return f"callable ({getattr(self.function, '__name__', 'user function')})"


def pairwise_distance_quantiles(X, quantiles=(0.1, 0.5, 0.9), weights=None):
    """Quantiles of the Euclidean distances between distinct training rows.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    quantiles : sequence of float in (0, 1)
    weights : ndarray of shape (n,), optional
        Case weights as frequencies: the pair (i, j) counts w_i w_j times, so
        integer weights give the quantiles of the data with row i repeated w_i
        times (:func:`weighted_quantile`); rows of weight 0 do not count.

    Returns
    -------
    ndarray of float
        One distance per quantile.  For n > 1000 the distances are those of a
        fixed-seed subsample of 1000 rows, so the result is deterministic.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> pairwise_distance_quantiles(X, (0.5,)).tolist()
    [2.0]
    """
    X = np.asarray(X, dtype=float)
    if weights is not None:
        X, weights = X[weights > 0], np.asarray(weights, dtype=float)[weights > 0]
    if X.shape[0] < 2:
        raise ValueError("the width rule needs at least two rows of X.")
    if X.shape[0] > _MAX_ROWS_FOR_QUANTILES:
        rows = np.sort(np.random.default_rng(0).choice(X.shape[0], _MAX_ROWS_FOR_QUANTILES,
                                                       replace=False))
        X = X[rows]
        weights = None if weights is None else weights[rows]
    distances = pdist(X)
    positive = distances > 0
    if not positive.any():
        raise ValueError("all rows of X are identical, so no kernel width can be chosen.")
    quantiles = np.asarray(quantiles, dtype=float)
    if weights is None:
        return np.quantile(distances[positive], quantiles)
    pair = (weights[:, None] * weights[None, :])[np.triu_indices(X.shape[0], 1)]
    return weighted_quantile(distances[positive], pair[positive], quantiles)


def weighted_quantile(values, counts, quantiles):
    """numpy's default (linear) quantile of ``values`` with each repeated ``counts`` times.

    With integer counts this equals ``np.quantile(np.repeat(values, counts), q)``:
    position h = (N - 1) q in the expanded sorted sample, N = sum(counts),
    interpolated between the elements at floor(h) and floor(h) + 1.  Real counts
    use the same formula.

    Examples
    --------
    >>> weighted_quantile(np.array([1.0, 2.0, 5.0]), np.array([2, 1, 3]), [0.5]).tolist()
    [3.5]
    """
    order = np.argsort(values, kind="stable")
    v, c = np.asarray(values, dtype=float)[order], np.asarray(counts, dtype=float)[order]
    cum = np.cumsum(c)
    h = (cum[-1] - 1.0) * np.asarray(quantiles, dtype=float)
    lo = np.floor(h)

    def at(r):  # element at 0-based position r of the expanded sample
        return v[np.minimum(np.searchsorted(cum, r, side="right"), v.size - 1)]

    return at(lo) + (h - lo) * (at(lo + 1) - at(lo))


def width_to_gamma(width):
    """Convert a Gaussian width sigma to ``gamma = 1 / (2 sigma^2)``.

    Examples
    --------
    >>> width_to_gamma(1.0)
    0.5
    """
    gamma = 1.0 / (2.0 * np.asarray(width, dtype=float) ** 2)
    return float(gamma) if gamma.ndim == 0 else gamma


def gamma_candidates(X, quantiles=(0.1, 0.5, 0.9), weights=None):
    """The paper's RBF grid: gamma for the 10/50/90% pairwise-distance widths.

    ``weights`` are case weights counted as frequencies (see
    :func:`pairwise_distance_quantiles`).

    Returns
    -------
    ndarray of float
        ``1 / (2 q^2)`` for each distance quantile ``q`` (so the largest gamma
        comes from the 10% quantile).
    """
    return width_to_gamma(pairwise_distance_quantiles(X, quantiles, weights))


def make_kernel(kernel="rbf", X=None, gamma=None, degree=3, coef0=1.0, owner="NORDIC",
                weights=None):
    """Validate kernel options and fix data-dependent defaults.

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly"} or callable, default="rbf"
    X : ndarray of shape (n, d), optional
        Training covariates, needed for the default ``gamma``.
    gamma : float, optional
        rbf: default from the median pairwise distance (paper's rule);
        poly: default ``1 / d`` (e1071's default).
    degree : int, default=3
    coef0 : float, default=1.0
    owner : str, default="NORDIC"
        Estimator named in error messages.
    weights : ndarray of shape (n,), optional
        Case weights of X, counted as frequencies by the rbf width rule.

    Returns
    -------
    Kernel

    Examples
    --------
    >>> make_kernel("rbf", gamma=0.5)
    Kernel(name='rbf', gamma=0.5, degree=3, coef0=1.0, function=None)
    """
    if callable(kernel):
        return Kernel(name="callable", function=kernel)
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(
            f"The 'kernel' parameter of {owner} must be one of {list(KERNELS)} or a callable "
            f"k(A, B) returning a Gram matrix. Got {kernel!r} instead."
        )
    if kernel == "linear":
        return Kernel(name="linear")
    if gamma is None:
        if X is None:
            raise ValueError("gamma=None needs the training data X to apply the width rule.")
        gamma = (float(gamma_candidates(X, (0.5,), weights)[0]) if kernel == "rbf"
                 else 1.0 / np.asarray(X).shape[1])
    gamma = check_positive(gamma, "gamma", owner)
    if kernel == "poly":
        if not isinstance(degree, (int, np.integer)) or isinstance(degree, bool) or degree < 1:
            raise ValueError(
                f"The 'degree' parameter of {owner} must be an int >= 1. Got {degree!r} instead."
            )
        if not np.isfinite(coef0):
            raise ValueError(f"The 'coef0' parameter of {owner} must be finite. Got {coef0!r}.")
        return Kernel(name="poly", gamma=gamma, degree=int(degree), coef0=float(coef0))
    return Kernel(name="rbf", gamma=gamma)


def check_gram(G, kernel):
    """Check the training Gram matrix of a user kernel: symmetric and positive semi-definite.

    A singular Gram matrix is accepted: every method works with it (NORDIC-0 is
    solved in the primal, so K^{-1} is never formed).

    Parameters
    ----------
    G : ndarray of shape (n, n)
    kernel : Kernel

    Raises
    ------
    ValueError
        Not symmetric or not positive semi-definite.
    """
    scale = max(float(np.max(np.abs(np.diag(G)))), 1e-300)
    if not np.allclose(G, G.T, rtol=1e-10, atol=1e-12 * scale):
        raise ValueError(f"the {kernel.describe()} kernel gave a non-symmetric Gram matrix; "
                         "a Mercer kernel must satisfy k(x, x') = k(x', x).")
    smallest = np.linalg.eigvalsh((G + G.T) / 2)[0]
    if smallest < -1e-8 * scale:
        raise ValueError(
            f"the {kernel.describe()} kernel gave a Gram matrix that is not positive semi-definite "
            f"(smallest eigenvalue {smallest:.3g}); use a Mercer kernel."
        )


# Rows of K computed at once by KernelMatrix products: blocks of at most 32 MiB.
_BLOCK_BYTES = 32 * 2 ** 20
# products K @ B remembered by their operand: two, since a certificate alternates
# K omega and K (Y alpha) (four products of all n^2 kernel values with one remembered,
# two with two; 2.5 s of a 12.6 s NORDIC-0 fit at n = 5,000)
_REMEMBERED = 2


class KernelMatrix:
    """The n x n Gram matrix of a named kernel on X, never stored: products by row blocks.

    Stands in for the dense matrix where n is large (n = 20,000 would need 3.2 GB):
    ``K @ B`` is computed by blocks of rows, over the rows of B that are not zero
    (kernel expansions are sparse), and the last two products are remembered, since a
    certificate multiplies by the same omega several times.  ``np.asarray(K)``
    forms the dense matrix for solvers that need it.

    Parameters
    ----------
    kernel : Kernel
        A named kernel (``"linear"``, ``"rbf"`` or ``"poly"``).
    X : ndarray of shape (n, d)

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> K = KernelMatrix(make_kernel("rbf", gamma=0.5), X)
    >>> bool(np.allclose(K @ np.eye(3), K.kernel(X, X)))
    True
    """

    ndim = 2
    dtype = np.dtype(float)

    def __init__(self, kernel, X):
        if kernel.name not in KERNELS:
            raise ValueError("KernelMatrix needs a named kernel (linear, rbf, poly); a callable "
                             "kernel's Gram matrix must be formed densely.")
        self.kernel = kernel
        self.X = np.ascontiguousarray(X, dtype=float)
        self._recent = []  # (operand key, product) of the last _REMEMBERED products

    @property
    def shape(self):
        """(n, n)."""
        return (self.X.shape[0], self.X.shape[0])

    def __matmul__(self, B):
        """K @ B by blocks of rows, over the nonzero rows of B."""
        B = np.asarray(B, dtype=float)
        key = (B.shape, B.tobytes())  # the operand itself, compared exactly
        for known, product in self._recent:
            if known == key:
                return product.copy()
        flat = B.reshape(B.shape[0], -1)
        support = np.flatnonzero(np.any(flat != 0.0, axis=1))
        out = np.zeros((self.X.shape[0], flat.shape[1]))
        if support.size:
            Xs, Bs = self.X[support], flat[support]
            step = max(1, _BLOCK_BYTES // (8 * support.size))
            for start in range(0, self.X.shape[0], step):
                block = slice(start, start + step)
                out[block] = self.kernel(self.X[block], Xs) @ Bs
        out = out.reshape((self.X.shape[0],) + B.shape[1:])
        self._recent = [(key, out)] + self._recent[:_REMEMBERED - 1]
        return out.copy()

    def __array__(self, dtype=None, copy=None):
        """The dense matrix (n x n memory)."""
        dense = self.kernel(self.X, self.X)
        return dense if dtype is None else dense.astype(dtype)

    def block(self, rows, cols=None):
        """K[rows][:, cols] (all columns when ``cols`` is None), computed from X."""
        return self.kernel(self.X[rows], self.X if cols is None else self.X[cols])


def gram_block(gram, rows, cols=None):
    """K[rows][:, cols] of a dense Gram matrix or a :class:`KernelMatrix` (rows on demand).

    Parameters
    ----------
    gram : ndarray of shape (n, n) or KernelMatrix
    rows, cols : array of int
        Row and column indices; ``cols=None`` takes every column.

    Returns
    -------
    ndarray of shape (len(rows), len(cols) or n)

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> K = KernelMatrix(make_kernel("rbf", gamma=0.5), X)
    >>> bool(np.allclose(gram_block(K, [0, 2], [1]), np.asarray(K)[[0, 2]][:, [1]]))
    True
    """
    if isinstance(gram, KernelMatrix):
        return gram.block(rows, cols)
    rows = np.asarray(rows, dtype=int)
    if cols is None:
        return gram[rows]
    # rows, then columns, by take: the same numbers as gram[np.ix_(rows, cols)], 2-3x faster
    # (blocks of 200-900 of 1,000 rows)
    return gram.take(rows, axis=0).take(np.asarray(cols, dtype=int), axis=1)
