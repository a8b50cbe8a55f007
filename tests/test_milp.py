"""Tests for nordicstats.solvers.milp: NORDIC-2 by mixed-integer programming with SCIP.

The reference is brute force with another solver (cvxpy + Clarabel): a training
point's K-1 signs are crossing-free exactly when they read (+, ..., +, -, ..., -),
i.e. for every (i, k) the choice between f_k(x_i) >= 0 and f_{k+1}(x_i) <= 0 is
one of the K monotone patterns t_i = 0..K-1 ("f_k >= 0 for k < t_i, <= 0 after").
Given all t_i the problem splits into K-1 convex programs, one per boundary, whose
only coupling was the logical constraints.  So each boundary is solved once for
each of its 2^n sign vectors, and the optimum is the minimum over the K^n
patterns of the sum of the per-boundary optima (n = 6: 64 solves per boundary,
at most 4^6 = 4096 sums).  The "free" optimum (each boundary's best sign vector,
i.e. no logical constraints) shows whether the constraints bind.
"""

import functools
import itertools
import sys
import warnings

import cvxpy as cp
import numpy as np
import pytest

from nordicstats.data import binary_signs
from nordicstats.datasets import make_nonlinear
from nordicstats.exceptions import (
    ConvergenceWarning,
    MissingDependencyError,
    SolverError,
    SolverLimitWarning,
)
from nordicstats.kernels import make_kernel
from nordicstats.solvers import l1svm_lp, lazy_mip, milp, solve
from nordicstats.solvers.milp import FORMULATIONS, solve_nordic2_scip
from nordicstats.solvers.problem import NordicProblem
from nordicstats.solvers.qp import solve_quadprog

# Tiny cases (n = 6): name -> (K, seed, C, penalty, kernel); kernel "linear" or an RBF gamma.
# The seeds were picked (by scanning seeds 0..300 with the brute force below) so that
# the logical constraints bind, except "free" cases, which check the relaxation shortcut.
TINY = {
    "l1-linear-K3": (3, 11, 1.0, "l1", "linear"),
    "l1-linear-K4": (4, 1, 10.0, "l1", "linear"),
    "l1-rbf-K3": (3, 58, 10.0, "l1", 0.5),
    "l1-rbf-K4": (4, 85, 10.0, "l1", 0.5),
    "l2-linear-K4": (4, 59, 10.0, "l2", "linear"),
    "l2-rbf-K4": (4, 3, 10.0, "l2", 0.3),
    "l1-rbf-K3-free": (3, 0, 5.0, "l1", 2.0),
    "l2-rbf-K2-free": (2, 0, 5.0, "l2", 2.0),
}
BINDING = [name for name in TINY if not name.endswith("free")]
# Clarabel (brute force) and SCIP/HiGHS agree to ~1e-9 here; 1e-6 relative still
# separates the constrained optimum from the free one by >= 3 orders of magnitude.
RTOL = 1e-6


