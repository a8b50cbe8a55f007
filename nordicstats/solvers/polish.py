"""Active-set polishing of a BSVM / NORDIC-1 dual point: the exact optimum of a guessed face.

The dual of the separate form of NORDIC-1 (paper, Section 3.3; BSVM without phi
and gamma) is::

    min  D = 1/2 sum_k omega_k' K omega_k - e'alpha,
    omega_k = y_k alpha_k + phi_k - phi_{k-1}                          (eq. KKT_omega)
    s.t. y_k'alpha_k + gamma_k - gamma_{k-1} = 0,  0 <= alpha <= U,  phi, gamma >= 0.

An SMO point at libsvm's tolerance usually sits on the right face already: the
alphas at 0 and at U, the noncrossing multipliers phi and the intercept ties gamma
that are zero are those of the optimum, and only the values of the others are
inexact.  Fixing every bounded variable, the rest v = (free alphas, positive phis,
positive gammas) and the intercepts b (the multipliers of the equality rows) solve
the equality-constrained KKT system of the dual restricted to that face::

    [ H   A' ] [ v ]   [ -c ]     H = M' (I (x) K_SS) M,   c = M' vec(G_fixed) - [alpha]
    [ A   0  ] [ b ] = [  r ]     A v = r: the K-1 equality rows,

where M maps v to the entries of Omega it moves (rows S of the free alphas and
positive phis), G_fixed = K Omega_fixed on S the decision values without intercepts
of the fixed part, and r = -sum of y alpha over the bounded alphas.  Row by row it
says: y_ik (G_ik + b_k) = 1 for a free alpha (on the margin), G_ik = G_i,k+1 for a
positive phi (the boundaries touch at x_i), b_k = b_k+1 for a positive gamma (tied
intercepts), and the equality rows.  The system is symmetric and indefinite, of size
``|free alphas| + |positive phis| + |positive gammas| + K-1``, and needs only the dense
kernel block K_SS.

It is solved with a small proximal term delta (+delta on the v block, -delta on
the b block, which makes the matrix quasi-definite), through the Cholesky factor of
H + delta I and the (K-1) x (K-1) Schur complement, and iterative refinement against
the exact matrix (OSQP's polishing: Stellato et al. 2020, Section 4.3); on a singular
face (duplicated rows, a phi and both alphas of one row free) the refinement ends at
the solution nearest the starting point.  Ordered by boundary (the alphas of boundary
k with the phis between k and k+1), H is block tridiagonal -- phi_ik meets boundaries
k and k+1 only -- so it is factorised block by block (:class:`BlockTridiagonalCholesky`,
about 7/3 (K-1) (size / (K-1))^3 flops instead of size^3 / 3) and multiplied through
K_SS, never formed.  With rows on demand (a
:class:`~nordicstats.kernels.KernelMatrix`) the kernel rows of the faces are read from
the SMO loop's row cache, which holds most of them, the missing ones computed into it
(:class:`~nordicstats.solvers.kernel_rows.SharedKernelRows`; else kept between rounds and
polishing steps in a block of their own, :class:`~nordicstats.solvers.kernel_rows.KernelRows`);
the blocks of H of the variables that stay in the face are
kept between the rounds of a polishing step (:class:`HessianBlocks`), bit for bit those
computed afresh.

The face is guessed from the SMO point (the variables strictly inside their bounds)
and corrected by a primal-dual active set (Hintermueller, Ito & Kunisch 2002): after
each face optimum, free variables past a bound are fixed at it and bounded variables
whose KKT condition fails are released.
When nothing changes, the face optimum satisfies every KKT condition of the dual: it is
the optimum (:attr:`PolishStep.converged`).  When the changes stop shrinking, or the
first round changes more than a quarter of the face, the guess is abandoned, and
proximal-point steps follow: the same active set on the dual plus
rho/2 ||v - v_centre||^2, whose optimum (dual feasible, lower dual objective) becomes the next
centre, from which the active set on the dual is tried again (under heavy class overlap
the faces are numerically singular and the face optima of the dual itself move hundreds
of variables across their bounds in every round).  The caller decides whether to take
the candidate; the SMO loop continues from its own point otherwise.  Design and
measurements: docs/notes/scaling.md.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from nordicstats.solvers.kernel_rows import KernelRows

__all__ = ["PolishStep", "polish_step", "face_size", "dual_expansion", "solve_kkt",
           "HessianBlocks"]

# proximal term of the factorised matrix, relative to the largest diagonal of H
PROXIMAL = 1e-9
REFINEMENT_STEPS = 12
# face optima per polishing step (primal-dual active set rounds)
ACTIVE_SET_ROUNDS = 16
# a round must cut the changes of the active set to this fraction of the round before,
# else the guess is abandoned.  Measured (n = 1,000, K = 7): the rounds that converge
# cut them by 20-75% (229, 130, 38, 11, 3, 0; 135, 107, 56, 15, 9, 2, 0), those that do
# not by ~5% after the first (1299, 940, 890, 837, ...; 633, 504, 485, ...).  With 8
# rounds and 0.85 (before the block factor made rounds cheap) heavy overlap gave up on
# faces that settle later: 16 and 0.95 took 752,491 SMO steps instead of 885,395 over 36
# fits at n = 1,000 (overlap K = 7, C = 2^-2: 23,150 against 76,755; K = 5, C = 2^3:
# 24,741 against 44,374), CPU-time ratios summed 146.7 against 159.3
SETTLING = 0.95
# ... unless a round changes at most this many variables (the last few bounded variables
# of a nearly right face may swap between rounds before the set settles)
FEW_CHANGES = 50
# a bounded variable is released when its KKT condition fails by more than this
# (decision-value units; below it the certificate's tolerances are met anyway)
RELEASE_TOL = 1e-9
# refinement stops when the KKT residual is below this, relative to the right side
REFINEMENT_TOL = 1e-13
# a full step may overshoot a bound by this much (relative to max U) before it is cut
BOUND_SLACK = 1e-12
# a face optimum is a candidate only when its equality rows hold to this (relative to
# max U; the face systems solve them to ~1e-13)
EQUALITY_TOL = 1e-9
# Proximal-point steps of a polishing step whose active set does not settle, at most
# PROXIMAL_STEPS: rho (relative to the largest K_ii of the face) starts at PROXIMAL_FIRST
# and is divided by PROXIMAL_FACTOR after a proximal active set that settled (each is
# followed by the active set on the dual from its optimum), multiplied by it (at most
# PROXIMAL_FIRST, same centre) after one that did not; PROXIMAL_FAILURES of those in a
# row end the step.  Measured on the SMO points at the pair tolerances of overlap,
# n = 5,000, K = 5, C = 16 (the active set from the point itself stalled or diverged at
# every tolerance down to 1e-4: 1941, 2546, 3334, ...; 372, 323, 269, 243, 212, 323):
# from the first tolerance (1e-2, 401,924 of the fit's 2,658,031 SMO steps) the
# proximal active sets at rho = 0.1, 0.01, 1e-3, 1e-4 settled in 5, 3, 4 and 11 rounds
# (361, 180, 24, 1, 0; 62, 7, 0; ...) and the active set after the fourth reached the
# optimum (gap 8e-15) in 7 s of CPU time.  At K = 7, C = 1 rho = 1e-3 or 1e-4 did not
# settle from some centres (816, 845, 679, 800, ...), hence the way back up.  A first
# rho of 0.01 rather than 0.1: K = 5, C = 2^-4 90 rounds against 106 (6.2 s against
# 7.2 s CPU, the same process), K = 7, C = 1 164,630 SMO steps against 212,835
PROXIMAL_STEPS, PROXIMAL_FIRST, PROXIMAL_FACTOR, PROXIMAL_FAILURES = 8, 1e-2, 10.0, 2
# a proximal active set is abandoned when PROXIMAL_PATIENCE rounds in a row did not cut
# the changes below the fewest of its earlier rounds (and change more than FEW_CHANGES):
# the rounds that settle fall unevenly (213, 93, 50, 61, 51, 48, 22, 6, 1, 1, 0), those
# that do not wander or grow (816, 845, 679, 800, 772, 810, 810, 1010, ... at overlap,
# n = 5,000, K = 7, C = 1; 1388, 2585, 1051, 1188, 1451, 1811, ... at K = 5, C = 16)
PROXIMAL_PATIENCE = 3
# An active set on the dual is abandoned after its first round when that round changes
# more than this fraction of its first face (None: never; the SETTLING rule would end it
# after the second: 5840, 7703; 4988, 6059 at overlap, n = 5,000, K = 7, C = 1).  The
# round saved leaves room in the budget of rounds for a proximal step.  Measured in one
# process (CPU time, with / without): overlap, n = 1,000, K = 7, the C grid 7.80 / 8.75 s
# (1.12x; SMO steps 10,784 / 14,620 at C = 2^-4, 8,425 / 18,746 at 2^-3); n = 1,000,
# likert, rare and overlap, K = 5 and 7, 54 fits: 9.93 / 10.44 s, 609,220 / 647,028
# steps (13 paths changed, overlap K = 5, C = 2^-2 6,102 / 3,826 steps); n = 5,000,
# overlap K = 7, C = 2^-4 6.25 / 8.93 s, C = 1 21.0 / 22.9 s, K = 5, C = 2^4 21.0 / 20.8 s
FIRST_ROUND_CHANGES = 0.25
# Largest face polished (:attr:`_Face.too_large`): at most MAX_FACE_SIZE rows (K_SS takes
# 8 rows^2 bytes, 200 MB at 5,000) and MAX_FACE_SIZE^2 entries in the blocks of H
# (diagonal and below-diagonal, as many in the factor).  Until the block-tridiagonal
# factor the bound was on the variables, MAX_FACE_SIZE (the dense H); with m = K - 1
# boundary blocks of equal size a face of m / sqrt(3 m - 2) times as many variables takes
# that memory (the same 5,000 at K = 3, 6,325 at K = 5, 7,500 at K = 7).  Measured
# (likert, n = 20,000, K = 7, C = 16, one process each, code of d81f43f): the faces at
# pair tolerances 1e-2 ... 1e-3 had 6,968, 5,971 and 5,318 variables and were skipped,
# 2.3 million of the fit's 3.2 million SMO steps ran until the face at 3.2e-4 (4,957)
# was polished; polishing the face of 6,968 (79 rounds, a proximal point taken, 54 s CPU)
# took the fit to 957,709 steps, 242 s CPU against 292 s.  With the rule as built (the face
# of 6,968 refused by its 5,444 rows) against a bound of 7,500 (cached rows read by compiled
# loops, one run): 1,335,472 / 957,709 steps, 212.8 / 213.3 s CPU (the face of 5,444 rows
# polished in 77 rounds without the optimum), peak 2,486 / 2,624 MB; a face of 7,500 rows
# at K = 7 takes ~880 MB (K_SS, the blocks of H and their factor), so the bound stays
MAX_FACE_SIZE = 5000

# Keep the blocks of H between the rounds of a polishing step (:class:`HessianBlocks`);
# False computes them afresh in every round (the same numbers, bit for bit)
KEEP_HESSIAN_BLOCKS = True
# ... for blocks between boundary blocks of at least this many variables each: on smaller
# ones the split computation's numpy calls cost more than the entries copied.  Measured
# (one process, 3 alternating pairs, overlap, n = 1,000, K = 7, blocks of ~130-270
# variables): keeping every block made the polishing 0.84-0.98x as fast
KEPT_BLOCK_MIN = 256


@dataclass(frozen=True)
class PolishStep:
    """What one polishing step did.

    Attributes
    ----------
    size : int
        Variables of the first face (free alphas + positive phis + positive gammas); its
        KKT system has K-1 rows more.
    rows : int
        Observations whose kernel rows entered the block K_SS.
    descent : bool
        Whether the candidate lowers the dual objective.
    fixed : int
        Free variables fixed at a bound because a face optimum crossed it.
    rounds : int
        Face optima solved (one KKT system each).
    residual : float
        Relative residual of the last KKT system after refinement.
    seconds : float
        Time of the polishing step.
    released : int
        Bounded variables freed because their KKT condition failed at a face optimum.
    converged : bool
        Whether the last face optimum is feasible and meets every KKT condition.
    accepted : bool
        Whether the caller took the candidate (set by the caller).
    changes : tuple of int
        Variables fixed or released after each round (the last 0 when it converged).
    proximal : int
        Proximal active sets tried (at most :data:`PROXIMAL_STEPS`) after the active set
        from the point itself did not settle.
    """

    size: int
    rows: int
    descent: bool
    fixed: int
    rounds: int
    residual: float
    seconds: float
    released: int = 0
    converged: bool = False
    accepted: bool = False
    changes: tuple = ()
    proximal: int = 0


def _cross_hessian(face, first, second, K_SS):
    """H[first][:, second] of a face (index arrays of its variables), H = M' (I (x) K_SS) M.

    A variable moves Omega on one row only (alpha_ik and phi_ik: row i; gamma: none), so
    H_uv = K(x_{r_u}, x_{r_v}) sum_k c_uk c_vk, i.e. H = K_SS[r, r'] * (C C') with C the
    variables' coefficients by boundary (:attr:`_Face.layout`): one gather of K_SS
    (:func:`_gather`) and one product of rank K-1.  The coefficients are +-1 and a variable
    meets at most two boundaries, so C C' holds small integers and every entry is
    K_ij c (c in {0, +-1, +-2}) exactly: the same numbers, bit for bit, as the sum of
    the boundaries' terms K_ij c_uk c_vk in any order.
    """
    rows, coefficients = face.layout
    if not K_SS.size:  # only gammas: they move no Omega
        return np.zeros((len(first), len(second)))
    H = _gather(K_SS, rows[first], rows[second])
    H *= coefficients[first] @ coefficients[second].T
    return H


def _gather(K, rows, cols):
    """K[rows][:, cols] as a C-contiguous array: by ``take`` along the rows, then the
    columns, of whichever of K and K' is C-contiguous (the kept kernel rows give K_SS
    as the transpose of a gather, column-major: ``take`` along its rows would stride,
    6.5x slower than an ``np.ix_`` gather of 500 x 520 of 2,400 rows; through K' 1.7x
    faster than that).  Copies only: the same numbers."""
    if K.flags.f_contiguous and not K.flags.c_contiguous:
        return np.ascontiguousarray(K.T.take(cols, axis=0).take(rows, axis=1).T)
    return K.take(rows, axis=0).take(cols, axis=1)


class HessianBlocks:
    """The blocks of H of the last face, kept between the rounds of a polishing step.

    H couples variables through K only: the entry of two variables is
    sum_k c_uk c_vk K(x_{r_u}, x_{r_v}) over the boundaries k they both move (alpha_ik:
    row i, boundary k, coefficient y_ik; phi_ik: row i, boundaries k and k+1, +1 and -1),
    whatever the rest of the face.  A round changes a few hundred of a face's thousands
    of variables, so the blocks H_kk and H_k+1,k of the variables that stay (named by
    the keys of :attr:`_Face.labelled_blocks`) are copied from the last round and only
    the rows and columns of the new variables are computed (:func:`_cross_hessian` on
    them).  Every entry is then the same sum of the same products as when computed
    afresh, so the kept blocks equal the fresh ones bit for bit as long as K_SS gives
    the same numbers for the same rows (a dense Gram matrix, or rows kept by
    :class:`~nordicstats.solvers.kernel_rows.KernelRows`).

    Parameters
    ----------
    keep : bool, optional
        Keep the blocks; default :data:`KEEP_HESSIAN_BLOCKS` (False: every call computes
        them afresh).
    min_block : int, optional
        Keep only blocks between boundary blocks of at least this many variables each;
        default :data:`KEPT_BLOCK_MIN`.

    Examples
    --------
    >>> Y, U = np.array([[1.0], [-1.0], [1.0]]), np.ones((3, 1))
    >>> K_SS = np.array([[1.0, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 1.0]])
    >>> kept = HessianBlocks(keep=True, min_block=1)
    >>> first = kept.blocks(_Face(Y, U, np.array([[True], [True], [False]]),
    ...                           np.zeros((3, 0), bool), np.zeros(0, bool)), K_SS[:2, :2])
    >>> (D,), _ = kept.blocks(_Face(Y, U, np.ones((3, 1), bool), np.zeros((3, 0), bool),
    ...                             np.zeros(0, bool)), K_SS)
    >>> D.tolist(), kept.reused, kept.computed
    ([[1.0, -0.5, 0.25], [-0.5, 1.0, -0.5], [0.25, -0.5, 1.0]], 4, 9)
    """

    def __init__(self, keep=None, min_block=None):
        self.keep = KEEP_HESSIAN_BLOCKS if keep is None else bool(keep)
        self.min_block = KEPT_BLOCK_MIN if min_block is None else int(min_block)
        self.kept = {}  # label or (label, label) -> (row keys, column keys, block)
        self.reused = 0  # entries copied from an earlier round
        self.computed = 0  # entries computed from K_SS

    def blocks(self, face, K_SS):
        """(diagonal, below): H_kk and H_k+1,k over the face's :meth:`_Face.blocks`, K_SS
        the kernel block over its rows."""
        labelled = face.labelled_blocks
        diagonal = [self._block(face, K_SS, a, a) for a in labelled]
        below = [self._block(face, K_SS, low, up) for up, low in zip(labelled, labelled[1:])]
        return diagonal, below

    def _block(self, face, K_SS, rows, cols):
        """The block of H between the labelled blocks ``rows`` and ``cols`` of the face."""
        (row_label, row_block, row_keys), (col_label, col_block, col_keys) = rows, cols
        label = (row_label, col_label)
        keep = self.keep and min(row_keys.size, col_keys.size) >= self.min_block
        old = self.kept.pop(label, None) if keep else None
        if old is None:
            H = _cross_hessian(face, row_block, col_block, K_SS)
            self.computed += H.size
        else:
            old_rows, old_cols, old_H = old
            row_in = np.isin(row_keys, old_rows, assume_unique=True)
            col_in = np.isin(col_keys, old_cols, assume_unique=True)
            H = np.empty((row_keys.size, col_keys.size))
            # kept rows whole (contiguous rows, then columns; the new columns' entries,
            # read from column 0, are overwritten below)
            source = np.where(col_in, np.searchsorted(old_cols, col_keys), 0)
            H[row_in] = old_H.take(np.searchsorted(old_rows, row_keys[row_in]),
                                   axis=0).take(source, axis=1)
            H[~row_in] = _cross_hessian(face, row_block[~row_in], col_block, K_SS)
            H[np.ix_(row_in, ~col_in)] = _cross_hessian(face, row_block[row_in],
                                                        col_block[~col_in], K_SS)
            new = int((~row_in).sum()) * col_keys.size + int(row_in.sum() * (~col_in).sum())
            self.computed, self.reused = self.computed + new, self.reused + H.size - new
        if keep:
            self.kept[label] = (row_keys, col_keys, H)
        return H


class _Face:
    """The free variables of a face: which entries of Omega they move and how."""

    def __init__(self, Y, U, free_alpha, free_phi, free_gamma):
        self.n, self.m = Y.shape
        ia, ka = np.nonzero(free_alpha)
        ip, kp = np.nonzero(free_phi)
        self.kg = np.flatnonzero(free_gamma)
        self.rows, local = np.unique(np.r_[ia, ip], return_inverse=True)
        la, lp = local[:ia.size], local[ia.size:]
        self.alpha_index, self.phi_index = (ia, ka), (ip, kp)
        na, nphi = ia.size, ip.size
        self.n_omega = na + nphi  # variables that move Omega (gammas do not)
        self.size = self.n_omega + self.kg.size
        # entries (variable, local row, boundary, coefficient) of the map M
        var = np.r_[np.arange(na), na + np.arange(nphi), na + np.arange(nphi)]
        self.entries = (var, np.r_[la, lp, lp], np.r_[ka, kp, kp + 1],
                        np.r_[Y[ia, ka], np.ones(nphi), -np.ones(nphi)])
        self.lower = np.zeros(self.size)
        self.upper = np.r_[U[ia, ka], np.full(nphi + self.kg.size, np.inf)]

    def unmask(self, which, free):
        """Clear the free masks of the face's variables ``which``; returns how many."""
        na, nphi = self.alpha_index[0].size, self.phi_index[0].size
        on_alpha, on_phi = which[:na], which[na:na + nphi]
        free[0][self.alpha_index[0][on_alpha], self.alpha_index[1][on_alpha]] = False
        free[1][self.phi_index[0][on_phi], self.phi_index[1][on_phi]] = False
        free[2][self.kg[which[na + nphi:]]] = False
        return int(which.sum())

    def values(self, alpha, phi, gamma):
        """v at the current point."""
        return np.r_[alpha[self.alpha_index], phi[self.phi_index], gamma[self.kg]]

    def assign(self, v, alpha, phi, gamma):
        """Write v into the dual arrays (in place)."""
        na, nphi = self.alpha_index[0].size, self.phi_index[0].size
        alpha[self.alpha_index] = v[:na]
        phi[self.phi_index] = v[na:na + nphi]
        gamma[self.kg] = v[na + nphi:]

    def omega(self, v):
        """M v: the (|S|, K-1) entries of Omega on the rows S that v moves."""
        var, _, _, coef = self.entries
        return np.bincount(self._cells, weights=coef * v[var],
                           minlength=self.rows.size * self.m).reshape(self.rows.size, self.m)

    def transpose_omega(self, W):
        """M' vec(W) for W of shape (|S|, K-1)."""
        var, _, _, coef = self.entries
        return np.bincount(var, weights=coef * W.ravel()[self._cells], minlength=self.size)

    @functools.cached_property
    def _cells(self):
        """The flat index row * (K-1) + boundary in an (|S|, K-1) array of each entry of M
        (np.bincount sums the entries of a cell in order, as ``np.add.at`` does, but
        without its per-element overhead: the same numbers)."""
        _, row, bound, _ = self.entries
        return row * self.m + bound

    @functools.cached_property
    def layout(self):
        """(r, C): the row r_u of K_SS each variable u moves (0 for a gamma, whose
        coefficients are 0) and its coefficients C_uk on the boundaries, shape
        (size, K-1)."""
        var, row, bound, coef = self.entries
        rows = np.zeros(self.size, dtype=np.intp)
        rows[var] = row
        coefficients = np.zeros((self.size, self.m))
        coefficients[var, bound] = coef
        return rows, coefficients

    def hessian_product(self, K_SS, x):
        """H x = M' vec(K_SS (M x)) without forming H."""
        return self.transpose_omega(K_SS @ self.omega(x))

    @property
    def too_large(self):
        """More than ``MAX_FACE_SIZE`` rows (K_SS), or more than ``MAX_FACE_SIZE^2`` entries
        in the blocks of H: sum_k b_k^2 + 2 sum_k b_k b_k+1 over the sizes b_k of
        :meth:`blocks` (at most size^2, so every face of at most ``MAX_FACE_SIZE``
        variables is polished)."""
        sizes = np.array([block.size for block in self.blocks()], dtype=float)
        entries = float(np.sum(sizes ** 2) + 2.0 * np.sum(sizes[1:] * sizes[:-1]))
        return self.rows.size > MAX_FACE_SIZE or entries > float(MAX_FACE_SIZE) ** 2

    def blocks(self):
        """Variables by boundary block: the alphas of boundary k with the phis between
        k and k+1, then the gammas (which move no Omega).  H couples a block only with
        its neighbours (phi_k meets boundaries k and k+1), so it is block tridiagonal."""
        return [block for _, block, _ in self.labelled_blocks]

    @functools.cached_property
    def labelled_blocks(self):
        """(label, block, keys) of the non-empty :meth:`blocks`: label k for boundary k
        (m for the gammas), and keys naming the block's variables whatever the face
        (alpha_ik: i, phi_ik: n + i, gamma_k: k; increasing along the block).  A face
        does not change once built, so they are found once."""
        na, (ia, ka), (ip, kp) = self.alpha_index[0].size, self.alpha_index, self.phi_index
        out = []
        for k in range(self.m):
            alphas, phis = np.flatnonzero(ka == k), np.flatnonzero(kp == k)
            out.append((k, np.r_[alphas, na + phis], np.r_[ia[alphas], self.n + ip[phis]]))
        out.append((self.m, self.n_omega + np.arange(self.kg.size), self.kg))
        return [(label, block, keys) for label, block, keys in out if block.size]

    def block_factor(self, K_SS, proximal=0.0, kept=None):
        """:class:`BlockTridiagonalCholesky` of H + proximal I + delta I over :meth:`blocks`
        (the blocks of H from ``kept``, a :class:`HessianBlocks`, when given)."""
        kept = HessianBlocks(keep=False) if kept is None else kept
        diagonal, below = kept.blocks(self, K_SS)
        return BlockTridiagonalCholesky(self.blocks(), diagonal, below, shift=proximal)

    def equality_rows(self, Y):
        """A (K-1, size): y_ik for alpha_ik in row k; +1, -1 in rows k, k+1 for gamma_k."""
        ia, ka = self.alpha_index
        A = np.zeros((self.m, self.size))
        A[ka, np.arange(ia.size)] = Y[ia, ka]
        cols = self.n_omega + np.arange(self.kg.size)
        A[self.kg, cols] = 1.0
        A[self.kg + 1, cols] = -1.0
        return A


