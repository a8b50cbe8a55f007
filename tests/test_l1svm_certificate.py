"""The fresh optimality check of an L1-SVM LP basis (l1svm_certificate) against scipy's HiGHS.

A certified basis's vertex is compared with the full primal (every column, the sign
rows) solved from scratch by HiGHS's interior point method (``full_lp`` of
``test_l1svm_lp``) to 1e-9 relative, as the paths' end points are.  Bases made slightly
wrong by 1e-7 -- a point 1e-7 inside its margin, a multiplier 1e-6 above its cost, an
inactive coordinate at |Z'Y mu| = 1 + 1e-7 -- are 100 times beyond the check's 1e-9
and must be rejected.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_l1svm_lp import MARGIN, full_lp, primal_objective
from test_l1svm_margin_path import crossing_rows, switched_on, with_sign_rows
from test_l1svm_path import (
    PERTURBATION,
    RTOL,
    random_problem,
    start_basis,
    unbalanced_boundary,
)

from nordicstats.solvers import l1svm_lp
from nordicstats.solvers.l1svm_certificate import CERTIFICATE_TOL, certify_basis
from nordicstats.solvers.l1svm_lp import BoundaryLP
from nordicstats.solvers.l1svm_path import follow_cost_path

pytest.importorskip("highspy")


def certified_at(Z, y, u, basis, margins=None):
    out = certify_basis(Z, y, u, np.ones(len(y)) if margins is None else margins, *basis)
    assert out.certified, out.reason
    assert out.residual <= CERTIFICATE_TOL
    return out


def assert_is_the_full_optimum(Z, y, u, out, rows=()):
    reference = full_lp(Z, y, u, rows)
    assert out.objective == pytest.approx(reference, rel=RTOL)
    assert primal_objective(Z, y, u, out.theta, out.b) == pytest.approx(reference, rel=RTOL)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_highs_optimal_bases_are_certified(seed, kernel):
    Z, y, u = random_problem(seed, kernel=kernel)
    out = certified_at(Z, y, 3.0 * u, start_basis(Z, y, u, 3.0))
    assert_is_the_full_optimum(Z, y, 3.0 * u, out)


@pytest.mark.parametrize("seed", range(3))
def test_cost_path_end_certified_is_the_full_optimum(seed):
    # the path on perturbed margins ends at a basis of the perturbed LP; where the check
    # certifies it on the LP itself, its vertex is the full LP's optimum
    Z, y, u = random_problem(seed, n=80)
    end = follow_cost_path(Z, y, u, 1.0, 16.0, *start_basis(Z, y, u, 1.0),
                           perturbation=PERTURBATION)
    assert end.followed
    out = certified_at(Z, y, 16.0 * u, (end.point_status, end.active, end.sign))
    assert_is_the_full_optimum(Z, y, 16.0 * u, out)
    np.testing.assert_allclose(out.theta, end.theta, atol=1e-8)


def test_degenerate_ties_and_duplicated_points():
    # theta = 0 with a whole class on the margin (more ties than the basis holds), and
    # points repeated with the same and the other label
    Z, signs, u = unbalanced_boundary()
    basis = start_basis(Z, signs, u, 0.02)
    out = certified_at(Z, signs, 0.02 * u, basis)
    assert np.all(out.theta == 0.0) and abs(out.b) == pytest.approx(1.0, rel=1e-12)
    assert_is_the_full_optimum(Z, signs, 0.02 * u, out)
    Z, y, u = random_problem(2, n=70, duplicates=12)
    out = certified_at(Z, y, 5.0 * u, start_basis(Z, y, u, 5.0))
    assert_is_the_full_optimum(Z, y, 5.0 * u, out)


@pytest.mark.parametrize("seed", range(3))
def test_margin_path_end_with_sign_rows(seed):
    Z, y, u = random_problem(seed)
    rows = crossing_rows(Z, y, u, 3)
    end = switched_on(Z, y, u, rows)
    assert end.followed
    Z_ext, _, y_ext, u_ext, margins = with_sign_rows(Z, y, u, rows)
    out = certified_at(Z_ext, y_ext, u_ext, (end.point_status, end.active, end.sign), margins)
    assert_is_the_full_optimum(Z, y, u, out, rows)
    f = Z @ out.theta + out.b
    for i, s in rows:
        assert s * f[i] >= (MARGIN if s < 0 else 0.0) - 1e-9


def slightly_wrong(kind):
    """An optimal basis of a random RBF problem and the LP changed by 1e-7 so that the
    basis is no longer optimal: (Z, y, u, margins, basis)."""
    Z, y, u = random_problem(1)
    basis = start_basis(Z, y, u, 3.0)
    u = 3.0 * u
    out = certified_at(Z, y, u, basis)
    status, active, _ = basis
    Z, u, margins = Z.copy(), u.copy(), np.ones(len(y))
    f = Z @ out.theta + out.b
    if kind == "primal":  # the R point nearest its margin: now 1e-7 inside it
        rest = np.flatnonzero(status == 0)
        i = rest[np.argmin(y[rest] * f[rest])]
        margins[i] = y[i] * f[i] + 1e-7
    elif kind == "multiplier":  # a basic mu now 1e-6 above its cost
        elbow = np.flatnonzero(status == 2)
        mu_E = _basic_multipliers(Z, y, u, basis)
        e = int(np.argmax(mu_E))
        u[elbow[e]] = mu_E[e] - 1e-6
    else:  # the inactive coordinate with the largest |s_j|: now at 1 + 1e-7
        s = Z.T @ (y * _multipliers(Z, y, u, basis))
        inactive = np.setdiff1d(np.arange(Z.shape[1]), active)
        j = inactive[np.argmax(np.abs(s[inactive]))]
        Z[:, j] *= (1.0 + 1e-7) / abs(s[j])
    return Z, y, u, margins, basis


def _multipliers(Z, y, u, basis):
    status, active, sign = basis
    mu = np.where(status == 1, u, 0.0)
    mu[status == 2] = _basic_multipliers(Z, y, u, basis)
    return mu


def _basic_multipliers(Z, y, u, basis):
    status, active, sign = basis
    elbow, lower = np.flatnonzero(status == 2), np.flatnonzero(status == 1)
    M = np.vstack([y[elbow], (y[elbow, None] * Z[np.ix_(elbow, active)]).T])
    fixed = np.concatenate([[y[lower] @ u[lower]], (y[lower] * u[lower]) @ Z[np.ix_(lower,
                                                                                   active)]])
    return np.linalg.solve(M, np.concatenate([[0.0], sign]) - fixed)


@pytest.mark.parametrize("kind, reason", [
    ("primal", "a point with mu = 0 inside its margin"),
    ("multiplier", "a basic multiplier above its cost"),
    ("coordinate", "a coordinate's |Z'Y mu| above 1")])
def test_slightly_infeasible_bases_are_rejected(kind, reason):
    Z, y, u, margins, basis = slightly_wrong(kind)
    out = certify_basis(Z, y, u, margins, *basis)
    assert not out.certified and out.reason == reason
    assert CERTIFICATE_TOL < out.residual < 1e-5


def test_wrong_basis_shapes_are_rejected():
    Z, y, u = random_problem(0)
    status, active, sign = start_basis(Z, y, u, 2.0)
    assert certify_basis(Z, y, 2.0 * u, np.ones(len(y)), status, active[1:],
                         sign[1:]).reason == "|E| differs from |A| + 1"
    twice = status.copy()
    elbow = np.flatnonzero(status == 2)
    Z = Z.copy()
    Z[elbow[1]] = Z[elbow[0]]  # two equal rows of the basis matrix
    y = y.copy()
    y[elbow[1]] = y[elbow[0]]
    out = certify_basis(Z, y, 2.0 * u, np.ones(len(y)), twice, active, sign)
    assert out.reason == "the basis matrix is singular"


def test_boundary_lp_skips_highs_only_when_certified(monkeypatch):
    # the root LP along its cost path: certified, no HiGHS run after the start; with the
    # path's end made slightly infeasible for the check (an R point 1e-7 inside its
    # margin), HiGHS confirms as before -- both the full LP's optimum
    Z, y, u = random_problem(3, n=120)
    costs = 8.0 * u
    reference = full_lp(Z, y, costs)
    lp = BoundaryLP(Z, y)
    theta, b, objective = lp.solve(costs)
    assert lp.stats.self_certified == 1 and lp.stats.highs_confirmed == 0
    runs = lp.stats.runs
    assert objective == pytest.approx(reference, rel=RTOL)
    assert primal_objective(Z, y, costs, theta, b) == pytest.approx(reference, rel=RTOL)

    def nudged(Z, y, u, margins, status, active, sign):
        vertex = original(Z, y, u, margins, status, active, sign)
        f = Z @ vertex.theta + vertex.b
        rest = np.flatnonzero(status == 0)
        i = rest[np.argmin(y[rest] * f[rest])]
        margins = margins.copy()
        margins[i] = y[i] * f[i] + 1e-7  # that point now 1e-7 inside its margin
        return original(Z, y, u, margins, status, active, sign)

    original = l1svm_lp.certify_basis
    monkeypatch.setattr(l1svm_lp, "certify_basis", nudged)
    confirmed = BoundaryLP(Z, y)
    assert confirmed.solve(costs)[2] == pytest.approx(reference, rel=RTOL)
    assert confirmed.stats.self_certified == 0 and confirmed.stats.highs_confirmed == 1
    assert confirmed.stats.runs == runs + 1  # HiGHS's confirming run


def test_a_path_end_off_the_lp_goes_to_highs(monkeypatch):
    # margins perturbed by 5e-2 (instead of 1e-6): the path's end basis is optimal for the
    # perturbed LP, not for the LP itself; the check rejects it and HiGHS pivots on from
    # it (more simplex iterations than the start's) to the full LP's optimum
    monkeypatch.setattr(l1svm_lp, "PATH_PERTURBATION", 5e-2)
    Z, y, u = random_problem(0, n=120)
    start = BoundaryLP(Z, y)
    start.solve(8.0 * u * l1svm_lp.PATH_START_FRACTION)  # below PATH_MIN_COST: no path
    lp = BoundaryLP(Z, y)
    theta, b, objective = lp.solve(8.0 * u)
    assert lp.stats.path_fallbacks == 0 and lp.stats.path_steps > 0
    assert lp.stats.self_certified == 0 and lp.stats.highs_confirmed == 1
    assert lp.stats.simplex_iterations > start.stats.simplex_iterations
    reference = full_lp(Z, y, 8.0 * u)
    assert objective == pytest.approx(reference, rel=RTOL)
    assert primal_objective(Z, y, 8.0 * u, theta, b) == pytest.approx(reference, rel=RTOL)


def _certified_resolves_then_a_fallback(Z, y, costs, rows, monkeypatch):
    """A BoundaryLP: the root along its cost path and re-solves with the sign rows
    ``rows[:1]``, ``rows[:2]``, ... certified by the check, then the check made to fail
    on the last re-solve (all of ``rows``), which goes to HiGHS."""
    lp = BoundaryLP(Z, y)
    lp.solve(costs)
    for count in range(1, len(rows)):
        lp.set_sign_rows(rows[:count], MARGIN)
        assert lp.solve() is not None
    certified = lp.stats.self_certified
    with monkeypatch.context() as patch:
        patch.setattr(l1svm_lp, "certify_basis", lambda *args: _rejected(*args))
        lp.set_sign_rows(rows, MARGIN)
        return lp, certified, lp.solve()


def _rejected(*args):
    return dataclasses.replace(certify_basis(*args), certified=False)


def test_a_fallback_after_certified_resolves_is_the_full_optimum(monkeypatch):
    # the root and three re-solves certified by the check (HiGHS not run), then a re-solve
    # whose check fails: HiGHS goes on from the rows and basis the certified ends left it
    # and ends at the full primal's optimum with the sign rows (scipy's HiGHS)
    Z, y, u = random_problem(3, n=120)
    costs = 8.0 * u
    rows = crossing_rows(Z, y, costs, 4)
    lp, certified, (theta, b, objective) = _certified_resolves_then_a_fallback(
        Z, y, costs, rows, monkeypatch)
    assert certified == len(rows) and lp.stats.highs_confirmed == 1
    reference = full_lp(Z, y, costs, rows)
    assert objective == pytest.approx(reference, rel=RTOL)
    assert primal_objective(Z, y, costs, theta, b) == pytest.approx(reference, rel=RTOL)
    f = Z @ theta + b
    assert all(s * f[i] >= (0.0 if s > 0 else MARGIN) - 1e-9 for i, s in rows)