def tiny_problem(name, n=6):
    K, seed, C, penalty, kernel = TINY[name]
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, 2))
    codes = rng.integers(0, K, n)
    codes[:K] = np.arange(K)
    if kernel == "linear":
        return NordicProblem(X @ X.T, binary_signs(codes, K), C, method="nordic2",
                             penalty=penalty, X=X)
    gram = np.exp(-kernel * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    return NordicProblem(gram, binary_signs(codes, K), C, method="nordic2", penalty=penalty)


def _boundary_optima(problem, k):
    """Optimum of boundary k for every sign vector a in {+1, -1}^n (a_i f(x_i) >= 0)."""
    n = problem.n
    a = cp.Parameter(n)
    b = cp.Variable()
    if problem.is_linear:
        w = cp.Variable(problem.X.shape[1])
        f = problem.X @ w + b
        penalty = cp.norm1(w) if problem.penalty == "l1" else 0.5 * cp.sum_squares(w)
    else:
        w = cp.Variable(n)
        f = problem.gram @ w + b
        penalty = (cp.norm1(w) if problem.penalty == "l1"
                   else 0.5 * cp.quad_form(w, cp.psd_wrap(problem.gram)))
    hinge = cp.sum(cp.pos(1 - cp.multiply(problem.signs[:, k], f)))
    program = cp.Problem(cp.Minimize(penalty + problem.C * hinge), [cp.multiply(a, f) >= 0])
    optima = {}
    for signs in itertools.product((1.0, -1.0), repeat=n):
        a.value = np.array(signs)
        program.solve(solver=cp.CLARABEL)
        optima[signs] = program.value if program.status == "optimal" else np.inf
    return optima


@functools.cache
def brute_force(name):
    """(NORDIC-2 optimum, optimum without logical constraints) by enumeration."""
    problem = tiny_problem(name)
    m = problem.n_boundaries
    tables = [_boundary_optima(problem, k) for k in range(m)]
    best = np.inf
    for t in itertools.product(range(m + 1), repeat=problem.n):
        t = np.asarray(t)
        best = min(best, sum(tables[k][tuple(np.where(t > k, 1.0, -1.0))] for k in range(m)))
    return best, sum(min(table.values()) for table in tables)


def paper_problem(n, K, seed, C=10.0, penalty="l1"):
    X, y = make_nonlinear(n, random_state=seed, K=K)
    X = X.to_numpy()
    gram = make_kernel("rbf", X)(X, X)
    return NordicProblem(gram, binary_signs(y.cat.codes.to_numpy(), K), C, method="nordic2",
                         penalty=penalty)


def assert_no_crossings(problem, res):
    assert problem.training_crossings(res.dual_coef, res.intercept, res.coef) == 0
    assert res.max_violation == 0.0


# --- optimality against brute force ----------------------------------------------------------
@pytest.mark.parametrize("name", BINDING)
def test_tiny_cases_bind(name):
    best, free = brute_force(name)
    assert best > free * (1 + 1e-4)  # 100 x RTOL: a solver ignoring the constraints fails


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("name", list(TINY))
def test_matches_brute_force(name, formulation):
    problem = tiny_problem(name)
    res = solve_nordic2_scip(problem, formulation=formulation)
    best, _ = brute_force(name)
    assert res.status in ("optimal", "gap_limit")
    assert res.objective == pytest.approx(best, rel=RTOL)
    assert res.gap <= 1e-6 and res.dual_bound <= res.objective
    assert_no_crossings(problem, res)
    if name.endswith("free") and problem.penalty == "l1":
        assert res.info["solution_origin"] == "relaxation" and res.iterations == 0
    elif name in BINDING and problem.penalty == "l1":
        assert res.info["relaxation_objective"] < res.objective


@pytest.mark.parametrize("name", ["l1-linear-K4", "l2-rbf-K4"])
def test_result_fields(name):
    problem = tiny_problem(name)
    res = solve(problem)  # the registry's "auto" choice for nordic2 is SCIP
    assert res.solver == "scip" and dict(res.multipliers) == {}
    assert res.objective == problem.objective(res.dual_coef, res.intercept, res.coef)
    assert res.primal_bound == res.objective and res.kkt_residual == res.gap
    assert res.max_violation == problem.noncrossing_violation(res.dual_coef, res.intercept,
                                                              res.coef)
    assert res.intercept.shape == (problem.n_boundaries,)
    # SCIP's status text, or the lazy branch and bound's (l1) naming how it was proven
    assert res.status in ("optimal", "gap_limit")
    assert res.message.split(" (")[0] in ("optimal", "gaplimit", "gap limit reached")
    if problem.is_linear:
        assert res.dual_coef is None and res.coef.shape == (2, problem.n_boundaries)
    else:
        assert res.coef is None and res.dual_coef.shape == (problem.n, problem.n_boundaries)
    assert res.iterations >= 1 and res.time > 0


# --- feasibility and the NORDIC-1 warm start -------------------------------------------------
@pytest.fixture(scope="module")
def medium():
    problem = paper_problem(80, 4, seed=1)
    nordic1 = solve_quadprog(NordicProblem(problem.gram, problem.signs, problem.C,
                                           method="nordic1", noncrossing="joint"))
    return problem, nordic1


def test_no_worse_than_nordic1(medium):
    problem, nordic1 = medium
    res = solve_nordic2_scip(problem)
    assert_no_crossings(problem, res)
    # NORDIC-1's f_k >= f_{k+1} makes it feasible for NORDIC-2 (up to its solver tolerance)
    assert problem.training_crossings(nordic1.dual_coef, nordic1.intercept) == 0
    assert res.objective <= problem.objective(nordic1.dual_coef, nordic1.intercept) + 1e-9
    assert res.status == "optimal" or res.gap <= 1e-6


@pytest.mark.parametrize("warm_start", [False, "repair", "nordic1"])
def test_warm_starts_reach_the_same_optimum(medium, warm_start):
    problem, _ = medium
    reference = solve_nordic2_scip(problem)
    res = solve_nordic2_scip(problem, warm_start=warm_start)
    assert res.objective == pytest.approx(reference.objective, rel=RTOL)
    assert_no_crossings(problem, res)


def test_relaxation_path_along_c_matches_fresh_lps(medium):
    """HiGHS restarted along a C grid == independent scipy linprog LPs, and == fresh solves."""
    from scipy.optimize import linprog

    problem, _ = medium
    path = milp.RelaxationPath.for_problem(problem)
    Z, n = problem.gram, problem.n
    for C in (0.25, 4.0, 1.0):  # up and down the grid
        theta, b = path.solve(C)
        for k in range(problem.n_boundaries):
            y = problem.signs[:, k]
            ours = np.abs(theta[:, k]).sum() + C * np.maximum(0, 1 - y * (Z @ theta[:, k]
                                                                         + b[k])).sum()
            # independent LP in (omega, b, xi) with |omega| by a split, dense, HiGHS-IPM
            A = np.hstack([-y[:, None] * Z, y[:, None] * Z, -y[:, None], -np.eye(n)])
            cost = np.concatenate([np.ones(2 * n), [0.0], np.full(n, C)])
            bounds = [(0, None)] * (2 * n) + [(None, None)] + [(0, None)] * n
            ref = linprog(cost, A_ub=A, b_ub=-np.ones(n), bounds=bounds, method="highs-ipm")
            assert ours == pytest.approx(ref.fun, rel=1e-8)
        problem_c = NordicProblem(problem.gram, problem.signs, C, method="nordic2",
                                  penalty="l1")
        with_path = solve_nordic2_scip(problem_c, relaxation=path)
        fresh = solve_nordic2_scip(problem_c)
        assert with_path.objective == pytest.approx(fresh.objective, rel=RTOL)
        assert path.incumbent is not None and path.incumbent[1].shape == (problem.n_boundaries,)
    other = NordicProblem(problem.gram[:40, :40], problem.signs[:40], 1.0, method="nordic2",
                          penalty="l1")
    with pytest.raises(ValueError, match="belongs to another problem"):
        solve_nordic2_scip(other, relaxation=path)
    with pytest.raises(ValueError, match="must be a RelaxationPath"):
        solve_nordic2_scip(problem, relaxation="cached")


def test_relaxation_path_uses_the_hinge_weights(medium):
    """Weighted slacks (upper_bounds = C * hinge_weights) along the path == fresh solves."""
    problem, _ = medium
    weights = np.random.default_rng(3).uniform(0.5, 3.0, problem.signs.shape)
    path = milp.RelaxationPath.for_problem(problem)
    Z = problem.gram
    for C in (4.0, 0.5):
        weighted = NordicProblem(problem.gram, problem.signs, C, method="nordic2",
                                 penalty="l1", hinge_weights=weights)
        theta, b = path.solve(weighted.upper_bounds)
        for k in range(problem.n_boundaries):
            y, u = problem.signs[:, k], weighted.upper_bounds[:, k]
            ours = np.abs(theta[:, k]).sum() + u @ np.maximum(0, 1 - y * (Z @ theta[:, k]
                                                                        + b[k]))
            fresh = milp._boundary_lp(Z, y, u)
            ref = np.abs(fresh[0]).sum() + u @ np.maximum(0, 1 - y * (Z @ fresh[0] + fresh[1]))
            assert ours == pytest.approx(ref, rel=1e-8)
        with_path = solve_nordic2_scip(weighted, relaxation=path)
        assert with_path.objective == pytest.approx(solve_nordic2_scip(weighted).objective,
                                                    rel=RTOL)
        assert with_path.status == "optimal"


def test_l2_below_nordic1_objective(medium):
    problem, nordic1 = medium
    l2 = NordicProblem(problem.gram, problem.signs, problem.C, method="nordic2", penalty="l2")
    res = solve_nordic2_scip(l2, warm_start="nordic1", mip_gap=1e-4)
    assert_no_crossings(l2, res)
    # same objective as NORDIC-1 (l2 penalty), larger feasible set
    assert res.objective <= nordic1.objective * (1 + 1e-7)
    assert res.gap <= 1e-4


def test_bigm_tolerance_crossing_is_repaired():
    # With the proven M (~2400 here) SCIP's integrality tolerance lets z ~ 4e-11 relax
    # f_k >= 0 to f_k >= -1e-7 while f_{k+1} = 0.72: a real crossing and an objective
    # 1e-3 below the optimum (SCIP 10.0).  The solver must notice, repair, say so and
    # report a gap that covers the distance to the true optimum.
    problem = paper_problem(100, 5, seed=0)
    reference = solve_nordic2_scip(problem)
    with pytest.warns(ConvergenceWarning, match="crosses at a training point"):
        res = solve_nordic2_scip(problem, formulation="bigm")
    assert_no_crossings(problem, res)
    assert res.info["scip_primal_bound"] < reference.objective * (1 - 1e-4)
    assert res.dual_bound <= reference.objective * (1 + RTOL)
    assert res.objective >= reference.objective * (1 - RTOL)
    assert res.gap >= (res.objective - reference.objective) / reference.objective - RTOL


# --- limits ----------------------------------------------------------------------------------
def _check_limited(problem, res):
    assert res.status == "time_limit"
    assert np.isfinite(res.gap) and np.isfinite(res.dual_bound)
    assert res.dual_bound <= res.objective
    assert res.objective == problem.objective(res.dual_coef, res.intercept, res.coef)
    assert_no_crossings(problem, res)


@pytest.fixture(scope="module")
def crossing_problem():
    problem = paper_problem(300, 5, seed=4)
    return problem


def test_time_limit_returns_feasible_solution_with_gap(crossing_problem):
    # n = 300, K = 5 with 7 crossings in the relaxation: seconds of SCIP on any machine
    # with all disjunctions (the lazy branch and bound may finish within the limit)
    with pytest.warns(SolverLimitWarning, match="MIP gap"):
        res = solve_nordic2_scip(crossing_problem, time_limit=0.5, formulation="disjunction")
    _check_limited(crossing_problem, res)


def test_scip_time_limit_status_is_reported(monkeypatch):
    # Give SCIP itself no time, whatever the speed of the set-up before it.
    original = milp._set_parameters

    def no_time(model, remaining, mip_gap, threads, verbose):
        original(model, remaining, mip_gap, threads, verbose)
        model.setParam("limits/time", 0.0)

    monkeypatch.setattr(milp, "_set_parameters", no_time)
    problem = tiny_problem("l1-rbf-K4")
    with pytest.warns(SolverLimitWarning, match="timelimit"):
        res = solve_nordic2_scip(problem, formulation="disjunction")
    _check_limited(problem, res)
    assert res.message == "timelimit" and res.info["solution_origin"] != "scip"


def test_scip_failure_raises_solver_error(monkeypatch):
    def contradictory(model, h, formulation, f_bound):
        model.addCons(h["b"][0] - h["b"][1] >= 3 * f_bound)  # beyond both variables' bounds

    monkeypatch.setattr(milp, "_add_logic", contradictory)
    with pytest.raises(SolverError, match="infeasible") as err:
        solve_nordic2_scip(tiny_problem("l1-rbf-K4"), formulation="disjunction")
    assert err.value.status == "infeasible" and err.value.solver == "scip"


# --- the lazy branch and bound (formulation="lazy", the l1 default) --------------------------
@pytest.fixture(scope="module")
def crossing():
    """A paper problem whose relaxation crosses at several rows (C = 10, K = 5)."""
    problem = paper_problem(150, 5, seed=3, C=10.0)
    theta, b = milp.RelaxationPath.for_problem(problem).solve(problem.upper_bounds)
    F = problem.gram @ theta + b
    assert milp.count_crossings(F).sum() >= 2
    return problem


def test_lazy_matches_scip_with_all_disjunctions(crossing):
    lazy = solve_nordic2_scip(crossing)
    scip = solve_nordic2_scip(crossing, formulation="disjunction")
    assert lazy.info["formulation"] == "lazy" and lazy.status == "optimal"
    assert lazy.objective == pytest.approx(scip.objective, rel=RTOL)
    assert lazy.dual_bound >= lazy.info["relaxation_objective"]
    assert lazy.info["lp_solves"] >= 2 * lazy.iterations - 1 >= 1
    assert_no_crossings(crossing, lazy)


def test_lazy_hands_over_to_scip_at_its_node_limit(crossing, monkeypatch):
    monkeypatch.setattr(milp, "LAZY_MAX_NODES", 1)
    res = solve_nordic2_scip(crossing)
    assert res.info["formulation"] == "disjunction" and "lazy_bound" in res.info
    assert res.info["lazy_bound"] <= res.objective * (1 + 1e-9)
    assert res.objective == pytest.approx(solve_nordic2_scip(crossing).objective, rel=RTOL)


def test_lazy_time_limit_returns_its_gap(crossing):
    with pytest.warns(SolverLimitWarning, match="time_limit"):
        res = solve_nordic2_scip(crossing, time_limit=1e-9)
    assert res.status == "time_limit" and np.isfinite(res.gap)
    assert_no_crossings(crossing, res)


# --- determinism, dependencies, options ------------------------------------------------------
@pytest.mark.parametrize("name", ["l1-rbf-K4", "l2-linear-K4"])
def test_deterministic(name):
    first = solve_nordic2_scip(tiny_problem(name))
    second = solve_nordic2_scip(tiny_problem(name))
    values = first.coef if first.dual_coef is None else first.dual_coef
    again = second.coef if second.dual_coef is None else second.dual_coef
    assert np.array_equal(values, again) and np.array_equal(first.intercept, second.intercept)
    assert first.objective == second.objective and first.iterations == second.iterations


def test_missing_pyscipopt_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyscipopt", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'nordicstats\[milp\]'"):
        solve_nordic2_scip(tiny_problem("l1-rbf-K3"))


