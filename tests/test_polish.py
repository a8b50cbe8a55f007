"""Tests of the active-set polishing of the SMO solver (nordicstats.solvers.polish).

References nobody here wrote: Clarabel on the paper's primal through cvxpy
(tests/primal_reference.py); the KKT conditions of the dual, recomputed here from the
dense Gram matrix; the SMO loop without polishing (``polish=False``), which reaches
the same optimum along another path.  The cases are at large C, where every
intercept ties (all gamma > 0) and dozens of noncrossing rows bind (phi > 0) --
the regime the polishing is for.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.linalg
from primal_reference import solve_primal
from test_smo import OBJ_RTOL, design, rbf_problem

from nordicstats import NORDIC
from nordicstats.data import binary_signs
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import polish, smo
from nordicstats.solvers.certificate import GAP_TOL, certify
from nordicstats.solvers.decomposition import intercepts_by_pooling
from nordicstats.solvers.polish import (
    BlockTridiagonalCholesky,
    DenseCholesky,
    HessianBlocks,
    RegularisedKKT,
    _cross_hessian,
    _Face,
    _interior_masks,
    polish_step,
)
from nordicstats.solvers.problem import NordicProblem
from nordicstats.solvers.smo import solve_smo

# (n, K, C, seed): all intercepts tie in the first four (gamma > 0 on the whole chain)
LARGE_C = [(60, 5, 16.0, 0), (80, 7, 16.0, 2), (60, 4, 8.0, 3), (70, 6, 16.0, 5)]
# KKT conditions in decision-value units: a polished point solves its face's linear
# system to ~1e-13; 1e-8 leaves room for the conditioning of K_SS
KKT_TOL = 1e-8


def dual_objective(problem, alpha, phi):
    """D = 1/2 sum_k omega_k' K omega_k - e'alpha, omega_k = y_k alpha_k + phi_k - phi_{k-1}."""
    omega = problem.signs * alpha
    omega[:, :-1] += phi
    omega[:, 1:] -= phi
    return 0.5 * float(np.sum(omega * (problem.gram @ omega))) - float(alpha.sum())


def kkt_residuals(problem, res):
    """Largest violation of each KKT condition of the dual at the solver's answer."""
    mult = res.multipliers
    alpha, phi, gamma = mult["alpha"], mult["phi"], mult["gamma"]
    U, Y = problem.upper_bounds, problem.signs
    G = problem.gram @ res.dual_coef
    margin = Y * (G + res.intercept) - 1.0
    free = (alpha > 0) & (alpha < U)
    ties = np.abs(np.diff(res.intercept))[gamma > 0]
    touching = (G[:, :-1] - G[:, 1:])[phi > 0]
    return {
        "free on the margin": np.max(np.abs(margin[free]), initial=0.0),
        "zero alphas outside": np.max(-margin[alpha == 0], initial=0.0),
        "alphas at C inside": np.max(margin[alpha == U], initial=0.0),
        "tied intercepts": np.max(ties, initial=0.0),
        "binding rows touch": np.max(np.abs(touching), initial=0.0),
        "no crossing": np.max(G[:, 1:] - G[:, :-1], initial=0.0),
    }


def dense_hessian(face, K_SS):
    """H = M' (I (x) K_SS) M formed from its definition (M: the face's entries of Omega
    as a dense (|S| (K-1), size) matrix), and M."""
    var, row, bound, coef = face.entries
    M = np.zeros((face.rows.size * face.m, face.size))
    M[bound * face.rows.size + row, var] = coef
    return M.T @ np.kron(np.eye(face.m), K_SS) @ M, M


@pytest.mark.parametrize("n,K,C,seed", LARGE_C)
def test_polished_answer_is_the_primal_optimum_with_exact_kkt(n, K, C, seed, always_polish):
    problem = rbf_problem(n, K, C, seed)
    res = solve_smo(problem)
    assert res.status == "optimal", res.message
    assert any(step["accepted"] for step in res.info["polish"])
    # the regime: intercepts tied, noncrossing rows binding (stated on G = K Omega and b,
    # unique at the optimum; the multipliers phi and gamma of a degenerate optimum are not)
    G = problem.gram @ res.dual_coef
    assert np.sum(np.abs(G[:, :-1] - G[:, 1:]) <= 1e-8) >= 30
    assert np.ptp(res.intercept) <= 1e-8
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    # the answer is the exact optimum of its face, not an approximate one
    assert res.gap <= 1e-12
    for name, value in kkt_residuals(problem, res).items():
        assert value <= KKT_TOL, name


