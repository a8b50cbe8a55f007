"""NORDIC-2 (paper, Section 4) as a mixed-integer program solved with SCIP.

NORDIC-2 drops the ordering of the decision functions and asks only that their
signs never cross at a training point (eqs. cond1-cond2): for every i and
k = 1, ..., K-2 at least one of

    (i)  f_k(x_i) >= 0          (ii)  f_{k+1}(x_i) <= 0

holds.  With hinge slacks xi and the l1 penalty the problem is

    min  sum_k ||omega_k||_1 + C sum_{k,i} c_{i,k} xi_{k,i}
    s.t. y_i^(k) f_k(x_i) + xi_{k,i} >= 1,  xi >= 0,  (i) or (ii) for all i, k,

with f_k = K omega_k + b_k and c the hinge weights (``problem.upper_bounds`` = C c,
c = 1 unweighted); ``penalty="l2"`` replaces the l1 norm by
1/2 omega_k' K omega_k (a mixed-integer QP, the extension the paper anticipates)
and linear problems (``problem.X`` given) put the penalty on w_k.

How it is solved
----------------
Every case is written as ``f_k = Z theta_k + b_k`` with a penalty on theta: Z = K
(kernel, l1), Z = X (linear), or Z = L with K = L L' (kernel, l2: then
omega' K omega = ||theta||^2 and omega = U Lambda^{-1/2} theta).

1. For l1 the relaxation without the logical constraints splits into K-1
   independent L1-SVM LPs (HiGHS; :class:`RelaxationPath` keeps them along a C grid
   and restarts from the previous basis).  Its optimum is a lower bound,
   and when it has no training crossings it is already NORDIC-2's optimum.
2. A feasible start for SCIP: the constant classifiers omega = 0, b_k = +-1 by
   majority, always feasible (the class shares P(y > k) decrease in k, so b is
   monotone); on request the relaxation with its crossings repaired (each row's
   signs fixed to the cheapest monotone pattern, again K-1 LPs) or NORDIC-1.
3. SCIP solves the full model, built with matrix calls, with the disjunctions
   ``f_k >= 0 or f_{k+1} <= -delta`` as SCIP disjunction constraints (default),
   indicator constraints, or big-M rows with the proven M below.  Over the 13
   SCIP solves of benchmarks/bench_nordic2.py (n = 100-400, K = 3, 5) indicators
   took a median 4.3x (2.6x to over 14x) and big-M 6.1x (3.9-9.8x) the CPU time
   of disjunctions.  Big-M is also numerically weak: the proven M is in the
   thousands, and M times SCIP's integrality tolerance let 2 of those 13
   "solutions" cross (by up to 0.7) at a training point; such solutions are
   refitted on their sign pattern with a warning and an honest gap, never returned.

``delta`` (:data:`SIGN_MARGIN`, 1e-7) makes side (ii) strict.  The closed form
f_{k+1} <= 0 admits f_k < 0 = f_{k+1}, a crossing for the prediction rule
(class = #{k: f_k >= 0}), and for K >= 4 even f = (-1, 0, 1) at one point, which
satisfies both of the paper's disjunctions; LP vertices put values exactly at 0
often.  With delta the feasible signs are exactly (+, ..., +, -, ..., -) per row,
and the optimum moves by O(C n delta).
Leftover rounding on side (i) (f_k = -1e-12) is removed by raising b_k by at most
:data:`_POLISH_TOL`, so returned solutions have no training crossings.

Valid bounds (used by the big-M rows and as variable bounds everywhere)
-----------------------------------------------------------------------
Let U be the objective of a feasible point.  At an optimum the penalty is at
most U, so ``|Z_i theta_k| <= G`` with ``G = max|Z| U`` (l1: Hoelder) or
G = max_i ||Z_i|| sqrt(2U) (l2: Cauchy-Schwarz).  If b_k > G + 1 then every
f_k(x_i) >= 1: lowering b_k to G + 1 keeps every f_k(x_i) >= 1, so no sign and
no logical constraint changes, the positive slacks stay 0 and the negative ones
shrink; the objective strictly falls.  Symmetrically for b_k < -(G + 1).  Hence
every optimum has ``|b_k| <= G + 1`` and ``|f_k(x_i)| <= M = 2G + 1``.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from nordicstats.class_rule import count_crossings
from nordicstats.exceptions import (
    ConvergenceWarning,
    SolverError,
    SolverLimitWarning,
    missing_dependency,
)
from nordicstats.solvers.certificate import certify_mip
from nordicstats.solvers.choice import sparse_primal_pays
from nordicstats.solvers.decomposition import solve_dual_decomposition
from nordicstats.solvers.l1svm_lp import HIGHS_OPTIONS, BoundaryLP, SignRowPoints
from nordicstats.solvers.lazy_mip import branch_on_crossings
from nordicstats.solvers.linear_primal import solve_linear_primal
from nordicstats.solvers.problem import NordicProblem
from nordicstats.solvers.result import SolverResult

__all__ = ["solve_nordic2_scip", "RelaxationPath", "FORMULATIONS", "WARM_STARTS", "SIGN_MARGIN"]

FORMULATIONS = ("lazy", "disjunction", "indicator", "bigm")
WARM_STARTS = (True, False, "repair", "nordic1")
SIGN_MARGIN = 1e-7
# Nodes of the branch and bound on the crossings before SCIP takes over (formulation="lazy").
LAZY_MAX_NODES = 500
# Pairs evaluated per node by strong branching (1: branch on the deepest crossing).  Four
# nearly halved the nodes (overlap, n = 1,000, K = 7, C = 2^4: 114 against 207) but not
# the LP solves or the CPU time (docs/notes/scaling.md, "Fewer nodes and cheaper re-solves").
LAZY_CANDIDATES = 1
# SCIP's feasibility tolerance; well below SIGN_MARGIN so that side (ii) stays negative.
_FEASTOL = 1e-9
# Largest crossing treated as rounding and removed by shifting an intercept.
_POLISH_TOL = 1e-6
# Relative eigenvalue cut-off for the factor K = L L' (kernel l2).
_EIG_TOL = 1e-10
_STATUS = {"optimal": "optimal", "gaplimit": "gap_limit", "timelimit": "time_limit",
           "nodelimit": "node_limit", "totalnodelimit": "node_limit",
           "stallnodelimit": "node_limit", "memlimit": "memory_limit",
           "sollimit": "solution_limit", "bestsollimit": "solution_limit",
           "userinterrupt": "interrupted", "restartlimit": "restart_limit"}


def solve_nordic2_scip(problem, time_limit=None, mip_gap=1e-6, threads=1,
                       formulation="lazy", warm_start=True, verbose=False,
                       relaxation=None):
    """Solve NORDIC-2 (paper, Section 4, eqs. cond1-cond2) exactly with SCIP.

    .. math::

        \\min \\sum_k \\|\\omega_k\\|_1 + C \\sum_{k,i} \\xi_{k,i}
        \\quad \\text{s.t. } y_i^{(k)} f_k(x_i) \\ge 1 - \\xi_{k,i},\\; \\xi \\ge 0,\\;
        f_k(x_i) \\ge 0 \\,\\vee\\, f_{k+1}(x_i) \\le 0

    (``penalty="l2"``: :math:`\\tfrac12 \\omega_k' K \\omega_k`; linear problems
    penalise :math:`w_k`).  See the module docstring for the algorithm and the
    proof of the variable bounds.

    Parameters
    ----------
    problem : NordicProblem
        ``method="nordic2"``, ``penalty`` ``"l1"`` or ``"l2"``.
    time_limit : float, optional
        Wall-clock seconds for the whole fit; ``None`` for no limit.
    mip_gap : float, default=1e-6
        Relative gap ``|primal - dual| / min(|primal|, |dual|)`` at which SCIP stops.
    threads : int, default=1
        ``1`` runs SCIP's deterministic sequential solver; more threads run its
        concurrent solver (``solveConcurrent``), whose path may vary between runs.
    formulation : {"lazy", "disjunction", "indicator", "bigm"}, default="lazy"
        How the logical constraints are handled.  ``"lazy"`` (l1 only; l2 problems
        use ``"disjunction"``): branch and bound on the disjunctions that the
        relaxation breaks, over warm-started L1-SVM LPs
        (:mod:`nordicstats.solvers.lazy_mip`); after ``LAZY_MAX_NODES`` nodes SCIP
        takes over with disjunctions, the best point as its start.  The others hand
        SCIP all n(K-2) disjunctions: disjunction constraints were the fastest in
        ``benchmarks/bench_nordic2.py``; ``"bigm"`` uses the proven M.
    warm_start : {True, False, "repair", "nordic1"}, default=True
        Feasible point handed to SCIP.  ``True``: the constant classifiers (free);
        ``"repair"``: the relaxation with its crossings repaired (l1; K-1 more LPs);
        ``"nordic1"``: the joint-form NORDIC-1 solution.  The better starts cost
        more than they saved SCIP ("repair" took a median 1.16x, 0.92-1.56x, the
        CPU time in ``benchmarks/bench_nordic2.py``, as
        ``docs/notes/solvers.md`` records for NORDIC-1); they pay off
        when a time limit may stop SCIP early.
    verbose : bool, default=False
        Print SCIP's log.
    relaxation : RelaxationPath, optional
        The relaxation LPs of this problem's ``Z`` and signs kept from a solve
        at another ``C`` (tuning along the C grid): HiGHS restarts from the
        previous optimal basis instead of solving from scratch.

    Returns
    -------
    SolverResult
        ``status`` is ``"optimal"``, ``"gap_limit"`` (stopped at ``mip_gap``) or
        a limit (``"time_limit"``, ...), ``message`` SCIP's status text,
        ``iterations`` the branch-and-bound nodes, ``primal_bound``/``dual_bound``/
        ``gap`` the bounds (the dual bound also uses the relaxation), ``objective``
        and ``max_violation`` recomputed by ``problem``.

    Raises
    ------
    MissingDependencyError
        pyscipopt is not installed (``pip install 'nordicstats[milp]'``).
    SolverError
        SCIP reports infeasible/unbounded or fails; ``status`` keeps its text.

    Warns
    -----
    SolverLimitWarning
        A time, node or memory limit stopped SCIP; the best solution is returned
        and the warning states the gap.

    Examples
    --------
    >>> from nordicstats.data import binary_signs
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> P = NordicProblem(X @ X.T, binary_signs(np.array([0, 1, 1, 2]), 3), 1.0,
    ...                   method="nordic2", penalty="l1", X=X)
    >>> res = solve_nordic2_scip(P)
    >>> res.status, res.max_violation, P.training_crossings(None, res.intercept, res.coef)
    ('optimal', 0.0, 0)
    """
    _check_options(problem, time_limit, mip_gap, threads, formulation, warm_start, verbose)
    if relaxation is not None and not isinstance(relaxation, RelaxationPath):
        raise ValueError(f"The 'relaxation' option of the SCIP solver must be a RelaxationPath "
                         f"or None. Got {type(relaxation).__name__} instead.")
    scip = _import_scip()
    start = time.perf_counter()
    design = _Design.from_problem(problem)
    relaxed = _relaxation(problem, design, relaxation) if design.l1 else None
    if relaxed is not None and not count_crossings(design.values(*relaxed[:2])).any():
        return _remember(relaxation, design,
                         _relaxation_result(problem, design, relaxed, formulation, start))
    candidates = _starting_points(problem, design, relaxed, warm_start)
    if warm_start and relaxation is not None and relaxation.incumbent is not None:
        # NORDIC-2's solution at the previous C is feasible at this C (C is only a weight)
        previous = _point(problem, design, *relaxation.incumbent, "NORDIC-2 at the previous C")
        if previous.objective < min(c.objective for c in candidates):
            candidates.append(previous)
    remaining = None if time_limit is None else time_limit - (time.perf_counter() - start)
    if remaining is not None and remaining <= 0:
        return _finish(problem, design, candidates, None, relaxed, formulation, start,
                       "time_limit", "time limit reached before SCIP started", {"nodes": 0})
    lazy_bound, formulation = None, _scip_formulation(formulation, design)
    if formulation == "lazy":
        lazy = _branch(problem, design, relaxed, candidates, mip_gap, remaining)
        if lazy.status != "node_limit":
            return _remember(relaxation, design, _finish(
                problem, design, candidates, lazy.bound, relaxed, "lazy", start, lazy.status,
                _LAZY_MESSAGES[lazy.status], {"nodes": lazy.nodes, "lp_solves": lazy.lp_solves}))
        lazy_bound, formulation = lazy.bound, "disjunction"
        remaining = None if time_limit is None else time_limit - (time.perf_counter() - start)
        if remaining is not None and remaining <= 0:
            return _remember(relaxation, design, _finish(
                problem, design, candidates, lazy_bound, relaxed, "lazy", start, "time_limit",
                _LAZY_MESSAGES["time_limit"], {"nodes": lazy.nodes}))
    model, handles = _build_model(scip, problem, design, formulation,
                                  min(c.objective for c in candidates))
    _set_parameters(model, remaining, mip_gap, threads, verbose)
    accepted = bool(warm_start) and _add_start(model, handles, design, problem, candidates[-1])
    try:
        if threads > 1:
            model.solveConcurrent()
        else:
            model.optimize()
    except Exception as exc:  # pyscipopt raises plain Exceptions for SCIP error codes
        raise SolverError(f"SCIP failed while solving NORDIC-2: {exc}", solver="scip",
                          status=model.getStatus()) from exc
    return _remember(relaxation, design, _collect(model, handles, problem, design, candidates,
                                                  relaxed, formulation, start, accepted,
                                                  lazy_bound))


_LAZY_MESSAGES = {
    "optimal": "optimal (branch and bound on the crossings of the relaxation; no open node)",
    "gap_limit": "gap limit reached (branch and bound on the crossings of the relaxation)",
    "time_limit": "time limit reached in the branch and bound on the crossings",
}


def _scip_formulation(formulation, design):
    """"lazy" needs the LPs of the l1 problem; l2 problems go to SCIP's disjunctions."""
    return "disjunction" if formulation == "lazy" and not design.l1 else formulation


