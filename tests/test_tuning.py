"""Tests of nordicstats.tuning: the selected parameters equal a brute-force loop over the grid
(written here independently, fitting each grid point from scratch), and the CV folds are
stratified and deterministic."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from nordicstats import metrics
from nordicstats.compare import make_classifier
from nordicstats.datasets import load_balance_scale, stratified_split
from nordicstats.exceptions import SolverError
from nordicstats.kernels import gamma_candidates
from nordicstats.tuning import (
    PAPER_C_GRID,
    default_grid,
    make_scorer,
    select_best,
    stratified_folds,
    tune,
)

C_GRID = [0.25, 1.0, 4.0]


@pytest.fixture(scope="module")
def balance():
    data = load_balance_scale()
    X, y = data.drop(columns="balance"), data["balance"]
    train, tuning, _ = stratified_split(y, [45, 45], random_state=3)
    return (X.iloc[train], y.iloc[train], X.iloc[tuning], y.iloc[tuning])


def brute_force(name, grid, X, y, X_eval, y_eval, cost):
    """Fit every grid point from scratch; pick the minimum with the documented tie rule."""
    table = []
    for C, gamma in itertools.product(grid["C"], grid["gamma"]):
        pred = make_classifier(name, C=C, gamma=gamma).fit(X, y).predict(X_eval)
        table.append((C, gamma, metrics.weighted_error(y_eval, pred, cost)))
    best = min(s for _, _, s in table)
    middle = (len(grid["gamma"]) - 1) / 2
    tied = [(C, g) for C, g, s in table if s == best]
    choice = min(tied, key=lambda p: (p[0], abs(grid["gamma"].index(p[1]) - middle), p[1]))
    return table, choice


@pytest.mark.parametrize("name", ["nordic1", "nordic0", "nordic2", "svr", "ck"])
def test_holdout_selection_equals_brute_force(balance, name):
    X, y, Xt, yt = balance
    grid = {"C": C_GRID, "gamma": list(gamma_candidates(np.asarray(X, float)))}
    res = tune(name, X, y, X_tune=Xt, y_tune=yt, param_grid=grid,
               scoring=metrics.BALANCE_COSTS)
    table, choice = brute_force(name, grid, X, y, Xt, yt, metrics.BALANCE_COSTS)
    got = {(r.C, r.gamma): r.score for r in res.scores.itertuples()}
    for C, gamma, score in table:
        # the same fits up to floating point: predictions (and so scores) must agree exactly
        assert got[(C, gamma)] == score
    assert (res.best_params["C"], res.best_params["gamma"]) == choice
    assert res.protocol == "holdout" and res.scoring == "weighted_error"
    assert res.scores["rank"].tolist().count(1) == 1
    assert res.scores["rank"].iloc[res.best_index] == 1
    # the refit model is the plain rbf model at the selected point
    fresh = make_classifier(name, C=choice[0], gamma=choice[1]).fit(X, y)
    np.testing.assert_array_equal(np.asarray(res.estimator.predict(Xt)),
                                  np.asarray(fresh.predict(Xt)))


def test_cv_selection_equals_brute_force(balance):
    X, y, _, _ = balance
    grid = {"C": [0.5, 4.0], "gamma": [0.02, 0.1]}
    res = tune("nordic1", X, y, param_grid=grid, cv=3, random_state=11)
    folds = stratified_folds(y, 3, random_state=11)
    assert len(res.folds) == 3
    for (a, b), (c, d) in zip(res.folds, folds, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
    scores = {}
    for C, gamma in itertools.product(grid["C"], grid["gamma"]):
        wrong = 0
        for train, test in folds:
            clf = make_classifier("nordic1", C=C, gamma=gamma).fit(X.iloc[train], y.iloc[train])
            wrong += int(np.sum(np.asarray(clf.predict(X.iloc[test])) != y.iloc[test].to_numpy()))
        scores[(C, gamma)] = wrong / len(y)
    for row in res.scores.itertuples():
        assert row.score == pytest.approx(scores[(row.C, row.gamma)], abs=1e-15)
    best = min(scores.values())
    expected = min((k for k, v in scores.items() if v == best),
                   key=lambda p: (p[0], abs(grid["gamma"].index(p[1]) - 0.5), p[1]))
    assert (res.best_params["C"], res.best_params["gamma"]) == expected
    assert res.protocol == "cv" and res.n_splits == 3


def test_stratified_folds_partition_and_proportions():
    y = pd.Series(pd.Categorical(["L"] * 23 + ["B"] * 7 + ["R"] * 20,
                                 categories=["L", "B", "R"], ordered=True))
    folds = stratified_folds(y, 4, random_state=5)
    tests = np.concatenate([te for _, te in folds])
    np.testing.assert_array_equal(np.sort(tests), np.arange(50))
    sizes = [len(te) for _, te in folds]
    assert max(sizes) - min(sizes) <= 1
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and len(train) + len(test) == 50
        for level, total in (("L", 23), ("B", 7), ("R", 20)):
            count = int((y.iloc[test] == level).sum())
            assert count in (total // 4, -(-total // 4))


def test_stratified_folds_deterministic():
    y = np.repeat([1, 2, 3], [10, 6, 9])
    a = stratified_folds(y, 3, random_state=42)
    b = stratified_folds(y, 3, random_state=42)
    c = stratified_folds(y, 3, random_state=43)
    assert all(np.array_equal(x[1], z[1]) for x, z in zip(a, b, strict=True))
    assert not all(np.array_equal(x[1], z[1]) for x, z in zip(a, c, strict=True))


def test_stratified_folds_validation():
    with pytest.raises(ValueError, match="n_splits"):
        stratified_folds([1, 2, 1, 2], 1)
    with pytest.raises(ValueError, match="class 2 has only 2 observations"):
        stratified_folds([1, 1, 1, 2, 2], 3)


class Constant:
    """Predicts the lowest training class; fails for C above a threshold (to test failures)."""

    def __init__(self, C=1.0, gamma=None, fail_above=np.inf):
        self.C, self.gamma, self.fail_above = C, gamma, fail_above

    def get_params(self):
        return {"C": self.C, "gamma": self.gamma, "fail_above": self.fail_above}

    def fit(self, X, y):
        if self.C > self.fail_above:
            raise SolverError("no optimum", solver="fake", status="INFEASIBLE")
        self.level = sorted(np.unique(np.asarray(y)))[0]
        return self

    def predict(self, X):
        return np.full(len(X), self.level)


def test_ties_prefer_smallest_C_then_middle_gamma():
    X = np.arange(20.0).reshape(10, 2)
    y = np.repeat([1, 2], 5)
    grid = {"C": [4.0, 0.5, 2.0], "gamma": [0.3, 0.1, 0.2, 0.05, 0.01]}
    res = tune(Constant, X, y, X_tune=X, y_tune=y, param_grid=grid)
    assert (res.scores["score"] == 0.5).all()
    # smallest C; gamma position 2 is the middle of five
    assert res.best_params == {"C": 0.5, "gamma": 0.2}
    grid = {"C": [1.0], "gamma": [0.3, 0.1, 0.2, 0.05]}  # middle 1.5: positions 1 and 2 tie
    res = tune(Constant, X, y, X_tune=X, y_tune=y, param_grid=grid)
    assert res.best_params == {"C": 1.0, "gamma": 0.1}  # then the smaller gamma


def test_select_best_uses_scores():
    grid = {"C": [1.0, 2.0], "gamma": [0.1, 0.2, 0.3]}
    scores = pd.DataFrame([(C, g) for g in grid["gamma"] for C in grid["C"]],
                          columns=["C", "gamma"])
    scores["score"] = [0.3, 0.2, 0.2, 0.25, 0.2, np.inf]
    # tied 0.2 at (2, 0.1), (1, 0.2), (1, 0.3): smallest C, then the middle gamma 0.2
    assert scores.iloc[select_best(scores, grid)][["C", "gamma"]].tolist() == [1.0, 0.2]


def test_failed_grid_points_are_skipped_with_warning():
    X = np.arange(20.0).reshape(10, 2)
    y = np.repeat([1, 2], 5)
    grid = {"C": [0.5, 1.0, 2.0], "gamma": [0.1]}
    with pytest.warns(RuntimeWarning, match="1 of 3 grid points failed"):
        res = tune(lambda **p: Constant(fail_above=1.5, **p), X, y, X_tune=X, y_tune=y,
                   param_grid=grid)
    failed = res.scores[res.scores["C"] == 2.0].iloc[0]
    assert np.isinf(failed["score"]) and failed["rank"] == 3
    assert failed["message"].startswith("SolverError") and "no optimum" in failed["message"]
    with pytest.raises(ValueError, match="every grid point failed.*no optimum"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tune(lambda **p: Constant(fail_above=0.0, **p), X, y, X_tune=X, y_tune=y,
                 param_grid=grid)


def test_default_grid_is_the_papers(balance):
    X = balance[0]
    grid = default_grid("nordic2", X)
    np.testing.assert_allclose(grid["C"], 2.0 ** np.arange(-4, 5))
    assert tuple(grid["C"]) == PAPER_C_GRID
    d = np.sqrt(((X.to_numpy()[:, None, :] - X.to_numpy()[None, :, :]) ** 2).sum(-1))
    widths = np.quantile(d[np.triu_indices(len(X), 1)], [0.1, 0.5, 0.9])
    np.testing.assert_allclose(grid["gamma"], 1 / (2 * widths ** 2), rtol=1e-12)
    assert default_grid("ologit", X) == {}


def test_scorers_and_validation(balance):
    X, y, Xt, yt = balance
    assert make_scorer("mae", ["L", "B", "R"])[1](["L", "R"], ["R", "R"]) == 1.0
    name, score = make_scorer([[0, 1], [5, 0]], [1, 2])
    assert name == "weighted_error" and score([1, 2, 2], [1, 1, 2]) == pytest.approx(5 / 3)
    with pytest.raises(ValueError, match="'scoring' parameter"):
        make_scorer("accuracy")
    with pytest.raises(ValueError, match="X_tune and y_tune"):
        tune("svr", X, y, X_tune=Xt)
    with pytest.raises(ValueError, match="one protocol"):
        tune("svr", X, y, X_tune=Xt, y_tune=yt, cv=3)
    with pytest.raises(ValueError, match="Unknown classifier"):
        tune("svm", X, y, X_tune=Xt, y_tune=yt)
    with pytest.raises(TypeError, match="'estimator' parameter"):
        tune(3, X, y, X_tune=Xt, y_tune=yt)
    with pytest.raises(ValueError, match="empty"):
        tune("svr", X, y, X_tune=Xt, y_tune=yt, param_grid={"C": []})


def test_kernel_matrices_built_once_per_width(balance, monkeypatch):
    from nordicstats.kernels import Kernel

    X, y, Xt, yt = balance
    calls = []
    original = Kernel.__call__

    def counting(self, A, B):
        calls.append((self.gamma, np.shape(A)[0], np.shape(B)[0]))
        return original(self, A, B)

    monkeypatch.setattr(Kernel, "__call__", counting)
    grid = {"C": [0.25, 1.0, 4.0, 16.0], "gamma": [0.02, 0.1]}
    tune("nordic1", X, y, X_tune=Xt, y_tune=yt, param_grid=grid, refit=False)
    # one training Gram and one tuning-vs-training block per width, whatever the C grid
    assert sorted(calls) == sorted([(g, len(X), len(X)) for g in grid["gamma"]]
                                   + [(g, len(Xt), len(X)) for g in grid["gamma"]])


def test_warm_start_along_C_gives_the_cold_scores(monkeypatch):
    from nordicstats.solvers import registry

    started = []
    original = registry.solve

    def recording(problem, solver="auto", *, warm_start=None, **options):
        started.append((problem.C, (warm_start or {}).get("C")))
        return original(problem, solver, warm_start=warm_start, **options)

    monkeypatch.setattr(registry, "solve", recording)  # the solver layer's path calls it
    data = load_balance_scale()
    X, y = data.drop(columns="balance"), data["balance"]
    train, tuning, _ = stratified_split(y, [130, 100], random_state=8)  # 260 dual rows
    grid = {"C": [0.25, 1.0, 4.0, 16.0], "gamma": [0.1]}
    args = (X.iloc[train], y.iloc[train])
    kw = dict(X_tune=X.iloc[tuning], y_tune=y.iloc[tuning], param_grid=grid, refit=False)
    warm = tune("nordic1", *args, warm_start=True, **kw)
    assert started == [(0.25, None), (1.0, 0.25), (4.0, 1.0), (16.0, 4.0)]
    cold = tune("nordic1", *args, warm_start=False, **kw)
    assert started[4:] == [(0.25, None), (1.0, None), (4.0, None), (16.0, None)]
    brute = [metrics.error_rate(y.iloc[tuning], make_classifier("nordic1", C=C, gamma=0.1)
                                .fit(*args).predict(X.iloc[tuning])) for C in grid["C"]]
    # same optimum to the solver's tolerance: the tuning-set predictions agree
    np.testing.assert_array_equal(warm.scores["score"], cold.scores["score"])
    np.testing.assert_array_equal(warm.scores["score"], brute)