@pytest.mark.parametrize("n,K,C,seed", LARGE_C[:2] + [(80, 5, 0.0625, 6), (80, 3, 1.0, 7)])
def test_polished_answer_equals_the_unpolished_one(n, K, C, seed, always_polish):
    problem = rbf_problem(n, K, C, seed, rare=seed == 6)
    polished, plain = solve_smo(problem), solve_smo(problem, polish=False)
    assert plain.status == polished.status == "optimal"
    assert plain.info["polish"] == []
    assert polished.objective == pytest.approx(plain.objective, rel=OBJ_RTOL)
    # f = K omega + b is unique at the optimum; the plain path stops at gap ~1e-7
    np.testing.assert_allclose(problem.decision_values(polished.dual_coef, polished.intercept),
                               problem.decision_values(plain.dual_coef, plain.intercept),
                               atol=1e-4)
    assert polished.iterations <= plain.iterations


def _moved_on_the_face(problem, alpha, share=0.3):
    """alpha with two free alphas of boundary 0 (same label) moved by +-delta: y'alpha
    and every bound still hold, the face is the same, the point is not optimal."""
    U, y = problem.upper_bounds[:, 0], problem.signs[:, 0]
    free = np.flatnonzero((alpha[:, 0] > 0) & (alpha[:, 0] < U) & (y > 0))
    i, j = free[:2]
    delta = share * min(U[i] - alpha[i, 0], alpha[j, 0])
    moved = alpha.copy()
    moved[i, 0] += delta
    moved[j, 0] -= delta
    return moved


def test_from_a_point_of_the_optimal_face_the_step_lands_on_the_optimum():
    problem = rbf_problem(80, 5, 16.0, seed=1)
    res = solve_smo(problem)
    mult = res.multipliers
    G = problem.gram @ res.dual_coef
    step, candidate = polish_step(problem, mult["alpha"], mult["phi"], mult["gamma"], G,
                                  res.intercept)
    assert step.converged and step.rounds == 1  # the optimum is a fixed point
    alpha, phi, gamma = _moved_on_the_face(problem, mult["alpha"]), mult["phi"], mult["gamma"]
    omega = problem.signs * alpha
    omega[:, :-1] += phi
    omega[:, 1:] -= phi
    G = problem.gram @ omega
    step, candidate = polish_step(problem, alpha, phi, gamma, G,
                                  intercepts_by_pooling(problem, G))
    assert step.descent and step.converged
    assert dual_objective(problem, candidate["alpha"], candidate["phi"]) < dual_objective(
        problem, alpha, phi)
    # back at the optimum: the dual value, and K omega (unique, unlike alpha and phi
    # where a row has a positive phi and both of its alphas free)
    assert dual_objective(problem, candidate["alpha"], candidate["phi"]) == pytest.approx(
        dual_objective(problem, mult["alpha"], mult["phi"]), rel=1e-12)
    np.testing.assert_allclose(candidate["G"], problem.gram @ res.dual_coef, atol=1e-8)
    # its G is K Omega, and the inputs were not modified
    omega = problem.signs * candidate["alpha"]
    omega[:, :-1] += candidate["phi"]
    omega[:, 1:] -= candidate["phi"]
    np.testing.assert_allclose(candidate["G"], problem.gram @ omega, atol=1e-9 * problem.C)
    assert not np.array_equal(alpha, candidate["alpha"])
    assert np.array_equal(alpha, _moved_on_the_face(problem, mult["alpha"]))


def test_duplicated_rows_make_a_singular_face_and_still_certify(always_polish):
    # every covariate pattern twice: K_SS is singular, the refinement picks a solution
    X, codes = design(40, 5, seed=8)
    X, codes = np.r_[X, X], np.r_[codes, codes]
    kernel = make_kernel("rbf", gamma=0.2)
    base = rbf_problem(40, 5, 16.0, seed=8)
    problem = dataclasses.replace(base, gram=kernel(X, X),
                                  signs=np.r_[base.signs, base.signs])
    res = solve_smo(problem)
    assert res.status == "optimal", res.message
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    cert = certify(problem, res.dual_coef, res.intercept, res.multipliers)
    assert cert.certified and cert.gap <= GAP_TOL


@pytest.mark.parametrize("K,C", [(4, 16.0), (6, 16.0), (5, 2.0)])
def test_weighted_rows_and_rows_of_weight_zero(K, C, always_polish):
    # hinge weights c in [0.2, 3] and 5% of the rows of weight 0 (U = 0: alpha is fixed
    # at 0 whatever its margin, so it may never join a face)
    problem = rbf_problem(80, K, C, seed=3, weighted=True)
    res = solve_smo(problem)
    assert res.status == "optimal" and res.info["polish"][-1]["converged"]
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    assert np.all(res.multipliers["alpha"][problem.upper_bounds == 0] == 0)
    assert res.gap <= 1e-12