def _branch(problem, design, relaxed, candidates, mip_gap, remaining):
    """Branch and bound on the relaxation's crossings; its point joins ``candidates``."""
    lazy = branch_on_crossings(relaxed[3].lps, design.Z, SIGN_MARGIN,
                               min(c.objective for c in candidates), mip_gap=mip_gap,
                               time_limit=remaining, max_nodes=LAZY_MAX_NODES,
                               candidates=LAZY_CANDIDATES)
    if lazy.theta is not None:
        b = _polish(problem, design, lazy.theta, lazy.b)
        if b is not None:
            candidates.append(_point(problem, design, lazy.theta, b,
                                     "branch and bound on the crossings"))
    return lazy


def _remember(relaxation, design, result):
    """Keep the solution in the path: a feasible start for the next C."""
    if relaxation is not None:
        relaxation.incumbent = (design.theta_from(result.dual_coef, result.coef),
                                np.array(result.intercept, dtype=float))
    return result


# --- options ----------------------------------------------------------------------------------
def _check_options(problem, time_limit, mip_gap, threads, formulation, warm_start, verbose):
    if not isinstance(problem, NordicProblem) or problem.method != "nordic2":
        raise ValueError("solve_nordic2_scip needs a NordicProblem with method='nordic2'. "
                         f"Got {getattr(problem, 'method', type(problem).__name__)!r}.")
    if problem.penalty not in ("l1", "l2"):
        raise ValueError(f"NORDIC-2's penalty must be 'l1' or 'l2'. Got {problem.penalty!r}.")
    if time_limit is not None and not _finite_positive(time_limit):
        raise ValueError("The 'time_limit' option of the SCIP solver must be None or a float in "
                         f"(0, inf) seconds. Got {time_limit!r} instead.")
    if isinstance(mip_gap, bool) or not _is_real(mip_gap) or not 0.0 <= mip_gap < 1.0:
        raise ValueError("The 'mip_gap' option of the SCIP solver must be a float in [0, 1). "
                         f"Got {mip_gap!r} instead.")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError("The 'threads' option of the SCIP solver must be an int >= 1. "
                         f"Got {threads!r} instead.")
    if formulation not in FORMULATIONS:
        raise ValueError(f"The 'formulation' option of the SCIP solver must be one of "
                         f"{list(FORMULATIONS)}. Got {formulation!r} instead.")
    if not any(warm_start is w for w in WARM_STARTS[:2]) and warm_start not in WARM_STARTS[2:]:
        raise ValueError("The 'warm_start' option of the SCIP solver must be True, False, "
                         f"'repair' or 'nordic1'. Got {warm_start!r} instead.")
    if not isinstance(verbose, (bool, np.bool_)):
        raise ValueError("The 'verbose' option of the SCIP solver must be a bool. "
                         f"Got {verbose!r} instead.")


