"""The sign rows' margin path (l1svm_margin_path) against scipy's HiGHS on the full primal.

The reference (``full_lp`` of ``test_l1svm_lp``) is the primal LP in (theta+, theta-, b,
xi) with every column and the sign rows, solved from scratch by HiGHS's interior point
method.  The path starts from HiGHS's optimum without the rows (``start_basis`` of
``test_l1svm_path``), and its end point is read as a primal point (theta, b) and
compared to 1e-9 relative, as the cost path's: a wrong vertex moves the objective by far
more than that.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_l1svm_lp import full_lp, primal_objective
from test_l1svm_path import (
    PERTURBATION,
    RTOL,
    random_problem,
    start_basis,
    unbalanced_boundary,
)

from nordicstats.solvers import l1svm_path
from nordicstats.solvers.l1svm_lp import BoundaryLP
from nordicstats.solvers.l1svm_margin_path import follow_margin_path

pytest.importorskip("highspy")

MARGIN = 1e-3  # delta of the rows f(x_i) <= -delta, as in test_l1svm_lp.full_lp


def with_sign_rows(Z, y, u, rows):
    """The margin path's arrays: the n points, then one entry per sign row (i, s)."""
    points = [i for i, _ in rows]
    Z_ext = np.vstack([Z, Z[points]])
    signs = np.array([s for _, s in rows], dtype=float)
    return (Z_ext, np.ascontiguousarray(Z_ext.T), np.concatenate([y, signs]),
            np.concatenate([u, np.full(len(rows), np.inf)]),
            np.concatenate([np.ones(len(y)), np.where(signs < 0, MARGIN, 0.0)]))


def switched_on(Z, y, u, rows, perturbation=PERTURBATION, max_steps=None):
    """Switch ``rows`` on, one after the other, from HiGHS's optimum without them."""
    point_status, active, sign = start_basis(Z, y, u, 1.0)
    Z_ext, ZT, y_ext, u_ext, margins = with_sign_rows(Z, y, u, rows)
    status = np.concatenate([point_status, np.full(len(rows), 3)])
    moves = len(y) + np.arange(len(rows))
    return follow_margin_path(Z_ext, ZT, y_ext, u_ext, margins, status, active, sign, moves,
                              margins[moves], max_steps=max_steps, perturbation=perturbation)


def crossing_rows(Z, y, u, count):
    """Sign rows that push the ``count`` points closest to the LP's boundary across it."""
    theta, b, _ = BoundaryLP(Z, y).solve(u)
    f = Z @ theta + b
    return [(int(i), -1 if f[i] > 0 else 1) for i in np.argsort(np.abs(f))[:count]]


def assert_matches_full_lp_with_rows(Z, y, u, rows, end):
    # the end point is feasible for the sign rows and optimal: the full primal's value
    f = Z @ end.theta + end.b
    for i, s in rows:
        assert s * f[i] >= (MARGIN if s < 0 else 0.0) - 1e-9
    assert primal_objective(Z, y, u, end.theta, end.b) == \
        pytest.approx(full_lp(Z, y, u, rows), rel=RTOL)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("count", [1, 3])
def test_margin_path_reaches_the_full_lp_with_sign_rows(seed, count):
    # random RBF problems at C = 4: 1 or 3 rows switched on from the LP's optimum
    Z, y, u = random_problem(seed)
    u = 4.0 * u
    rows = crossing_rows(Z, y, u, count)
    end = switched_on(Z, y, u, rows)
    assert end.followed and end.steps >= count
    assert_matches_full_lp_with_rows(Z, y, u, rows, end)
    # a vertex: |E| = |A| + 1, the elbow's points and sign rows on their margins
    Z_ext, _, y_ext, _, margins = with_sign_rows(Z, y, u, rows)
    f = Z_ext @ end.theta + end.b
    assert end.elbow.size == end.active.size + 1
    np.testing.assert_allclose(y_ext[end.elbow] * f[end.elbow], margins[end.elbow], atol=1e-9)