def test_rows_on_demand_polish_to_the_dense_answer(always_polish):
    dense = rbf_problem(120, 5, 16.0, seed=11)
    lazy = dataclasses.replace(dense, gram=KernelMatrix(make_kernel("rbf", gamma=0.2),
                                                        design(120, 5, 11)[0]))
    ref, res = solve_smo(dense), solve_smo(lazy)
    assert res.status == "optimal"
    assert res.iterations == ref.iterations
    assert res.objective == pytest.approx(ref.objective, rel=1e-10)


def test_bsvm_polishes_to_libsvm_kkt(always_polish):
    # BSVM has no phi and no gamma: the face is the free alphas and the K-1 intercepts
    problem = dataclasses.replace(rbf_problem(80, 4, 16.0, seed=4), method="bsvm")
    res = solve_smo(problem)
    assert res.status == "optimal"
    assert any(step["accepted"] for step in res.info["polish"])
    residuals = kkt_residuals(problem, res)
    for name in ("free on the margin", "zero alphas outside", "alphas at C inside"):
        assert residuals[name] <= KKT_TOL, name


def test_polishing_waits_for_smo_work_worth_its_cost(monkeypatch):
    # n = 150: an SMO step (150 units) is cheap against a face of ~480 variables
    # (3 x 2 x 480^2 units), so the default path runs more SMO steps before it
    # polishes than the path that polishes after every tolerance; both certify
    problem = rbf_problem(150, 7, 16.0, seed=2)
    default = solve_smo(problem)
    monkeypatch.setattr(smo, "EXPECTED_ROUNDS", 0)
    every = solve_smo(problem)
    assert default.status == every.status == "optimal"
    assert default.iterations > every.iterations
    assert default.info["polish"] and every.info["polish"][0]["converged"]
    monkeypatch.undo()
    # n = 600, C = 16: the SMO work reaches the cost, the polished face settles
    res = solve_smo(rbf_problem(600, 5, 16.0, seed=3))
    assert res.status == "optimal" and res.info["polish"][-1]["converged"]
    assert res.gap <= 1e-12


def test_no_last_phase_at_a_loose_pair_tolerance_while_polishing_can_finish(monkeypatch):
    # polishing never worth trying (infinite cost): at C = 2^-4 the gap is met at the first
    # pair tolerance already; the noncrossing residuals must still wait for 1e-5 (the
    # last phase at 1e-2 ran 24,679 phi steps at n = 1,000, K = 7)
    calls = []

    def recording_loop(*args):
        calls.append((args[9], args[10]))  # tol, tol_phi
        return loop(*args)

    loop = smo.smo_loop
    monkeypatch.setattr(smo, "smo_loop", recording_loop)
    monkeypatch.setattr(smo, "_polish_work", lambda *args: np.inf)
    problem = rbf_problem(150, 7, 0.0625, seed=8)
    res = solve_smo(problem)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    last_phase = [tol for tol, tol_phi in calls if tol_phi < tol]
    assert len(calls) > 1 and all(tol <= smo.LAST_PHASE_TOL for tol in last_phase)


def test_deterministic(always_polish):
    problem = rbf_problem(70, 6, 16.0, seed=5)
    first, second = solve_smo(problem), solve_smo(problem)
    assert first.iterations == second.iterations
    assert np.array_equal(first.dual_coef, second.dual_coef)


# 57 rows of one covariate and three levels on which a polishing face held one tied-intercept
# gamma and no alpha of the two equality rows it enters: the Schur complement
# A (H + delta I)^-1 A' is then 1/delta times a singular matrix, and the face system must
# neither raise nor be taken
SINGLE_GAMMA_FACE_X = [
    -0.626454, 0.183643, -0.835629, 1.595281, 0.329508, -0.820468, 0.487429, 0.738325,
    0.575781, 1.511781, 0.389843, -0.621241, 1.124931, -0.044934, -0.01619, 0.943836,
    0.821221, 0.593901, 0.918977, 0.782136, 0.074565, 0.619826, -0.056129, -0.155796,
    -1.470752, -0.47815, 0.417942, 1.35868, -0.102788, 0.387672, -0.053805, -1.37706,
    -0.414995, -0.39429, -0.059313, 1.100025, 0.763176, -0.164524, -0.253362, 0.696963,
    0.556663, -0.688756, -0.707495, 0.364582, 0.768533, -0.112346, 0.881108, 0.398106,
    -0.612026, 0.34112, -1.129363, 1.433024, 1.9804, -0.367221, -1.044135, 0.56972, -0.135055]
SINGLE_GAMMA_FACE_Y = "HMLHMLMHMHMMMHMHHMHHHHMHLMHHHHMMMLLMMLMMHLMHHMHMMHLHHMLHM"


