"""Support vector ordinal regression of Chu and Keerthi (2005).

Chu, W. and Keerthi, S. S. (2005). New approaches to support vector ordinal
regression.  *Proceedings of ICML 2005*, 145-152; journal version: Support
vector ordinal regression, *Neural Computation* 19 (2007), 792-815.

One function ``f(x) = w' phi(x)`` and K-1 thresholds ``b_1 <= ... <= b_{K-1}``
(parallel boundaries ``f(x) = b_k``); class ``= 1 + #{k : f(x) >= b_k}``.  The
primal is

    min  1/2 ||w||^2 + C sum_(i,k) in P  xi_ik
    s.t. y_i^(k) (f(x_i) - b_k) >= 1 - xi_ik,  xi_ik >= 0,  b_1 <= ... <= b_{K-1},

with ``y_i^(k) = -1`` if ``y_i <= k`` and ``+1`` otherwise (Section 2.2 of the
NORDIC paper) and the pair set P chosen by ``constraints``:

* ``"explicit"`` (SVOR-EXC): threshold k sees only classes k and k+1, and the
  ordering of the thresholds is an explicit constraint;
* ``"implicit"`` (SVOR-IMC): threshold k sees every observation; Chu and
  Keerthi show the optimal thresholds are then ordered automatically, so the
  ordering constraint does not change the optimum.

Dual (derived with multipliers ``alpha`` for the margins and ``mu >= 0`` for
the ordering).  With ``A`` the ``n x |P|`` matrix ``A[i, (i,k)] = y_i^(k)``,
``a = A alpha`` and ``s_k = sum_i y_i^(k) alpha_ik``,

    min  1/2 alpha' A' K A alpha - 1' alpha,   0 <= alpha <= C,
    implicit:  s_k = 0 for every k;
    explicit:  sum_k s_k = 0  and  sum_{l > k} s_l >= 0  (k = 1..K-2),

and ``w = sum_i a_i phi(x_i)``.  It is solved by PIQP's dense interior point
(the box as variable bounds) or with quadprog (a relative ridge ``rho`` plus
proximal-point refinements that remove its bias: the one loop of
:func:`nordicstats.solvers.proximal.solve_proximal_quadprog`); the thresholds then
solve the primal LP with ``w`` fixed (HiGHS), which also enforces their order.
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import linprog

from nordicstats.compare.base import CompetitorModel, CompetitorResults, KernelSpec
from nordicstats.exceptions import SolverError, missing_dependency
from nordicstats.solvers.proximal import solve_proximal_quadprog

__all__ = ["ChuKeerthi", "ChuKeerthiResults", "pair_set"]

_CONSTRAINTS = ("explicit", "implicit")


def pair_set(codes, n_levels, constraints="explicit"):
    """Observation/threshold pairs entering the primal.

    Parameters
    ----------
    codes : ndarray of int, shape (n,)
        Level codes 0..K-1.
    n_levels : int
    constraints : {"explicit", "implicit"}

    Returns
    -------
    obs, thr : ndarray of int
        Observation index and threshold index (0-based) of every pair.
    signs : ndarray of float
        ``y_i^(k)``: +1 above threshold k, -1 at or below.

    Examples
    --------
    >>> obs, thr, sg = pair_set(np.array([0, 1, 2]), 3)
    >>> obs.tolist(), thr.tolist(), sg.tolist()
    ([0, 1, 1, 2], [0, 0, 1, 1], [-1.0, 1.0, -1.0, 1.0])
    """
    n = codes.size
    obs = np.tile(np.arange(n), n_levels - 1)
    thr = np.repeat(np.arange(n_levels - 1), n)
    if constraints == "explicit":
        keep = (codes[obs] == thr) | (codes[obs] == thr + 1)
        obs, thr = obs[keep], thr[keep]
    signs = np.where(codes[obs] > thr, 1.0, -1.0)
    return obs, thr, signs


class ChuKeerthi(CompetitorModel):
    """Support vector ordinal regression with parallel boundaries (Chu & Keerthi 2005).

    Parameters
    ----------
    endog : array-like of shape (n,)
    exog : array-like of shape (n, d)
    kernel : {"rbf", "linear", "poly"} or callable, default="rbf"
    C : float, default=1.0
    gamma : float, optional
        Default: the paper's median pairwise-distance rule.
    degree : int, default=3
    coef0 : float, default=1.0
    constraints : {"explicit", "implicit"}, default="explicit"
        SVOR-EXC (adjacent classes per threshold, explicit ordering) or
        SVOR-IMC (all observations per threshold).
    ridge : float, default=1e-7
        Relative ridge for quadprog (times the mean diagonal of the dual Hessian).
    refinements : int, default=1
        Proximal-point steps removing the ridge's bias (each is a full quadprog
        solve; with the default ridge the objective already agreed with an
        independent primal solve to ~1e-9 relative without them).
    solver : {"auto", "piqp", "quadprog"}, default="auto"
        Dual solver: PIQP's dense interior point (box constraints native; "auto"
        when PIQP is installed) or quadprog (box constraints as 2m general rows,
        ridge and refinements; several times slower at n in the hundreds).
    order : sequence, optional

    Notes
    -----
    The dense dual has about ``n`` (explicit, K = 3: ``n + n_2``) to ``n (K-1)``
    (implicit) variables and quadprog costs O(size^3): keep n in the hundreds.

    Examples
    --------
    >>> from nordicstats.datasets import make_nonlinear
    >>> X, y = make_nonlinear(60, d=3, random_state=0)
    >>> res = ChuKeerthi(y, X, gamma=0.5).fit()
    >>> bool(np.all(np.diff(res.thresholds.to_numpy()) >= 0))
    True
    """

    def __init__(self, endog, exog, kernel="rbf", C=1.0, gamma=None, degree=3, coef0=1.0,
                 constraints="explicit", ridge=1e-7, refinements=1, solver="auto", order=None):
        super().__init__(endog, exog, order=order)
        self.spec = KernelSpec("ChuKeerthi", self.exog, kernel, C, gamma, degree, coef0)
        if constraints not in _CONSTRAINTS:
            raise ValueError(f"The 'constraints' parameter of ChuKeerthi must be one of "
                             f"{list(_CONSTRAINTS)}. Got {constraints!r} instead.")
        self.constraints = constraints
        if not (isinstance(ridge, (int, float)) and 0 < ridge < 1):
            raise ValueError(f"The 'ridge' parameter of ChuKeerthi must be a float in (0, 1). "
                             f"Got {ridge!r} instead.")
        self.ridge = float(ridge)
        self.refinements = int(refinements)
        self.solver = _check_solver(solver)

    def fit(self):
        """Solve the dual (PIQP or quadprog), then the thresholds by LP.

        Returns
        -------
        ChuKeerthiResults
        """
        start = time.perf_counter()
        gram = self.spec.kernel(self.exog, self.exog)
        obs, thr, signs = pair_set(self.response.codes, self.n_levels, self.constraints)
        alpha, iterations, rho = self._solve_dual(gram, obs, thr, signs)
        a = np.bincount(obs, weights=signs * alpha, minlength=self.nobs)
        f = gram @ a
        b = _fit_thresholds(f, obs, thr, signs, self.n_levels - 1)
        slack = np.maximum(0.0, 1.0 - signs * (f[obs] - b[thr]))
        quad = 0.5 * float(a @ f)
        info = {"objective": quad + self.spec.C * float(slack.sum()),
                "dual_objective": float(alpha.sum()) - quad, "iterations": iterations,
                "ridge": rho, "alpha": alpha, "pairs": (obs, thr, signs)}
        return ChuKeerthiResults(self, a, b, info, time.perf_counter() - start)

    def _solve_dual(self, gram, obs, thr, signs):
        m, C = obs.size, self.spec.C
        H = np.outer(signs, signs) * gram[np.ix_(obs, obs)]
        rho = self.ridge * max(float(np.mean(np.diag(H))), 1e-12)
        E, n_eq = self._sum_constraints(thr, signs)
        if self.solver == "piqp":
            alpha, iterations = _dual_by_piqp(H, E, n_eq, C)
            return alpha, iterations, 0.0
        return (*_dual_by_quadprog(H + rho * np.eye(m), E, n_eq, C, rho, self.refinements),
                rho)

    def _sum_constraints(self, thr, signs):
        """Columns of the constraint matrix on s_k: equalities first (quadprog's meq)."""
        m_thr = self.n_levels - 1
        S = np.zeros((thr.size, m_thr))
        S[np.arange(thr.size), thr] = signs  # column k: coefficients of s_k
        if self.constraints == "implicit":
            return S, m_thr
        tails = np.cumsum(S[:, ::-1], axis=1)[:, ::-1]  # column k: sum_{l >= k} s_l
        return tails, 1  # column 0: sum of all s_k = 0; columns 1..: tail sums >= 0


def _check_solver(solver):
    if solver not in ("auto", "piqp", "quadprog"):
        raise ValueError(f"The 'solver' parameter of ChuKeerthi must be 'auto', 'piqp' or "
                         f"'quadprog'. Got {solver!r} instead.")
    if solver == "auto":
        return "piqp" if importlib.util.find_spec("piqp") is not None else "quadprog"
    if solver == "piqp" and importlib.util.find_spec("piqp") is None:
        raise missing_dependency("piqp", "fast", "ChuKeerthi(solver='piqp')")
    return solver


def _dual_by_piqp(H, E, n_eq, C):
    """The dual by PIQP's dense interior point: box 0 <= alpha <= C as variable bounds.

    The box is handled natively (not as 2m general rows as quadprog needs), so a
    solve costs a few dense m x m factorisations; no ridge is needed.
    """
    import piqp  # optional (the "fast" extra): loaded only when chosen

    m = H.shape[0]
    solver = piqp.DenseSolver()
    solver.settings.eps_abs = solver.settings.eps_rel = 1e-10
    solver.settings.max_iter = 500
    A, G = E[:, :n_eq].T, E[:, n_eq:].T
    solver.setup(np.asfortranarray(H), -np.ones(m), np.asfortranarray(A), np.zeros(n_eq),
                 np.asfortranarray(G) if G.shape[0] else None,
                 np.zeros(G.shape[0]) if G.shape[0] else None,
                 np.full(G.shape[0], np.inf) if G.shape[0] else None,
                 np.zeros(m), np.full(m, C))
    status = solver.solve()
    if status != piqp.PIQP_SOLVED:
        raise SolverError(f"PIQP did not solve the Chu-Keerthi dual: status {status}. Try "
                          "solver='quadprog'.", solver="piqp", status=str(status))
    return np.clip(solver.result.x, 0.0, C), int(solver.result.info.iter)


def _dual_by_quadprog(G, E, n_eq, C, rho, refinements):
    """The dual by quadprog with ridge ``rho`` and proximal-point refinements (box as 2m rows)."""
    m = G.shape[0]
    Cmat = np.hstack([E, np.eye(m), -np.eye(m)])
    bvec = np.concatenate([np.zeros(E.shape[1]), np.zeros(m), -C * np.ones(m)])
    x, iterations, _ = solve_proximal_quadprog(
        G, np.ones(m), Cmat, bvec, n_eq, rho, refinements, C,
        problem_name="the Chu-Keerthi dual", ridge_hint="e.g. ridge=1e-5")
    return np.clip(x, 0.0, C), iterations


def _fit_thresholds(f, obs, thr, signs, m_thr):
    """Thresholds minimising the total hinge with f fixed, subject to b_1 <= ... <= b_{K-1}.

    LP in (b, xi): min sum xi  s.t.  y b_k - xi <= y f_i - 1,  xi >= 0,  b_k - b_{k+1} <= 0.
    """
    m = obs.size
    rows = np.arange(m)
    A_margin = sparse.hstack([sparse.csr_matrix((signs, (rows, thr)), shape=(m, m_thr)),
                              -sparse.identity(m)])
    order = sparse.lil_matrix((max(m_thr - 1, 0), m_thr + m))
    for k in range(m_thr - 1):
        order[k, k], order[k, k + 1] = 1.0, -1.0
    A_ub = sparse.vstack([A_margin, order.tocsr()]).tocsc()
    b_ub = np.concatenate([signs * f[obs] - 1.0, np.zeros(m_thr - 1)])
    cost = np.concatenate([np.zeros(m_thr), np.ones(m)])
    bounds = [(None, None)] * m_thr + [(0, None)] * m
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if res.status != 0:
        raise SolverError(f"the threshold LP failed: {res.message}", solver="highs",
                          status=res.message)
    return res.x[:m_thr]


class ChuKeerthiResults(CompetitorResults):
    """Fitted :class:`ChuKeerthi`.

    Attributes
    ----------
    dual_coef : ndarray of shape (n,)
        ``a_i = sum_k y_i^(k) alpha_ik``; ``f(x) = sum_i a_i k(x_i, x)``.
    thresholds : pandas.Series
        ``b_1 <= ... <= b_{K-1}``, named ``"a|b"``.
    objective : float
        Primal objective at the solution.
    dual_objective : float
        Dual objective; ``objective - dual_objective`` is the duality gap.
    alpha : ndarray
        Dual variables of the pairs in ``pairs = (obs, thr, signs)``.
    """

    method_name = "SVOR (Chu & Keerthi 2005)"

    def __init__(self, model, dual_coef, thresholds, info, fit_time):
        super().__init__(model, fit_time)
        self.dual_coef = dual_coef
        self.thresholds = pd.Series(thresholds, index=model.boundary_names, name="threshold")
        self.objective = info["objective"]
        self.dual_objective = info["dual_objective"]
        self.alpha = info["alpha"]
        self.pairs = info["pairs"]
        self.iterations = info["iterations"]
        self.ridge = info["ridge"]

    @property
    def gap(self):
        """Relative duality gap ``(primal - dual) / max(1, |primal|)``."""
        return (self.objective - self.dual_objective) / max(1.0, abs(self.objective))

    def score(self, X=None):
        """``f(x) = sum_i a_i k(x_i, x)``, ndarray (m,)."""
        X = self.model.check_new_exog(X)
        return self.model.spec.kernel(X, self.model.exog) @ self.dual_coef

    def _decision(self, values):
        """``f(x) - b_k``, ndarray (m, K-1); never crossing because ``b`` is ordered."""
        return self.score(values)[:, None] - self.thresholds.to_numpy()[None, :]

    @property
    def coef(self):
        """Linear kernel only: ``w = X' a`` as a Series."""
        if self.model.spec.kernel.name != "linear":
            raise AttributeError("coef is defined for kernel='linear' only; use dual_coef.")
        return pd.Series(self.model.exog.T @ self.dual_coef, index=self.model.exog_names)

    @property
    def params(self):
        """Linear kernel only: ``w`` then the thresholds, one Series."""
        return pd.concat([self.coef, self.thresholds]).rename("params")

    def _summary_parts(self):
        spec = self.model.spec
        left = [("Kernel:", spec.kernel.describe()), ("C:", spec.C),
                ("Constraints:", self.model.constraints)]
        right = [("Objective:", f"{self.objective:.6g}"), ("Duality gap:", f"{self.gap:.2e}"),
                 ("Support vectors:", int(np.count_nonzero(np.abs(self.dual_coef) > 1e-10)))]
        tables = [self.thresholds.to_frame()]
        if spec.kernel.name == "linear":
            tables.insert(0, self.coef.rename("coef").to_frame())
        notes = ["f(x) = w'phi(x); class = 1 + #{k : f(x) >= b_k}."]
        return left, right, tables, notes
