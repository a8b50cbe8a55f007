"""Products and blocks of kernel rows held in a row cache, read where the rows lie (numba).

The polishing (:mod:`nordicstats.solvers.polish`) multiplies by the kernel rows R where
its point moved: the gradient update K[:, R] D over all n rows and the fixed part
K[S, R] D of its face's right side over the face's rows S, with D of shape (len(R), K-1).
Those rows are held in the SMO loop's row cache (a ``(slots, n)`` array, row i in slot
``slot_of[i]``; :class:`~nordicstats.solvers.smo_core.RowCache`), so the products are
summed here over the cached rows themselves::

    out[c, j] = sum_t  K[R_t, cols_j] D[t, c]         (K symmetric: K[cols, R] = K[R, cols]')

(the gradient update of G = K Omega, eq. KKT_omega of the paper, Section 3.3) one row
R_t at a time, by blocks of :data:`COLUMN_BLOCK` columns (a block of ``out`` and
the row's part stay in the processor's cache), without gathering the rows into a copy
first (a gather of 2,500 rows of 20,000 is 400 MB).  Zero entries of D are skipped; the
terms of each entry are added in the order of R.  The face's kernel block K_SS is copied
from the cached rows of S by one compiled loop (:func:`cached_block`).  Design and
measurements:
docs/notes/scaling.md ("The polishing's products over the cached rows").
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["COLUMN_BLOCK", "cached_block", "cached_rows_product"]

# Columns of a block of the product: (K-1) x 8,192 x 8 bytes of ``out`` (384 KiB at
# K = 7) and 64 KiB of a row stay in the processor's L2 cache while every row R_t is added.
# Measured (2,500 random rows of 20,000 in a cache of 10,000, K - 1 = 6, half of D zero,
# CPU s, two runs): blocks of 2,048 / 4,096 / 8,192 / 20,000 columns 0.037-0.038 /
# 0.033-0.036 / 0.029-0.032 / 0.031 s over all n; gathered by blocks of 32 MiB and
# multiplied by BLAS 0.065-0.067 s (0.125-0.143 s the first time in a process: fresh
# pages); K[S, R] D over 5,400 columns S 0.028-0.033 s against 0.051 s (0.29 s) for the
# np.ix_ gather and BLAS
COLUMN_BLOCK = 8192


def cached_rows_product(store, slots, D, cols=None):
    """K[cols][:, R] D from the cached rows of R: ``store[slots[t]]`` is row R_t.

    Parameters
    ----------
    store : ndarray of shape (slots, n)
        The row cache's rows (C-contiguous).
    slots : ndarray of int of shape (len(R),)
        The slot of each row R_t.
    D : ndarray of shape (len(R), m)
    cols : ndarray of int, optional
        The columns (rows S of a face, any order); default all n.

    Returns
    -------
    ndarray of shape (len(cols), m)
        An F-contiguous array (the transpose of the ``(m, len(cols))`` sums).

    Examples
    --------
    >>> K = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.4], [0.2, 0.4, 1.0]])
    >>> store = K[[2, 0]]  # the cache: row 2 in slot 0, row 0 in slot 1
    >>> D = np.array([[1.0, 0.0], [2.0, 1.0]])  # for R = (0, 2): slots (1, 0)
    >>> np.allclose(cached_rows_product(store, np.array([1, 0]), D), K[:, [0, 2]] @ D)
    True
    >>> cached_rows_product(store, np.array([1, 0]), D, cols=np.array([1]))
    array([[1.3, 0.4]])
    """
    D = np.ascontiguousarray(D, dtype=float)
    every = cols is None
    slots, cols = _indices(store, slots, np.zeros(0) if every else cols)
    if D.ndim != 2 or D.shape[0] != slots.size:
        raise ValueError(f"D must have one row per slot ({slots.size}); got shape {D.shape}.")
    out = np.zeros((D.shape[1], store.shape[1] if every else cols.size))
    _add_row_products(store, slots, D, cols, every, COLUMN_BLOCK, out)
    return out.T


def cached_block(store, slots, cols):
    """K[cols][:, R] from the cached rows of R (``store[slots[t]]`` is row R_t), by one
    compiled loop: the values of ``store[np.ix_(slots, cols)].T``, bit for bit, in the same
    layout (F-contiguous), without numpy's fancy-indexing machinery.

    Measured (rows of a cache of 13,000 of n = 20,000, CPU s, alternating, the freed
    memory of the last block reused): 2,000 x 2,000 0.019 s against 0.029 s for
    ``np.ix_``, 5,444 x 5,444 (a K_SS of 237 MB) 0.059 s against 0.083 s; the first
    block of a size in a process costs about 0.5 s more either way (its pages).

    Examples
    --------
    >>> store = np.arange(12.0).reshape(3, 4)
    >>> cached_block(store, np.array([2, 0]), np.array([3, 1]))
    array([[11.,  3.],
           [ 9.,  1.]])
    """
    slots, cols = _indices(store, slots, cols)
    out = np.empty((slots.size, cols.size))
    _gather(store, slots, cols, out)
    return out.T


def _indices(store, slots, cols):
    """``slots`` and ``cols`` as int64 arrays, checked against the shape of ``store`` (the
    compiled loops do not check their indices)."""
    slots = np.ascontiguousarray(slots, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    if store.ndim != 2 or not store.flags.c_contiguous or store.dtype != np.float64:
        raise ValueError("store must be a C-contiguous 2-D float64 array (the cache's rows).")
    for name, index, size in (("slots", slots, store.shape[0]), ("cols", cols, store.shape[1])):
        if index.ndim != 1 or (index.size and (index.min() < 0 or index.max() >= size)):
            raise ValueError(f"{name} must be a 1-D array of indices in [0, {size}).")
    return slots, cols


@numba.njit(cache=True)
def _gather(store, slots, cols, out):
    """out[t, j] = store[slots[t], cols[j]]."""
    for t in range(slots.size):
        row, target = store[slots[t]], out[t]
        for j in range(cols.size):
            target[j] = row[cols[j]]


@numba.njit(cache=True)
def _add_row_products(store, slots, D, cols, every, block, out):
    """out[c, j] += sum_t store[slots[t], col_j] D[t, c] (col_j = j when ``every``), by
    blocks of ``block`` columns; the row's values of a block gathered once (``cols``)."""
    width = out.shape[1]
    part = np.empty(min(block, width))
    for first in range(0, width, block):
        last = min(first + block, width)
        for t in range(slots.size):
            row = store[slots[t]]
            if every:
                values = row[first:last]
            else:
                for j in range(first, last):
                    part[j - first] = row[cols[j]]
                values = part[:last - first]
            for c in range(D.shape[1]):
                weight = D[t, c]
                if weight != 0.0:
                    target = out[c, first:last]
                    for j in range(last - first):
                        target[j] += values[j] * weight
