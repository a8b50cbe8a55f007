"""Optimality certificates: one check, on the full problem, for every solver's answer.

A solver returns a primal point (omega or w, b) and, for the convex problems, its
multipliers.  :func:`certify` evaluates, independently of how they were found,

* the primal objective P and the Wolfe dual value W = e'alpha - 1/2 sum_k ||f_k||^2_H
  (1/2 omega_k' K omega_k, or 1/2 ||w_k||^2 for linear problems), whose difference
  is the sum of the complementarity products when the Lagrangian is stationary;
  the **relative gap** is ``|P - W| / max(1, |P|)``;
* the **primal violation**: the largest violation of the method's noncrossing
  constraints (omega or decision-value units; the hinge constraints hold by
  construction since the slacks are recomputed as (1 - y f)_+);
* the **dual violation**: the largest of the box 0 <= alpha <= U (U =
  ``problem.upper_bounds``), the signs of phi, psi, gamma and the equality rows
  y_k'alpha_k + (gamma or phi terms) = 0, all relative to max(1, max U), and the
  stationarity residual in f-space relative to ``max(1, max |K omega|)``:

  - BSVM / NORDIC-1:  K (omega_k - y_k alpha_k - phi_k + phi_{k-1})       (eq. KKT_omega)
  - NORDIC-0:         K omega_k - K y_k alpha_k - psi_k + psi_{k-1}
    (psi: multipliers of omega_k >= omega_{k+1}; K^{-1} never appears, so the
    certificate is finite for singular or ill-conditioned K);
  - linear:           X (w_k - X'(y_k alpha_k + phi_k - phi_{k-1})).

Stationarity makes W the Lagrange dual function, hence a lower bound on the optimum:
with both violations at most :data:`VIOLATION_TOL` and the gap at most
:data:`GAP_TOL` the point is optimal to that accuracy.  NORDIC-2 (a MIP) is
certified by its MIP gap (:func:`certify_mip`).  A solver reports
``status="optimal"`` only when the certificate holds (:func:`finish_status`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from nordicstats.exceptions import SolverLimitWarning
from nordicstats.solvers.result import SolverResult

__all__ = ["Certificate", "certify", "certify_mip", "finish_status", "certified_result", "GAP_TOL",
           "VIOLATION_TOL"]

# Documented tolerances of status "optimal".
GAP_TOL = 1e-6
VIOLATION_TOL = 1e-7


@dataclass(frozen=True)
class Certificate:
    """Numbers that certify (or not) a solver's answer on the full problem.

    Attributes
    ----------
    primal : float
        Primal objective at the returned point.
    dual : float
        Lower bound: the Wolfe dual value (convex methods) or the MIP dual bound.
    gap : float
        Relative gap ``|primal - dual| / max(1, |primal|)`` (MIP: SCIP's relative gap).
    primal_violation, dual_violation : float
        Largest violation of the primal constraints / of dual feasibility and
        stationarity (NaN for MIPs, which have no dual point).
    kind : {"duality", "mip"}
    """

    primal: float
    dual: float
    gap: float
    primal_violation: float
    dual_violation: float = 0.0
    kind: str = "duality"

    @property
    def max_violation(self):
        """Largest of the primal and dual violations."""
        return float(np.nanmax([self.primal_violation, self.dual_violation]))

    @property
    def certified(self):
        """True when gap <= GAP_TOL and max_violation <= VIOLATION_TOL."""
        return bool(np.isfinite(self.gap) and self.gap <= GAP_TOL
                    and self.max_violation <= VIOLATION_TOL)

    def describe(self):
        """One line, e.g. ``relative duality gap 3.1e-10, max violation 2e-12 (certified)``."""
        name = "MIP gap" if self.kind == "mip" else "relative duality gap"
        verdict = "certified" if self.certified else (
            f"NOT certified: needs gap <= {GAP_TOL:g} and violation <= {VIOLATION_TOL:g}")
        return (f"{name} {self.gap:.2g}, max violation {self.max_violation:.2g} "
                f"(primal {self.primal_violation:.2g}, dual {self.dual_violation:.2g}); "
                f"{verdict}")


def certify(problem, omega, b, multipliers, coef=None):
    """Certificate of an l2 NORDIC answer (BSVM, NORDIC-0, NORDIC-1; kernel or linear).

    Parameters
    ----------
    problem : NordicProblem
    omega : ndarray of shape (n, K-1) or None
        Kernel coefficients (None for linear-primal answers, which pass ``coef``).
    b : ndarray of shape (K-1,)
    multipliers : mapping
        ``alpha`` (n, K-1); ``phi`` (n, K-2) for NORDIC-1, ``psi`` (n, K-2) for
        NORDIC-0 (f-space ordering multipliers), ``gamma`` (K-2,) for the
        intercept ordering; missing blocks count as zero.
    coef : ndarray of shape (d, K-1), optional
        w for linear problems.

    Returns
    -------
    Certificate
    """
    n, m = problem.signs.shape
    Y, U = problem.signs, problem.upper_bounds
    alpha = np.asarray(multipliers["alpha"], dtype=float)
    phi = _block(multipliers, "phi", (n, m - 1))
    psi = _block(multipliers, "psi", (n, m - 1))
    gamma = _block(multipliers, "gamma", (m - 1,))
    primal = problem.objective(omega, b, coef)
    dual = float(alpha.sum()) - problem.penalty_value(omega, coef)
    gap = abs(primal - dual) / max(1.0, abs(primal))
    scale = max(1.0, float(np.max(U)) if U.size else 1.0)
    sign = max(_neg(alpha), _neg(U - alpha), _neg(phi), _neg(psi), _neg(gamma)) / scale
    equality = np.sum(Y * alpha, axis=0)
    equality += _difference(gamma[None, :])[0]
    if problem.method == "nordic1" and problem.noncrossing == "joint":
        equality += _difference(phi.sum(axis=0)[None, :])[0]
    stationarity = _stationarity(problem, omega, coef, alpha, phi, psi)
    dual_violation = max(sign, float(np.max(np.abs(equality), initial=0.0)) / scale,
                         stationarity)
    return Certificate(primal, dual, float(gap),
                       float(problem.noncrossing_violation(omega, b, coef)),
                       float(dual_violation))


def _block(multipliers, name, shape):
    value = multipliers.get(name)
    if value is None or np.size(value) == 0:
        return np.zeros(shape)
    return np.asarray(value, dtype=float).reshape(shape)


def _neg(x):
    return float(np.max(-np.asarray(x), initial=0.0))


def _difference(z):
    """(D z)_k = z_k - z_{k-1} with z_0 = z_{K-1} = 0: rows (.., K-2) -> (.., K-1)."""
    out = np.zeros((z.shape[0], z.shape[1] + 1))
    out[:, :-1] += z
    out[:, 1:] -= z
    return out


def _stationarity(problem, omega, coef, alpha, phi, psi):
    """Largest f-space residual of the Lagrangian's stationarity, relative to max |f|."""
    Y = problem.signs
    expansion = Y * alpha + _difference(phi)  # omega of the dual (psi acts in f-space)
    if coef is not None and problem.X is not None and omega is None:
        resid = problem.X @ (coef - problem.X.T @ expansion)
        scale = np.max(np.abs(problem.X @ coef), initial=0.0)
    else:
        G = problem.gram @ omega
        resid = G - problem.gram @ expansion - _difference(psi)
        scale = np.max(np.abs(G), initial=0.0)
    return float(np.max(np.abs(resid), initial=0.0)) / max(1.0, float(scale))


def certify_mip(problem, omega, b, coef, dual_bound, gap):
    """Certificate of a NORDIC-2 answer: its MIP gap and largest constraint violation.

    Parameters
    ----------
    dual_bound : float
        The best proven lower bound.
    gap : float
        Relative MIP gap ``|P - D| / min(|P|, |D|)`` (SCIP's definition).
    """
    return Certificate(problem.objective(omega, b, coef), float(dual_bound), float(gap),
                       float(problem.noncrossing_violation(omega, b, coef)), float("nan"),
                       kind="mip")


def finish_status(solver, status, certificate, detail=""):
    """The status to report and a message stating the certificate's numbers.

    ``"optimal"`` survives only when the certificate holds; a solver that
    believed it had converged but is not certified reports ``"inaccurate"``
    (the caller warns with :class:`~nordicstats.exceptions.SolverLimitWarning`).

    Returns
    -------
    (str, str)
    """
    if status == "optimal" and not certificate.certified:
        status = "inaccurate"
    text = f"{solver}: {status}"
    if detail:
        text += f" ({detail})"
    return status, f"{text}; {certificate.describe()}"


def certified_result(problem, solver, omega, b, multipliers, status="optimal", detail="",
                     coef=None, **fields):
    """A :class:`SolverResult` whose status and message come from its certificate.

    ``status="optimal"`` becomes ``"inaccurate"`` when the certificate fails, and any
    status but ``"optimal"`` is announced with a :class:`SolverLimitWarning` stating
    the gap and the violation.
    """
    if coef is None and problem.X is not None and omega is not None:
        coef = problem.X.T @ omega
    cert = certify(problem, omega, b, multipliers, coef=coef if omega is None else None)
    status, message = finish_status(solver, status, cert, detail)
    if status != "optimal":
        warnings.warn(message, SolverLimitWarning, stacklevel=4)
    info = dict(fields.pop("info", {}), certificate=cert, dual_objective=cert.dual)
    return SolverResult(
        dual_coef=omega, intercept=b, objective=cert.primal, solver=solver, status=status,
        message=message, max_violation=cert.max_violation, kkt_residual=cert.gap,
        coef=coef, multipliers=multipliers, primal_bound=cert.primal, dual_bound=cert.dual,
        gap=cert.gap, certificate=cert, info=info, **fields)