def _is_real(value):
    return isinstance(value, (int, float, np.integer, np.floating))


def _finite_positive(value):
    return not isinstance(value, bool) and _is_real(value) and np.isfinite(value) and value > 0


def _import_scip():
    try:
        import pyscipopt
    except ImportError as exc:
        raise missing_dependency("pyscipopt", "milp", "method='nordic2'") from exc
    return pyscipopt


# --- the common linear form f_k = Z theta_k + b_k ---------------------------------------------
@dataclass(frozen=True)
class _Design:
    """Z, the penalty on theta and the map back to (omega, coef)."""

    Z: np.ndarray
    l1: bool
    linear: bool
    basis: np.ndarray | None = None  # kernel l2: omega = basis @ theta

    @classmethod
    def from_problem(cls, problem):
        l1 = problem.penalty == "l1"
        if problem.is_linear:
            return cls(np.asarray(problem.X, dtype=float), l1, True)
        gram = np.asarray(problem.gram, dtype=float)
        if l1:
            return cls(gram, True, False)
        eigval, eigvec = np.linalg.eigh(0.5 * (gram + gram.T))
        keep = eigval > _EIG_TOL * max(eigval.max(), 0.0)
        if not keep.any():
            raise ValueError("The Gram matrix of NORDIC-2 has no positive eigenvalue; "
                             "check the kernel.")
        root = np.sqrt(eigval[keep])
        return cls(eigvec[:, keep] * root, False, False, eigvec[:, keep] / root)

    def values(self, theta, b):
        """F = Z theta + b."""
        return self.Z @ theta + b

    def coefficients(self, theta):
        """(omega, coef) for the problem's own parametrisation."""
        if self.linear:
            return None, theta
        return (theta if self.l1 else self.basis @ theta), None

    def theta_from(self, omega, coef):
        if self.linear:
            return np.asarray(coef, dtype=float)
        return np.asarray(omega, dtype=float) if self.l1 else self.Z.T @ omega

    def row_bound(self, upper):
        """G with |Z_i theta_k| <= G whenever the penalty is at most ``upper``."""
        if self.l1:
            return float(np.abs(self.Z).max() * upper)
        return float(np.sqrt((self.Z**2).sum(axis=1).max() * 2.0 * upper))


