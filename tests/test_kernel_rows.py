"""Tests of the polishing's kernel rows (nordicstats.solvers.kernel_rows).

References nobody here wrote: the dense Gram matrix (exact copies of its values, products
to rounding), and whole fits against Clarabel on the paper's primal through cvxpy
(tests/primal_reference.py), with the rows kept apart, read from the SMO loop's row cache,
or computed in every round; at large C, where every intercept ties and noncrossing rows
bind (the regime of the polishing).
"""

import numpy as np
import pytest
from primal_reference import solve_primal
from test_polish import LARGE_C
from test_smo import OBJ_RTOL, design, rbf_problem

from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import cached_products, kernel_rows, polish, smo
from nordicstats.solvers.cached_products import cached_block, cached_rows_product
from nordicstats.solvers.certificate import GAP_TOL
from nordicstats.solvers.kernel_rows import KernelRows, SharedKernelRows
from nordicstats.solvers.smo import solve_smo


@pytest.mark.usefixtures("always_polish")
@pytest.mark.parametrize("n,K,C,seed", LARGE_C[:2])
def test_kept_kernel_rows_give_the_same_path_and_the_primal_optimum(n, K, C, seed,
                                                                    monkeypatch):
    # rows on demand, tied intercepts and binding noncrossing rows: the polishing with
    # kernel rows kept against the kernel blocks computed in every round (compaction and
    # requests larger than the block: the test below); the rows kept apart from the SMO
    # loop's cache (SharedKernelRows: the tests after these)
    monkeypatch.setattr(kernel_rows, "READ_ROW_CACHE", False)
    problem = rbf_problem(n, K, C, seed, lazy=True)
    kept = solve_smo(problem)
    assert 0 < kept.info["polish_kernel_rows"] <= n  # each row computed once
    monkeypatch.setattr(kernel_rows, "KEPT_ROWS_MB", 0.0)
    computed = solve_smo(problem)
    assert computed.info["polish_kernel_rows"] == 0
    assert kept.status == computed.status == "optimal"
    assert any(step["accepted"] for step in kept.info["polish"])
    G = problem.gram @ kept.dual_coef
    assert np.sum(np.abs(G[:, :-1] - G[:, 1:]) <= 1e-8) >= 30
    assert np.ptp(kept.intercept) <= 1e-8
    assert computed.iterations == kept.iterations
    assert [s["rounds"] for s in computed.info["polish"]] == [
        s["rounds"] for s in kept.info["polish"]]
    # the gradient update sums in another order: equal to rounding, not always bitwise
    np.testing.assert_allclose(problem.decision_values(computed.dual_coef, computed.intercept),
                               problem.decision_values(kept.dual_coef, kept.intercept),
                               rtol=0, atol=1e-12)
    assert kept.objective == pytest.approx(solve_primal(problem), rel=OBJ_RTOL)


def test_kernel_rows_keep_compact_and_fall_back_like_the_dense_matrix():
    X = design(50, 3, 9)[0]
    lazy = KernelMatrix(make_kernel("rbf", gamma=0.2), X)
    dense = np.asarray(lazy)
    rows = KernelRows(lazy, max_mb=8.0 * 50 * 20 / 2 ** 20)  # room for 20 rows
    assert rows.capacity == 20
    rng = np.random.default_rng(0)
    first, second = np.arange(12), np.arange(8, 26)  # the second overlaps the first
    B = rng.normal(size=(second.size, 4))
    # exact copies of the computed values; the product to rounding
    np.testing.assert_array_equal(rows.block(second, first), dense[np.ix_(second, first)])
    assert rows.computed == 12
    np.testing.assert_allclose(rows.product(second, B), dense[:, second] @ B, atol=1e-13)
    assert rows.computed == 26  # compacted to the 4 requested rows kept, 14 computed
    assert set(rows.owner) == set(second)
    np.testing.assert_array_equal(rows.block(first[:3], second[:2]), dense[np.ix_(first[:3],
                                                                                  second[:2])])
    assert rows.computed == 26
    # a request larger than the block is computed, the kept rows stay
    wide = np.arange(30)
    np.testing.assert_array_equal(rows.block(wide, wide), dense[:30, :30])
    assert rows.computed == 26 and set(rows.owner) == set(second)
    # a dense Gram matrix is indexed, nothing kept
    direct = KernelRows(dense)
    assert direct.capacity == 0
    np.testing.assert_array_equal(direct.product(second, B), dense[:, second] @ B)
    assert direct.computed == 0


