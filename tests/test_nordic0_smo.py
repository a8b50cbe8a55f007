"""NORDIC-0 by the active set with the compiled SMO loop inside (solver="nordic0_smo").

References nobody here wrote: Clarabel on the paper's primal through cvxpy
(tests/primal_reference.py); the other exact solver, ``active_set`` (quadprog
inside), for the decision values; and the gradient of the reduced dual recomputed
from its definition for the compiled loop's running update.
"""

import warnings

import numpy as np
import pytest
from primal_reference import solve_primal
from test_nordic0 import rbf_problem

from nordicstats.data import binary_signs
from nordicstats.exceptions import SolverLimitWarning
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import NordicProblem, solve
from nordicstats.solvers.certificate import GAP_TOL, VIOLATION_TOL, certify
from nordicstats.solvers.nordic0 import IncrementState, starting_point
from nordicstats.solvers.nordic0_polish import newton_on_face
from nordicstats.solvers.nordic0_smo import _Loop, relative_gap, solve_nordic0_smo
from nordicstats.solvers.nordic0_smo_core import (
    _compact_free_rows,
    _shift_gradient,
    _shrink_patient,
    nordic0_smo_loop,
)
from nordicstats.solvers.smo_core import _scan_alpha_active

# The solver stops at half the certificate's relative gap, so the objective is within
# GAP_TOL of Clarabel's (measured 6e-8 to 3e-7 on these cases).
OBJ_RTOL = GAP_TOL
# Two certified points differ in decision values by at most sqrt(2 gap P) in the RKHS
# norm; measured against active_set (gap ~1e-10) 6e-6 to 3e-5 on these cases.
DECISION_ATOL = 3e-4


