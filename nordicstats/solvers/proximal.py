"""quadprog on a positive semi-definite QP: a ridge plus proximal-point refinements.

quadprog (Goldfarb-Idnani) needs a positive definite Hessian; the SVM duals and
primals solved with it are only semi-definite.  The caller adds a ridge,
G = H + rho I, and :func:`solve_proximal_quadprog` removes the ridge's bias by
proximal-point steps

    x_{t+1} = argmin 1/2 x'G x - (a + rho x_t)'x   s.t.  C'x >= b  (first ``meq`` equal),

whose fixed points are exactly the minimisers of 1/2 x'H x - a'x on the same set.
The loop stops after ``refinements`` steps or when x moves by at most
``1e-9 * max(1, scale)`` (``scale``: the box bound C, the size of the variables);
the tolerance and its measurement are in docs/notes/solvers.md.  Used by the NORDIC
dual and primal (:mod:`nordicstats.solvers.qp`) and the Chu-Keerthi dual
(:mod:`nordicstats.compare.ck`).
"""

from __future__ import annotations

import numpy as np
import quadprog

from nordicstats.exceptions import SolverError

__all__ = ["solve_proximal_quadprog", "STOP_TOLERANCE"]

#: A refinement that moves x by at most STOP_TOLERANCE * max(1, scale) ends the loop.
STOP_TOLERANCE = 1e-9


def solve_proximal_quadprog(G, a, constraints, bounds, n_equalities, rho, refinements, scale,
                            *, problem_name, ridge_hint):
    """Minimise 1/2 x'(G - rho I)x - a'x subject to constraints'x >= bounds, with quadprog.

    Parameters
    ----------
    G : ndarray of shape (p, p)
        The ridged Hessian H + rho I (positive definite).
    a : ndarray of shape (p,)
        Linear term (quadprog's sign: the objective is 1/2 x'Hx - a'x).
    constraints, bounds : ndarray of shapes (p, r) and (r,)
        quadprog's C and b: columns c_j with c_j'x >= b_j; the first ``n_equalities``
        hold with equality.
    n_equalities : int
    rho : float
        The ridge added to H.
    refinements : int
        Proximal-point steps after the first solve (0: the ridged solution itself).
    scale : float
        Size of the variables (the box bound C): the stopping rule is
        ``max |x_{t+1} - x_t| <= STOP_TOLERANCE * max(1, scale)``.
    problem_name : str
        What is solved, for the error message ("the nordic1 problem").
    ridge_hint : str
        How the caller sets a larger ridge, for the error message.

    Returns
    -------
    x : ndarray of shape (p,)
    iterations : int
        quadprog's iterations summed over the solves.
    lagrange : ndarray of shape (r,)
        The multipliers of the last solve.

    Raises
    ------
    SolverError
        When quadprog finds the constraints inconsistent or G not positive definite.
    """
    x = np.zeros(G.shape[0])
    iterations = 0
    for step in range(1 + max(0, int(refinements))):
        try:
            sol = quadprog.solve_qp(G, a + rho * x, constraints, bounds, n_equalities)
        except ValueError as exc:
            raise SolverError(f"quadprog failed on {problem_name}: {exc}. Try a larger ridge "
                              f"({ridge_hint}) or another solver.",
                              solver="quadprog", status=str(exc)) from exc
        moved = float(np.max(np.abs(sol[0] - x))) if x.size else 0.0
        x = sol[0]
        iterations += int(sol[3][0])
        if step and moved <= STOP_TOLERANCE * max(1.0, scale):
            break
    return x, iterations, sol[4]