def test_square_and_beside_equal_two_gathers_and_keep_the_same_rows():
    # K_SS and K[S, R] (R mostly in S): the same numbers, layout and kept rows as K[S, R]
    # then K_SS gathered by two calls of block; with room for S only the rows of R
    # outside it are gathered, and a dense Gram matrix is indexed
    X = design(60, 3, 4)[0]
    lazy = KernelMatrix(make_kernel("rbf", gamma=0.2), X)
    S, R = np.arange(5, 45, 2), np.r_[np.arange(5, 25, 2), 50, 55]
    for capacity in (40, 21, 15):  # every row kept; S, R compacted away; S too large
        one, two = (KernelRows(lazy, max_mb=8.0 * 60 * capacity / 2 ** 20) for _ in range(2))
        square, beside = one.square_and_beside(S, R)
        expected_beside = two.block(S, R)
        expected_square = two.block(S, S)
        for mine, theirs in ((square, expected_square), (beside, expected_beside)):
            np.testing.assert_array_equal(mine, theirs)
            assert mine.flags.f_contiguous == theirs.flags.f_contiguous
        np.testing.assert_array_equal(one.owner, two.owner)
        assert one.computed == two.computed
    np.testing.assert_array_equal(beside, np.asarray(lazy)[np.ix_(S, R)])
    dense = KernelRows(np.asarray(lazy))
    np.testing.assert_array_equal(dense.square_and_beside(S, R)[1], np.asarray(lazy)[np.ix_(S, R)])


# largest |K_ij| difference between the SMO loop's compiled RBF formula
# exp(-gamma (|x_i|^2 + |x_j|^2 - 2 x_i'x_j)) and KernelMatrix.block (cdist): measured at
# most 1.3e-15 (likert, n = 1,000-20,000, 200 rows each); ten times that
CACHE_FORMULA_ATOL = 1e-14


def test_shared_rows_read_the_smo_cache_and_match_the_kernel_matrix(monkeypatch):
    X = design(60, 3, 4)[0]
    lazy = KernelMatrix(make_kernel("rbf", gamma=0.2), X)
    dense = np.asarray(lazy)
    cache = smo._row_cache(lazy, 8.0 * 60 * 30 / 2 ** 20)  # 30 of the 60 rows
    rows = SharedKernelRows(lazy, cache)
    S, R = np.arange(5, 45, 2), np.r_[np.arange(5, 25, 2), 50, 55]  # 22 rows together
    square, beside = rows.square_and_beside(S, R)
    np.testing.assert_allclose(square, dense[np.ix_(S, S)], rtol=0, atol=CACHE_FORMULA_ATOL)
    np.testing.assert_allclose(beside, dense[np.ix_(S, R)], rtol=0, atol=CACHE_FORMULA_ATOL)
    # one formula: K_SS symmetric bit for bit, and the values those the SMO loop reads
    np.testing.assert_array_equal(square, square.T)
    np.testing.assert_array_equal(square, cache.rows[cache.slot_of[S]][:, S])
    assert (rows.computed, rows.read) == (22, 0)
    assert (cache.slot_of[np.r_[S, R]] >= 0).all()
    # read again from the cache; the loop's own hit and miss counts untouched
    before = cache.counters[1:3].copy()
    np.testing.assert_array_equal(rows.block(S, S), square)
    assert (rows.computed, rows.read) == (22, 20)
    np.testing.assert_array_equal(cache.counters[1:3], before)
    # the gradient update K[:, R] B by blocks of gathered rows (one row a block here), the
    # products in place off (their own test below)
    B = np.random.default_rng(0).normal(size=(R.size, 3))
    with monkeypatch.context() as patch:
        patch.setattr(kernel_rows, "COMPILED_READS", False)
        for block_bytes in (kernel_rows.PRODUCT_BLOCK_BYTES, 8 * 60):
            patch.setattr(kernel_rows, "PRODUCT_BLOCK_BYTES", block_bytes)
            np.testing.assert_allclose(rows.product(R, B), dense[:, R] @ B, rtol=0,
                                       atol=1e-13)
    # rows missing from the cache are computed into its least recently used slots, the
    # rows of one request never evicting each other
    later = np.arange(30, 60)
    np.testing.assert_allclose(rows.block(later, later), dense[np.ix_(later, later)], rtol=0,
                               atol=CACHE_FORMULA_ATOL)
    assert (cache.slot_of[later] >= 0).all()
    assert rows.computed == 22 + np.setdiff1d(later, np.r_[S, R]).size
    # more rows than the cache has slots: KernelRows' own block (KernelMatrix's values)
    wide = np.arange(40)
    np.testing.assert_array_equal(rows.block(wide, wide), dense[:40, :40])
    assert cache.fetch(wide) is None


