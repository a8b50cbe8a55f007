"""Exceptions and warnings raised by nordicstats.

Every error a user can trigger derives from a built-in type (``ValueError``,
``TypeError``, ``RuntimeError``) so that generic handlers keep working, and
carries a message that names the parameter, the value received and the fix.
"""


class SolverError(RuntimeError):
    """An optimisation solver failed or reported a status without a usable solution.

    Parameters
    ----------
    message : str
        What went wrong and what to try.
    solver : str, optional
        Name of the solver (``"quadprog"``, ``"scip"``, ...).
    status : str, optional
        The solver's own status text, kept verbatim.

    Examples
    --------
    >>> err = SolverError("infeasible", solver="scip", status="infeasible")
    >>> err.status
    'infeasible'
    """

    def __init__(self, message, solver=None, status=None):
        super().__init__(message)
        self.solver = solver
        self.status = status


class SolverLimitWarning(UserWarning):
    """A solver stopped at a time, node or gap limit; the best solution found is returned."""


class InferenceWarning(UserWarning):
    """The requested standard errors or tests rest on shaky ground (small n, active constraints)."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped before its tolerance was reached."""


class MissingDependencyError(ImportError):
    """An optional dependency is needed for the requested feature.

    The message names the ``pip install nordicstats[extra]`` that provides it.
    """


def missing_dependency(module, extra, feature):
    """Build a :class:`MissingDependencyError` naming the extra that installs ``module``.

    Parameters
    ----------
    module : str
        Import name that failed.
    extra : str
        Name of the optional-dependency group in ``pyproject.toml``.
    feature : str
        What the user asked for, e.g. ``"method='nordic2'"``.

    Returns
    -------
    MissingDependencyError

    Examples
    --------
    >>> str(missing_dependency("pyscipopt", "milp", "method='nordic2'"))[:40]
    "method='nordic2' needs the optional pack"
    """
    return MissingDependencyError(
        f"{feature} needs the optional package '{module}', which is not installed. "
        f"Install it with: pip install 'nordicstats[{extra}]'"
    )
