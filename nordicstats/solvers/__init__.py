"""Solvers for the NORDIC problems; each returns a frozen :class:`SolverResult`.

``solve(problem, solver="auto", warm_start=None, **options)`` dispatches by method and
size, and ``solve_path(problem_for_C, Cs)`` (:mod:`nordicstats.solvers.path`) solves along
a grid of C, each solve started from the previous solution where the solver can:

=========== =============================================================
method      solvers
=========== =============================================================
bsvm        ``"smo"``, ``"quadprog"`` (dual), ``"decomposition"``, ``"primal"`` (linear, PIQP)
nordic1     ``"smo"`` (separate form), ``"quadprog"`` (the paper's Wolfe dual),
            ``"decomposition"``, ``"primal"``
nordic0     ``"nordic0_smo"`` (exact: increments + compiled SMO on the reduced dual),
            ``"active_set"`` (exact: increments + decomposition dual), ``"quadprog"``
            (primal QP with a ridge; the reference, inexact on ill-conditioned K)
nordic2     ``"scip"`` (mixed-integer program through pyscipopt)
=========== =============================================================

The registry (:mod:`nordicstats.solvers.registry`) loads solver modules by name on
first use, so optional dependencies (pyscipopt) load only when used, and answers the
questions the layers above ask about a solver (:func:`handles`, :func:`needs_gram`,
:func:`takes_kernel_rows`, :func:`takes_warm_start`, ...); the choice of
``solver="auto"`` is :func:`choose_solver` (:mod:`nordicstats.solvers.choice`).  Every
result carries a certificate (:mod:`nordicstats.solvers.certificate`):
``status == "optimal"`` only when the relative gap is at most 1e-6 and the largest
violation at most 1e-7.
"""

from __future__ import annotations

from nordicstats.solvers.choice import AUTO_PRIMAL_MIN_ROWS, DENSE_GRAM_MAX_ROWS, choose_solver
from nordicstats.solvers.path import SolverPath, solve_path
from nordicstats.solvers.problem import METHODS, NONCROSSING, NordicProblem
from nordicstats.solvers.registry import (
    ROWS_ON_DEMAND,
    SOLVERS,
    handles,
    needs_gram,
    refit_solver,
    solve,
    takes_kernel_rows,
    takes_relaxation_path,
    takes_warm_start,
)
from nordicstats.solvers.result import SolverResult

__all__ = ["solve", "solve_path", "SolverPath", "NordicProblem", "SolverResult", "SOLVERS",
           "METHODS", "NONCROSSING",
           "choose_solver", "AUTO_PRIMAL_MIN_ROWS", "ROWS_ON_DEMAND", "DENSE_GRAM_MAX_ROWS",
           "handles", "needs_gram", "takes_kernel_rows", "takes_warm_start",
           "takes_relaxation_path", "refit_solver"]