def polish_step(problem, alpha, phi, gamma, G, intercepts, kernel_rows=None, max_rounds=None):
    """The optimum of the dual over a face guessed from a dual feasible point.

    First the primal-dual active set from the point itself (:func:`_active_set`).  When
    it does not settle -- under heavy class overlap the faces hold thousands of free
    alphas, K_SS is numerically singular and the face optimum moves far along its
    near-null directions, so hundreds of variables cross their bounds in every round --
    proximal-point steps follow: the active set on the dual plus
    rho/2 ||v - v_centre||^2 (rho relative to the largest K_ii of the face), which is
    strongly convex and settles in a few rounds; its optimum is dual feasible with a
    lower dual objective and becomes the next centre (rho then smaller, see
    :data:`PROXIMAL_STEPS`), from which the active set on the dual itself is tried
    again (the proximal point method, Rockafellar 1976; the proximal term keeps the
    near-null directions where the centre has them).

    Parameters
    ----------
    problem : NordicProblem
        BSVM or NORDIC-1 with separate intercepts; ``gram`` dense or a
        :class:`~nordicstats.kernels.KernelMatrix`.
    alpha, phi, gamma : ndarray of shape (n, K-1), (n, K-2), (K-2,)
        A dual feasible point (not modified).
    G : ndarray of shape (n, K-1)
        K Omega at the point.
    intercepts : ndarray of shape (K-1,)
        Current estimate of b (the start of the refinement).
    kernel_rows : ~nordicstats.solvers.kernel_rows.KernelRows, optional
        Kernel rows kept from earlier polishing steps of the same problem (the SMO
        solver passes one per fit); default a new
        :class:`~nordicstats.solvers.kernel_rows.KernelRows`, kept over the rounds of
        this step.
    max_rounds : float, optional
        No proximal step starts after this many rounds (face optima) in all; default no
        limit.  The SMO solver passes the rounds its work since the last polishing step
        pays for.

    Returns
    -------
    (PolishStep, dict or None)
        What was done, and the candidate ``{"alpha", "phi", "gamma", "G"}``: the optimum
        of the dual when an active set converged, else the dual feasible point of lowest
        dual objective met (a face optimum inside the box or a proximal point; new
        arrays), None when there was none.  ``PolishStep.descent`` says whether it
        lowers the dual objective, ``PolishStep.converged`` whether it satisfies every
        KKT condition (it is then the optimum of the whole dual).
    """
    clock = time.perf_counter()
    kernel_rows = KernelRows(problem.gram) if kernel_rows is None else kernel_rows
    point = {"alpha": alpha.copy(), "phi": phi.copy(), "gamma": gamma.copy(), "G": G}
    base_value = _dual_value(dual_expansion(problem.signs, alpha, phi), G, alpha)
    kept = HessianBlocks()
    runs = [_active_set(problem, point, np.asarray(intercepts, dtype=float), kernel_rows,
                        kept=kept)]
    centre, rho, failures = point, PROXIMAL_FIRST, 0
    for _ in range(PROXIMAL_STEPS):
        if runs[-1].converged or failures == PROXIMAL_FAILURES or (
                max_rounds is not None and sum(run.rounds for run in runs) >= max_rounds):
            break
        runs.append(_active_set(problem, centre, runs[-1].intercepts, kernel_rows, rho, kept))
        if not runs[-1].converged:
            # a proximal term too weak for this centre: a stronger one, same centre
            failures, rho = failures + 1, min(PROXIMAL_FIRST, rho * PROXIMAL_FACTOR)
            continue
        failures, centre, rho = 0, runs[-1].best, rho / PROXIMAL_FACTOR
        runs.append(_active_set(problem, centre, runs[-1].intercepts, kernel_rows,
                                kept=kept))
    # the optimum when the last active set (on the dual) converged, else the lowest point
    converged = runs[-1].converged and not runs[-1].proximal
    best = runs[-1] if converged else min((run for run in runs if run.best is not None),
                                          default=None, key=lambda run: run.best_value)
    first = runs[0]
    return PolishStep(first.size, first.rows, bool(best is not None and best.best_value
                                                    <= base_value),
                      sum(r.fixed for r in runs), sum(r.rounds for r in runs),
                      float(runs[-1].residual), time.perf_counter() - clock,
                      released=sum(r.released for r in runs),
                      converged=bool(converged),
                      changes=tuple(c for r in runs for c in r.changes),
                      proximal=sum(r.proximal for r in runs)), \
        None if best is None else best.best