@pytest.mark.parametrize("option, value", [
    ("time_limit", 0.0), ("time_limit", -1.0), ("time_limit", float("nan")), ("time_limit", "5"),
    ("mip_gap", 1.0), ("mip_gap", -1e-3), ("mip_gap", None), ("threads", 0), ("threads", 1.5),
    ("threads", True), ("formulation", "sos1"), ("warm_start", "qp"), ("verbose", "yes"),
])
def test_invalid_options(option, value):
    with pytest.raises(ValueError, match=f"'{option}'") as err:
        solve_nordic2_scip(tiny_problem("l1-rbf-K3"), **{option: value})
    assert f"Got {value!r}" in str(err.value)


def test_rejects_other_methods():
    problem = tiny_problem("l1-rbf-K3")
    other = NordicProblem(problem.gram, problem.signs, problem.C, method="nordic1")
    with pytest.raises(ValueError, match="method='nordic2'"):
        solve_nordic2_scip(other)


def test_threads_run_concurrent_solver():
    problem = tiny_problem("l1-linear-K4")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pyscipopt may note a build without parallel support
        res = solve_nordic2_scip(problem, threads=2)
    assert res.objective == pytest.approx(brute_force("l1-linear-K4")[0], rel=RTOL)
    assert_no_crossings(problem, res)


