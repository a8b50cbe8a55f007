"""The kernel rows a polishing step reads: K_SS, K[S, R] D and the gradient update K[:, R] D.

The rounds of a polishing step (:mod:`nordicstats.solvers.polish`) need, for the rows S of
their face and R where the point moved, the kernel block K_SS, the product K[S, R] D and
the update K[:, R] D of the gradient (D = (Omega - Omega_base)_R).  With a dense Gram matrix these
are indexed directly.  With rows on demand (a :class:`~nordicstats.kernels.KernelMatrix`,
n above ``DENSE_GRAM_MAX_ROWS``) the SMO loop's row cache already holds most of a face's
rows, so :class:`SharedKernelRows` reads them there and computes only the missing ones,
into that cache by the loop's formula, and reads them by compiled loops
(:mod:`~nordicstats.solvers.cached_products`; :func:`kernel_rows_for` picks it); otherwise
:class:`KernelRows` keeps the rows it computed in a block of its own between rounds and
polishing steps.  Design and measurements: docs/notes/scaling.md ("Kernel rows kept
between polishing rounds and steps", "The polishing's kernel rows from the SMO loop's row
cache, and larger faces", "The polishing's products over the cached rows, and the first
face").
"""

from __future__ import annotations

import numpy as np

from nordicstats.kernels import KernelMatrix, gram_block
from nordicstats.solvers.cached_products import cached_block, cached_rows_product

__all__ = ["KernelRows", "SharedKernelRows", "kernel_rows_for"]

# Memory of the kernel rows kept between rounds and polishing steps (:class:`KernelRows`,
# rows on demand only), MiB: every row up to n = 5,792, 1,677 rows at n = 20,000.
# Measured (one process, same path on / off): at n = 5,000 the polishing 1.21-1.33x and
# the fits 1.02-1.11x faster (1,200-2,800 rows kept, <= 111 MB); at n = 20,000 (likert,
# K = 5, C = 16) with 1 GiB the fit's CPU time was the same (165.9 s) and its peak
# 3,111 MB against 2,286 MB, so larger faces there are computed as before.
# 0 turns the reuse off (every round computes its kernel blocks from X).  The SMO solver
# uses this block only where the rows are not read from its row cache (READ_ROW_CACHE off,
# or a request with more rows than the cache has slots)
KEPT_ROWS_MB = 256.0
# Read the polishing's kernel rows from the SMO loop's row cache (:class:`SharedKernelRows`)
# when there is one; False keeps them apart (:class:`KernelRows`).  Measured (one process,
# CPU time, the same SMO steps and rounds either way): likert, n = 20,000, K = 5, C = 16
# polishing 16.6 -> 11.0 s, fit 98.4 -> 90.0 s (99.7% of the rows asked for were cached);
# n = 5,000 (every row cached) polishing 0.98-1.14x, fits 0.97-1.03x over five fits
READ_ROW_CACHE = True
# Read the cached rows by compiled loops (:class:`SharedKernelRows`,
# :mod:`~nordicstats.solvers.cached_products`): the gradient update K[:, R] D and the
# face's K[S, R] D summed where the rows lie, K_SS and other blocks copied by one loop;
# False: numpy's gathers (np.ix_) and BLAS products of the gathered rows.  Measured:
# docs/notes/scaling.md ("The polishing's products over the cached rows")
COMPILED_READS = True
# the gathered rows of one block of the gradient update K[:, R] D without the compiled
# reads (COMPILED_READS off)
PRODUCT_BLOCK_BYTES = 32 * 2 ** 20