def test_a_face_of_one_tied_intercept_alone_neither_raises_nor_is_taken():
    from nordicstats.model import NORDIC

    X = pd.DataFrame({"x1": SINGLE_GAMMA_FACE_X})
    y = pd.Series(pd.Categorical(list(SINGLE_GAMMA_FACE_Y), categories=["L", "M", "H"],
                                 ordered=True))
    model = NORDIC(y, X)
    res = model.fit(cov_type="none").solver_result
    assert res.status == "optimal", res.message
    assert res.objective == pytest.approx(solve_primal(model.build_problem()), rel=OBJ_RTOL)
    plain = NORDIC(y, X, solver_options={"polish": False}).fit(cov_type="none").solver_result
    assert res.objective == pytest.approx(plain.objective, rel=OBJ_RTOL)


def test_block_tridiagonal_cholesky_solves_like_a_dense_solve():
    # a random block tridiagonal SPD matrix of blocks 3, 5, 1, 4 in a scrambled order
    rng = np.random.default_rng(0)
    order = rng.permutation(13)
    blocks = [order[:3], order[3:8], order[8:9], order[9:]]
    H = np.zeros((13, 13))
    for k, block in enumerate(blocks):
        for other in blocks[max(k - 1, 0):k + 2]:
            H[np.ix_(block, other)] = rng.normal(size=(block.size, other.size))
    H = H @ H.T  # H H' of a block tridiagonal H is block pentadiagonal: keep the band
    for k, block in enumerate(blocks):
        for far in blocks[k + 2:]:
            H[np.ix_(block, far)] = H[np.ix_(far, block)] = 0.0
    H += 13.0 * np.eye(13)  # diagonally dominant after cutting: positive definite
    factor = BlockTridiagonalCholesky(
        blocks, [H[np.ix_(b, b)] for b in blocks],
        [H[np.ix_(low, up)] for up, low in zip(blocks, blocks[1:])])
    B = rng.normal(size=(13, 2))
    expected = np.linalg.solve(H + factor.delta * np.eye(13), B)
    np.testing.assert_allclose(factor.solve(B), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(factor.solve(B[:, 0]), expected[:, 0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["nordic1", "bsvm"])
def test_face_hessian_is_block_tridiagonal_and_its_factor_solves_the_dense_system(method):
    # the face of an SMO point at large C (phis and gammas free): H formed densely from
    # its definition M' (I (x) K_SS) M, zero outside the boundary blocks' band, and the
    # block factor's regularised KKT solve equal to the dense one
    problem = dataclasses.replace(rbf_problem(80, 6, 16.0, seed=2), method=method)
    res = solve_smo(problem, polish=False)
    mult = res.multipliers
    free = _interior_masks(problem.upper_bounds, mult["alpha"], mult["phi"], mult["gamma"])
    face = _Face(problem.signs, problem.upper_bounds, *free)
    assert face.size > 100 and (method == "bsvm" or face.phi_index[0].size > 10)
    K_SS = problem.gram[np.ix_(face.rows, face.rows)]
    H = dense_hessian(face, K_SS)[0]
    blocks = face.blocks()
    assert sorted(np.concatenate(blocks)) == list(range(face.size))
    for k, block in enumerate(blocks):
        for far in blocks[k + 2:]:
            assert not H[np.ix_(block, far)].any()
    x = np.random.default_rng(1).normal(size=face.size)
    np.testing.assert_allclose(face.hessian_product(K_SS, x), H @ x, atol=1e-10)
    A = face.equality_rows(problem.signs)
    r = np.random.default_rng(2).normal(size=face.size + face.m)
    dense = RegularisedKKT(DenseCholesky(H), A).solve(r)
    block = RegularisedKKT(face.block_factor(K_SS), A).solve(r)
    delta = DenseCholesky(H).delta
    P = np.block([[H + delta * np.eye(face.size), A.T], [A, -delta * np.eye(face.m)]])
    # both solve the regularised system: compare residuals (the solutions themselves
    # differ by rounding times 1/delta along the face's near-null directions)
    scale = np.abs(r).max()
    assert np.abs(P @ dense - r).max() <= 1e-6 * scale
    assert np.abs(P @ block - r).max() <= 1e-6 * scale


def large_c_and_overlap_faces():
    """Faces of SMO points with free alphas, positive phis and positive gammas: large C
    (LARGE_C) and heavy overlap (OVERLAP, the loose point at a pair tolerance of 1)."""
    problem = rbf_problem(80, 6, 16.0, seed=2)
    mult = solve_smo(problem, polish=False).multipliers
    points = [(problem, mult["alpha"], mult["phi"], mult["gamma"])]
    overlap = overlap_problem(*OVERLAP[1])
    points.append((overlap, *smo_point(overlap, 1.0)[:3]))
    for problem, alpha, phi, gamma in points:
        free = _interior_masks(problem.upper_bounds, alpha, phi, gamma)
        yield problem, _Face(problem.signs, problem.upper_bounds, *free)


def test_face_hessian_blocks_equal_its_definition_bit_for_bit():
    # the blocks of H (one gather of K_SS times C C') against M' (I (x) K_SS) M formed
    # densely: every entry is K_ij times a small integer, so they agree exactly -- the
    # numbers of the sum over boundaries the polishing computed before
    gammas = 0
    for problem, face in large_c_and_overlap_faces():
        assert face.phi_index[0].size > 5
        gammas += face.kg.size
        K_SS = problem.gram[np.ix_(face.rows, face.rows)]
        H, M = dense_hessian(face, K_SS)
        blocks = face.blocks()
        for first in blocks:
            for second in blocks:
                np.testing.assert_array_equal(_cross_hessian(face, first, second, K_SS),
                                              H[np.ix_(first, second)])
        rng = np.random.default_rng(3)
        some, others = (np.sort(rng.choice(face.size, 40, replace=False)) for _ in range(2))
        np.testing.assert_array_equal(_cross_hessian(face, some, others, K_SS),
                                      H[np.ix_(some, others)])
        # K_SS column-major, as the kept kernel rows give it: gathered through K_SS'
        by_columns = _cross_hessian(face, some, others, np.asfortranarray(K_SS))
        np.testing.assert_array_equal(by_columns, H[np.ix_(some, others)])
        assert by_columns.flags.c_contiguous
        # M v and M' W (np.bincount) against the dense M
        v, W = rng.normal(size=face.size), rng.normal(size=(face.rows.size, face.m))
        np.testing.assert_allclose(face.omega(v).T.ravel(), M @ v, rtol=0, atol=1e-13)
        np.testing.assert_allclose(face.transpose_omega(W), M.T @ W.T.ravel(), rtol=0,
                                   atol=1e-13)
    assert gammas > 0  # a block of tied intercepts, which moves no Omega


@pytest.mark.parametrize("shift", [0.0, 0.01])
def test_block_factor_equals_the_scipy_factor_and_the_dense_solve(shift):
    # the block factor (one column-major copy, potrf in place, trtrs) against the same
    # block Thomas algorithm through scipy.linalg.cholesky / solve_triangular (the
    # factor's blocks bit for bit) and against a dense solve of H + shift I + delta I
    for problem, face in large_c_and_overlap_faces():
        K_SS = problem.gram[np.ix_(face.rows, face.rows)]
        factor = face.block_factor(K_SS, proximal=shift)
        H = dense_hessian(face, K_SS)[0]
        blocks = face.blocks()
        diagonal = [H[np.ix_(b, b)] + shift * np.eye(b.size) for b in blocks]
        delta = polish._proximal_delta(np.concatenate([np.diag(D) for D in diagonal]))
        assert factor.delta == delta
        last = None
        for k, (block, D) in enumerate(zip(blocks, diagonal)):
            D = D + delta * np.eye(block.size)
            if k:
                below = H[np.ix_(block, blocks[k - 1])]
                C = scipy.linalg.solve_triangular(last, below.T, lower=True).T
                np.testing.assert_array_equal(factor.coupling[k], C)
                D -= C @ C.T
            last = scipy.linalg.cholesky(D, lower=True)
            np.testing.assert_array_equal(factor.chol[k], last)
        B = np.random.default_rng(4).normal(size=(face.size, 3))
        shifted = H + (shift + delta) * np.eye(face.size)
        if shift:  # strongly convex: the solutions themselves agree
            np.testing.assert_allclose(factor.solve(B), np.linalg.solve(shifted, B),
                                       rtol=1e-10, atol=1e-12)
        # with delta alone the face is nearly singular (1/delta ~ 1e9): the residuals
        assert np.abs(shifted @ factor.solve(B) - B).max() <= 1e-6 * np.abs(B).max()
        assert np.abs(shifted @ factor.solve(B[:, 1]) - B[:, 1]).max() <= 1e-6 * np.abs(B).max()


@pytest.mark.parametrize("n,K,C,seed", LARGE_C[:2])
def test_block_factor_and_dense_factor_give_the_same_path_and_optimum(n, K, C, seed,
                                                                      always_polish,
                                                                      monkeypatch):
    # tied intercepts and binding noncrossing rows; the dense factor of the formed H is
    # the polishing before the block factor
    problem = rbf_problem(n, K, C, seed)
    block = solve_smo(problem)
    monkeypatch.setattr(_Face, "block_factor",
                        lambda face, K_SS, proximal=0.0, kept=None: DenseCholesky(
                            dense_hessian(face, K_SS)[0] + proximal * np.eye(face.size)))
    dense = solve_smo(problem)
    assert block.status == dense.status == "optimal"
    assert block.iterations == dense.iterations
    assert [s["rounds"] for s in block.info["polish"]] == [
        s["rounds"] for s in dense.info["polish"]]
    reference = solve_primal(problem)
    assert block.objective == pytest.approx(reference, rel=OBJ_RTOL)
    assert block.objective == pytest.approx(dense.objective, rel=1e-12)


@pytest.mark.parametrize("m,per_boundary,rows,too_large", [
    (6, 1200, 3000, False),  # K = 7: 7,200 variables, 23.0 million entries of H's blocks
    (6, 1300, 3000, True),  # 7,800 variables, 27.0 million
    (2, 2500, 3000, False),  # K = 3: 5,000 variables, 25 million (the old bound)
    (2, 2501, 3000, True),
    (6, 834, 5001, True),  # 5,004 variables on 5,001 rows: K_SS too large
])
def test_faces_too_large_by_the_rows_and_the_blocks_of_h(m, per_boundary, rows, too_large):
    n = 6000
    Y, U = np.ones((n, m)), np.ones((n, m))
    free_alpha = np.zeros((n, m), dtype=bool)
    for k in range(m):  # per_boundary alphas of boundary k, spread over the first rows rows
        free_alpha[(k * per_boundary + np.arange(per_boundary)) % rows, k] = True
    face = _Face(Y, U, free_alpha, np.zeros((n, m - 1), dtype=bool), np.zeros(m - 1, bool))
    assert face.size == m * per_boundary and face.rows.size == min(rows, face.size)
    assert face.too_large is too_large


# heavy class overlap (3 Logistic noise) at large C: tied intercepts, binding noncrossing
# rows and many free alphas -- the regime of the proximal steps
OVERLAP = [(150, 5, 16.0, 31), (120, 7, 4.0, 32), (140, 6, 16.0, 33)]


def overlap_problem(n, K, C, seed):
    X, codes = design(n, K, seed, noise=3.0)
    return NordicProblem(gram=make_kernel("rbf", gamma=0.2)(X, X),
                         signs=binary_signs(codes, K), C=C, method="nordic1")


def smo_point(problem, tol):
    """(alpha, phi, gamma, G) of the SMO loop run to the pair tolerance ``tol`` from 0."""
    n, m = problem.signs.shape
    Y, U = (np.ascontiguousarray(x.T, dtype=float) for x in (problem.signs,
                                                             problem.upper_bounds))
    alpha, phi, gamma, G = np.zeros((m, n)), np.zeros((m - 1, n)), np.zeros(m - 1), np.zeros((m, n))
    cache = smo._row_cache(problem.gram, None)
    smo.smo_loop(Y, U, alpha, phi, gamma, G, cache.diagonal(), True, True, tol, tol, 10 ** 7,
                 False, *cache.arrays())
    return alpha.T.copy(), phi.T.copy(), gamma, G.T.copy()


@pytest.mark.parametrize("n,K,C,seed", OVERLAP)
def test_proximal_steps_reach_the_primal_optimum_from_a_loose_smo_point(n, K, C, seed):
    # at a pair tolerance of 1 the active set from the point itself does not settle
    # (e.g. 206, 99, 77, 59, 57, 157 changes), the proximal steps do
    problem = overlap_problem(n, K, C, seed)
    alpha, phi, gamma, G = smo_point(problem, 1.0)
    step, candidate = polish_step(problem, alpha, phi, gamma, G,
                                  intercepts_by_pooling(problem, G))
    assert step.proximal > 0 and step.converged and step.descent
    a, p, g = candidate["alpha"], candidate["phi"], candidate["gamma"]
    # dual feasible, G = K Omega, and -D is the primal optimum of Clarabel
    U = problem.upper_bounds
    assert a.min() >= 0.0 and np.all(a <= U) and p.min() >= 0.0 and g.min() >= 0.0
    eq = np.sum(problem.signs * a, axis=0)
    eq[:-1] += g
    eq[1:] -= g
    assert np.max(np.abs(eq)) <= 1e-9 * C
    omega = problem.signs * a
    omega[:, :-1] += p
    omega[:, 1:] -= p
    np.testing.assert_allclose(candidate["G"], problem.gram @ omega, atol=1e-9 * C)
    assert -dual_objective(problem, a, p) == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    assert np.any(g > 0) and np.any(p > 0)


@pytest.mark.parametrize("n,K,C,seed", OVERLAP)
def test_with_and_without_proximal_steps_the_same_certified_optimum(n, K, C, seed,
                                                                    always_polish,
                                                                    monkeypatch):
    # the first polishing at a pair tolerance of 1, where the active set from the SMO
    # point does not settle (at 1e-2 it does on problems this small)
    monkeypatch.setattr(smo, "POLISH_FIRST_TOL", 1.0)
    problem = overlap_problem(n, K, C, seed)
    proximal = solve_smo(problem)
    monkeypatch.setattr(polish, "PROXIMAL_STEPS", 0)
    plain = solve_smo(problem)
    assert any(step["proximal"] for step in proximal.info["polish"])
    assert not any(step["proximal"] for step in plain.info["polish"])
    reference = solve_primal(problem)
    for res in (proximal, plain):
        assert res.status == "optimal" and res.gap <= GAP_TOL
        assert res.objective == pytest.approx(reference, rel=OBJ_RTOL)
    np.testing.assert_allclose(
        problem.decision_values(proximal.dual_coef, proximal.intercept),
        problem.decision_values(plain.dual_coef, plain.intercept), atol=1e-3)


def test_no_proximal_step_after_the_rounds_the_smo_work_pays_for():
    problem = overlap_problem(*OVERLAP[1])
    alpha, phi, gamma, G = smo_point(problem, 1.0)
    b = intercepts_by_pooling(problem, G)
    free = polish_step(problem, alpha, phi, gamma, G, b)[0]
    first = polish_step(problem, alpha, phi, gamma, G, b, max_rounds=1)[0]
    # the active set from the point itself runs its rounds (not settling), then nothing
    assert free.proximal > 0 and free.converged
    assert first.proximal == 0 and not first.converged
    assert first.changes == free.changes[:first.rounds]


@pytest.mark.parametrize("n,K,C,seed", OVERLAP[:2])
def test_smo_goes_on_from_a_proximal_point_to_the_primal_optimum(n, K, C, seed, always_polish,
                                                                 monkeypatch):
    # one strong proximal step per polishing step: its point lowers the dual but is not
    # the optimum, so the SMO loop takes it and goes on from there
    monkeypatch.setattr(smo, "POLISH_FIRST_TOL", 1.0)
    monkeypatch.setattr(polish, "PROXIMAL_STEPS", 1)
    monkeypatch.setattr(polish, "PROXIMAL_FIRST", 1.0)
    problem = overlap_problem(n, K, C, seed)
    res = solve_smo(problem)
    steps = res.info["polish"]
    assert any(step["accepted"] and not step["converged"] for step in steps)
    assert res.status == "optimal" and res.gap <= GAP_TOL
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)


# 25 rows (two covariates, three levels) on which BSVM's polishing (C = 0.25, the
# width rule's gamma = 22.5) met, in an earlier round, an in-box face optimum whose face
# had no free alpha on boundary 1 while that row's fixed part was 0.25: its least-squares
# solution had a lower dual value than the optimum and was returned as the candidate
SINGLE_ROW_FACE_X = [
    0.03540397, -0.00049654, -0.0531598, -0.22765665, 0.00187154, 0.09273688, 0.10433347,
    -0.05361981, 0.22293638, 0.1943692, -0.02282261, -0.01551811, 0.0958965, -0.02547655,
    0.0224766, 0.12198602, 0.11897205, -0.05298005, -0.0455621, -0.05490485, -0.00141582,
    0.00749149, -0.03886872, 0.0774694, 0.00496117, 0.00133648, -0.19687561, -0.13848387,
    -0.06952254, 0.03604559, -0.08661643, 0.15592586, 0.01476307, 0.02571033, 0.01199627,
    0.04926233, 0.09239784, -0.05509024, 0.15685337, -0.07791051, 0.05174087, -0.02063235,
    -0.01664106, 0.06701484, 0.02018137, 0.160742, -0.05078405, 0.05163088, 0.05838731,
    0.21121055]
SINGLE_ROW_FACE_Y = [2, 2, 2, 1, 0, 1, 2, 2, 0, 1, 0, 2, 0, 0, 1, 1, 0, 2, 1, 0, 0, 2, 0, 0, 0]


def test_a_candidate_keeps_the_equality_rows():
    X = np.reshape(SINGLE_ROW_FACE_X, (-1, 2))
    problem = NORDIC(np.array(SINGLE_ROW_FACE_Y), X, kernel="rbf", C=0.25,
                     method="bsvm").build_problem()
    res = solve_smo(problem)
    assert res.info["polish"] and res.info["polish"][-1]["accepted"]
    assert res.status == "optimal" and res.gap <= GAP_TOL
    alpha = res.multipliers["alpha"]
    assert np.max(np.abs(np.sum(problem.signs * alpha, axis=0))) <= 1e-12
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)


