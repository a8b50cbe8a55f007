"""Tests of the row block step of the compiled SMO loop (nordicstats.solvers.smo_core).

The step moves all the noncrossing multipliers of one row to their joint minimiser,
computed by pool adjacent violators on the row's G.  References nobody here wrote:
scipy's bounded least squares (``lsq_linear``, BVLS) on the same tiny QP, a brute force
over its active sets, and whole fits against Clarabel on the paper's primal
(tests/primal_reference.py).
"""

import itertools

import numpy as np
import pytest
from primal_reference import solve_primal
from scipy.optimize import lsq_linear

from nordicstats.data import binary_signs
from nordicstats.kernels import make_kernel
from nordicstats.solvers import NordicProblem
from nordicstats.solvers import smo as smo_module
from nordicstats.solvers.smo import solve_smo
from nordicstats.solvers.smo_core import _row_block_step, row_block_optimum

# Clarabel at 1e-10 reaches ~1e-9 relative; the certificate's gap is 1e-6 relative
OBJ_RTOL = 1e-6


def difference_matrix(L):
    """D (L x (L-1)): column j is e_j - e_{j+1}, so (D p)_j = p_j - p_{j-1}."""
    D = np.zeros((L, L - 1))
    D[np.arange(L - 1), np.arange(L - 1)] = 1.0
    D[np.arange(1, L), np.arange(L - 1)] = -1.0
    return D


def block_objective(g, phi, kii, p):
    """g'D (p - phi) + K_ii / 2 ||D (p - phi)||^2, the dual restricted to one row's phis."""
    move = difference_matrix(g.size) @ (p - phi)
    return float(g @ move + 0.5 * kii * move @ move)


def brute_force(g, phi, kii):
    """Minimiser over every active set: the unconstrained optimum on each support, kept
    when feasible; the best of those."""
    L, D = g.size, difference_matrix(g.size)
    target = -(g - kii * D @ phi) / kii
    best, best_p = np.inf, None
    for size in range(L):
        for support in itertools.combinations(range(L - 1), size):
            p = np.zeros(L - 1)
            if support:
                p[list(support)] = np.linalg.lstsq(D[:, support], target, rcond=None)[0]
            if np.all(p >= -1e-12) and block_objective(g, phi, kii, p) < best:
                best, best_p = block_objective(g, phi, kii, p), np.maximum(p, 0.0)
    return best_p


def random_row(rng):
    L = int(rng.integers(2, 8))
    scale = rng.choice([1e-2, 1.0, 30.0])
    g = rng.normal(size=L) * scale
    if rng.random() < 0.3:  # ties: boundaries touching at x_i
        g[1:] = np.where(rng.random(L - 1) < 0.5, g[:-1], g[1:])
    phi = np.maximum(rng.normal(size=L - 1), 0.0) * rng.choice([0.0, 0.1, 3.0])
    return g, phi, float(rng.uniform(0.05, 3.0))