class KernelRows:
    """Kernel rows K[i, :] of the faces' rows, kept between rounds and polishing steps.

    The rounds of a polishing step change few variables (229, 130, 38, 11, 3 of 1,370 at
    ``likert``, n = 1,000, K = 7, C = 16) and successive steps polish nearly the same
    rows, but each round needs K_SS, K[S, R] and the update K[:, R] (Omega - Omega_base)_R
    of the gradient over the rows S of its face and R where the point moved.  With a
    :class:`~nordicstats.kernels.KernelMatrix` (rows on demand, n above
    ``DENSE_GRAM_MAX_ROWS``) these are computed from X; here a row, once computed, is kept
    in a block of at most ``max_mb`` MiB (its slot in :attr:`position`), and only the
    rows not kept are computed.  When a request does not fit beside the kept rows, the
    block is compacted to the requested rows; a request larger than the block is
    computed as without reuse.  A dense Gram matrix is indexed directly (nothing to keep).

    The kept values are those ``gram.block`` returns, so K_SS and K[S, R] are the same
    numbers as without reuse; the gradient update K[:, R] d is one product over the kept
    block with d placed in the slots of R (zeros elsewhere; the rows R gathered when they
    are fewer than half the kept rows), equal to the product by blocks of
    :class:`~nordicstats.kernels.KernelMatrix` up to rounding (another order of summation).

    Parameters
    ----------
    gram : ndarray of shape (n, n) or KernelMatrix
    max_mb : float, optional
        Memory of the kept block, MiB; default :data:`KEPT_ROWS_MB` (0: no reuse).

    Examples
    --------
    >>> from nordicstats.kernels import make_kernel
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]])
    >>> rows = KernelRows(KernelMatrix(make_kernel("rbf", gamma=0.5), X))
    >>> block = rows.block([0, 2], [2, 3])  # K[[0, 2]][:, [2, 3]]: rows 2, 3 computed, kept
    >>> again = rows.block([3], [2])  # K[3, 2] = K[2, 3] from the kept row 2
    >>> rows.computed, bool(again[0, 0] == block[1, 1])
    (2, True)
    """

    def __init__(self, gram, max_mb=None):
        self.gram = gram
        n = gram.shape[0]
        max_mb = KEPT_ROWS_MB if max_mb is None else float(max_mb)
        self.capacity = min(n, int(max_mb * 2 ** 20 // (8 * n))) \
            if isinstance(gram, KernelMatrix) else 0
        self.position = np.full(n, -1, dtype=np.int64)  # slot of each kept row, -1 if none
        self.owner = np.empty(0, dtype=np.int64)  # row of each used slot
        self.store = None  # (capacity, n), allocated at the first request that fits
        self.computed = 0  # rows computed from X
        self.read = 0  # rows read from the SMO loop's cache (SharedKernelRows)

    def block(self, rows, cols):
        """K[rows][:, cols] (the kept rows ``cols``, or computed when they do not fit)."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        if not self._keep(cols):
            return gram_block(self.gram, rows, cols)
        return self.store[np.ix_(self.position[cols], rows)].T

    def square_and_beside(self, rows, cols):
        """(K[rows][:, rows], K[rows][:, cols]) for sorted unique ``rows``: a face's K_SS
        and K[S, R], the latter first (as two calls of :meth:`block`, the same rows kept in
        the same slots).  When both come from the kept rows, the columns of K[S, R] in S
        are copied from K_SS (rows of its transpose, contiguous) and only the others
        gathered: the same numbers in the same layout, 2-3x less gathering when R is
        about S (the point moved on the face's rows).
        """
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        if not self._keep(cols) or rows.size > self.capacity:
            beside = self.block(rows, cols)
            return self.block(rows, rows), beside
        where = np.minimum(np.searchsorted(rows, cols), max(rows.size - 1, 0))
        inside = rows[where] == cols if rows.size else np.zeros(cols.size, dtype=bool)
        beside = np.empty((cols.size, rows.size))  # its transpose, as the kept rows give it
        beside[~inside] = self.store[np.ix_(self.position[cols[~inside]], rows)]
        square = self.block(rows, rows)
        beside[inside] = square.T[where[inside]]
        return square, beside.T

    def square_and_product(self, rows, cols, B):
        """(K[rows][:, rows], K[rows][:, cols] B) for sorted unique ``rows``: a face's K_SS
        and the fixed part K[S, R] D of its right side (:meth:`square_and_beside`)."""
        square, beside = self.square_and_beside(rows, cols)
        return square, beside @ B

    def product(self, rows, B):
        """K[:, rows] B for B of shape (len(rows), r)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not self._keep(rows):
            if isinstance(self.gram, KernelMatrix):
                full = np.zeros((self.gram.shape[0], B.shape[1]))
                full[rows] = B
                return self.gram @ full
            return self.gram[:, rows] @ B
        if 2 * rows.size < self.owner.size:  # few of the kept rows: gather them
            return self.store[self.position[rows]].T @ B
        spread = np.zeros((self.owner.size, B.shape[1]))
        spread[self.position[rows]] = B
        return self.store[:self.owner.size].T @ spread

    def _keep(self, rows):
        """Make ``rows`` kept (computing those that are not); False if they cannot be."""
        rows = np.unique(rows)
        if rows.size > self.capacity:
            return False
        if self.store is None:
            self.store = np.empty((self.capacity, self.gram.shape[0]))
        missing = rows[self.position[rows] < 0]
        if self.owner.size + missing.size > self.capacity:
            self._compact(rows[self.position[rows] >= 0])
        if missing.size:
            start = self.owner.size
            self.store[start:start + missing.size] = self.gram.block(missing)
            self.position[missing] = start + np.arange(missing.size)
            self.owner = np.r_[self.owner, missing]
            self.computed += int(missing.size)
        return True

    def _compact(self, keep):
        """Keep only the rows ``keep``, moved to the first slots in the order of their
        slots (in place: a slot is never written before the row in it has moved)."""
        keep = keep[np.argsort(self.position[keep])]
        for target, slot in enumerate(self.position[keep]):
            if slot != target:
                self.store[target] = self.store[slot]
        self.position[self.owner] = -1
        self.position[keep] = np.arange(keep.size)
        self.owner = keep.copy()


class SharedKernelRows(KernelRows):
    """:class:`KernelRows` read from the SMO loop's row cache: no second copy of a row.

    The SMO solver computes kernel rows from X into a least-recently-used cache
    (:class:`~nordicstats.solvers.smo_core.RowCache`, every row up to n = 16,384, 2 GiB at
    most) that holds most of a face's rows when the polishing starts.  Here a request
    reads them there and computes only the missing ones, into the same cache by the same
    compiled formula (:meth:`~nordicstats.solvers.smo_core.RowCache.fetch`), so every
    kernel value the polishing reads comes from one formula: K_SS is symmetric bit for
    bit, the same rows give the same numbers in every round (what :class:`HessianBlocks`
    relies on), and the SMO loop's later steps find the face's rows cached.  That formula,
    exp(-gamma (x_i'x_i + x_j'x_j - 2 x_i'x_j)) for the RBF kernel, differs from
    ``KernelMatrix.block`` (``cdist``) in the last bits (at most 1.3e-15 measured,
    ``likert`` n = 1,000-20,000).  A request with more rows than the cache has slots
    falls back to :class:`KernelRows`.  With :data:`COMPILED_READS` (the default) the
    products K[:, R] D and K[S, R] D are summed over the cached rows where they lie and
    K_SS is copied by one compiled loop (:mod:`~nordicstats.solvers.cached_products`);
    else the rows are gathered by numpy (the gradient update over blocks of
    :data:`PRODUCT_BLOCK_BYTES`) and multiplied by BLAS.

    Parameters
    ----------
    gram : KernelMatrix
    row_cache : RowCache
        The SMO loop's cache of rows of the same kernel on the same X.
    max_mb : float, optional
        Memory of the fallback's kept block (:class:`KernelRows`).

    Examples
    --------
    >>> from nordicstats.kernels import make_kernel
    >>> from nordicstats.solvers.smo_core import RowCache
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]])
    >>> cache = RowCache(X, None, "rbf", gamma=0.5)
    >>> rows = SharedKernelRows(KernelMatrix(make_kernel("rbf", gamma=0.5), X), cache)
    >>> block = rows.block([0, 2], [2, 3])  # rows 2 and 3 computed into the SMO cache
    >>> again = rows.block([3], [2])
    >>> rows.computed, rows.read, bool(again[0, 0] == block[1, 1])
    (2, 1, True)
    """

    def __init__(self, gram, row_cache, max_mb=None):
        super().__init__(gram, max_mb)
        self.row_cache = row_cache

    def block(self, rows, cols):
        """K[rows][:, cols] from the cached rows ``cols``."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        slots = self._slots(cols)
        if slots is None:
            return super().block(rows, cols)
        return self._gather(slots, rows)

    def square_and_beside(self, rows, cols):
        """(K_SS, K[S, R]) for sorted unique ``rows`` S, both from the cached rows of S and R
        (fetched together, so that neither evicts the other)."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        slots = self._slots(np.r_[rows, cols])
        if slots is None:
            return super().square_and_beside(rows, cols)
        return self._gather(slots[:rows.size], rows), self._gather(slots[rows.size:], rows)

    def square_and_product(self, rows, cols, B):
        """(K_SS, K[S, R] B) for sorted unique ``rows`` S from the cached rows of S and R
        (fetched together); with :data:`COMPILED_READS` K[S, R] B is summed over the
        cached rows of R without gathering K[S, R]."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        slots = self._slots(np.r_[rows, cols]) if COMPILED_READS else None
        if slots is None:
            return super().square_and_product(rows, cols, B)
        return (self._gather(slots[:rows.size], rows),
                cached_rows_product(self.row_cache.rows, slots[rows.size:], B, cols=rows))

    def product(self, rows, B):
        """K[:, rows] B over the cached rows: summed where they lie
        (:data:`COMPILED_READS`), else gathered by blocks and multiplied by BLAS."""
        rows = np.asarray(rows, dtype=np.int64)
        slots = self._slots(rows)
        if slots is None:
            return super().product(rows, B)
        store = self.row_cache.rows
        if COMPILED_READS:
            return cached_rows_product(store, slots, B)
        out = np.zeros((self.gram.shape[0], B.shape[1]))
        step = max(1, PRODUCT_BLOCK_BYTES // (8 * self.gram.shape[0]))
        for start in range(0, rows.size, step):
            part = slice(start, start + step)
            out += store[slots[part]].T @ B[part]
        return out

    def _gather(self, slots, cols):
        """K[cols][:, rows in ``slots``]: a compiled copy (:data:`COMPILED_READS`) or
        ``np.ix_``, the same numbers in the same layout."""
        if COMPILED_READS:
            return cached_block(self.row_cache.rows, slots, cols)
        return self.row_cache.rows[np.ix_(slots, cols)].T

    def _slots(self, rows):
        """Slots of ``rows`` (any order, repeats allowed) in the SMO cache, the missing ones
        computed there; None when they do not fit."""
        unique, where = np.unique(rows, return_inverse=True)
        fetched = self.row_cache.fetch(unique)
        if fetched is None:
            return None
        slots, computed = fetched
        self.computed += computed
        self.read += unique.size - computed
        return slots[where]


def kernel_rows_for(gram, row_cache=None):
    """The polishing's kernel rows for one fit: read from the SMO loop's ``row_cache``
    when it computes rows of ``gram`` (a :class:`~nordicstats.kernels.KernelMatrix`) and
    :data:`READ_ROW_CACHE` is on (:class:`SharedKernelRows`), else kept in a block of their
    own (:class:`KernelRows`)."""
    if READ_ROW_CACHE and row_cache is not None and row_cache.kind \
            and isinstance(gram, KernelMatrix):
        return SharedKernelRows(gram, row_cache)
    return KernelRows(gram)