# --- strong branching and the disjunctive bound (lazy_mip, candidates > 1) --------------------
@pytest.fixture(scope="module")
def many_crossings():
    """A paper problem (n = 150, K = 5, C = 50) whose branch and bound takes 8-10 nodes, and
    SCIP's optimum on all n(K-2) disjunctions."""
    problem = paper_problem(150, 5, seed=5, C=50.0)
    return problem, solve_nordic2_scip(problem, formulation="disjunction").objective


def test_strong_branching_matches_scip_with_all_disjunctions(many_crossings, monkeypatch):
    problem, scip = many_crossings
    deepest = solve_nordic2_scip(problem)
    calls = []
    original = lazy_mip.disjunctive_bound

    def recorded(values, evaluations):
        calls.append(original(values, evaluations) - sum(values))
        return calls[-1] + sum(values)

    monkeypatch.setattr(milp, "LAZY_CANDIDATES", 4)
    monkeypatch.setattr(lazy_mip, "disjunctive_bound", recorded)
    strong = solve_nordic2_scip(problem)
    assert strong.status == deepest.status == "optimal"
    assert strong.objective == pytest.approx(scip, rel=RTOL)
    assert deepest.objective == pytest.approx(scip, rel=RTOL)
    assert strong.dual_bound <= strong.objective and strong.gap <= 1e-6
    assert strong.iterations < deepest.iterations  # 8 against 10 nodes
    assert max(calls) > 1e-6 * strong.objective  # the bound rose above the LP values
    assert_no_crossings(problem, strong)