@dataclass
class _ActiveSetRun:
    """What one primal-dual active set did (:func:`_active_set`)."""

    proximal: bool
    intercepts: np.ndarray
    best: dict = None
    best_value: float = np.inf
    size: int = 0
    rows: int = 0
    rounds: int = 0
    fixed: int = 0
    released: int = 0
    residual: float = np.nan
    converged: bool = False
    changes: list = field(default_factory=list)


def _active_set(problem, start, intercepts, kernel_rows, proximal=0.0, kept=None):
    """Primal-dual active set (Hintermueller, Ito & Kunisch 2002) from the dual feasible
    point ``start`` ({"alpha", "phi", "gamma", "G"}), on the dual or, with ``proximal``
    rho > 0, on the dual plus rho/2 ||v - v_start||^2 (rho times the largest K_ii of the
    face).

    After each face optimum, free variables past a bound are fixed at it and bounded
    variables whose KKT condition (of the dual itself) fails are released; it ends when
    nothing changes (``converged``), when the changes stop shrinking (by
    :data:`SETTLING`, unless at most :data:`FEW_CHANGES`, or on the dual after a first
    round that changed more than :data:`FIRST_ROUND_CHANGES` of the face; for the
    proximal problem, whose rounds shrink unevenly, after :data:`PROXIMAL_PATIENCE`
    rounds without fewer changes than the fewest so far), or after
    :data:`ACTIVE_SET_ROUNDS` rounds.  ``best``
    is the face optimum inside the box of lowest objective (of the proximal problem
    when ``proximal``: the converged one), with its G.  ``kept`` (a
    :class:`HessianBlocks`) keeps the blocks of H between the rounds.
    """
    Y, U, G = problem.signs, problem.upper_bounds, start["G"]
    free = list(_interior_masks(U, start["alpha"], start["phi"], start["gamma"]))
    point = {k: start[k].copy() for k in ("alpha", "phi", "gamma")}
    base_omega = dual_expansion(Y, point["alpha"], point["phi"])
    scale = max(1.0, float(np.max(U, initial=1.0)))
    slack = BOUND_SLACK * scale
    run = _ActiveSetRun(proximal=proximal > 0, intercepts=intercepts)
    b, last_changes, fewest, since_fewest = intercepts, np.inf, np.inf, 0
    while run.rounds < ACTIVE_SET_ROUNDS:
        face = _Face(Y, U, *free)
        if face.size == 0 or face.too_large:
            break
        run.rounds += 1
        try:
            v, b, run.residual = _face_optimum(problem, face, point, G, base_omega, b,
                                               kernel_rows, proximal, start, kept)
        except np.linalg.LinAlgError:
            # a singular Schur complement: e.g. a face whose only variable in two equality
            # rows is one tied-intercept gamma (A (H + delta I)^-1 A' = (1/delta) [1 -1; -1 1]
            # to machine precision); no polished point from this face, SMO goes on
            break
        if not run.size:
            run.size, run.rows = face.size, int(face.rows.size)
        face.assign(v, point["alpha"], point["phi"], point["gamma"])
        omega = dual_expansion(Y, point["alpha"], point["phi"])
        G_new = G + kernel_rows.product(*_changed_rows(omega, base_omega))
        below, above = v < face.lower - slack, v > face.upper + slack
        v = np.clip(v, face.lower, face.upper)
        face.assign(v, point["alpha"], point["phi"], point["gamma"])
        # dual feasible: inside the box, and the equality rows hold (a face with no free
        # variable in a row whose fixed part is not zero cannot meet it; its least-squares
        # optimum has a lower dual value and must not be the candidate)
        feasible = not (below.any() or above.any()) and np.max(np.abs(_equality_values(
            Y, point["alpha"], point["gamma"])), initial=0.0) <= EQUALITY_TOL * scale
        if feasible:
            value = _dual_value(omega, G_new, point["alpha"])
            if value < run.best_value or proximal:
                run.best = {**{k: x.copy() for k, x in point.items()}, "G": G_new}
                run.best_value, run.intercepts = value, b
        fix = face.unmask(below | above, free)
        release = _violated_kkt(Y, U, point, G_new, b, free)
        changes = fix + int(sum(int(r.sum()) for r in release))
        run.fixed, run.released = run.fixed + fix, run.released + changes - fix
        run.changes.append(changes)
        if changes == 0:
            # the optimum when feasible: it is the candidate, whatever an earlier round gave
            run.converged = feasible
            if feasible:
                run.best = {**{k: x.copy() for k, x in point.items()}, "G": G_new}
                run.best_value, run.intercepts = value, b
            break
        if changes < fewest:
            fewest, since_fewest = changes, 0
        since_fewest += 1
        if changes > FEW_CHANGES and (since_fewest > PROXIMAL_PATIENCE if proximal
                                      else changes > SETTLING * last_changes or (
                                          run.rounds == 1 and FIRST_ROUND_CHANGES is not None
                                          and changes > FIRST_ROUND_CHANGES * run.size)):
            break  # the active set is not settling: the guess was too far off
        last_changes = changes
        for mask, more in zip(free, release, strict=True):
            mask |= more
    if not run.converged and proximal:
        run.best, run.best_value = None, np.inf
    return run


