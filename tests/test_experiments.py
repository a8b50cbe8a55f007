"""Tests of the experiment runner (studies.experiments) and its plots.

A reduced balance-scale study (two sizes, two replications, a 2 x 3 grid) is run once; its
rows are checked against an independent recomputation (refit by hand, metric by hand), a
resumed run after a simulated interruption, n_jobs=2 and, when installed, a local Dask cluster.
"""

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest

from nordicstats import metrics
from nordicstats.compare import make_classifier
from nordicstats.datasets import load_balance_scale, stratified_split
from studies.experiments import (
    Design,
    Method,
    balance_scale_design,
    confusion_summary,
    load_results,
    replication_seeds,
    run_study,
    simulation_design,
    summarize,
)

C_GRID = (0.5, 4.0)
METHODS = [Method("NORDIC-1", "nordic1"), Method("SVR", "svr"), Method("DR", "dr")]
DESIGNS = [balance_scale_design(30), balance_scale_design(45)]
TIMING = ["tune_time", "fit_time", "total_time", "cpu_time", "load"]  # differ between runs
OPTIONS = dict(seed=7, costs=metrics.BALANCE_COSTS, scoring=metrics.BALANCE_COSTS,
               C_grid=C_GRID, progress=False)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    path = tmp_path_factory.mktemp("study") / "rows.jsonl"
    table = run_study(DESIGNS, METHODS, 2, path=path, **OPTIONS)
    return path, table


def comparable(table):
    return table.drop(columns=TIMING).reset_index(drop=True)


def test_rows_complete_and_ordered(study):
    _, table = study
    assert len(table) == 2 * 3 * 2
    assert (table["status"] == "ok").all(), table.loc[table["status"] != "ok", "message"]
    assert table["design"].tolist()[:6] == ["n=30"] * 6
    assert table["method"].tolist()[:6] == ["NORDIC-1"] * 2 + ["SVR"] * 2 + ["DR"] * 2
    assert table[["n_train", "n_tune", "n_test"]].iloc[0].tolist() == [30, 30, 565]
    assert set(table["C"]) <= set(C_GRID)


def test_recorded_metrics_equal_an_independent_recomputation(study):
    _, table = study
    data = load_balance_scale()
    X, y = data.drop(columns="balance"), data["balance"]
    for _, row in table[table["rep"] == 1].iterrows():
        data_seed, _ = replication_seeds(7, 1)
        train, tuning, test = stratified_split(y, [row["n"], row["n"]], random_state=data_seed)
        name = {"NORDIC-1": "nordic1", "SVR": "svr", "DR": "dr"}[row["method"]]
        clf = make_classifier(name, C=row["C"], gamma=row["gamma"]).fit(X.iloc[train],
                                                                          y.iloc[train])
        pred = np.asarray(clf.predict(X.iloc[test]), dtype=object)
        truth = y.iloc[test].to_numpy(dtype=object)
        cost = {("L", "R"): 2, ("R", "L"): 2}
        by_hand = np.mean([0 if t == p else cost.get((t, p), 1)
                           for t, p in zip(truth, pred, strict=True)])
        assert row["weighted_error"] == pytest.approx(by_hand, abs=1e-15)
        assert row["error"] == pytest.approx(np.mean(truth != pred), abs=1e-15)
        counts = [[int(np.sum((truth == a) & (pred == b))) for b in "LBR"] for a in "LBR"]
        assert row["confusion"] == counts
        # the selected grid point is the best on the tuning set (brute force)
        gammas = 1 / (2 * np.quantile(
            [np.linalg.norm(a - b) for i, a in enumerate(X.iloc[train].to_numpy())
             for b in X.iloc[train].to_numpy()[i + 1:]], [0.1, 0.5, 0.9]) ** 2)
        assert min(abs(gammas - row["gamma"])) < 1e-12 * row["gamma"]
        tune_scores = []
        for C in C_GRID:
            for g in gammas:
                p = make_classifier(name, C=C, gamma=g).fit(X.iloc[train], y.iloc[train]).predict(
                    X.iloc[tuning])
                tune_scores.append(metrics.weighted_error(y.iloc[tuning], p,
                                                          metrics.BALANCE_COSTS))
        assert row["tuning_score"] == pytest.approx(min(tune_scores), abs=1e-15)


def test_resume_after_interruption_gives_the_same_table(study, tmp_path):
    path, table = study
    lines = path.read_text().splitlines(keepends=True)
    partial = tmp_path / "partial.jsonl"
    # five finished rows, then a row torn in the middle of its write
    partial.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    resumed = run_study(DESIGNS, METHODS, 2, path=partial, **OPTIONS)
    pd.testing.assert_frame_equal(comparable(resumed), comparable(table))
    assert len(partial.read_text().splitlines()) == len(table)  # only the 7 missing rows ran
    kept = [json.loads(line) for line in partial.read_text().splitlines()[:5]]
    assert [r["total_time"] for r in kept] == [json.loads(x)["total_time"] for x in lines[:5]]
    again = run_study(DESIGNS, METHODS, 2, path=partial, **OPTIONS)  # nothing left to run
    assert len(partial.read_text().splitlines()) == len(table)
    pd.testing.assert_frame_equal(again, resumed)


