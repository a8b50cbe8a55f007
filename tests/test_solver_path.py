"""Solutions along a grid of C (nordicstats.solvers.path).

Every point of a warm-started path is checked against quadprog's cold optimum at the
same C (the package's exact reference for the QP methods), and the starts are checked
where the solver reports them (``info["start"]``).
"""

import dataclasses
import importlib.util

import numpy as np
import pytest
from test_decomposition import make_problem

from nordicstats.exceptions import SolverError
from nordicstats.solvers import (
    SOLVERS,
    SolverPath,
    handles,
    registry,
    solve,
    solve_path,
    takes_warm_start,
)

GRID = [0.25, 1.0, 4.0]


def _method(name):
    return next(m for m in ("nordic1", "nordic0", "bsvm") if handles(name, m))


@pytest.mark.parametrize("name", [n for n in sorted(SOLVERS) if takes_warm_start(n)])
def test_warm_path_ends_at_the_cold_optima(name):
    method = _method(name)
    results = solve_path(lambda C: make_problem(30, 3, method=method, C=C), GRID, solver=name)
    assert [r.info["start"] for r in results][1:] == ["warm_start"] * (len(GRID) - 1)
    for C, warm in zip(GRID, results, strict=True):
        cold = solve(make_problem(30, 3, method=method, C=C), solver="quadprog")
        assert warm.status == "optimal"
        # both certified to a relative gap of 1e-6
        assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
        np.testing.assert_allclose(warm.intercept, cold.intercept, atol=1e-4)


def test_cold_path_passes_no_start(monkeypatch):
    starts = []
    original = registry.solve

    def recording(problem, solver="auto", *, warm_start=None, **options):
        starts.append((problem.C, warm_start))
        return original(problem, solver, warm_start=warm_start, **options)

    monkeypatch.setattr(registry, "solve", recording)
    build = lambda C: make_problem(20, 3, C=C)  # noqa: E731
    solve_path(build, GRID, solver="decomposition", warm=False)
    assert starts == [(C, None) for C in GRID]
    starts.clear()
    solve_path(build, GRID, solver="quadprog")  # no warm start: none is passed
    assert starts == [(C, None) for C in GRID]
    starts.clear()
    solve_path(build, GRID, solver="decomposition")
    assert [(C, start and start["C"]) for C, start in starts] == [(0.25, None), (1.0, 0.25),
                                                                   (4.0, 1.0)]


def test_a_failed_point_leaves_the_path_usable(monkeypatch):
    """A failure at one C propagates; the next C starts from the last solution found."""
    original = registry.solve

    def failing_at_one(problem, solver="auto", *, warm_start=None, **options):
        if problem.C == 1.0:
            raise SolverError("no optimum at C = 1")
        return original(problem, solver, warm_start=warm_start, **options)

    monkeypatch.setattr(registry, "solve", failing_at_one)
    path = SolverPath(lambda C: make_problem(30, 3, C=C), solver="decomposition")
    first = path.solve(0.25)
    with pytest.raises(SolverError, match="no optimum"):
        path.solve(1.0)
    assert path.previous[0] is first and path.previous[1] == 0.25
    last = path.solve(4.0)
    cold = solve(make_problem(30, 3, C=4.0), solver="quadprog")
    assert last.info["start"] == "warm_start"
    assert last.objective == pytest.approx(cold.objective, rel=1e-6)


def test_explicit_start_option_is_kept():
    """A caller's own ``warm_start`` option goes to every solve unchanged."""
    start = solve(make_problem(30, 3, C=1.0), solver="decomposition")
    path = SolverPath(lambda C: make_problem(30, 3, C=C), solver="decomposition",
                      warm_start={**start.multipliers, "C": 1.0})
    results = [path.solve(C) for C in GRID]
    assert all(r.info["start"] == "warm_start" for r in results)


@pytest.mark.skipif(importlib.util.find_spec("pyscipopt") is None,
                    reason="pyscipopt is not installed")
def test_nordic2_keeps_its_relaxation_along_the_path():
    def build(C):
        return dataclasses.replace(make_problem(24, 3, method="nordic2", C=C), penalty="l1")

    path = SolverPath(build)
    results = [path.solve(C) for C in GRID]
    relaxation = path.relaxation
    assert relaxation is not None and relaxation.matches(relaxation.Z, build(1.0).signs)
    for C, on_path in zip(GRID, results, strict=True):
        alone = solve(build(C), solver="scip")
        assert on_path.status == alone.status == "optimal"
        assert on_path.objective == pytest.approx(alone.objective, rel=1e-6, abs=1e-9)