def face_size(problem, alpha, phi, gamma):
    """Variables of the first face :func:`polish_step` would solve: those strictly inside
    their bounds.  The order of its KKT system less K-1."""
    return int(sum(int(mask.sum()) for mask in _interior_masks(problem.upper_bounds, alpha,
                                                                 phi, gamma)))


def _interior_masks(U, alpha, phi, gamma):
    """Free variables of the first face: 0 < alpha < U, phi > 0, gamma > 0.

    Measured (n = 1,000, 36 fits): adding the bounded variables within the pair
    tolerance of binding, as before, bloated the first face under heavy overlap (1,878
    variables of which 1,215 were fixed again at overlap, K = 7, C = 2^3) and cost
    752,491 SMO steps against 597,222 without.
    """
    return (alpha > 0.0) & (alpha < U), phi > 0.0, gamma > 0.0


def _face_optimum(problem, face, point, G, base_omega, intercepts, kernel_rows,
                  proximal=0.0, centre=None, kept=None):
    """(v, b, residual): the face's KKT system with the other variables fixed at ``point``.

    G_fixed = K Omega_fixed on the rows S of the face comes from the G of the base
    point: G_S - K[S, R] (Omega_base - Omega_fixed)_R over the rows R where they differ
    (K_SS and K[S, R] (Omega_base - Omega_fixed)_R from ``kernel_rows``).
    H is block tridiagonal in the face's boundary blocks (:meth:`_Face.blocks`): it is
    factorised block by block and multiplied through K_SS, never formed.  With
    ``proximal`` rho > 0 the objective has rho max(K_ii) / 2 ||v - v_centre||^2 more
    (v_centre the face's variables at ``centre``): H + rho I, and rho v_centre on the
    right side.  ``kept`` (a :class:`HessianBlocks`) gives the blocks of H.
    """
    Y = problem.signs
    fixed = {k: x.copy() for k, x in point.items()}
    start = face.values(fixed["alpha"], fixed["phi"], fixed["gamma"])
    face.assign(np.zeros(face.size), fixed["alpha"], fixed["phi"], fixed["gamma"])
    rows, diff = _changed_rows(base_omega, dual_expansion(Y, fixed["alpha"], fixed["phi"]))
    K_SS, K_SR_diff = kernel_rows.square_and_product(face.rows, rows, diff)
    G_fixed, A = G[face.rows] - K_SR_diff, face.equality_rows(Y)
    c = face.transpose_omega(G_fixed)
    c[:face.alpha_index[0].size] -= 1.0
    rho = proximal * max(float(np.max(np.diag(K_SS), initial=0.0)), 0.0)
    if rho:
        c -= rho * face.values(centre["alpha"], centre["phi"], centre["gamma"])
    # (H + rho I) v + A'b = -c,  A v = -(the fixed part of the equality rows)
    rhs = np.r_[-c, -_equality_values(Y, fixed["alpha"], fixed["gamma"])]
    kkt = RegularisedKKT(face.block_factor(K_SS, rho, kept), A)
    x, residual = _refine(lambda x: np.r_[face.hessian_product(K_SS, x[:face.size])
                                          + rho * x[:face.size]
                                          + A.T @ x[face.size:], A @ x[:face.size]],
                          kkt.solve, rhs, np.r_[start, intercepts])
    return x[:face.size], x[face.size:], residual