def test_cost_path_root_leaves_the_fit_unchanged(many_crossings, monkeypatch):
    # the root LPs through their cost path (C = 50: from 50/16) and by the dual simplex
    # alone: the same certified optimum, SCIP's with all disjunctions
    problem, scip = many_crossings
    with_path = solve_nordic2_scip(problem)
    monkeypatch.setattr(l1svm_lp, "USE_COST_PATH", False)
    plain = solve_nordic2_scip(problem)
    assert with_path.status == plain.status == "optimal" and with_path.gap <= 1e-6
    assert with_path.objective == pytest.approx(plain.objective, rel=1e-9)
    assert with_path.objective == pytest.approx(scip, rel=RTOL)
    assert with_path.info["relaxation_objective"] == \
        pytest.approx(plain.info["relaxation_objective"], rel=1e-9)
    path = milp.RelaxationPath.for_problem(problem)
    monkeypatch.setattr(l1svm_lp, "USE_COST_PATH", True)
    path.solve(problem.upper_bounds)
    assert sum(lp.stats.path_steps for lp in path.lps) > 0
    assert sum(lp.stats.path_fallbacks for lp in path.lps) < len(path.lps)
    assert_no_crossings(problem, with_path)


def test_margin_path_resolves_leave_the_fit_unchanged(many_crossings, monkeypatch):
    # the branch and bound's re-solves along the switched sign rows' margins and by HiGHS
    # alone from the previous basis: the same nodes and certified optimum, SCIP's with
    # all disjunctions
    problem, scip = many_crossings
    paths = []
    original = l1svm_lp.BoundaryLP._start_by_margin_path

    def counted(lp):
        fallbacks = lp.stats.margin_path_fallbacks
        original(lp)
        paths.append(lp.stats.margin_path_fallbacks - fallbacks)

    monkeypatch.setattr(l1svm_lp.BoundaryLP, "_start_by_margin_path", counted)
    with_path = solve_nordic2_scip(problem)
    monkeypatch.setattr(l1svm_lp, "USE_MARGIN_PATH", False)
    plain = solve_nordic2_scip(problem)
    assert with_path.status == plain.status == "optimal" and with_path.gap <= 1e-6
    assert with_path.iterations == plain.iterations >= 8
    assert with_path.objective == pytest.approx(plain.objective, rel=1e-9)
    assert with_path.objective == pytest.approx(scip, rel=RTOL)
    assert len(paths) >= 10 and sum(paths) == 0  # 15 re-solves, all along the path
    assert_no_crossings(problem, with_path)


