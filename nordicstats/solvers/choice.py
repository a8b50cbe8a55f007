"""Which solver ``solver="auto"`` picks, by method and size: names only, no solver loaded.

A solver that needs another solver's answer (NORDIC-2's start from NORDIC-1) asks
:func:`sparse_primal_pays` here and calls that solver's function itself, so no solver
module imports the registry (:mod:`nordicstats.solvers.registry`) that loads it.

``solver="auto"`` never picks quadprog for the l2 problems: the decomposition solver
is as fast from the smallest problems on, quadprog's time grows like a dense
factorisation, and its ridged dual can miss the certificate's dual-feasibility
tolerance where the decomposition solver certifies (measurements:
docs/notes/solvers.md, "The solver="auto" thresholds").  BSVM and NORDIC-1 with
separate intercepts go to SMO, much faster than the decomposition solver at large n
(docs/notes/scaling.md); the joint NORDIC-1 form keeps the decomposition solver.
Kernel NORDIC-0 goes to ``nordic0_smo``, faster than ``active_set`` at every size
measured (same page).
"""

from __future__ import annotations

import importlib.util

__all__ = ["choose_solver", "sparse_primal_pays", "AUTO_PRIMAL_MIN_ROWS", "DENSE_GRAM_MAX_ROWS"]

#: Linear l2 problems go to the sparse primal (PIQP) above this many rows n(K-1); it
#: returns w (coef) and no dual_coef, and never needs the n x n Gram matrix.
AUTO_PRIMAL_MIN_ROWS = 4000

#: Above this many rows n the model passes a named kernel as a KernelMatrix (rows on
#: demand) to the solvers that take one (n = 4,096 is 128 MiB per copy of the dense
#: Gram matrix; n = 20,000 would be 3.2 GB).
DENSE_GRAM_MAX_ROWS = 4096


def sparse_primal_pays(problem):
    """Whether ``solver="auto"`` fits this l2 problem with the sparse primal (PIQP).

    True for linear problems (``problem.X`` given) with n(K-1) >
    :data:`AUTO_PRIMAL_MIN_ROWS` rows when PIQP is installed.
    """
    return (problem.X is not None and problem.n * problem.n_boundaries > AUTO_PRIMAL_MIN_ROWS
            and importlib.util.find_spec("piqp") is not None)


def choose_solver(problem):
    """The solver ``solver="auto"`` picks for this problem (by method and size).

    * ``nordic2``: ``"scip"``; ``nordic0``: ``"nordic0_smo"`` (the active set with
      a compiled SMO loop inside; ``"active_set"`` with quadprog inside stays
      reachable by name);
    * linear problems with n(K-1) > :data:`AUTO_PRIMAL_MIN_ROWS`: ``"primal"`` (sparse
      QP in w with PIQP) when PIQP is installed (:func:`sparse_primal_pays`);
    * BSVM and NORDIC-1 with separate intercepts: ``"smo"``;
    * the others (the joint NORDIC-1 form): ``"decomposition"``.

    Returns
    -------
    str
        A key of :data:`nordicstats.solvers.SOLVERS`.
    """
    if problem.method == "nordic2":
        return "scip"
    if problem.method == "nordic0":
        return "nordic0_smo"
    if problem.penalty != "l2":
        return "quadprog"
    if sparse_primal_pays(problem):
        return "primal"
    if problem.method == "nordic1" and problem.noncrossing == "joint":
        return "decomposition"
    return "smo"