def _violated_kkt(Y, U, point, G, b, free):
    """Masks of the bounded variables whose KKT condition fails by more than RELEASE_TOL."""
    margin = Y * (G + b) - 1.0
    alpha = point["alpha"]
    release_alpha = ~free[0] & (U > 0.0) & (((alpha <= 0.0) & (margin < -RELEASE_TOL))
                                            | ((alpha >= U) & (margin > RELEASE_TOL)))
    if point["phi"].shape[1] == 0:
        return release_alpha, np.zeros_like(free[1]), np.zeros_like(free[2])
    return (release_alpha, ~free[1] & (G[:, :-1] - G[:, 1:] < -RELEASE_TOL),
            ~free[2] & (b[:-1] - b[1:] < -RELEASE_TOL))


def dual_expansion(Y, alpha, phi):
    """omega_k = y_k alpha_k + phi_k - phi_{k-1} (eq. KKT_omega), shape (n, K-1).

    Examples
    --------
    >>> Y = np.array([[1.0, -1.0], [-1.0, -1.0]])
    >>> dual_expansion(Y, np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5], [0.0]]))
    array([[ 1.5, -2.5],
           [-3. , -4. ]])
    """
    omega = Y * alpha
    if phi.shape[1]:
        omega[:, :-1] += phi
        omega[:, 1:] -= phi
    return omega


