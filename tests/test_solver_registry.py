"""The questions the solver registry answers (nordicstats.solvers.registry).

Each answer is checked against the solver itself: its signature (what options it
takes), what it does with a start at another C (the optimum that quadprog, the
package's exact reference, finds from cold), and the error ``solve`` raises.
"""

import importlib
import importlib.util
import inspect

import numpy as np
import pytest
from test_decomposition import make_problem

from nordicstats.solvers import (
    METHODS,
    SOLVERS,
    handles,
    needs_gram,
    refit_solver,
    solve,
    takes_kernel_rows,
    takes_relaxation_path,
    takes_warm_start,
)


def _parameters(name):
    entry = SOLVERS[name]
    function = getattr(importlib.import_module(entry.module), entry.function)
    return inspect.signature(function).parameters


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_answers_match_the_solver_signature(name):
    if name == "scip" and importlib.util.find_spec("pyscipopt") is None:
        pytest.skip("pyscipopt is not installed")
    parameters = _parameters(name)
    assert takes_relaxation_path(name) == ("relaxation" in parameters)
    if takes_warm_start(name):
        assert "warm_start" in parameters


def test_unknown_and_auto_names():
    assert not handles("auto", "bsvm") and not handles("lbfgs", "bsvm")
    assert needs_gram("lbfgs") and not takes_kernel_rows("lbfgs")
    assert not takes_warm_start("auto") and not takes_relaxation_path("lbfgs")
    kernel = make_problem(30, 3)  # auto picks SMO: rows on demand, warm start, a Gram matrix
    assert takes_kernel_rows("auto", kernel) and takes_warm_start("auto", kernel)
    assert needs_gram("auto", kernel)
    assert not needs_gram("primal") and needs_gram("smo")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_handles_agrees_with_solve(name, method):
    if handles(name, method):
        return  # fitting is tested per solver
    problem = make_problem(12, 3, method=method)
    with pytest.raises(ValueError, match="cannot fit method"):
        solve(problem, solver=name)


@pytest.mark.parametrize("name", [n for n in sorted(SOLVERS) if takes_warm_start(n)])
def test_warm_start_reaches_the_cold_optimum(name):
    """A start from the dual at C = 1 must end at quadprog's optimum at C = 2."""
    method = next(m for m in ("nordic1", "nordic0") if handles(name, m))
    previous = solve(make_problem(30, 3, method=method, C=1.0), solver=name)
    problem = make_problem(30, 3, method=method, C=2.0)
    warm = solve(problem, solver=name, warm_start={**previous.multipliers, "C": 1.0})
    cold = solve(problem, solver="quadprog")
    assert warm.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
    np.testing.assert_allclose(warm.intercept, cold.intercept, atol=1e-4)


def test_refit_solver():
    primal = "primal" if importlib.util.find_spec("piqp") else "auto"
    assert refit_solver("auto", "bsvm") == primal
    assert refit_solver("auto", "nordic1") == primal
    assert refit_solver("auto", "nordic0") == "auto"
    assert refit_solver("smo", "bsvm") == "smo"
