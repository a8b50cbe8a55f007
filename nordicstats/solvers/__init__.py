"""Solvers for the NORDIC problems; each returns a frozen :class:`SolverResult`.

``solve(problem, solver="auto", **options)`` dispatches by method and size:

=========== =============================================================
method      solvers
=========== =============================================================
bsvm        ``"quadprog"`` (dual), ``"smo"``/``"primal"`` when installed
nordic0/1   ``"quadprog"`` (the paper's Wolfe dual), faster paths by size
nordic2     ``"scip"`` (mixed-integer program through pyscipopt)
=========== =============================================================

Solver modules register themselves in :data:`SOLVERS` lazily, so optional
dependencies (pyscipopt) load only when used.
"""

from __future__ import annotations

import importlib

from nordicstats.solvers.problem import METHODS, NONCROSSING, NordicProblem
from nordicstats.solvers.result import SolverResult

__all__ = ["solve", "NordicProblem", "SolverResult", "SOLVERS", "METHODS", "NONCROSSING",
           "choose_solver"]

# solver name -> (module, function, methods it handles)
SOLVERS = {
    "quadprog": ("nordicstats.solvers.qp", "solve_quadprog", ("bsvm", "nordic0", "nordic1")),
    "scip": ("nordicstats.solvers.milp", "solve_nordic2_scip", ("nordic2",)),
}


def choose_solver(problem):
    """The solver ``solver="auto"`` picks for this problem (by method and size).

    Returns
    -------
    str
        A key of :data:`SOLVERS`.
    """
    if problem.method == "nordic2":
        return "scip"
    return "quadprog"


def solve(problem, solver="auto", **options):
    """Solve a :class:`NordicProblem` and return a :class:`SolverResult`.

    Parameters
    ----------
    problem : NordicProblem
    solver : str, default="auto"
        ``"auto"`` or a key of :data:`SOLVERS` that handles ``problem.method``.
    **options
        Passed to the solver (e.g. ``time_limit`` for SCIP).

    Raises
    ------
    ValueError
        Unknown solver, or a solver that cannot handle the method.
    """
    name = choose_solver(problem) if solver == "auto" else solver
    if name not in SOLVERS:
        raise ValueError(
            f"The 'solver' parameter of NORDIC must be 'auto' or one of {sorted(SOLVERS)}. "
            f"Got {solver!r} instead."
        )
    module_name, function_name, methods = SOLVERS[name]
    if problem.method not in methods:
        raise ValueError(
            f"solver={name!r} cannot fit method={problem.method!r}; it handles {list(methods)}. "
            "Use solver='auto'."
        )
    function = getattr(importlib.import_module(module_name), function_name)
    return function(problem, **options)