def test_self_certified_paths_leave_the_fit_unchanged(many_crossings, monkeypatch):
    # the paths' end bases certified by the fresh check (HiGHS not run) and confirmed by
    # HiGHS: the same nodes and certified optimum, SCIP's with all disjunctions
    problem, scip = many_crossings
    counts = {}
    original = l1svm_lp.BoundaryLP.solve

    def counted(lp, costs=None):
        out = original(lp, costs)
        counts[id(lp)] = (lp.stats.self_certified, lp.stats.highs_confirmed)
        return out

    monkeypatch.setattr(l1svm_lp.BoundaryLP, "solve", counted)
    certified = solve_nordic2_scip(problem)
    by_check, by_highs = (sum(c[t] for c in counts.values()) for t in (0, 1))
    counts.clear()
    monkeypatch.setattr(l1svm_lp, "SELF_CERTIFY", False)
    confirmed = solve_nordic2_scip(problem)
    assert sum(c[0] for c in counts.values()) == 0
    assert sum(c[1] for c in counts.values()) == by_check + by_highs
    assert certified.status == confirmed.status == "optimal" and certified.gap <= 1e-6
    assert certified.iterations == confirmed.iterations >= 8
    assert certified.info["lp_solves"] == confirmed.info["lp_solves"]
    assert certified.objective == pytest.approx(confirmed.objective, rel=1e-9)
    assert certified.objective == pytest.approx(scip, rel=RTOL)
    assert by_check >= 10  # most of the 4 root LPs and 15 re-solves
    assert_no_crossings(problem, certified)