def test_kernel_rows_for_shares_only_a_cache_of_computed_rows(monkeypatch):
    X = design(40, 3, 4)[0]
    lazy = KernelMatrix(make_kernel("rbf", gamma=0.2), X)
    assert type(kernel_rows.kernel_rows_for(lazy, smo._row_cache(lazy, 1.0))) is SharedKernelRows
    dense = np.asarray(lazy)
    assert type(kernel_rows.kernel_rows_for(dense, smo._row_cache(dense, 1.0))) is KernelRows
    monkeypatch.setattr(kernel_rows, "READ_ROW_CACHE", False)
    assert type(kernel_rows.kernel_rows_for(lazy, smo._row_cache(lazy, 1.0))) is KernelRows


# (n, K, C, seed, rows of the SMO cache): every row cached (LARGE_C); a cache of 60% of
# the rows, which holds a face's rows but not every row (some computed by the polishing);
# 30%, less than a face's rows (KernelRows' own block)
SHARED = [(*case, None) for case in LARGE_C[:2]] + [
    (150, 4, 2.0, 4, 0.6), (200, 5, 0.5, 6, 0.6), (150, 4, 2.0, 4, 0.3)]


@pytest.mark.usefixtures("always_polish")
@pytest.mark.parametrize("n,K,C,seed,cached", SHARED)
def test_polishing_from_the_smo_cache_reaches_the_primal_optimum(n, K, C, seed, cached,
                                                                 monkeypatch):
    problem = rbf_problem(n, K, C, seed, lazy=True)
    cache_mb = None if cached is None else 8.0 * n * int(cached * n) / 2 ** 20
    shared = solve_smo(problem, cache_mb=cache_mb)
    monkeypatch.setattr(kernel_rows, "READ_ROW_CACHE", False)
    apart = solve_smo(problem, cache_mb=cache_mb)
    reference = solve_primal(problem)
    for res in (shared, apart):
        assert res.status == "optimal" and res.gap <= GAP_TOL
        assert any(step["accepted"] for step in res.info["polish"])
        assert res.objective == pytest.approx(reference, rel=OBJ_RTOL)
    assert apart.info["polish_rows_read"] == 0
    if cached is None:  # every row read from the cache, none computed
        assert shared.info["polish_rows_read"] > 0 == shared.info["polish_kernel_rows"]
    elif cached > 0.5:  # most read, the missing ones computed into the cache
        assert shared.info["polish_rows_read"] > shared.info["polish_kernel_rows"] > 0
    else:  # no face fits the cache: the rows kept apart
        assert shared.info["polish_rows_read"] == 0
    assert shared.objective == pytest.approx(apart.objective, rel=1e-12)


def test_cached_reads_add_the_rows_terms_in_order_and_copy_blocks_bit_for_bit(monkeypatch):
    # out[j, c] = sum_t store[slots[t], cols_j] D[t, c], the terms added in the order of
    # R by numpy below: the same operations, so the same bits (zeros of D skipped: adding
    # 0 * x changes no sum); blocks of 7 columns, so several blocks and a remainder
    rng = np.random.default_rng(3)
    store = rng.normal(size=(9, 40))
    slots = np.array([4, 0, 7, 2, 8])
    D = rng.normal(size=(5, 3))
    D[rng.random(D.shape) < 0.4] = 0.0
    monkeypatch.setattr(cached_products, "COLUMN_BLOCK", 7)
    for cols in (None, np.array([39, 3, 3, 17, 0, 25, 8, 30, 12])):  # any order, repeats
        picked = np.arange(40) if cols is None else cols
        expected = np.zeros((picked.size, 3))
        for t in range(slots.size):
            expected += np.multiply.outer(store[slots[t], picked], D[t])
        np.testing.assert_array_equal(cached_rows_product(store, slots, D, cols), expected)
    assert cached_rows_product(store, slots[:0], D[:0]).shape == (40, 3)
    # the blocks: copies of the np.ix_ gather, in its layout
    cols = np.array([39, 3, 3, 17, 0])
    block, gathered = cached_block(store, slots, cols), store[np.ix_(slots, cols)].T
    np.testing.assert_array_equal(block, gathered)
    assert block.flags.f_contiguous and gathered.flags.f_contiguous
    # indices the compiled loops would read out of bounds are refused
    with pytest.raises(ValueError, match="slots must be"):
        cached_block(store, np.array([9]), cols)
    with pytest.raises(ValueError, match="cols must be"):
        cached_rows_product(store, slots, D, np.array([-1]))
    with pytest.raises(ValueError, match="one row per slot"):
        cached_rows_product(store, slots[:2], D)