def _dual_value(omega, G, alpha):
    """D = 1/2 sum_k omega_k' G_k - e'alpha with G = K Omega."""
    return 0.5 * float(np.sum(omega * G)) - float(alpha.sum())


def _changed_rows(omega, base_omega):
    """(rows, omega - base_omega on them): the rows where two expansions differ."""
    diff = omega - base_omega
    rows = np.flatnonzero(np.any(diff != 0.0, axis=1))
    return rows, diff[rows]


def _equality_values(Y, alpha, gamma):
    """y_k'alpha_k + gamma_k - gamma_{k-1} for every k (zero at a feasible point)."""
    values = np.sum(Y * alpha, axis=0)
    if gamma.size:
        values[:-1] += gamma
        values[1:] -= gamma
    return values


def solve_kkt(H, A, rhs, start):
    """Solve [H A'; A 0] x = rhs: regularised factorisation, then iterative refinement.

    The regularised matrix [H + delta I, A'; A, -delta I] is quasi-definite; it is
    solved through the Cholesky factor of H + delta I and the (K-1) x (K-1) Schur
    complement A (H + delta I)^-1 A' + delta I.  ``start`` is the refinement's first
    iterate (zero step, the current intercepts); returns (x, relative residual).  Both
    polishings use it: NORDIC-1's faces here and NORDIC-0's Newton steps
    (:mod:`nordicstats.solvers.nordic0_polish`).
    """
    factor = RegularisedKKT(DenseCholesky(H), A)
    return _refine(lambda x: np.r_[H @ x[:factor.size] + A.T @ x[factor.size:],
                                   A @ x[:factor.size]], factor.solve, rhs, start)