def rare_problem(n, K, C, seed, weighted=False):
    """Latent cut so that the top class holds 5% of the rows; optional case weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    latent = 1.5 * X[:, 0] + 0.8 * X[:, 1] ** 2 + rng.normal(size=n)
    cuts = np.quantile(latent, np.r_[np.linspace(0, 0.95, K)[1:-1], 0.95])
    codes = np.searchsorted(cuts, latent)
    gram = make_kernel("rbf", X)(X, X)
    weights = None
    if weighted:
        weights = rng.uniform(0.2, 3.0, size=(n, 1)) * np.ones((1, K - 1))
    return NordicProblem(gram, binary_signs(codes, K), C, method="nordic0",
                         hinge_weights=weights)


CASES = [
    ("balanced", 80, 3, 0.05, 1, False), ("balanced", 80, 3, 20.0, 2, False),
    ("balanced", 100, 4, 0.5, 3, False), ("balanced", 100, 4, 30.0, 4, False),
    ("balanced", 120, 5, 1.0, 5, False), ("balanced", 120, 5, 16.0, 6, False),
    ("rare", 120, 4, 2.0, 7, False), ("rare", 150, 5, 0.1, 8, True),
    ("rare", 100, 3, 16.0, 9, True), ("balanced", 60, 2, 4.0, 10, False),
]


def _problem(kind, n, K, C, seed, weighted):
    if kind == "rare":
        return rare_problem(n, K, C, seed, weighted)
    return rbf_problem(n, K, 1.0, C, seed)


def assert_matches_references(result, dense_problem, reference=None, other=None):
    """``result`` reaches Clarabel's primal optimum and ``active_set``'s decision values
    on ``dense_problem`` (references computed here unless passed in)."""
    reference = solve_primal(dense_problem) if reference is None else reference
    other = solve(dense_problem, solver="active_set") if other is None else other
    assert result.objective == pytest.approx(reference, rel=OBJ_RTOL)
    np.testing.assert_allclose(
        dense_problem.decision_values(result.dual_coef, result.intercept),
        dense_problem.decision_values(other.dual_coef, other.intercept), atol=DECISION_ATOL)


@pytest.mark.parametrize("kind,n,K,C,seed,weighted", CASES)
def test_matches_clarabel_and_the_active_set_solver(kind, n, K, C, seed, weighted):
    problem = _problem(kind, n, K, C, seed, weighted)
    result = solve(problem, solver="nordic0_smo")
    assert result.status == "optimal" and result.solver == "nordic0_smo"
    assert result.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    cert = certify(problem, result.dual_coef, result.intercept, result.multipliers)
    assert cert.certified and cert.gap <= GAP_TOL and cert.max_violation <= VIOLATION_TOL
    omega, b = result.dual_coef, result.intercept
    assert np.all(omega[:, :-1] - omega[:, 1:] >= -VIOLATION_TOL)
    assert np.all(b[:-1] - b[1:] >= -VIOLATION_TOL)
    other = solve(problem, solver="active_set")
    np.testing.assert_allclose(problem.decision_values(omega, b),
                               problem.decision_values(other.dual_coef, other.intercept),
                               atol=DECISION_ATOL)


# the running G with single-precision free rows: each of the 500 steps' rank-|F|
# updates rounds at about 6e-8 of its size (|G| ~ 1 here); double: only the updates' own
# rounding
@pytest.mark.parametrize("dtype,g_atol", [(np.float64, 1e-9), (np.float32, 1e-5)])
def test_running_gradient_is_the_reduced_duals(dtype, g_atol):
    """After SMO steps with free increments, G equals K omega recomputed from alpha."""
    problem = rbf_problem(90, 5, 1.0, 4.0, seed=21)
    state = IncrementState(problem, *starting_point(problem, None)[:2])
    loop = _Loop(problem, cache_mb=1.0)
    for _ in range(4):  # rounds that give the free set members
        loop.run(state, 0.1, 10 ** 6)
        state.update_free_set(0.1, 20)
    assert state.free.shape[0] >= 3
    # run the compiled loop on the arrays directly to see its running G before refresh
    alpha, H, G = (np.ascontiguousarray(x.T) for x in (state.alpha, state.Hk, state.G))
    gamma = state.gamma.copy()
    it, _, _ = nordic0_smo_loop(loop.Y, loop.U, alpha, gamma, G, H, loop.diag,
                                state.K_free_rows.astype(dtype), state.free[:, 0].copy(),
                                state.free[:, 1].copy(), np.ascontiguousarray(state.S_root),
                                True, 1e-4, 500, 1.0, 1.5, False, False, 1000, 1,
                                loop.calm, loop.load, 0.25, *loop.cache.arrays())
    assert it > 50
    # from the definitions: H_k = K (y_k alpha_k), delta_F = S^+ (Ka)_F, G_k = K omega_k
    K, Y, m = problem.gram, problem.signs, problem.signs.shape[1]
    np.testing.assert_allclose(H.T, K @ (Y * alpha.T), atol=1e-10)
    state.alpha, state.gamma = alpha.T.copy(), gamma
    state.refresh(full=True)
    np.testing.assert_allclose(G.T, state.G, atol=g_atol)
    np.testing.assert_allclose(state.G, K @ state.omega(), atol=1e-9)
    # and the equality rows y_k'alpha_k + gamma_k - gamma_{k-1} = 0 still hold
    rows = (Y * state.alpha).sum(axis=0)
    rows[:-1] += gamma
    rows[1:] -= gamma
    assert np.abs(rows).max() < 1e-12 * max(1.0, m * problem.C)


@pytest.mark.parametrize("shrink_first", [False, True])
def test_gradient_after_a_restore_is_its_definition(shrink_first):
    """With shrinking (from the first step or after 1,000), the loop's G on return (rows
    that left recomputed from H and the free rows, the others updated along) equals G
    from H, and H equals K (Y alpha)."""
    problem = rbf_problem(120, 5, 1.0, 16.0, seed=23)
    state = IncrementState(problem, *starting_point(problem, None)[:2])
    loop = _Loop(problem, cache_mb=1.0)
    for _ in range(4):
        loop.run(state, 0.1, 10 ** 6)
        state.update_free_set(0.1, 20)
    assert state.free.shape[0] >= 3
    alpha, H, G = (np.ascontiguousarray(x.T) for x in (state.alpha, state.Hk, state.G))
    gamma = state.gamma.copy()
    counters = loop.cache.counters
    counters[:] = 0
    it, code, _ = nordic0_smo_loop(loop.Y, loop.U, alpha, gamma, G, H, loop.diag,
                                   state.K_free_rows.copy(), state.free[:, 0].copy(),
                                   state.free[:, 1].copy(), np.ascontiguousarray(state.S_root),
                                   True, 1e-5, 10 ** 6, 1.0, 1.5, True, shrink_first, 1000,
                                   1, loop.calm, loop.load, 0.25, *loop.cache.arrays())
    assert code == 0 and it > 1000
    assert counters[6] > 0 and counters[7] > 0  # entries dropped, then restored
    K, Y = problem.gram, problem.signs
    np.testing.assert_allclose(H.T, K @ (Y * alpha.T), atol=1e-10)
    state.alpha, state.gamma = alpha.T.copy(), gamma
    state.refresh(full=True)
    # double-precision free rows: the running part drifts by the updates' rounding only
    np.testing.assert_allclose(G.T, state.G, atol=1e-9)
    np.testing.assert_allclose(state.G, K @ state.omega(), atol=1e-9)


@pytest.mark.parametrize("cache_mb", [None, 0.01])
def test_shrinking_on_and_off_reach_clarabel_and_the_active_set_optimum(cache_mb):
    """C = 16, rows from X (all cached, or eight rows of 0.01 MiB): with and without
    shrinking the same optimum as Clarabel's primal and ``active_set``'s."""
    lazy_problem = rbf_problem(200, 5, 1.0, 16.0, seed=44, lazy=True)
    dense_problem = rbf_problem(200, 5, 1.0, 16.0, seed=44)
    on = solve(lazy_problem, solver="nordic0_smo", cache_mb=cache_mb, shrinking=True)
    off = solve(lazy_problem, solver="nordic0_smo", cache_mb=cache_mb, shrinking=False)
    assert on.status == off.status == "optimal"
    assert on.info["shrinking"]["dropped"] > 0 and on.info["shrinking"]["restores"] > 0
    assert off.info["shrinking"] == {"on": False, "dropped": 0, "restores": 0,
                                     "entries_scanned_per_step": 4 * 200,
                                     "rows_updated_per_step": 200}
    reference = solve_primal(dense_problem)
    other = solve(dense_problem, solver="active_set")
    for result in (on, off):
        assert result.certificate.certified
        assert_matches_references(result, dense_problem, reference, other)


@pytest.mark.parametrize("each_round,patience", [(False, 3), (True, 1), (True, 3)])
def test_shrinking_at_each_round_start_reaches_clarabel_and_the_active_set_optimum(
        monkeypatch, each_round, patience):
    """C = 32, rows from X in eight cache slots: with the shrink at every round's start
    (and every 100 steps) or only every 100 steps, an entry leaving at the first shrink
    out of every violating pair or the third, the optimum of Clarabel's primal and
    ``active_set``'s."""
    monkeypatch.setattr("nordicstats.solvers.nordic0_smo.SHRINK_EACH_ROUND", each_round)
    monkeypatch.setattr("nordicstats.solvers.nordic0_smo.SHRINK_PATIENCE", patience)
    lazy_problem = rbf_problem(240, 5, 1.0, 32.0, seed=46, lazy=True)
    dense_problem = rbf_problem(240, 5, 1.0, 32.0, seed=46)
    result = solve(lazy_problem, solver="nordic0_smo", cache_mb=0.01, shrinking=True)
    assert result.status == "optimal" and result.info["rounds"] > 5
    assert result.info["shrinking"]["dropped"] > 0 and result.certificate.certified
    assert_matches_references(result, dense_problem)


