"""The solver registry: which solvers exist, what each takes, and :func:`solve`.

Solver modules are loaded by name through :mod:`importlib` on first use, so optional
dependencies (pyscipopt) load only when needed.  No solver module imports this one:
a solver that needs another calls that solver's function directly (NORDIC-2's start
from NORDIC-1), so the by-name loads here close no import cycle.

Callers above the solver layer (the model, tuning) never name solvers; they ask the
questions below (:func:`handles`, :func:`needs_gram`, :func:`takes_kernel_rows`,
:func:`takes_warm_start`, :func:`takes_relaxation_path`, :func:`refit_solver`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from typing import NamedTuple

from nordicstats.solvers.choice import choose_solver

__all__ = ["SOLVERS", "Solver", "solve", "handles", "needs_gram", "takes_kernel_rows",
           "takes_warm_start", "takes_relaxation_path", "refit_solver", "ROWS_ON_DEMAND"]


class Solver(NamedTuple):
    """A registered solver: where it lives, what it fits and what it takes."""

    #: Module loaded by name on first use.
    module: str
    #: ``function(problem, **options) -> SolverResult`` in that module.
    function: str
    #: Methods (``problem.method``) it fits.
    methods: tuple
    #: Works from ``problem.X`` alone (linear problems) without the n x n Gram matrix.
    gram_free: bool = False
    #: Takes the kernel as a KernelMatrix (rows on demand) instead of a dense Gram matrix.
    kernel_rows: bool = False
    #: Restarts from the dual of a nearby problem: ``warm_start={**multipliers, "C": C}``.
    warm_start: bool = False
    #: Keeps its relaxation LPs along a C grid (``relaxation=RelaxationPath``).
    relaxation_path: bool = False


#: solver name -> :class:`Solver`
SOLVERS = {
    "quadprog": Solver("nordicstats.solvers.qp", "solve_quadprog", ("bsvm", "nordic0", "nordic1")),
    "scip": Solver("nordicstats.solvers.milp", "solve_nordic2_scip", ("nordic2",),
                   relaxation_path=True),
    "decomposition": Solver("nordicstats.solvers.decomposition", "solve_dual_decomposition",
                            ("bsvm", "nordic1"), warm_start=True),
    "primal": Solver("nordicstats.solvers.linear_primal", "solve_linear_primal",
                     ("bsvm", "nordic1"), gram_free=True),
    "active_set": Solver("nordicstats.solvers.nordic0", "solve_nordic0_active_set", ("nordic0",),
                         kernel_rows=True, warm_start=True),
    "smo": Solver("nordicstats.solvers.smo", "solve_smo", ("bsvm", "nordic1"),
                  kernel_rows=True, warm_start=True),
    "nordic0_smo": Solver("nordicstats.solvers.nordic0_smo", "solve_nordic0_smo", ("nordic0",),
                          kernel_rows=True, warm_start=True),
}

#: Solvers that take kernel rows on demand (a KernelMatrix as ``problem.gram``).
ROWS_ON_DEMAND = tuple(name for name, entry in SOLVERS.items() if entry.kernel_rows)


def _entry(name, problem=None):
    """The registry entry of ``name`` (``"auto"``: the one chosen for ``problem``)."""
    if name == "auto" and problem is not None:
        name = choose_solver(problem)
    return SOLVERS.get(name)


def handles(name, method):
    """Whether solver ``name`` (a key of :data:`SOLVERS`) fits ``method``."""
    entry = _entry(name)
    return entry is not None and method in entry.methods


def needs_gram(name, problem=None):
    """Whether solver ``name`` (``"auto"``: the one chosen for ``problem``) needs the
    Gram matrix of a linear problem; only the sparse primal works from X alone."""
    entry = _entry(name, problem)
    return entry is None or not entry.gram_free


def takes_kernel_rows(name, problem=None):
    """Whether solver ``name`` (``"auto"``: the one chosen for ``problem``) takes the
    kernel as a KernelMatrix, rows on demand, instead of the dense Gram matrix."""
    entry = _entry(name, problem)
    return entry is not None and entry.kernel_rows


def takes_warm_start(name, problem=None):
    """Whether solver ``name`` (``"auto"``: the one chosen for ``problem``) restarts from
    the dual of a nearby problem, ``warm_start={**result.multipliers, "C": C}`` (the
    solver rescales it to the new C; the constraints are homogeneous)."""
    entry = _entry(name, problem)
    return entry is not None and entry.warm_start


def takes_relaxation_path(name, problem=None):
    """Whether solver ``name`` (``"auto"``: the one chosen for ``problem``) keeps its
    relaxation along a C grid (``relaxation=`` a
    :class:`~nordicstats.solvers.milp.RelaxationPath`, which
    :mod:`nordicstats.solvers.path` builds and passes)."""
    entry = _entry(name, problem)
    return entry is not None and entry.relaxation_path


def refit_solver(name, method):
    """Solver of repeated refits on resamples of a linear problem (the bootstrap).

    ``"auto"`` becomes the sparse primal (PIQP) for the methods it fits, whatever the
    size, when PIQP is installed: a resample has about 0.63 n distinct rows, which can
    fall below the primal's ``"auto"`` threshold, where the decomposition solver would
    take far longer per refit for the same optimum (measurements in
    docs/notes/solvers.md, "Bootstrap refits").  Any other ``name`` is kept.
    """
    if (name == "auto" and handles("primal", method)
            and importlib.util.find_spec("piqp") is not None):
        return "primal"
    return name


def solve(problem, solver="auto", *, warm_start=None, **options):
    """Solve a :class:`NordicProblem` and return a :class:`SolverResult`.

    Parameters
    ----------
    problem : NordicProblem
    solver : str, default="auto"
        ``"auto"`` or a key of :data:`SOLVERS` that handles ``problem.method``.
    warm_start : optional
        A start for the solver, passed to it when given: for the solvers of
        :func:`takes_warm_start`, the dual of a nearby problem,
        ``{**result.multipliers, "C": C}`` (rescaled to ``problem.C``; the constraints
        are homogeneous); for SCIP, its choice of starting point (``True``, ``False``,
        ``"repair"``, ``"nordic1"``).  Along a grid of C,
        :func:`~nordicstats.solvers.path.solve_path` passes it where the solver takes it.
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
    entry = SOLVERS[name]
    if problem.method not in entry.methods:
        raise ValueError(
            f"solver={name!r} cannot fit method={problem.method!r}; it handles "
            f"{list(entry.methods)}. Use solver='auto'."
        )
    function = getattr(importlib.import_module(entry.module), entry.function)
    if warm_start is not None:
        options["warm_start"] = warm_start
    valid = [p for p in inspect.signature(function).parameters if p != "problem"]
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown solver option(s) {unknown} for solver={name!r}"
            f"{' (chosen by solver=auto)' if solver == 'auto' else ''}; its options are {valid}."
        )
    return function(problem, **options)
