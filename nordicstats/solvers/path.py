"""Solutions along a grid of C, each started from the last where the solver can.

A NORDIC problem depends on ``C`` only through the bounds of its dual (the weights of
the hinge slacks), so the solution at one C is a good start at the next: the solvers
that restart from a nearby dual (:func:`~nordicstats.solvers.takes_warm_start`) get
``warm_start={**multipliers, "C": C}`` of the previous solution and rescale it (the
constraints are homogeneous), and NORDIC-2's solver
(:func:`~nordicstats.solvers.takes_relaxation_path`) keeps its relaxation LPs along
the grid (:class:`~nordicstats.solvers.milp.RelaxationPath`: C enters only the slack
costs, so the simplex restarts from the previous optimal basis).  Quadprog and the
sparse primal start cold at every C.  The answers are the optima of the cold solves to
the solvers' tolerances.

:class:`SolverPath` solves one C at a time (tuning scores each grid point as it is
solved, and a C at which the solver fails leaves the path usable);
:func:`solve_path` solves a whole grid, as scikit-learn's ``enet_path`` serves
``ElasticNetCV``.
"""

from __future__ import annotations

from nordicstats.solvers import registry

__all__ = ["SolverPath", "solve_path"]


class SolverPath:
    """Solve ``problem_for_C(C)`` for successive values of C, warm-starting along the way.

    Parameters
    ----------
    problem_for_C : callable
        ``problem_for_C(C) -> NordicProblem``: the same data, method and kernel at
        hinge weight C (e.g. ``model.build_problem(C=C)``).
    solver : str, default="auto"
        As in :func:`~nordicstats.solvers.solve`.
    warm : bool, default=True
        Start each solve from the previous solution (and keep NORDIC-2's relaxation
        LPs) where the solver can; False solves every C cold.
    **options
        Solver options, passed to every solve; an explicit ``warm_start`` (e.g. SCIP's
        choice of starting point) or ``relaxation`` option is passed unchanged instead
        of the path's own.

    Examples
    --------
    >>> from nordicstats import NORDIC
    >>> from nordicstats.datasets import make_nonlinear
    >>> X, y = make_nonlinear(60, d=2, random_state=0)
    >>> model = NORDIC(y, X, gamma=0.5)
    >>> path = SolverPath(lambda C: model.build_problem(C=C), solver="decomposition")
    >>> [path.solve(C).info["start"] for C in (0.5, 1.0)]  # the second from the first
    ['libsvm', 'warm_start']
    """

    def __init__(self, problem_for_C, solver="auto", warm=True, **options):
        self.problem_for_C, self.solver = problem_for_C, solver
        self.warm, self.options = bool(warm), options
        self.previous = None  # (SolverResult, C) of the last successful solve
        self.relaxation = None  # NORDIC-2's relaxation LPs, built at the first C

    def solve(self, C):
        """The :class:`~nordicstats.solvers.SolverResult` at ``C``.

        A solver error propagates and leaves the path as it was: the next C starts
        from the last solution that was found.
        """
        problem = self.problem_for_C(C)
        options = dict(self.options)
        if self.warm:
            options.update(self._starts(problem, options))
        result = registry.solve(problem, solver=self.solver, **options)
        self.previous = (result, problem.C)
        return result

    def _starts(self, problem, options):
        """The path's own start options for ``problem`` (those not given explicitly)."""
        starts = {}
        if (self.previous is not None and "warm_start" not in options
                and registry.takes_warm_start(self.solver, problem)):
            result, C = self.previous
            starts["warm_start"] = {**result.multipliers, "C": C}
        if "relaxation" not in options and registry.takes_relaxation_path(self.solver, problem):
            if self.relaxation is None:
                # NORDIC-2's module (and its LP stack) loads only when a path needs it,
                # as the registry loads it on first use
                from nordicstats.solvers.milp import RelaxationPath

                self.relaxation = RelaxationPath.for_problem(problem)
            starts["relaxation"] = self.relaxation
        return starts


def solve_path(problem_for_C, Cs, solver="auto", warm=True, **options):
    """Solutions of ``problem_for_C(C)`` along the grid ``Cs``, in its order.

    Each C starts from the solution at the previous one where the solver can (see the
    module docstring); the results are the optima of cold solves to the solver's
    tolerance.  Parameters as in :class:`SolverPath`.

    Returns
    -------
    list of SolverResult
        One per value of ``Cs``.

    Examples
    --------
    >>> import numpy as np
    >>> from nordicstats.data import binary_signs
    >>> from nordicstats.solvers import NordicProblem
    >>> X = np.linspace(-1, 1, 12)[:, None]
    >>> signs = binary_signs(np.repeat([0, 1, 2], 4), 3)
    >>> results = solve_path(lambda C: NordicProblem(gram=X @ X.T, signs=signs, C=C, X=X),
    ...                      [0.25, 1.0, 4.0])
    >>> [r.status for r in results]
    ['optimal', 'optimal', 'optimal']
    """
    path = SolverPath(problem_for_C, solver, warm, **options)
    return [path.solve(C) for C in Cs]