def _entries_in_no_violating_pair(Y, U, alpha, gamma, G):
    """Brute force over all pairs of entries: an entry at a bound (it can only rise or
    only fall) with no partner forming a pair of violation >= 0 that the gammas allow
    (a rise on boundary a with a fall on c: a = c, a > c, or a < c with
    gamma_a..gamma_(c-1) > 0)."""
    m, n = Y.shape
    score = Y - G
    rise = np.where(Y > 0, alpha < U, alpha > 0)
    fall = np.where(Y > 0, alpha > 0, alpha < U)

    def allowed(a, c):
        return a >= c or bool(np.all(gamma[a:c] > 0))

    out = np.zeros((m, n), bool)
    for k in range(m):
        for i in range(n):
            if rise[k, i] and fall[k, i]:
                continue
            if fall[k, i]:
                partners = [score[a, j] for a in range(m) if allowed(a, k)
                            for j in range(n) if rise[a, j]]
                out[k, i] = not any(v >= score[k, i] for v in partners)
            else:
                partners = [score[c, j] for c in range(m) if allowed(k, c)
                            for j in range(n) if fall[c, j]]
                out[k, i] = not any(v <= score[k, i] for v in partners)
    return out


def _shrink_once(Y, U, alpha, gamma, G, act, nact, is_act, calm, patience):
    m = Y.shape[0]
    up_val, low_val = np.empty(m), np.empty(m)
    up_arg, low_arg = np.empty(m, np.int64), np.empty(m, np.int64)
    for k in range(m):
        _scan_alpha_active(k, act, nact, Y, U, alpha, G, up_val, up_arg, low_val, low_arg)
    return _shrink_patient(True, gamma, Y, U, alpha, G, up_val, low_val, act, nact, is_act,
                           calm, patience)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_patient_shrink_drops_what_brute_force_finds_only_after_patience_shrinks(seed):
    """With every entry active, the entries a shrink may drop are those in no violating
    pair (all pairs enumerated); with patience 3 they leave at the third consecutive
    shrink, and an entry that violates in between starts its count again."""
    rng = np.random.default_rng(seed)
    m, n = 3, 40
    Y = rng.choice([-1.0, 1.0], size=(m, n))
    U = np.full((m, n), 2.0)
    alpha = rng.choice([0.0, 2.0, 0.7], size=(m, n), p=[0.45, 0.45, 0.1])
    gamma = np.array([0.0, 0.5]) if seed != 2 else np.array([0.3, 0.0])
    G = rng.normal(scale=0.3, size=(m, n)) + Y
    expected = _entries_in_no_violating_pair(Y, U, alpha, gamma, G)
    assert 0 < expected.sum() < m * n

    def fresh():
        act = np.tile(np.arange(n), (m, 1))
        return act, np.full(m, n, np.int64), np.ones((m, n), bool), np.zeros((m, n), np.int32)

    act, nact, is_act, calm = fresh()
    _shrink_once(Y, U, alpha, gamma, G, act, nact, is_act, calm, 1)
    np.testing.assert_array_equal(~is_act, expected)
    for k in range(m):  # the lists hold the active entries in increasing order
        np.testing.assert_array_equal(act[k, :nact[k]], np.flatnonzero(is_act[k]))

    act, nact, is_act, calm = fresh()
    for _ in range(2):
        assert _shrink_once(Y, U, alpha, gamma, G, act, nact, is_act, calm, 3) == 0
    # one entry that was calm now violates: it stays at the third shrink, the rest leave
    k, i = np.argwhere(expected)[0]
    falls = np.where(Y > 0, alpha > 0, alpha < U)[k, i]
    score = Y - G
    bumped = G.copy()
    bumped[k, i] = Y[k, i] - (score.min() - 10.0 if falls else score.max() + 10.0)
    # (the bump moves the extreme scores, so other entries may take part in a pair too)
    calm_through = expected & _entries_in_no_violating_pair(Y, U, alpha, gamma, bumped)
    assert not calm_through[k, i]
    _shrink_once(Y, U, alpha, gamma, bumped, act, nact, is_act, calm, 3)
    np.testing.assert_array_equal(~is_act, calm_through)
    assert calm[k, i] == 0
    for _ in range(2):  # the counts started again reach 2, then 3
        assert _shrink_once(Y, U, alpha, gamma, G, act, nact, is_act, calm, 3) == 0
    _shrink_once(Y, U, alpha, gamma, G, act, nact, is_act, calm, 3)
    np.testing.assert_array_equal(~is_act, expected)