@dataclass(frozen=True)
class _Point:
    theta: np.ndarray
    b: np.ndarray
    objective: float
    origin: str


def _point(problem, design, theta, b, origin):
    theta, b = np.asarray(theta, dtype=float), np.array(b, dtype=float)
    omega, coef = design.coefficients(theta)
    return _Point(theta, b, problem.objective(omega, b, coef), origin)


# --- LPs of the l1 problem (HiGHS) ------------------------------------------------------------
def _boundary_lp(Z, y, C, signs=None, margin=0.0):
    """One L1-SVM LP, optionally with f(x_i) >= 0 (signs = +1) / <= -margin (-1).

    ``C`` is the slack cost of each row (array of length n: C c_{i,k}).

    Variables (theta+, theta-, b, xi); returns (theta, b) or None if infeasible.
    """
    n, m = Z.shape
    yZ = y[:, None] * Z
    rows = [sparse.hstack([-yZ, yZ, -y[:, None], -sparse.identity(n)])]
    rhs = [-np.ones(n)]
    if signs is not None:
        sZ = signs[:, None] * Z
        rows.append(sparse.hstack([-sZ, sZ, -signs[:, None], sparse.csr_matrix((n, n))]))
        rhs.append(np.where(signs > 0, 0.0, -margin))
    cost = np.concatenate([np.ones(2 * m), [0.0], np.broadcast_to(C, (n,))])
    bounds = [(0, None)] * (2 * m) + [(None, None)] + [(0, None)] * n
    lp = linprog(cost, A_ub=sparse.vstack(rows).tocsc(), b_ub=np.concatenate(rhs),
                 bounds=bounds, method="highs", options=HIGHS_OPTIONS)
    if lp.status == 2 and signs is not None:
        return None
    if lp.status != 0:
        raise SolverError(f"the L1-SVM relaxation LP failed: {lp.message}", solver="highs",
                          status=lp.message)
    return lp.x[:m] - lp.x[m:2 * m], lp.x[2 * m]