def test_more_replications_extend_the_file(study, tmp_path):
    path, table = study
    extended = tmp_path / "extended.jsonl"
    extended.write_text(path.read_text())
    bigger = run_study(DESIGNS[:1], METHODS[:1], 3, path=extended, **OPTIONS)
    assert bigger["rep"].tolist() == [0, 1, 2]
    pd.testing.assert_frame_equal(comparable(bigger.iloc[:2]),
                                  comparable(table.iloc[:2]))


def test_time_limit_stops_dispatching_and_resume_finishes(study, tmp_path):
    _, table = study
    path = tmp_path / "limited.jsonl"
    nothing = run_study(DESIGNS, METHODS, 2, path=path, time_limit=1e-9, **OPTIONS)
    assert nothing.empty and not path.exists()
    done = run_study(DESIGNS[:1], METHODS[:1], 2, path=path, **OPTIONS)
    pd.testing.assert_frame_equal(comparable(done), comparable(table.iloc[:2]))
    partial = run_study(DESIGNS, METHODS, 2, path=path, exclude=[("n=45", "SVR")], **OPTIONS)
    expected = table[~((table["design"] == "n=45") & (table["method"] == "SVR"))]
    pd.testing.assert_frame_equal(comparable(partial), comparable(expected))
    with pytest.raises(ValueError, match="exclude lists cells"):
        run_study(DESIGNS, METHODS, 2, exclude=[("n=45", "OLR")], **OPTIONS)
    with pytest.raises(ValueError, match="'time_limit' parameter"):
        run_study(DESIGNS, METHODS, 2, time_limit=-1.0, **OPTIONS)


def test_n_jobs_two_gives_identical_rows(study):
    _, table = study
    parallel = run_study(DESIGNS, METHODS, 2, n_jobs=2, **OPTIONS)
    pd.testing.assert_frame_equal(comparable(parallel), comparable(table))


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask.distributed is not installed (pip install 'dask[distributed]')")
def test_dask_backend_on_a_local_cluster(study):
    from distributed import Client, LocalCluster

    _, table = study
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster):
        rows = run_study(DESIGNS[:1], METHODS, 2, backend="dask", **OPTIONS)
    pd.testing.assert_frame_equal(comparable(rows), comparable(table.iloc[:6]))


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask.distributed is not installed (pip install 'dask[distributed]')")
def test_dask_backend_without_client_says_how_to_start_one():
    with pytest.raises(ValueError, match="needs a running dask.distributed Client"):
        run_study(DESIGNS[:1], METHODS[:1], 1, backend="dask", progress=False)


def test_replication_seeds():
    a = replication_seeds(7, 1)
    assert a == replication_seeds(7, 1)
    expected = np.random.SeedSequence(7, spawn_key=(1,)).generate_state(2).tolist()
    assert list(a) == expected
    assert a != replication_seeds(7, 2) and a != replication_seeds(8, 1)


def test_summaries_match_numpy(study):
    _, table = study
    summary = summarize(table, "weighted_error")
    for (design, method), row in summary.iterrows():
        values = table[(table["design"] == design) & (table["method"] == method)][
            "weighted_error"].to_numpy()
        assert row["mean"] == pytest.approx(values.mean(), rel=1e-14)
        assert row["se"] == pytest.approx(values.std(ddof=1) / np.sqrt(values.size), rel=1e-12)
    conf = confusion_summary(table)
    totals = conf.groupby(["design", "method", "true"])["proportion"].sum()
    np.testing.assert_allclose(totals, 1.0, rtol=1e-12)
    one = table[(table["design"] == "n=30") & (table["method"] == "SVR")]
    counts = np.array(one["confusion"].tolist(), float)
    expected = np.mean(counts[:, 1, 1] / counts[:, 1, :].sum(axis=1))  # B classified as B
    got = conf[(conf["design"] == "n=30") & (conf["method"] == "SVR") & (conf["true"] == "B")
               & (conf["predicted"] == "B")]["proportion"].item()
    assert got == pytest.approx(expected, rel=1e-14)


def test_simulation_design_with_cv(tmp_path):
    design = simulation_design("nonlinear", d=3, sigma=1.0, n_train=40, n_tune=0, n_test=300)
    rows = run_study([design], [Method("CK", "ck", grid={"C": [1.0], "gamma": [0.2]})], 1,
                     cv=3, progress=False, path=tmp_path / "sim.jsonl")
    row = rows.iloc[0]
    assert row["status"] == "ok" and row["n_tune"] == 0 and row["n_test"] == 300
    assert row["d"] == 3 and row["sigma"] == 1.0 and row["kind"] == "nonlinear"
    assert np.sum(row["confusion"]) == 300
    assert load_results(tmp_path / "sim.jsonl")["design"].tolist() == [design.name]