@pytest.mark.parametrize("lazy", [False, True])
def test_kept_hessian_blocks_equal_the_blocks_computed_afresh(lazy, monkeypatch):
    # the rounds of a polishing step from a loose SMO point under heavy overlap (the
    # active set from the point, then proximal ones): every block H_kk, H_k+1,k handed
    # to the factor equals the one computed from K_SS afresh, bit for bit
    monkeypatch.setattr(polish, "KEPT_BLOCK_MIN", 1)  # every block kept, however small
    problem = overlap_problem(*OVERLAP[0])
    alpha, phi, gamma, G = smo_point(problem, 1.0)
    if lazy:  # rows on demand, kept by KernelRows
        problem = dataclasses.replace(problem, gram=KernelMatrix(
            make_kernel("rbf", gamma=0.2), design(150, 5, 31, noise=3.0)[0]))
    inner, used = HessianBlocks.blocks, []

    def checked(self, face, K_SS):
        diagonal, below = inner(self, face, K_SS)
        fresh_diagonal, fresh_below = inner(HessianBlocks(keep=False), face, K_SS)
        for kept, fresh in zip(diagonal + below, fresh_diagonal + fresh_below, strict=True):
            np.testing.assert_array_equal(kept, fresh)
        used.append(self)
        return diagonal, below

    monkeypatch.setattr(HessianBlocks, "blocks", checked)
    step, _ = polish_step(problem, alpha, phi, gamma, G, intercepts_by_pooling(problem, G))
    assert step.proximal > 0 and step.converged and step.rounds == len(used) >= 5
    kept = used[-1]
    # most entries of the later rounds were kept: the reuse happened
    assert kept.reused > kept.computed


