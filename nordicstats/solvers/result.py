"""The frozen record every NORDIC solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SolverResult"]


@dataclass(frozen=True, eq=False)
class SolverResult:
    """Solution and diagnostics of one NORDIC fit.

    Attributes
    ----------
    dual_coef : ndarray of shape (n, K-1)
        Kernel expansion coefficients omega (f_k = K omega_k + b_k).  For
        linear-primal solvers this is ``None`` and ``coef`` holds w.
    intercept : ndarray of shape (K-1,)
        b_k.
    objective : float
        Primal objective (penalty + C * hinge slacks) at the returned point,
        evaluated by :meth:`NordicProblem.objective`, not taken from the solver.
    solver : str
        ``"quadprog"``, ``"scip"``, ``"smo"``, ``"primal"`` ...
    status : str
        Normalised status: ``"optimal"``, ``"time_limit"``, ``"gap_limit"``,
        ``"node_limit"`` or ``"iteration_limit"``.
    message : str
        The solver's own status text.
    iterations : int
        Iterations (QP), or branch-and-bound nodes (MILP).
    time : float
        Wall-clock seconds spent in the solver (set-up included).
    max_violation : float
        Largest constraint violation of the certificate: primal (noncrossing) and
        dual (bounds, equalities, stationarity) for the convex methods, primal for
        NORDIC-2.
    kkt_residual : float
        The certificate's relative gap (duality gap, or MIP gap); kept for
        backward compatibility, equal to ``gap``.
    coef : ndarray of shape (d, K-1) or None
        Primal weights w_k for linear-kernel fits.
    multipliers : mapping
        Dual variables by name: ``alpha`` (n, K-1), ``phi`` (n, K-2), ``gamma`` (K-2,).
    primal_bound, dual_bound, gap : float
        Primal objective, lower bound (Wolfe dual value or MIP bound) and the
        relative gap of the certificate.
    info : mapping
        Solver-specific extras (ridge used, warm-start use, formulation, ...).
    certificate : Certificate or None
        Gap and violations recomputed on the full problem from the returned point
        (:mod:`nordicstats.solvers.certificate`); ``status == "optimal"`` only
        when it holds.
    """

    dual_coef: np.ndarray | None
    intercept: np.ndarray
    objective: float
    solver: str
    status: str = "optimal"
    message: str = ""
    iterations: int = 0
    time: float = 0.0
    max_violation: float = 0.0
    kkt_residual: float = float("nan")
    coef: np.ndarray | None = None
    multipliers: object = field(default_factory=dict)
    primal_bound: float = float("nan")
    dual_bound: float = float("nan")
    gap: float = float("nan")
    info: object = field(default_factory=dict)
    certificate: object = None

    def __post_init__(self):
        for name in ("dual_coef", "intercept", "coef"):
            value = getattr(self, name)
            if value is not None:
                value = np.array(value, dtype=float)
                value.setflags(write=False)
                object.__setattr__(self, name, value)
        object.__setattr__(self, "multipliers", dict(self.multipliers))
        object.__setattr__(self, "info", dict(self.info))

    @property
    def converged(self):
        """True when the solver proved optimality (within its tolerance)."""
        return self.status == "optimal"