def test_failures_are_recorded_not_raised():
    rows = run_study(DESIGNS[:1], [Method("BAD", "svr", params={"epsilon": -1.0})], 1,
                     progress=False, C_grid=C_GRID)
    assert rows["status"].item() == "failed"
    assert "every grid point failed" in rows["message"].item()


def test_validation(study, tmp_path):
    path, _ = study
    with pytest.raises(ValueError, match="seed"):
        run_study(DESIGNS, METHODS, 2, path=path, **{**OPTIONS, "seed": 8})
    with pytest.raises(ValueError, match="other design, method or tuning settings"):
        run_study(DESIGNS, METHODS, 2, path=path, **{**OPTIONS, "C_grid": (0.5, 8.0)})
    with pytest.raises(ValueError, match="n_reps"):
        run_study(DESIGNS, METHODS, 0)
    with pytest.raises(ValueError, match="'backend' parameter"):
        run_study(DESIGNS, METHODS[:1], 1, backend="spark", progress=False)
    with pytest.raises(ValueError, match="unique"):
        run_study(DESIGNS + DESIGNS[:1], METHODS, 1)
    with pytest.raises(ValueError, match="n must be in 1..312"):
        balance_scale_design(400)
    with pytest.raises(ValueError, match="row columns"):
        Design("x", lambda **kw: None, {"seed": 1})
    with pytest.raises(ValueError, match="'kind' parameter"):
        simulation_design("spiral", 2, 0.5)
    with pytest.raises(ValueError, match="no result rows"):
        load_results(tmp_path / "missing.jsonl")


# --- plots ---------------------------------------------------------------------------------
def synthetic_rows():
    rng = np.random.default_rng(0)
    rows = []
    for sigma in (0.5, 1.0, 1.5):
        for d in (10, 20, 30):
            for method in ("A", "B"):
                for rep in range(3):
                    counts = rng.integers(1, 20, size=(3, 3)).tolist()
                    rows.append({"design": f"d={d} s={sigma}", "method": method, "rep": rep,
                                 "d": d, "sigma": sigma, "n": d, "status": "ok",
                                 "error": rng.uniform(), "weighted_error": rng.uniform(),
                                 "confusion": counts, "levels": ["1", "2", "3"]})
    return pd.DataFrame(rows)


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    yield pyplot
    pyplot.close("all")


def test_plot_error_by_dimension(plt):
    from studies.plotting import plot_error_by_dimension

    rows = synthetic_rows()
    fig = plot_error_by_dimension(rows)
    axes = fig.axes
    assert len(axes) == 3
    line = axes[1].containers[1].lines[0]  # sigma = 1.0, method B (data line of errorbar)
    sub = rows[(rows["sigma"] == 1.0) & (rows["method"] == "B")]
    np.testing.assert_allclose(line.get_ydata(), sub.groupby("d")["error"].mean().to_numpy())
    np.testing.assert_allclose(line.get_xdata(), [10, 20, 30])


def test_plot_confusion_grid(plt):
    from studies.plotting import plot_confusion_grid

    rows = synthetic_rows()
    rows = rows[rows["sigma"] == 0.5]
    fig = plot_confusion_grid(rows, x="d")
    assert len(fig.axes) == 9
    panel = fig.axes[0 * 3 + 2]  # predicted class 1, true class 3
    sub = rows[(rows["method"] == "A") & (rows["d"] == 20)]
    counts = np.array(sub["confusion"].tolist(), float)
    expected = np.mean(counts[:, 2, 0] / counts[:, 2, :].sum(axis=1))
    assert panel.lines[0].get_ydata()[1] == pytest.approx(expected, rel=1e-12)
    total = sum(fig.axes[k * 3 + 1].lines[1].get_ydata() for k in range(3))
    np.testing.assert_allclose(total, 1.0)  # each true-class column sums to one


def test_plot_error_by_n(plt):
    from studies.plotting import plot_error_by_n

    rows = synthetic_rows()
    ax = plot_error_by_n(rows, kind="mean", x="n")
    sub = rows[rows["method"] == "A"]
    np.testing.assert_allclose(ax.containers[0].lines[0].get_ydata(),
                               sub.groupby("n")["weighted_error"].mean().to_numpy())
    ax = plot_error_by_n(rows, kind="box", x="n")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["A", "B"]
    with pytest.raises(ValueError, match="'kind' parameter"):
        plot_error_by_n(rows, kind="violin")
    with pytest.raises(ValueError, match="methods"):
        plot_error_by_n(rows, methods=["C"])
