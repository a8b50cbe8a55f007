"""Nonparametric (case-resampling) bootstrap covariance for linear NORDIC.

Each replicate draws n rows with replacement, refits the same model on them and
keeps the (1 + d) x (K-1) coefficient matrix; the covariance of the boundary-major
parameter vector over the replicates is the bootstrap covariance.  Replicate b uses
its own generator spawned from ``numpy.random.SeedSequence(random_state)``, so the
answer depends on ``random_state`` only, not on ``n_jobs`` or on scheduling.

Resamples that miss one of the K levels cannot be fitted (a boundary would have a
single side); they are redrawn.  Replicates whose refit fails are dropped with an
:class:`~nordicstats.exceptions.InferenceWarning` that gives the count.
"""

from __future__ import annotations

import warnings

import numpy as np

from nordicstats.exceptions import InferenceWarning, SolverError

__all__ = ["BootstrapCovariance", "bootstrap_replicates"]

#: Redraws allowed for one replicate before giving up on getting every level.
MAX_REDRAWS = 100
#: Largest share of failed replicates tolerated before the covariance is NaN.
MAX_FAILED_SHARE = 0.1


def _resample(seed, codes, n_levels, p=None, size=None):
    rng = np.random.default_rng(seed)
    n = codes.size
    m = n if size is None else int(size)
    for _ in range(MAX_REDRAWS):
        idx = rng.integers(0, n, size=m) if p is None else rng.choice(n, size=m, p=p)
        if np.unique(codes[idx]).size == n_levels:
            return np.sort(idx)
    raise ValueError(
        f"{MAX_REDRAWS} bootstrap resamples in a row missed a level of the response; a level "
        "with very few observations cannot be bootstrapped. Merge rare levels first."
    )


def _one_replicate(refit, seed, codes, n_levels, rows=None, p=None, size=None):
    idx = _resample(seed, codes, n_levels, p, size)
    try:
        return np.asarray(refit(idx if rows is None else rows[idx]), dtype=float)
    except (SolverError, np.linalg.LinAlgError):
        return None


def bootstrap_replicates(refit, codes, n_boot=200, random_state=None, n_jobs=1, disable=None,
                         weights=None, size=None):
    """Refit on n_boot case resamples and return the coefficient matrices.

    Parameters
    ----------
    refit : callable
        ``refit(indices) -> ndarray (1 + d, K-1)``: fits the model to the rows
        ``indices`` (with repeats) and returns intercepts (row 0) and weights.
        Must be picklable for ``n_jobs != 1`` (closures are fine with joblib's loky).
    codes : ndarray of int, shape (n,)
        Level codes 0..K-1 of the response, used to redraw resamples missing a level.
    n_boot : int, default=200
    random_state : int, numpy SeedSequence or None
    n_jobs : int, default=1
        Workers for ``joblib.Parallel``.
    disable : bool or None, default=None
        Hide the tqdm progress bar; None (tqdm's convention) shows it only on a terminal.
    weights : ndarray of shape (n,), optional
        Case weights.  Integer weights are frequencies: each replicate draws
        N = sum(w) rows from the data with row i repeated w_i times (exactly the
        bootstrap of the replicated data for the same ``random_state``) and ``refit``
        gets indices into the original rows.  Other weights draw n rows with
        probabilities w_i / sum(w) (``refit`` should then scale the loss by sum(w) / n).
    size : int, optional
        Rows per resample, m; default n (N = sum(w) for integer weights).  With m < n
        (the m-out-of-n bootstrap) the spread of the replicates estimates the law at
        sample size m, so their covariance must be multiplied by m / n by the caller
        (the validity study does; it found no gain over m = n at constrained boundaries).

    Returns
    -------
    replicates : ndarray of shape (n_ok, 1 + d, K-1)
    n_failed : int
        Refits that raised a SolverError and were dropped.

    Examples
    --------
    >>> codes = np.array([0, 1] * 20)
    >>> reps, failed = bootstrap_replicates(lambda i: np.array([[codes[i].mean()]]), codes,
    ...                                     n_boot=20, random_state=0)
    >>> reps.shape, failed
    ((20, 1, 1), 0)
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    codes = np.asarray(codes, dtype=int)
    rows = p = None
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if np.all(weights == np.round(weights)):
            rows = np.repeat(np.arange(codes.size), weights.astype(int))
            codes = codes[rows]
        else:
            p = weights / weights.sum()
    n_levels = np.unique(codes).size
    seeds = np.random.SeedSequence(random_state).spawn(int(n_boot))
    jobs = (delayed(_one_replicate)(refit, seed, codes, n_levels, rows, p, size) for seed in seeds)
    runner = Parallel(n_jobs=n_jobs, return_as="generator")
    results = list(tqdm(runner(jobs), total=len(seeds), disable=disable, desc="bootstrap"))
    ok = [r for r in results if r is not None]
    n_failed = len(results) - len(ok)
    if not ok:
        raise SolverError(f"All {len(results)} bootstrap refits failed; no covariance available.",
                          solver="bootstrap", status="all_failed")
    return np.stack(ok), n_failed


class BootstrapCovariance:
    """Covariance of the boundary-major parameter vector over bootstrap replicates.

    Parameters
    ----------
    replicates : ndarray of shape (B, 1 + d, K-1)
    n_failed : int, default=0
        Dropped replicates; above ``MAX_FAILED_SHARE`` of all the covariance is NaN.
    random_state : object, optional
        Recorded for the summary.

    Notes
    -----
    cov = (B - 1)^{-1} sum_b (theta_b - theta_bar)(theta_b - theta_bar)', with
    theta_b = replicates[b].T.ravel().

    Examples
    --------
    >>> reps = np.random.default_rng(0).normal(size=(500, 2, 1))
    >>> BootstrapCovariance(reps).cov.shape
    (2, 2)
    """

    def __init__(self, replicates, n_failed=0, random_state=None):
        self.replicates = np.asarray(replicates, dtype=float)
        self.n_failed = int(n_failed)
        self.random_state = random_state
        total = self.n_boot + self.n_failed
        self.degenerate = {}
        if self.n_failed:
            message = (f"{self.n_failed} of {total} bootstrap refits failed and were dropped.")
            if self.n_failed > MAX_FAILED_SHARE * total:
                self.degenerate = {k: message for k in range(self.replicates.shape[2])}
            else:
                warnings.warn(message, InferenceWarning, stacklevel=2)

    @property
    def n_boot(self):
        """Number of replicates kept."""
        return self.replicates.shape[0]

    @property
    def cov(self):
        """Sample covariance of the stacked replicates (NaN if too many refits failed)."""
        flat = self.replicates.transpose(0, 2, 1).reshape(self.n_boot, -1)
        cov = np.atleast_2d(np.cov(flat, rowvar=False))
        if self.degenerate:
            cov = np.full_like(cov, np.nan)
        return cov

    def describe(self):
        """Short text for summaries."""
        return (f"nonparametric bootstrap, {self.n_boot} replicates "
                f"(random_state={self.random_state!r})")