@pytest.mark.parametrize("n,K,C,seed", LARGE_C[:2] + OVERLAP)
def test_kept_hessian_blocks_give_the_same_path_and_the_primal_optimum(n, K, C, seed,
                                                                       always_polish,
                                                                       monkeypatch):
    # tied intercepts and binding noncrossing rows (LARGE_C), heavy overlap with proximal
    # steps (OVERLAP, first polishing at a pair tolerance of 1): the same numbers, so the
    # same path and the same point, and the optimum of Clarabel on the primal
    monkeypatch.setattr(smo, "POLISH_FIRST_TOL", 1.0)
    monkeypatch.setattr(polish, "KEPT_BLOCK_MIN", 1)  # every block kept, however small
    problem = (rbf_problem if (n, K, C, seed) in LARGE_C else overlap_problem)(n, K, C, seed)
    kept = solve_smo(problem)
    monkeypatch.setattr(polish, "KEEP_HESSIAN_BLOCKS", False)
    fresh = solve_smo(problem)
    assert kept.status == fresh.status == "optimal" and kept.gap <= GAP_TOL
    assert any(step["accepted"] for step in kept.info["polish"])
    assert kept.iterations == fresh.iterations
    assert [s["changes"] for s in kept.info["polish"]] == [
        s["changes"] for s in fresh.info["polish"]]
    np.testing.assert_array_equal(kept.dual_coef, fresh.dual_coef)
    np.testing.assert_array_equal(kept.intercept, fresh.intercept)
    assert kept.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    if (n, K, C, seed) in LARGE_C:
        G = problem.gram @ kept.dual_coef
        assert np.ptp(kept.intercept) <= 1e-8
        assert np.sum(np.abs(G[:, :-1] - G[:, 1:]) <= 1e-8) >= 30


