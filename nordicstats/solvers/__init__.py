"""Solvers for the NORDIC problems; each returns a frozen :class:`SolverResult`.

``solve(problem, solver="auto", **options)`` dispatches by method and size:

=========== =============================================================
method      solvers
=========== =============================================================
bsvm        ``"smo"``, ``"quadprog"`` (dual), ``"decomposition"``, ``"primal"`` (linear, PIQP)
nordic1     ``"smo"`` (separate form), ``"quadprog"`` (the paper's Wolfe dual),
            ``"decomposition"``, ``"primal"``
nordic0     ``"active_set"`` (exact: increments + decomposition dual), ``"quadprog"``
            (primal QP with a ridge; the reference, inexact on ill-conditioned K)
nordic2     ``"scip"`` (mixed-integer program through pyscipopt)
=========== =============================================================

Solver modules register themselves in :data:`SOLVERS` lazily, so optional
dependencies (pyscipopt) load only when used.  Every result carries a certificate
(:mod:`nordicstats.solvers.certificate`): ``status == "optimal"`` only when the
relative gap is at most 1e-6 and the largest violation at most 1e-7.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect

from nordicstats.solvers.problem import METHODS, NONCROSSING, NordicProblem
from nordicstats.solvers.result import SolverResult

__all__ = ["solve", "NordicProblem", "SolverResult", "SOLVERS", "METHODS", "NONCROSSING",
           "choose_solver", "AUTO_PRIMAL_MIN_ROWS", "ROWS_ON_DEMAND", "DENSE_GRAM_MAX_ROWS"]

# solver name -> (module, function, methods it handles)
SOLVERS = {
    "quadprog": ("nordicstats.solvers.qp", "solve_quadprog", ("bsvm", "nordic0", "nordic1")),
    "scip": ("nordicstats.solvers.milp", "solve_nordic2_scip", ("nordic2",)),
    "decomposition": ("nordicstats.solvers.decomposition", "solve_dual_decomposition",
                      ("bsvm", "nordic1")),
    "primal": ("nordicstats.solvers.linear_primal", "solve_linear_primal", ("bsvm", "nordic1")),
    "active_set": ("nordicstats.solvers.nordic0", "solve_nordic0_active_set", ("nordic0",)),
    "smo": ("nordicstats.solvers.smo", "solve_smo", ("bsvm", "nordic1")),
}

# solver="auto" never picks quadprog for the l2 problems.  Measured
# (benchmarks/bench_nordic0.py --part auto, docs/notes/solvers.md): the decomposition
# solver ties quadprog at n(K-1) = 40 and is faster from 60 on (BSVM 0.009 vs 0.030 s,
# NORDIC-1 0.018 vs 0.126 s at n(K-1) = 100; quadprog grows like (n(K-1))^3.5), and
# quadprog's ridged dual misses the certificate's 1e-7 dual-feasibility tolerance on
# 4 of 258 small random problems (n = 12-30, K = 3-4), where the decomposition solver
# certifies every one.
#
# Linear problems go to the sparse primal (PIQP) above this many rows n(K-1); it
# returns w (coef) and no dual_coef, and never needs the n x n Gram matrix.
AUTO_PRIMAL_MIN_ROWS = 4000

# solver="auto" fits BSVM and NORDIC-1 (separate intercepts) by SMO, which is 16-160x
# faster than the decomposition solver from n = 1,500 on (docs/notes/scaling.md);
# the joint form keeps the decomposition solver.
#
# Solvers that take kernel rows on demand (a KernelMatrix as problem.gram); the model
# passes one instead of the dense Gram matrix when n exceeds DENSE_GRAM_MAX_ROWS
# (n = 4,096 is 128 MiB per copy; n = 20,000 would be 3.2 GB).
ROWS_ON_DEMAND = ("smo", "active_set")
DENSE_GRAM_MAX_ROWS = 4096


def choose_solver(problem):
    """The solver ``solver="auto"`` picks for this problem (by method and size).

    * ``nordic2``: ``"scip"``; ``nordic0``: ``"active_set"``;
    * linear problems with n(K-1) > :data:`AUTO_PRIMAL_MIN_ROWS`: ``"primal"`` (sparse
      QP in w with PIQP) when PIQP is installed;
    * BSVM and NORDIC-1 with separate intercepts: ``"smo"``;
    * the others (the joint NORDIC-1 form): ``"decomposition"``.

    Returns
    -------
    str
        A key of :data:`SOLVERS`.
    """
    if problem.method == "nordic2":
        return "scip"
    if problem.method == "nordic0":
        return "active_set"
    if problem.penalty != "l2":
        return "quadprog"
    if (problem.X is not None and problem.n * problem.n_boundaries > AUTO_PRIMAL_MIN_ROWS
            and importlib.util.find_spec("piqp") is not None):
        return "primal"
    if problem.method == "nordic1" and problem.noncrossing == "joint":
        return "decomposition"
    return "smo"


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
        Unknown solver, a solver that cannot handle the method, or an option
        the solver does not take (the message lists the valid ones).
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
    valid = [p for p in inspect.signature(function).parameters if p != "problem"]
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown solver option(s) {unknown} for solver={name!r}"
            f"{' (chosen by solver=auto)' if solver == 'auto' else ''}; its options are {valid}."
        )
    return function(problem, **options)