def _relaxation(problem, design, path=None):
    """K-1 independent L1-SVM LPs: (theta, b, lower bound, the RelaxationPath)."""
    if path is None:
        path = RelaxationPath(design.Z, problem.signs)
    elif not path.matches(design.Z, problem.signs):
        raise ValueError("The 'relaxation' option of the SCIP solver belongs to another problem "
                         "(other kernel matrix or classes); build it with "
                         "RelaxationPath.for_problem(problem).")
    theta, b = path.solve(problem.upper_bounds)
    return theta, b, _point(problem, design, theta, b, "relaxation").objective, path


class RelaxationPath:
    """The K-1 L1-SVM LPs of NORDIC-2's relaxation, kept in HiGHS along a C grid.

    Boundary k's LP in (theta+, theta-, b, xi) is

        min 1'(theta+ + theta-) + sum_i u_ik xi_i
        s.t. y^(k)_i (Z_i (theta+ - theta-) + b) + xi_i >= 1,  theta+-, xi >= 0,

    with u = ``problem.upper_bounds`` = C times the hinge weights, solved through its
    dual by cutting planes (:class:`~nordicstats.solvers.l1svm_lp.BoundaryLP`).  ``C``
    enters only the bounds mu <= u of the dual, so the optimal basis at one C stays dual
    feasible at the next and HiGHS's dual simplex restarts from it, with the rows already
    in.  Along the nine-point C grid 2^-4..2^4 at n = 1,000, K = 5 (``likert`` design of
    ``benchmarks/bench_scale.py``) the path took 2.2 s CPU against 3.6 s for nine
    independent paths, the same theta to 4e-11.  The path also keeps the last NORDIC-2
    solution (``incumbent``), which SCIP gets as its start at the next C when it
    beats the other starts: the constraints do not involve C, so it is feasible.
    """

    def __init__(self, Z, signs):
        self.Z, self.signs = np.asarray(Z, dtype=float), np.asarray(signs, dtype=float)
        self.incumbent = None  # (theta, b) of the last NORDIC-2 solution: feasible at any C
        points = SignRowPoints(self.Z)  # the margin path's arrays, one copy for the K-1 LPs
        self.lps = [BoundaryLP(self.Z, self.signs[:, k], points)
                    for k in range(self.signs.shape[1])]

    @classmethod
    def for_problem(cls, problem):
        """The path of an l1 kernel or linear NORDIC-2 problem (None for l2)."""
        design = _Design.from_problem(problem)
        return cls(design.Z, problem.signs) if design.l1 else None

    def matches(self, Z, signs):
        return (self.Z.shape == np.shape(Z) and self.signs.shape == np.shape(signs)
                and np.array_equal(self.Z, Z) and np.array_equal(self.signs, signs))

    def solve(self, upper_bounds):
        """(theta, b) of the K-1 LPs with slack costs ``upper_bounds`` (n, K-1), or a scalar C.

        theta has shape (p, K-1).
        """
        costs = np.broadcast_to(np.asarray(upper_bounds, dtype=float), self.signs.shape)
        solved = []
        for k, lp in enumerate(self.lps):
            # neighbouring boundaries share most support; not for an LP that starts at a
            # fraction of its costs (the cost path), where that support is not yet in
            if solved and not lp.columns and not lp.follows_cost_path(costs[:, k]):
                lp.add_columns(np.flatnonzero(solved[-1][0]))
            solved.append(lp.solve(costs[:, k]))
        return np.column_stack([s[0] for s in solved]), np.array([s[1] for s in solved])