def test_gradient_update_on_compacted_live_rows_is_the_full_one():
    """G's update on the live rows read from the compacted free rows equals the update
    over all rows restricted to them; the other rows are not touched."""
    rng = np.random.default_rng(47)
    m, n, nf = 4, 50, 7
    KF = rng.normal(size=(nf, n))
    JF, S_root = rng.integers(0, m - 1, nf), rng.normal(size=(nf, 5))
    Ki, Kj, R_diff, G = rng.normal(size=n), rng.normal(size=n), rng.normal(size=5), \
        rng.normal(size=(m, n))
    live = np.sort(rng.choice(n, 9, replace=False))
    work = [np.zeros((m - 1, n)), np.empty(n), np.empty(n)]
    full = G.copy()
    _shift_gradient(0.7, Ki, Kj, m, KF, JF, S_root, R_diff, full, *work, np.arange(n), n)
    KF_live = _compact_free_rows(KF, live, live.size, np.empty_like(KF))
    np.testing.assert_array_equal(KF_live[:, :live.size], KF[:, live])
    part = G.copy()
    _shift_gradient(0.7, Ki, Kj, m, KF_live, JF, S_root, R_diff, part, *work, live, live.size)
    np.testing.assert_allclose(part[:, live], full[:, live], rtol=1e-13, atol=1e-13)
    rest = np.setdiff1d(np.arange(n), live)
    np.testing.assert_array_equal(part[:, rest], G[:, rest])
    assert _compact_free_rows(KF, np.arange(n), n, np.empty_like(KF)) is KF