@pytest.mark.parametrize("cached_rows", [12, 60])  # some rows missing; every row cached
def test_compiled_reads_equal_the_kernel_matrix_products(cached_rows, monkeypatch):
    # K_SS copied, K[:, R] B and K[S, R] B summed over the SMO cache's rows (compiled
    # reads) against the dense reference from KernelMatrix.block (cdist: another formula,
    # at most 1.3e-15 a value measured, so 12 terms of |B| < 3 differ by < 5e-14), and
    # against the gather and BLAS of the same cached values (another order of summation:
    # rounding of sums of order 1); both ways fetch the same rows into the same slots.
    # With 12 slots S and R together do not fit: KernelRows' own block, the products of
    # its gathered rows
    X = design(60, 3, 4)[0]
    lazy = KernelMatrix(make_kernel("rbf", gamma=0.2), X)
    S, R = np.arange(5, 45, 4), np.r_[np.arange(5, 25, 2), 50, 55]
    B = np.random.default_rng(1).normal(size=(R.size, 4))
    B[::3, 1:] = 0.0
    reference_all, reference_face = lazy.block(R).T @ B, lazy.block(R)[:, S].T @ B
    results, caches = [], []
    for in_place in (True, False):
        monkeypatch.setattr(kernel_rows, "COMPILED_READS", in_place)
        cache = smo._row_cache(lazy, 8.0 * 60 * cached_rows / 2 ** 20)
        cache.fetch(np.arange(0, 60, 7)[:cached_rows])  # some rows there before
        rows = SharedKernelRows(lazy, cache)
        square, beside = rows.square_and_product(S, R, B)
        every = rows.product(R, B)
        assert square.shape == (S.size, S.size)
        np.testing.assert_allclose(every, reference_all, rtol=0, atol=10 * CACHE_FORMULA_ATOL)
        np.testing.assert_allclose(beside, reference_face, rtol=0, atol=10 * CACHE_FORMULA_ATOL)
        results.append((square, beside, every, rows.computed, rows.read))
        caches.append(cache.slot_of.copy())
    (square, beside, every, computed, read), gathered = results
    np.testing.assert_array_equal(square, gathered[0])  # copies: the same bits and layout
    assert square.flags.f_contiguous == gathered[0].flags.f_contiguous
    np.testing.assert_allclose(beside, gathered[1], rtol=0, atol=1e-14)
    np.testing.assert_allclose(every, gathered[2], rtol=0, atol=1e-14)
    assert (computed, read) == gathered[3:]
    np.testing.assert_array_equal(caches[0], caches[1])
    np.testing.assert_allclose(square, lazy.block(S)[:, S], rtol=0, atol=CACHE_FORMULA_ATOL)
    if cached_rows == 60:  # K_SS from the cache: one formula, symmetric bit for bit
        np.testing.assert_array_equal(square, square.T)
    assert read > 0  # K[:, R] B (12 rows) from the cache either way


# small problems with rows on demand: every row cached, or 60% of them (SHARED)
IN_PLACE = SHARED[:4]


@pytest.mark.usefixtures("always_polish")
@pytest.mark.parametrize("n,K,C,seed,cached", IN_PLACE)
@pytest.mark.parametrize("face_rows", [None, 25])
def test_compiled_reads_keep_the_path_and_reach_the_primal_optimum(n, K, C, seed, cached,
                                                                     face_rows, monkeypatch):
    # whole fits with the polishing's cached rows read by compiled loops against numpy's
    # gathers and BLAS: the same SMO steps and rounds, both certified at Clarabel's optimum
    # of the primal; with a face bound forced small (25 rows) every face is refused
    if face_rows is not None:
        monkeypatch.setattr(polish, "MAX_FACE_SIZE", face_rows)
    problem = rbf_problem(n, K, C, seed, lazy=True)
    cache_mb = None if cached is None else 8.0 * n * int(cached * n) / 2 ** 20
    fits = []
    for in_place in (True, False):
        monkeypatch.setattr(kernel_rows, "COMPILED_READS", in_place)
        fits.append(solve_smo(problem, cache_mb=cache_mb))
    in_place, gathered = fits
    reference = solve_primal(problem)
    for res in fits:
        assert res.status == "optimal" and res.gap <= GAP_TOL
        assert res.objective == pytest.approx(reference, rel=OBJ_RTOL)
    assert in_place.iterations == gathered.iterations
    assert [s["rounds"] for s in in_place.info["polish"]] == [
        s["rounds"] for s in gathered.info["polish"]]
    assert in_place.info["polish_rows_read"] == gathered.info["polish_rows_read"]
    if face_rows is None:
        assert in_place.info["polish_rows_read"] > 0
        assert any(step["accepted"] for step in in_place.info["polish"])
    else:  # every face refused (55-96 rows): the SMO loop alone certifies
        assert in_place.info["polish_rows_read"] == 0
        assert not any(step["rounds"] for step in in_place.info["polish"])
    # the face optima in other last bits: measured at most 2.8e-14 over these fits
    np.testing.assert_allclose(problem.decision_values(in_place.dual_coef, in_place.intercept),
                               problem.decision_values(gathered.dual_coef, gathered.intercept),
                               rtol=0, atol=1e-12)