def _refine(kkt_product, regularised_solve, rhs, start):
    """Iterative refinement of [H A'; A 0] x = rhs from ``start``: x += P^-1 (rhs - KKT x)
    with P the regularised matrix; (x, max |residual| / max(1, max |rhs|))."""
    x = start.astype(float)
    scale = max(1.0, float(np.max(np.abs(rhs), initial=0.0)))
    residual = rhs - kkt_product(x)
    for _ in range(REFINEMENT_STEPS):
        if np.max(np.abs(residual), initial=0.0) <= REFINEMENT_TOL * scale:
            break
        x += regularised_solve(residual)
        residual = rhs - kkt_product(x)
    return x, float(np.max(np.abs(residual), initial=0.0)) / scale


class RegularisedKKT:
    """The quasi-definite P = [H + delta I, A'; A, -delta I] solved through a factor of
    M = H + delta I and the (K-1) x (K-1) Schur complement A M^-1 A' + delta I.

    Parameters
    ----------
    factor : object
        ``solve(B) -> M^-1 B`` (:class:`DenseCholesky` or
        :class:`BlockTridiagonalCholesky`), with ``size`` and ``delta``.
    A : ndarray of shape (m, size)

    Examples
    --------
    >>> H, A = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([[1.0, 1.0]])
    >>> x = RegularisedKKT(DenseCholesky(H), A).solve(np.array([1.0, 0.0, 0.0]))
    >>> bool(np.allclose(x, [0.5, -0.5, 0.5]))
    True
    """

    def __init__(self, factor, A):
        self.factor, self.A, self.size = factor, A, factor.size
        self.H_inv_At = factor.solve(A.T)
        self.schur = A @ self.H_inv_At + factor.delta * np.eye(A.shape[0])

    def solve(self, r):
        """P^-1 r for r = (v part, b part)."""
        z = self.factor.solve(r[:self.size])
        b = np.linalg.solve(self.schur, self.A @ z - r[self.size:])
        return np.r_[z - self.H_inv_At @ b, b]