@pytest.mark.parametrize("name", [name for name in BINDING if TINY[name][3] == "l1"])
def test_strong_branching_matches_brute_force(name, monkeypatch):
    monkeypatch.setattr(milp, "LAZY_CANDIDATES", 4)
    res = solve_nordic2_scip(tiny_problem(name))
    assert res.objective == pytest.approx(brute_force(name)[0], rel=RTOL)
    assert res.status == "optimal" and res.info["formulation"] == "lazy"


def test_disjunctive_bound_is_the_cheapest_assignment():
    # against enumerating every side of every evaluated pair: boundary k pays the largest
    # of its own value and the V of the pairs sent to it
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = int(rng.integers(2, 6))
        values = rng.uniform(0.0, 1.0, m).tolist()
        evaluations = []
        for _ in range(int(rng.integers(0, 6))):
            k = int(rng.integers(0, m - 1))
            plus = np.inf if rng.random() < 0.1 else values[k] + rng.exponential()
            evaluations.append((k, plus, values[k + 1] + rng.exponential()))
        cheapest = np.inf
        for sides in itertools.product((0, 1), repeat=len(evaluations)):
            levels = list(values)
            for (k, plus, minus), side in zip(evaluations, sides, strict=True):
                target = k + side
                levels[target] = max(levels[target], minus if side else plus)
            cheapest = min(cheapest, sum(levels))
        assert lazy_mip.disjunctive_bound(values, evaluations) == pytest.approx(cheapest,
                                                                                 rel=1e-12)


def test_bounds_from_cached_lps_match_scip_with_all_disjunctions(many_crossings, monkeypatch):
    # nodes leave the queue with their bounds raised by LPs solved elsewhere in the tree
    problem, scip = many_crossings
    raised = []
    original = lazy_mip._cached_bound

    def recorded(boundaries, node, evaluations):
        bound = original(boundaries, node, evaluations)
        raised.append(bound - sum(boundaries.cache[(k, rows)][2] for k, rows in enumerate(node)))
        return bound

    monkeypatch.setattr(lazy_mip, "_cached_bound", recorded)
    res = solve_nordic2_scip(problem)
    assert res.status == "optimal" and res.objective == pytest.approx(scip, rel=RTOL)
    assert sum(gain > 1e-6 * scip for gain in raised) >= 3  # 5 of 13 nodes on this problem


def test_cached_bound_uses_lps_one_sign_row_beyond_the_node():
    # boundary values 1 and 1; pair (point 5, k = 0): side (i) costs 3 on boundary 0, side
    # (ii) 2 on boundary 1, so the subtree costs at least 1 + 2; an LP two rows beyond
    # the node (value 10) and one whose other side is unknown (point 6) bound nothing
    class Solved:
        cache = {(0, frozenset()): (None, None, 1.0), (1, frozenset()): (None, None, 1.0),
                 (0, frozenset({(5, 1)})): (None, None, 3.0),
                 (1, frozenset({(5, -1)})): (None, None, 2.0),
                 (1, frozenset({(5, -1), (6, -1)})): (None, None, 10.0),
                 (0, frozenset({(6, 1)})): (None, None, 50.0)}

    node = (frozenset(), frozenset())
    assert lazy_mip._cached_bound(Solved, node, ()) == 3.0
    Solved.cache[(1, frozenset({(6, -1)}))] = None  # side (ii) of point 6 infeasible:
    # boundary 0 takes point 6 at 50 and then point 5 (3) for free, boundary 1 stays at 1
    assert lazy_mip._cached_bound(Solved, node, ()) == 51.0