def _monotone_signs(F, margin):
    """Per row the cheapest sign pattern (+,..,+,-,..,-) and its matrix of +-1.

    Pattern t makes f_1..f_t >= 0 and the rest <= -margin; its cost is the
    total amount by which the current values miss those signs.
    """
    n, m = F.shape
    up = np.concatenate([np.zeros((n, 1)), np.cumsum(np.maximum(0.0, -F), axis=1)], axis=1)
    down = np.maximum(0.0, F + margin)
    tail = np.concatenate([np.cumsum(down[:, ::-1], axis=1)[:, ::-1], np.zeros((n, 1))], axis=1)
    t = np.argmin(up + tail, axis=1)
    return np.where(np.arange(m)[None, :] < t[:, None], 1.0, -1.0)


def _repaired(problem, design, theta, b, origin):
    """Refit (theta, b) with each row's signs fixed to its cheapest crossing-free pattern.

    K-1 LPs; None if a pattern cannot be realised (e.g. a linear kernel).
    """
    signs = _monotone_signs(design.values(theta, b), 2 * SIGN_MARGIN)
    solved = []
    for k in range(problem.n_boundaries):
        out = _boundary_lp(design.Z, problem.signs[:, k], problem.upper_bounds[:, k], signs[:, k],
                           2 * SIGN_MARGIN)
        if out is None:
            return None
        solved.append(out)
    theta = np.column_stack([s[0] for s in solved])
    b = _polish(problem, design, theta, np.array([s[1] for s in solved]))
    return None if b is None else _point(problem, design, theta, b, origin)


def _constant_point(problem, design):
    """omega = 0 and the cheapest feasible constant signs b = (+1, .., +1, -1, .., -1).

    b_k = +1 costs 2 C c_ik on the rows with y^(k) = -1, b_k = -1 on those with +1.
    Unweighted, the shares of y^(k) = +1 decrease in k and this is the majority
    vote (ties to +1); with weights the pattern is chosen among the K monotone ones.
    """
    U = problem.upper_bounds
    neg = np.sum(U * (problem.signs < 0), axis=0)  # cost of b_k = +1 (halved)
    pos = np.sum(U * (problem.signs > 0), axis=0)  # cost of b_k = -1
    m = problem.n_boundaries
    total = [neg[:t].sum() + pos[t:].sum() for t in range(m + 1)]
    t = m - int(np.argmin(total[::-1]))  # the largest t among the cheapest
    b = np.where(np.arange(m) < t, 1.0, -1.0)
    return _point(problem, design, np.zeros((design.Z.shape[1], problem.n_boundaries)), b,
                  "constant classifiers")


def _nordic1_point(problem, design):
    """NORDIC-1 (joint form) on the same data, by the solver ``solver="auto"`` picks for it."""
    nordic1 = NordicProblem(problem.gram, problem.signs, problem.C, method="nordic1",
                            noncrossing="joint", penalty="l2", X=problem.X,
                            hinge_weights=problem.hinge_weights)
    solver = solve_linear_primal if sparse_primal_pays(nordic1) else solve_dual_decomposition
    res = solver(nordic1)
    theta = design.theta_from(res.dual_coef, res.coef)
    b = _polish(problem, design, theta, res.intercept)
    return None if b is None else _point(problem, design, theta, b, "NORDIC-1")


def _starting_points(problem, design, relaxed, warm_start):
    """Feasible points, the one handed to SCIP last."""
    points = [_constant_point(problem, design)]
    if warm_start == "nordic1":
        better = _nordic1_point(problem, design)
    elif warm_start == "repair" and relaxed is not None:
        better = _repaired(problem, design, relaxed[0], relaxed[1], "repaired relaxation")
    else:
        better = None
    if better is not None and better.objective < points[0].objective:
        points.append(better)
    return points


def _polish(problem, design, theta, b):
    """Raise intercepts by at most _POLISH_TOL to remove rounding-size crossings.

    Returns the new intercepts, or None when a crossing is larger than rounding.
    Pairs are visited from the last to the first: raising f_k cannot create a
    crossing at pair (k, k+1), and a new one at (k-1, k) is handled next.
    """
    b = np.array(b, dtype=float)
    omega, coef = design.coefficients(theta)
    F = problem.decision_values(omega, b, coef)
    for k in range(F.shape[1] - 2, -1, -1):
        bad = (F[:, k] < 0) & (F[:, k + 1] >= 0)
        if bad.any():
            shift = -F[bad, k].min()
            if shift > _POLISH_TOL:
                return None
            b[k] += shift + 1e-12
            F[:, k] += shift + 1e-12
    return b