@pytest.mark.parametrize("seed", range(4))
def test_block_optimum_equals_bounded_least_squares_and_brute_force(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        g, phi, kii = random_row(rng)
        L = g.size
        p = np.empty(L - 1)
        row_block_optimum(g, phi, kii, p)
        D = difference_matrix(L)
        bvls = lsq_linear(D, -(g - kii * D @ phi) / kii, bounds=(0.0, np.inf),
                          method="bvls", tol=1e-14).x
        brute = brute_force(g, phi, kii)
        assert np.all(p >= 0.0)
        # D has full column rank, so the minimiser is unique; 1e-9 relative to the
        # scale of the multipliers allows the least-squares solves' round-off
        tol = 1e-9 * max(1.0, np.max(np.abs(bvls)))
        np.testing.assert_allclose(p, bvls, atol=tol)
        np.testing.assert_allclose(p, brute, atol=tol)
        reference = block_objective(g, phi, kii, bvls)
        assert block_objective(g, phi, kii, p) <= reference + 1e-12 * max(1.0, abs(reference))


def test_block_optimum_leaves_the_row_noncrossing_with_complementary_slackness():
    rng = np.random.default_rng(11)
    for _ in range(300):
        g, phi, kii = random_row(rng)
        p = np.empty(g.size - 1)
        row_block_optimum(g, phi, kii, p)
        new_g = g + kii * difference_matrix(g.size) @ (p - phi)
        gaps = new_g[:-1] - new_g[1:]  # KKT: >= 0, and 0 where p > 0
        scale = 1e-12 * max(1.0, np.max(np.abs(g)), kii * np.max(phi, initial=0.0))
        assert np.all(gaps >= -scale)
        assert np.all(np.abs(gaps[p > 0.0]) <= scale)


@pytest.mark.parametrize("relax", [1.0, 1.8])
def test_block_step_keeps_G_equal_to_K_omega(relax):
    # a random dual point of K = 6 boundaries with some rows dropped by shrinking; the
    # step moves the phis of row i along its active run only, updates G = K Omega on
    # the active entries and flags exactly the columns whose omega changed
    rng = np.random.default_rng(5)
    n, m = 40, 5
    X = rng.normal(size=(n, 3))
    gram = make_kernel("rbf", gamma=0.3)(X, X)
    alpha_y, phi = rng.normal(size=(m, n)), np.maximum(rng.normal(size=(m - 1, n)), 0.0)

    def kernel_omega(phi):
        omega = alpha_y.copy()
        omega[:-1] += phi
        omega[1:] -= phi
        return omega @ gram

    i = 7
    is_act = np.ones((m, n), np.bool_)
    is_act[4, i] = False  # the run of row i is boundaries 0..3
    phi[3, i] = 0.0  # a dropped entry's neighbouring multipliers are zero
    act, nact = np.tile(np.arange(n), (m, 1)), np.full(m, n)
    G = kernel_omega(phi)
    before = phi.copy()
    changed, phi_changed = np.zeros(m, np.bool_), np.zeros(m - 1, np.bool_)
    scratch = [np.empty(m) for _ in range(3)]
    _row_block_step(i, 1, relax, np.diag(gram).copy(), phi, G, gram[i], act, nact, is_act,
                    *scratch, changed, phi_changed)
    np.testing.assert_allclose(G, kernel_omega(phi), atol=1e-12)
    moved = phi != before
    assert np.any(moved) and not np.any(moved[:, np.arange(n) != i]) and not moved[3, i]
    np.testing.assert_array_equal(phi_changed, moved[:, i])
    omega_moved = np.r_[moved[:, i], False] | np.r_[False, moved[:, i]]
    assert np.all(changed <= omega_moved) and np.all(phi[:, i] >= 0.0)
    if relax == 1.0:
        optimum = np.empty(3)
        row_block_optimum(kernel_omega(before)[:4, i], before[:3, i], gram[i, i], optimum)
        np.testing.assert_allclose(phi[:3, i], optimum, atol=1e-12)


@pytest.mark.parametrize("K,C,seed", [(5, 16.0, 31), (6, 4.0, 32), (7, 16.0, 33),
                                      (7, 0.5, 34)])
@pytest.mark.parametrize("variant", [2, 4, 11])
def test_fits_with_row_blocks_match_the_independent_primal(K, C, seed, variant, monkeypatch):
    # heavy class overlap (3 Logistic noise) at K = 5-7: many rows where several
    # boundaries touch, so the row block steps bind several multipliers at once
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(90, 4))
    latent = X @ [1.0, 0.6, -0.3, 0.2] + np.sin(2 * X[:, 0]) + 3.0 * rng.logistic(size=90)
    codes = np.searchsorted(np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1]), latent)
    problem = NordicProblem(gram=make_kernel("rbf", gamma=0.2)(X, X),
                            signs=binary_signs(codes, K), C=C, method="nordic1")
    monkeypatch.setattr(smo_module, "ROW_BLOCK_VARIANT", variant)
    res = solve_smo(problem)
    assert res.status == "optimal", res.message
    assert res.info["steps"]["row_block"] > 0
    assert res.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)
    assert problem.noncrossing_violation(res.dual_coef, res.intercept) <= 1e-7