def test_gathering_the_live_rows_changes_no_step(monkeypatch):
    """G's updates over the live rows only (GATHER_ROWS = 1) or over all rows (0): the
    rows that left are recomputed before a stop, so the steps and the optimum are the
    same, with fewer rows updated per step."""
    problem = rbf_problem(200, 5, 1.0, 16.0, seed=44, lazy=True)
    runs = {}
    for fraction in (0.0, 1.0):
        monkeypatch.setattr("nordicstats.solvers.nordic0_smo.GATHER_ROWS", fraction)
        runs[fraction] = solve(problem, solver="nordic0_smo", shrinking=True)
    every, gathered = runs[0.0], runs[1.0]
    assert gathered.iterations == every.iterations and gathered.info["shrinking"]["dropped"] > 0
    rows = [run.info["shrinking"]["rows_updated_per_step"] for run in (gathered, every)]
    assert rows[0] < 0.9 * rows[1]
    # the same path: G differs by the rounding of the running updates only
    np.testing.assert_allclose(gathered.dual_coef, every.dual_coef, atol=1e-9)
    assert gathered.objective == pytest.approx(every.objective, rel=1e-12)


def test_shrinking_is_on_by_default_from_its_row_count(monkeypatch):
    """Off below SHRINKING_MIN_ROWS: every step scans all (K-1) n entries; on, fewer."""
    problem = rbf_problem(150, 4, 1.0, 16.0, seed=45)
    off = solve(problem, solver="nordic0_smo").info["shrinking"]
    assert not off["on"] and off["entries_scanned_per_step"] == 3 * 150
    assert 0 < off["rows_updated_per_step"] <= 150
    monkeypatch.setattr("nordicstats.solvers.nordic0_smo.SHRINKING_MIN_ROWS", 150)
    result = solve(problem, solver="nordic0_smo")
    on = result.info["shrinking"]
    assert on["on"] and on["dropped"] > 0
    assert 0 < on["entries_scanned_per_step"] < 3 * 150
    assert 0 < on["rows_updated_per_step"] < off["rows_updated_per_step"]
    assert result.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)


def test_rows_on_demand_reach_the_dense_optimum():
    dense_problem = rbf_problem(150, 4, 2.0, 4.0, seed=12)
    lazy_problem = rbf_problem(150, 4, 2.0, 4.0, seed=12, lazy=True)
    assert isinstance(lazy_problem.gram, KernelMatrix)
    dense = solve(dense_problem, solver="nordic0_smo")
    lazy = solve(lazy_problem, solver="nordic0_smo")
    assert lazy.status == dense.status == "optimal" and lazy.info["free_increments"] > 0
    assert lazy.info["cache_misses"] > 0  # rows computed by the compiled loop
    assert lazy.objective == pytest.approx(solve_primal(dense_problem), rel=OBJ_RTOL)
    np.testing.assert_allclose(
        dense_problem.decision_values(lazy.dual_coef, lazy.intercept),
        dense_problem.decision_values(dense.dual_coef, dense.intercept), atol=DECISION_ATOL)


@pytest.mark.parametrize("cache_mb", [None, 0.01])
def test_rows_on_demand_at_large_c_match_clarabel_and_the_active_set_solver(cache_mb):
    """C = 16 with kernel rows from X: the cache sized to the problem (every row kept)
    or to 0.01 MiB (eight rows: most rows are recomputed), single-precision free rows."""
    lazy_problem = rbf_problem(160, 4, 1.0, 16.0, seed=41, lazy=True)
    dense_problem = rbf_problem(160, 4, 1.0, 16.0, seed=41)
    result = solve(lazy_problem, solver="nordic0_smo", cache_mb=cache_mb)
    assert result.status == "optimal" and result.info["free_increments"] > 0
    slots = 160 if cache_mb is None else 8
    assert result.info["cache_bytes"] == slots * 160 * 8
    assert_matches_references(result, dense_problem)


def test_batch_drops_and_reused_free_rows_keep_the_free_set_consistent():
    """A batch drop removes exactly the increments below -tol; the kernel rows of the
    free rows, kept across free-set changes, are K's rows (dense reference)."""
    lazy_problem = rbf_problem(120, 5, 1.0, 16.0, seed=43, lazy=True)
    K = np.asarray(lazy_problem.gram)
    state = IncrementState(lazy_problem, *starting_point(lazy_problem, None)[:2])
    loop = _Loop(lazy_problem, cache_mb=1.0)
    drops = changes = 0
    for _ in range(40):
        loop.run(state, 1.0, 10 ** 6)
        negative = state.delta_free < -1.0
        before = state.free.copy()
        changed = state.update_free_set(1.0, 10, batch_drop=True)
        if negative.any():
            drops += 1
            assert changed == negative.sum()
            np.testing.assert_array_equal(state.free, before[~negative])
            assert np.all(state.feasible >= 0.0)
        changes += changed > 0
        np.testing.assert_array_equal(state.K_free_rows, K[state.free[:, 1]])
        if not changed:
            break
    assert drops > 0 and changes > drops