# --- the SCIP model ---------------------------------------------------------------------------
def _build_model(scip, problem, design, formulation, upper):
    """Variables theta (or theta+-), b, F = Z theta + b, xi and the logical constraints.

    Built with matrix calls (dense products Z @ theta in pyscipopt's compiled code),
    not n^2 Python-level terms.
    """
    n, m, p = problem.n, problem.n_boundaries, design.Z.shape[1]
    # U: the best start's objective, widened because the starts are feasible only up to
    # their solvers' tolerances (HiGHS 1e-9, NORDIC-1 ~1e-6), which move the objective by
    # far less.  G, |b| <= G + 1 and |f| <= 2G + 1: module docstring.
    upper = upper * (1.0 + 1e-3) + 1.0
    G = design.row_bound(upper)
    b_bound, f_bound = G + 1.0, 2.0 * G + 1.0
    model = scip.Model("nordic2")
    h = {}
    if design.l1:  # omega = theta+ - theta-, each at most the penalty, so at most U
        h["tp"] = model.addMatrixVar((p, m), name="tp", lb=0.0, ub=upper, obj=1.0)
        h["tm"] = model.addMatrixVar((p, m), name="tm", lb=0.0, ub=upper, obj=1.0)
        parts = [(h["tp"], 1.0), (h["tm"], -1.0)]
    else:  # epigraph s_k >= ||theta_k||^2; |theta| <= sqrt(2U) at an optimum
        radius = float(np.sqrt(2.0 * upper))
        h["theta"] = model.addMatrixVar((p, m), name="theta", lb=-radius, ub=radius)
        h["s"] = model.addMatrixVar((p, m), name="s", lb=0.0, obj=0.5)
        model.addMatrixCons(h["s"] >= h["theta"] * h["theta"])
        parts = [(h["theta"], 1.0)]
    h["b"] = model.addMatrixVar(m, name="b", lb=-b_bound, ub=b_bound)
    h["F"] = model.addMatrixVar((n, m), name="f", lb=-f_bound, ub=f_bound)
    h["xi"] = model.addMatrixVar((n, m), name="xi", lb=0.0, obj=problem.upper_bounds)
    _add_value_rows(model, h, design.Z, parts)
    model.addMatrixCons(problem.signs * h["F"] + h["xi"] >= 1.0)
    if m > 1:
        _add_logic(model, h, formulation, f_bound)
    return model, h


def _add_value_rows(model, h, Z, parts):
    """The rows f_ik - sum_j Z_ij theta_jk - b_k = 0, theta = sum of sign * variables.

    Each row's expression is built from a dict of terms: a dense ``Z @ variables``
    on pyscipopt's object arrays took ~4x longer (0.6 s per model at n = 208).
    """
    from pyscipopt.scip import Expr, Term

    Z = np.asarray(Z, dtype=float)
    for k in range(h["F"].shape[1]):
        columns = [([Term(v) for v in variables[:, k]], sign) for variables, sign in parts]
        b_term = Term(h["b"][k])
        for i in range(Z.shape[0]):
            row = Z[i]
            terms = {}
            for keys, sign in columns:
                terms.update(zip(keys, (-sign * row).tolist(), strict=True))
            terms[Term(h["F"][i, k])] = 1.0
            terms[b_term] = -1.0
            model.addCons(Expr(terms) == 0.0)


def _add_logic(model, h, formulation, f_bound):
    """f_k(x_i) >= 0 or f_{k+1}(x_i) <= -delta for all i, k (z = 1 selects the second)."""
    first, second = h["F"][:, :-1], h["F"][:, 1:]
    if formulation == "disjunction":
        model.addMatrixConsDisjunction([first >= 0.0, second <= -SIGN_MARGIN])
        return
    h["z"] = z = model.addMatrixVar(first.shape, name="z", vtype="B")
    if formulation == "indicator":
        model.addMatrixConsIndicator(first >= 0.0, binvar=z, activeone=False)
        model.addMatrixConsIndicator(second <= -SIGN_MARGIN, binvar=z, activeone=True)
    else:  # |f| <= f_bound = M at every optimum (module docstring)
        model.addMatrixCons(first + f_bound * z >= 0.0)
        model.addMatrixCons(second + (f_bound + SIGN_MARGIN) * z <= f_bound)


def _set_parameters(model, remaining, mip_gap, threads, verbose):
    if not verbose:
        model.hideOutput()
    model.setParam("numerics/feastol", _FEASTOL)
    # The variables are continuous and unstructured: SCIP's symmetry detection found
    # nothing and cost ~15% of the solve at n = 400, K = 5 (benchmarks/bench_nordic2.py).
    model.setParam("misc/usesymmetry", 0)
    model.setParam("limits/gap", float(mip_gap))
    if remaining is not None:
        model.setParam("limits/time", float(remaining))
    if threads > 1:
        model.setParam("parallel/maxnthreads", int(threads))


def _add_start(model, h, design, problem, point):
    """Hand SCIP a feasible point: every variable's value, computed exactly from (theta, b)."""
    F = design.values(point.theta, point.b)
    values = {"b": point.b, "F": F, "xi": problem.slacks(F), "z": (F[:, :-1] < 0).astype(float)}
    if design.l1:
        values.update(tp=np.maximum(point.theta, 0.0), tm=np.maximum(-point.theta, 0.0))
    else:
        values.update(theta=point.theta, s=point.theta**2)
    sol = model.createSol()
    for name, variables in h.items():
        for var, value in zip(np.ravel(variables), np.ravel(values[name]), strict=True):
            model.setSolVal(sol, var, float(value))
    return model.addSol(sol)