@pytest.mark.parametrize("case", OVERLAP)
def test_an_active_set_whose_first_round_changes_a_quarter_of_its_face_is_given_up(case,
                                                                                 monkeypatch):
    # from the loose SMO point (pair tolerance 1) the first round changes 206 of 299,
    # 408 of 203, 146 of 343 variables: given up at once, the proximal steps go on from
    # the same centre as after the rounds that would have followed, to the optimum
    problem = overlap_problem(*case)
    alpha, phi, gamma, G = smo_point(problem, 1.0)
    b = intercepts_by_pooling(problem, G)
    given_up, candidate = polish_step(problem, alpha, phi, gamma, G, b)
    quarter = polish.FIRST_ROUND_CHANGES
    monkeypatch.setattr(polish, "FIRST_ROUND_CHANGES", None)
    kept_on, _ = polish_step(problem, alpha, phi, gamma, G, b)
    assert given_up.changes[0] == kept_on.changes[0] > quarter * given_up.size
    assert given_up.rounds < kept_on.rounds
    assert kept_on.changes[-len(given_up.changes) + 1:] == given_up.changes[1:]
    assert given_up.converged and given_up.proximal == kept_on.proximal == 1
    assert -dual_objective(problem, candidate["alpha"], candidate["phi"]) == pytest.approx(
        solve_primal(problem), rel=OBJ_RTOL)