def test_warm_start_along_c_reaches_the_cold_optimum():
    problem = rbf_problem(100, 4, 1.0, 1.0, seed=7)
    first = solve(problem, solver="nordic0_smo")
    bigger = NordicProblem(problem.gram, problem.signs, 4.0, method="nordic0")
    warm = solve(bigger, solver="nordic0_smo", warm_start={**first.multipliers, "C": 1.0})
    cold = solve(bigger, solver="nordic0_smo")
    assert warm.status == "optimal" and warm.info["start"] == "warm_start"
    assert cold.info["start"] == "zero"
    assert warm.objective == pytest.approx(solve_primal(bigger), rel=OBJ_RTOL)
    assert warm.objective == pytest.approx(cold.objective, rel=OBJ_RTOL)


def test_step_limit_is_reported_and_not_certified():
    problem = rbf_problem(120, 4, 1.0, 8.0, seed=3)
    with pytest.warns(SolverLimitWarning, match="iteration_limit"):
        res = solve_nordic0_smo(problem, max_iter=20)
    assert res.status == "iteration_limit" and res.iterations == 20
    assert not res.certificate.certified


@pytest.mark.parametrize("option,value", [("cache_mb", 0), ("max_iter", -1), ("max_add", 0),
                                          ("coarse_tol", 0.0), ("max_iter", True),
                                          ("polish", "yes"), ("shrinking", 1)])
def test_bad_options_name_the_option(option, value):
    problem = rbf_problem(30, 3, 1.0, 1.0, seed=1)
    with pytest.raises(ValueError, match=f"'{option}' option of the nordic0_smo solver"):
        solve(problem, solver="nordic0_smo", **{option: value})


def test_other_methods_are_refused():
    problem = rbf_problem(30, 3, 1.0, 1.0, seed=1)
    nordic1 = NordicProblem(problem.gram, problem.signs, 1.0, method="nordic1")
    with pytest.raises(ValueError, match="nordic0_smo"):
        solve(nordic1, solver="nordic0_smo")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert solve(problem).solver == "nordic0_smo"  # the default for NORDIC-0


def test_newton_on_the_face_reaches_the_optimum_the_loop_alone_reaches():
    problem = rbf_problem(120, 4, 1.0, 16.0, seed=31)
    newton = solve(problem, solver="nordic0_smo")
    plain = solve(problem, solver="nordic0_smo", polish=False)
    assert newton.status == plain.status == "optimal"
    assert newton.info["newton_steps"] > 0 and plain.info["newton_steps"] == 0
    assert newton.iterations < plain.iterations
    reference = solve_primal(problem)
    assert newton.objective == pytest.approx(reference, rel=OBJ_RTOL)
    assert plain.objective == pytest.approx(reference, rel=OBJ_RTOL)
    np.testing.assert_allclose(
        problem.decision_values(newton.dual_coef, newton.intercept),
        problem.decision_values(plain.dual_coef, plain.intercept), atol=DECISION_ATOL)


def test_newton_step_keeps_the_dual_feasible_and_lowers_the_gap():
    problem = rare_problem(150, 4, 8.0, seed=32, weighted=True)
    state = IncrementState(problem, *starting_point(problem, None)[:2])
    loop = _Loop(problem, cache_mb=1.0)
    for tol in (0.1, 0.01, 1e-3):
        loop.run(state, tol, 10 ** 6)
        state.update_free_set(tol, 50)
    loop.run(state, 1e-3, 10 ** 6)
    before = relative_gap(problem, state)
    assert newton_on_face(state) > 0
    after = relative_gap(problem, state)
    assert after < before / 10
    U, alpha, gamma = problem.upper_bounds, state.alpha, state.gamma
    assert np.all(alpha >= 0.0) and np.all(alpha <= U) and np.all(gamma >= 0.0)
    rows = (problem.signs * alpha).sum(axis=0)
    rows[:-1] += gamma
    rows[1:] -= gamma
    assert np.abs(rows).max() < 1e-9
    # G, recomputed by the state from the moved alpha, is K omega
    np.testing.assert_allclose(state.G, problem.gram @ state.omega(), atol=1e-8)