def _collect(model, h, problem, design, candidates, relaxed, formulation, start, accepted,
             lazy_bound=None):
    text = model.getStatus()
    if text in ("infeasible", "unbounded", "inforunbd") or text not in _STATUS:
        raise SolverError(f"SCIP stopped with status {text!r} on NORDIC-2, which always has a "
                          "feasible bounded optimum; please report this with the data.",
                          solver="scip", status=text)
    points = list(candidates)
    if model.getNSols() > 0:
        theta = (model.getVal(h["tp"]) - model.getVal(h["tm"]) if design.l1
                 else model.getVal(h["theta"]))
        theta = np.asarray(theta, dtype=float).reshape(design.Z.shape[1], problem.n_boundaries)
        points.extend(_scip_point(problem, design, theta, model.getVal(h["b"]), text))
    info = {"nodes": model.getNNodes(), "lp_iterations": model.getNLPIterations(),
            "scip_primal_bound": model.getPrimalbound(), "warm_start_accepted": accepted}
    dual = model.getDualbound()
    if lazy_bound is not None:  # the branch and bound's bound before SCIP took over
        dual, info["lazy_bound"] = max(dual, lazy_bound), lazy_bound
    return _finish(problem, design, points, dual, relaxed, formulation, start,
                   _STATUS[text], text, info)


def _scip_point(problem, design, theta, b, text):
    """SCIP's solution as a crossing-free point (a list of zero or one points).

    Within SCIP's tolerances a big-M row with M * integrality tolerance ~ 1e-7
    can leave f_k(x_i) slightly negative while f_{k+1}(x_i) > 0; such a solution
    is refitted on its sign pattern (l1) or dropped, with a warning.
    """
    b = np.asarray(b, dtype=float)
    polished = _polish(problem, design, theta, b)
    if polished is not None:
        return [_point(problem, design, theta, polished, "scip")]
    refit = _repaired(problem, design, theta, b, "scip, refitted") if design.l1 else None
    warnings.warn(f"SCIP's solution ({text!r}) crosses at a training point beyond rounding "
                  "(satisfied only within SCIP's tolerances); it was "
                  f"{'refitted on its sign pattern' if refit else 'dropped'}. The reported gap "
                  "compares the repaired point with SCIP's bound; the default "
                  "formulation='disjunction' avoids this.", ConvergenceWarning, stacklevel=4)
    return [] if refit is None else [refit]


# --- results ----------------------------------------------------------------------------------
def _relaxation_result(problem, design, relaxed, formulation, start):
    point = _point(problem, design, relaxed[0], relaxed[1], "relaxation")
    return _finish(problem, design, [point], None, relaxed, formulation, start, "optimal",
                   "optimal (the relaxation without noncrossing constraints has no training "
                   "crossings, so it solves NORDIC-2; SCIP was not needed)", {"nodes": 0})


def _finish(problem, design, points, scip_dual, relaxed, formulation, start, status, message,
            info):
    best = min(points, key=lambda point: point.objective)  # first of equals: deterministic
    omega, coef = design.coefficients(best.theta)
    objective = problem.objective(omega, best.b, coef)
    if problem.training_crossings(omega, best.b, coef):
        raise SolverError("the NORDIC-2 solution has a training crossing; please report this.",
                          solver="scip", status=message)
    bounds = [d for d in (scip_dual, None if relaxed is None else relaxed[2])
              if d is not None and np.isfinite(d) and abs(d) < 1e19]
    # Both bounds hold up to solver tolerance; never report one above the primal value.
    dual = min(max(bounds), objective) if bounds else -np.inf
    cert = certify_mip(problem, omega, best.b, coef, dual, _relative_gap(objective, dual))
    if status == "optimal" and not cert.certified:
        status = "inaccurate"
    if status not in ("optimal", "gap_limit"):
        warnings.warn(f"SCIP stopped with status {status!r} ({message!r}); returning "
                      f"the best NORDIC-2 solution found ({best.origin}), objective "
                      f"{objective:.6g}, dual bound {dual:.6g}; {cert.describe()}.",
                      SolverLimitWarning, stacklevel=3)
    info = dict(info, formulation=formulation, solution_origin=best.origin,
                starting_points={p.origin: p.objective for p in points if p.origin != "scip"},
                relaxation_objective=None if relaxed is None else relaxed[2],
                sign_margin=SIGN_MARGIN)
    return SolverResult(
        dual_coef=omega, intercept=best.b, objective=objective, solver="scip", status=status,
        message=message, iterations=int(info["nodes"]),
        time=time.perf_counter() - start, max_violation=cert.max_violation,
        kkt_residual=cert.gap, coef=coef, multipliers={}, primal_bound=objective,
        dual_bound=dual, gap=cert.gap, info=info, certificate=cert)


def _relative_gap(primal, dual):
    """SCIP's gap |primal - dual| / min(|primal|, |dual|): 0 when equal, inf if undefined."""
    if not np.isfinite(dual):
        return np.inf
    if primal - dual <= 0.0:
        return 0.0
    denominator = min(abs(primal), abs(dual))
    return (primal - dual) / denominator if denominator > 0 else np.inf