def _proximal_delta(diagonal):
    """delta = PROXIMAL times the largest |diagonal| of H (at least PROXIMAL)."""
    return PROXIMAL * max(1.0, float(np.max(np.abs(diagonal), initial=1.0)))


class DenseCholesky:
    """Cholesky factor of M = H + delta I (dense; delta by :func:`_proximal_delta`)."""

    def __init__(self, H):
        self.size, self.delta = H.shape[0], _proximal_delta(np.diag(H))
        shifted = H.copy()
        shifted.flat[::self.size + 1] += self.delta
        self.factor = scipy.linalg.cho_factor(shifted, check_finite=False, overwrite_a=True)

    def solve(self, B):
        """M^-1 B."""
        return scipy.linalg.cho_solve(self.factor, B, check_finite=False)


class BlockTridiagonalCholesky:
    """Cholesky factor of a block tridiagonal M = H + shift I + delta I.

    With the blocks B_1, ..., B_q (index arrays partitioning the variables) and
    M_kl = 0 for |k - l| > 1, M = L L' with L block lower bidiagonal:
    L_kk L_kk' = M_kk - C_k C_k', C_k+1 = M_k+1,k L_kk^-T (block Thomas algorithm,
    Golub & Van Loan 2013, Section 4.5.1): for q blocks of b variables about 7/3 q b^3
    flops (a factor, a triangular solve and a product per block) instead of (q b)^3 / 3,
    and no dense H.  Each diagonal block is copied once, in LAPACK's column-major
    layout, and factorised in place (``potrf``); the triangular solves call ``trtrs``
    directly: the numbers of ``scipy.linalg.cholesky`` and ``solve_triangular``
    without their copies and checks.

    Parameters
    ----------
    blocks : list of array of int
    diagonal : list of ndarray
        H_kk (not modified).
    below : list of ndarray
        H_k+1,k (q - 1 of them).
    shift : float, optional
        Added to the diagonal before delta (a proximal term); default 0.
    """

    def __init__(self, blocks, diagonal, below, shift=0.0):
        self.blocks, self.size = blocks, int(sum(b.size for b in blocks))
        shifted = [np.diag(D) + shift for D in diagonal]
        self.delta = _proximal_delta(np.concatenate(shifted))
        self.chol, self.coupling = [], [None]
        for k, (D, d) in enumerate(zip(diagonal, shifted, strict=True)):
            M = np.array(D, order="F")
            np.fill_diagonal(M, d + self.delta)
            if k:
                C = _triangular_solve(self.chol[-1], below[k - 1].T).T
                self.coupling.append(C)
                M -= C @ C.T
            L, info = _POTRF(M, lower=1, overwrite_a=1, clean=1)
            if info:
                raise np.linalg.LinAlgError(f"block {k} of the face's Hessian is not positive "
                                            f"definite (LAPACK potrf info {info})")
            self.chol.append(L)

    def solve(self, B):
        """M^-1 B (B of shape (size,) or (size, r))."""
        y = []
        for k, block in enumerate(self.blocks):
            rhs = B[block] if not k else B[block] - self.coupling[k] @ y[-1]
            y.append(_triangular_solve(self.chol[k], rhs))
        out = np.empty_like(B, dtype=float)
        x = None
        for k in range(len(self.blocks) - 1, -1, -1):
            rhs = y[k] if x is None else y[k] - self.coupling[k + 1].T @ x
            x = _triangular_solve(self.chol[k], rhs, transpose=True)
            out[self.blocks[k]] = x
        return out


_POTRF, _TRTRS = scipy.linalg.lapack.dpotrf, scipy.linalg.lapack.dtrtrs


def _triangular_solve(L, B, transpose=False):
    """L^-1 B (L' ^-1 B when ``transpose``) for a column-major lower triangular L: LAPACK's
    ``trtrs``, as ``scipy.linalg.solve_triangular`` calls it (B is not modified)."""
    x, info = _TRTRS(L, B, lower=1, trans=int(transpose))
    if info:
        raise np.linalg.LinAlgError(f"singular triangular factor (LAPACK trtrs info {info})")
    return x