def test_margin_path_on_a_linear_design_and_duplicated_points():
    # Z = X (n x 3) and RBF problems with repeated points (ties on the margin), sign rows
    # on the repeated points: the end point is the full LP's optimum
    for seed in range(4):
        for kernel in ("linear", "rbf"):
            Z, y, u = random_problem(seed, n=50, duplicates=6, kernel=kernel)
            u = 8.0 * u
            rows = crossing_rows(Z, y, u, 2) + [(44, 1 if seed % 2 else -1)]
            end = switched_on(Z, y, u, rows)
            assert end.followed
            assert_matches_full_lp_with_rows(Z, y, u, rows, end)


def test_margin_path_from_a_degenerate_vertex():
    # theta = 0 with the larger class on the margin (96 of 150 points tied, 95 of them
    # nonbasic): one sign row asks a point of that class across.  The first moves have
    # length zero (the tied points block at once); the path reaches the full LP's optimum
    # on the plain margins and on the perturbed ones
    Z, signs, u = unbalanced_boundary()
    u = 0.02 * u
    point_status, active, _ = start_basis(Z, signs, u, 1.0)
    assert active.size == 0
    i = int(np.flatnonzero((signs > 0) & (point_status == 0))[0])  # on the margin, y f = 1
    rows = [(i, -1)]
    for perturbation in (0.0, PERTURBATION):
        end = switched_on(Z, signs, u, rows, perturbation=perturbation)
        assert end.followed and end.steps > 0
        assert_matches_full_lp_with_rows(Z, signs, u, rows, end)


def test_margin_path_detects_an_infeasible_row():
    # f(x_i) >= 0 and f(x_i) <= -delta: the second row's margin meets a dual ray
    Z, y, u = random_problem(2)
    rows = [(7, 1), (7, -1)]
    end = switched_on(Z, y, u, rows)
    assert end.status == l1svm_path.INFEASIBLE
    assert full_lp(Z, y, u, rows) is None


def test_margin_path_switches_rows_off():
    # rows switched on, then the first switched off again (its multiplier taken to 0 as
    # its margin falls): the optimum with the remaining rows
    Z, y, u = random_problem(4)
    u = 4.0 * u
    rows = crossing_rows(Z, y, u, 3)
    on = switched_on(Z, y, u, rows)
    Z_ext, ZT, y_ext, u_ext, margins = with_sign_rows(Z, y, u, rows)
    binding = np.flatnonzero(on.point_status[len(y):] == 2)
    assert binding.size > 0 and on.followed
    first = len(y) + int(binding[0])
    off = follow_margin_path(Z_ext, ZT, y_ext, u_ext, margins, on.point_status, on.active,
                             on.sign, [first], [-np.inf], perturbation=PERTURBATION)
    assert off.followed and off.steps > 0 and off.point_status[first] == 3
    assert_matches_full_lp_with_rows(Z, y, u, [row for r, row in enumerate(rows)
                                               if r != binding[0]], off)


def test_margin_path_step_limit():
    Z, y, u = random_problem(1)
    u = 4.0 * u
    rows = crossing_rows(Z, y, u, 3)
    assert switched_on(Z, y, u, rows, max_steps=1).status == l1svm_path.STEP_LIMIT


def test_margin_path_checks_the_basis_size():
    Z, y, u = random_problem(0)
    point_status, active, sign = start_basis(Z, y, u, 1.0)
    Z_ext, ZT, y_ext, u_ext, margins = with_sign_rows(Z, y, u, [(3, 1)])
    status = np.concatenate([point_status, [3]])
    with pytest.raises(ValueError, match=r"\|E\| = \|A\| \+ 1"):
        follow_margin_path(Z_ext, ZT, y_ext, u_ext, margins, status, active[1:], sign[1:],
                           [len(y)], [0.0])
