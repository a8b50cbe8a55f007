"""The NORDIC optimisation problems, stated once and evaluated independently of any solver.

All methods share the decision functions (representer form, paper Section 3.1)

    f_k(x) = sum_j omega_{k,j} K(x_j, x) + b_k,   k = 1, ..., K-1,

and the hinge slacks xi_{k,i} = (1 - y_i^(k) f_k(x_i))_+.  The objective is

    l2 penalty:  sum_k 1/2 omega_k' K omega_k + C sum_{k,i} xi_{k,i}   (eq. primal_problem)
    l1 penalty:  sum_k ||omega_k||_1          + C sum_{k,i} xi_{k,i}   (NORDIC-2, Section 4)

with C = 1/lambda of the paper.  The linear-kernel problems are stated in the
primal weights w_k = X' omega_k (eq. linearNORDIC), where the l1 penalty is on w.

Noncrossing constraints by method:

* ``bsvm``     none (K-1 independent SVMs, Frank & Hall 2001);
* ``nordic0``  b_k >= b_{k+1} and omega_{k,i} >= omega_{k+1,i}
  (eqs. constraint_b, constraint_omega);
* ``nordic1``  with ``noncrossing="separate"``: b_k >= b_{k+1} and K omega_k >= K omega_{k+1}
  (eqs. primal_constraint3-4); with ``noncrossing="joint"``: f_k(x_i) >= f_{k+1}(x_i)
  (the linear NORDIC constraint of Section 5.2, also offered for kernels);
* ``nordic2``  for every i and k: not (f_k(x_i) < 0 and f_{k+1}(x_i) > 0)  (eqs. cond1-cond2).

The functions here are what the tests use to check any solver's answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nordicstats.class_rule import count_crossings

__all__ = ["NordicProblem", "METHODS", "METHOD_NAMES", "NONCROSSING"]

#: The NORDIC methods, and their names in the paper (summaries, plots).
METHODS = ("bsvm", "nordic0", "nordic1", "nordic2")
METHOD_NAMES = {"bsvm": "BSVM", "nordic0": "NORDIC-0", "nordic1": "NORDIC-1", "nordic2": "NORDIC-2"}
NONCROSSING = ("separate", "joint")


@dataclass(frozen=True, eq=False)
class NordicProblem:
    """One NORDIC training problem.

    Attributes
    ----------
    gram : ndarray of shape (n, n)
        Kernel matrix K of the training rows.
    signs : ndarray of shape (n, K-1)
        Dummy labels y_i^(k) in {-1, +1}.
    C : float
        Weight of the hinge slacks (C = 1/lambda).
    method : {"bsvm", "nordic0", "nordic1", "nordic2"}
    noncrossing : {"separate", "joint"}
        Form of the NORDIC-1 constraints (ignored by the other methods).
    penalty : {"l2", "l1"}
        ``"l2"``: 1/2 omega' K omega (the QP methods, and NORDIC-2's MIQP
        extension); ``"l1"``: the paper's NORDIC-2 penalty.
    X : ndarray of shape (n, d) or None
        Training covariates when the kernel is linear (then ``gram = X X'``),
        so that primal solvers can work with w_k directly.
    hinge_weights : ndarray of shape (n, K-1) or None
        Nonnegative weight c_{i,k} of each hinge slack xi_{k,i}: the loss becomes
        C sum_{k,i} c_{i,k} xi_{k,i}.  Case weights and cost matrices both arrive
        here (``None`` means all ones).  In the duals the box 0 <= alpha_{k,i} <= C
        becomes 0 <= alpha_{k,i} <= C c_{i,k}: see :attr:`upper_bounds`.
    """

    gram: np.ndarray
    signs: np.ndarray
    C: float
    method: str = "nordic1"
    noncrossing: str = "separate"
    penalty: str = "l2"
    X: np.ndarray | None = None
    hinge_weights: np.ndarray | None = None

    @property
    def n(self):
        """Number of training rows."""
        return self.signs.shape[0]

    @property
    def n_boundaries(self):
        """K - 1."""
        return self.signs.shape[1]

    @property
    def is_linear(self):
        """True when the problem carries X (linear kernel): penalties are on w."""
        return self.X is not None

    @property
    def upper_bounds(self):
        """C c_{i,k}: the weight of each hinge slack, shape (n, K-1).

        It is the slack's coefficient in the primal objective and the upper
        bound of its multiplier alpha_{k,i} in every dual.
        """
        if self.hinge_weights is None:
            return np.full(self.signs.shape, float(self.C))
        return self.C * np.asarray(self.hinge_weights, dtype=float)

    # --- evaluation -------------------------------------------------------------------------
    def decision_values(self, omega, b, coef=None):
        """F[i, k] = f_k(x_i).  ``coef`` (d, K-1) overrides omega for linear problems."""
        if coef is not None:
            return self.X @ coef + b
        return self.gram @ omega + b

    def slacks(self, F):
        """Hinge slacks xi = (1 - y * f)_+ at decision values F."""
        return np.maximum(0.0, 1.0 - self.signs * F)

    def penalty_value(self, omega, coef=None):
        """sum_k 1/2 omega_k' K omega_k (l2) or sum_k ||omega_k||_1 (l1); on w when linear."""
        if self.penalty == "l1":
            return float(np.abs(coef).sum() if coef is not None else np.abs(omega).sum())
        if coef is not None:
            return 0.5 * float(np.sum(coef * coef))
        return 0.5 * float(np.sum(omega * (self.gram @ omega)))

    def objective(self, omega, b, coef=None):
        """Primal objective: penalty + C * sum_{k,i} c_{i,k} xi_{k,i}."""
        F = self.decision_values(omega, b, coef)
        slacks = self.slacks(F)
        if self.hinge_weights is None:
            return self.penalty_value(omega, coef) + self.C * float(slacks.sum())
        return self.penalty_value(omega, coef) + float(np.sum(self.upper_bounds * slacks))

    def noncrossing_violation(self, omega, b, coef=None):
        """Largest violation of this method's noncrossing constraints (0 when feasible).

        Returns
        -------
        float
            max over constraints of the amount by which they fail, in the
            units of the constrained quantity (decision values or omega).
        """
        if self.method == "bsvm" or self.n_boundaries < 2:
            return 0.0
        F = self.decision_values(omega, b, coef)
        if self.method == "nordic2":
            # Crossing at x_i between k and k+1 means f_k < 0 and f_{k+1} > 0;
            # the violation is how far the nearer of the two is from fixing it.
            both = np.minimum(np.maximum(0.0, -F[:, :-1]), np.maximum(0.0, F[:, 1:]))
            return float(both.max())
        db = np.maximum(0.0, b[1:] - b[:-1])
        if self.method == "nordic0":
            dw = np.maximum(0.0, omega[:, 1:] - omega[:, :-1])
            return float(max(db.max(), dw.max()))
        if self.noncrossing == "joint":
            return float(np.maximum(0.0, F[:, 1:] - F[:, :-1]).max())
        G = F - b  # K omega (or X w)
        return float(max(db.max(), np.maximum(0.0, G[:, 1:] - G[:, :-1]).max()))

    def training_crossings(self, omega, b, coef=None):
        """Number of training rows whose sign sequence over k is not non-increasing."""
        return int(count_crossings(self.decision_values(omega, b, coef)).sum())
