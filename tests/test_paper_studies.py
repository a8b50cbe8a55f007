"""Smoke tests of the paper's study script on tiny grids, and the replication verdicts."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nordicstats.replication import (
    DONUT_DIMENSIONS,
    STUDIES,
    cost_training_lines,
    evaluate_claims,
    measured_runs,
    paired_difference,
    replication_report,
    time_column,
    timing_summary,
)

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "paper_studies.py"
TINY = ["--reps", "2", "--c-exponents", "0", "--quantiles", "0.5", "--no-progress",
        "--no-figures"]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("paper_studies", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("study, extra", [
    ("nonlinear", ["--dims", "3", "--sigmas", "0.5", "--n-train", "40", "--n-tune", "40",
                   "--n-test", "100"]),
    ("donut", ["--dims", "3", "--sigmas", "0.4", "--n-train", "80", "--n-tune", "60",
               "--n-test", "100"]),
    ("balance", ["--sizes", "30", "--methods", "NORDIC-1", "BSVM", "CK", "SVR", "OLR"]),
])
def test_study_script_runs_resumes_and_reports(script, tmp_path, study, extra, capsys):
    args = [study, *TINY, *extra, "--results", str(tmp_path)]
    table = script.main(args)
    path = tmp_path / STUDIES[study].file
    rows = _rows(path)
    n_methods = 5 if study == "balance" else 6
    assert len(rows) == 2 * n_methods and len(table) == 2 * n_methods
    for row in rows:
        assert row["seed"] == STUDIES[study].seed
        assert {"rep", "C", "gamma", "confusion", "levels", "tune_time", "fit_time",
                "total_time", "status", "message"} <= set(row) or row["status"] == "failed"
        if row["status"] == "ok":
            counts = np.asarray(row["confusion"])
            assert counts.sum() == row["n_test"]
            assert row["error"] == pytest.approx(1 - np.trace(counts) / counts.sum())
            if row["method"] != "OLR":
                assert row["C"] == 1.0
    assert "Task seconds per method in this run" in capsys.readouterr().out
    script.main(args)  # resume: nothing left to run, the file is unchanged
    assert len(_rows(path)) == 2 * n_methods
    runs = pd.read_csv(tmp_path / "runs.csv")  # one logged row per invocation
    assert runs["rows_before"].tolist() == [0, 2 * n_methods]
    assert runs["rows_after"].tolist() == [2 * n_methods] * 2
    assert runs["complete"].tolist() == [True, True] and runs["wall_seconds"].iloc[0] > 0
    text = script.main(["report", "--results", str(tmp_path), "--no-figures"])
    assert (tmp_path / "REPLICATION.md").read_text().strip() == text.strip()
    assert f"## {study}" in text and "### Claims" in text


def test_donut_grid_is_five_dimensions_from_10_to_75():
    assert DONUT_DIMENSIONS[0] == 10 and DONUT_DIMENSIONS[-1] == 75
    assert len(DONUT_DIMENSIONS) == 5
    assert sorted({d for d, _ in STUDIES["donut"].axis}) == list(DONUT_DIMENSIONS)
    assert len(STUDIES["nonlinear"].axis) == 15 and len(STUDIES["donut"].axis) == 15


def _fake_balance(errors):
    """Rows with given weighted errors per method (list over replications)."""
    records = []
    for method, values in errors.items():
        for rep, value in enumerate(values):
            records.append({"design": "n=52", "n": 52, "method": method, "rep": rep,
                            "status": "ok", "weighted_error": value, "total_time": 1.0,
                            "levels": ["L", "B", "R"],
                            "confusion": [[10, 0, 0], [0, 5, 0], [0, 0, 10]]})
    return pd.DataFrame.from_records(records)


def test_paired_difference_is_mean_and_se_of_per_replication_differences():
    table = _fake_balance({"A": [0.1, 0.2, 0.3, 0.5], "B": [0.2, 0.2, 0.5, 0.5]})
    mean, se, count = paired_difference(table, "weighted_error", "A", "B")
    diff = np.array([-0.1, 0.0, -0.2, 0.0])
    assert count == 4
    assert mean == pytest.approx(diff.mean())
    assert se == pytest.approx(diff.std(ddof=1) / 2)


def test_claim_verdicts_follow_the_paired_differences():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.1, 0.2, 30)
    errors = {m: base + 0.05 for m in ("NORDIC-0", "NORDIC-1", "BSVM", "DR", "CK", "OLR")}
    errors["NORDIC-2"] = base + rng.normal(0, 0.001, 30)  # clearly best
    errors["SVR"] = base + 0.2  # clearly worst
    errors["DR"] = errors["DR"] + rng.normal(0, 0.01, 30)
    claims = evaluate_claims("balance", _fake_balance(errors)).set_index("claim")
    assert claims.loc["NORDIC-2 has a significant advantage", "verdict"] == "holds"
    assert claims.loc["SVR is the worst", "verdict"] == "holds"
    errors["NORDIC-2"] = base + 0.1  # now worse than the others
    claims = evaluate_claims("balance", _fake_balance(errors)).set_index("claim")
    assert claims.loc["NORDIC-2 has a significant advantage", "verdict"] == "does not hold"
    text = replication_report({"balance": _fake_balance(errors), "donut": None})
    assert "does not hold" in text and "No rows yet" in text


def test_report_counts_uncertified_fits_and_projects_the_wall_time():
    errors = {m: [0.1, 0.2, 0.15] for m in ("NORDIC-0", "NORDIC-1", "NORDIC-2", "BSVM", "DR",
                                            "CK", "SVR", "OLR")}
    table = _fake_balance(errors)
    nordic = table["method"].str.startswith("NORDIC") | (table["method"] == "BSVM")
    table["solver_status"] = np.where(nordic, "optimal", None)
    table.loc[(table["method"] == "NORDIC-2") & (table["rep"] == 1), "solver_status"] = \
        "inaccurate"
    table["solver_warnings"] = np.where(table["method"] == "NORDIC-0", 2, 0)
    table.loc[table["method"] == "CK", "total_time"] = 4.0
    table["load"] = 1.5
    table["cpu_time"] = table["total_time"] / 2
    timing = timing_summary(table, STUDIES["balance"])
    assert timing["per_replication"] == pytest.approx(7 * 1.0 + 4.0)
    assert timing["wall_minutes"] == pytest.approx(11.0 * 100 / 2 / 60)
    assert timing["cpu_per_replication"] == pytest.approx(5.5)
    assert timing["idle_minutes"] == pytest.approx(5.5 * 100 / 2 / 60)
    assert timing["cpu_by_method"]["CK"] == pytest.approx(2.0)
    assert timing["by_method"]["CK"] == pytest.approx(4.0) and timing["load"] == 1.5
    text = replication_report({"balance": table})
    cert = text.split("### Solver certificates")[1]
    row = next(line for line in cert.splitlines() if line.startswith("| n=52"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:] == ["0 / 6", "0 / 0", "1 / 0", "0 / 0", "0 / 0", "0 / 0", "0 / 0",
                         "0 / 0"]
    assert "REDUCED" in text and text.count("**met**") == 2  # 3 of 100 reps; 9, 5 min < 15
    table.loc[table["method"] == "CK", "cpu_time"] = np.nan  # a cell without CPU times
    assert np.isnan(timing_summary(table, STUDIES["balance"])["idle_minutes"])


def test_claims_without_pairs_are_not_yet_measured():
    table = _fake_balance({"NORDIC-2": [0.1], "SVR": [0.3], "DR": [0.2]})
    claims = evaluate_claims("balance", table)
    assert set(claims["verdict"]) == {"not yet measured"}


def test_time_claims_use_cpu_seconds_when_every_row_has_them():
    table = _fake_balance({"A": [0.1, 0.2]})
    table["total_time"] = [5.0, 6.0]
    assert time_column(table) == "total_time"
    table["cpu_time"] = [1.0, np.nan]
    assert time_column(table) == "total_time"
    table["cpu_time"] = [1.0, 2.0]
    assert time_column(table) == "cpu_time"


def test_cost_training_section_gives_verdicts_from_the_paired_rows():
    paired = pd.DataFrame({
        "design": ["donut d=50 sigma=0.4", "donut d=10 sigma=0.4", "n=79"],
        "method": ["NORDIC-1"] * 3, "reps": [50, 50, 50], "unit": [0.35, 0.23, 0.13],
        "cost_trained": [0.33, 0.24, 0.13], "mean_diff": [-0.02, 0.006, 0.0],
        "se": [0.004, 0.004, 0.0]})
    text = "\n".join(cost_training_lines(paired))
    rows = {line.split("|")[1].strip(): line.split("|")[-2].strip()
            for line in text.splitlines() if line.startswith("| ") and "design" not in line}
    assert rows == {"donut d=50 sigma=0.4": "holds", "donut d=10 sigma=0.4": "within noise",
                    "balance n=79": "identical fits"}
    report = replication_report({}, cost_training=paired)
    assert "## Training on the scoring cost" in report


def test_report_lists_from_scratch_complete_runs_only():
    runs = pd.DataFrame([
        {"date": "d1", "study": "balance", "reps": 100, "n_jobs": 2, "rows_before": 0,
         "rows_after": 3200, "wall_seconds": 600.0, "load_before": 0.5, "load_after": 2.0,
         "complete": True, "note": ""},
        {"date": "d2", "study": "balance", "reps": 100, "n_jobs": 2, "rows_before": 1000,
         "rows_after": 3200, "wall_seconds": 60.0, "load_before": 0.5, "load_after": 2.0,
         "complete": True, "note": ""},  # a resumed run measures only part of the protocol
        {"date": "d3", "study": "balance", "reps": 100, "n_jobs": 2, "rows_before": 0,
         "rows_after": 1600, "wall_seconds": 1200.0, "load_before": 0.5, "load_after": 2.0,
         "complete": False, "note": ""},
        {"date": "d4", "study": "balance", "reps": 100, "n_jobs": 2, "rows_before": 0,
         "rows_after": 3200, "wall_seconds": 1200.0, "load_before": 3.0, "load_after": 4.0,
         "complete": True, "note": "busy"}])
    assert measured_runs(runs, "balance")["date"].tolist() == ["d1", "d4"]
    table = _fake_balance({m: [0.1, 0.2] for m in STUDIES["balance"].methods})
    text = replication_report({"balance": table}, runs=runs)
    assert "(d1): the whole protocol from an empty results folder, 3200 rows, in 10.0 min " \
        "wall on 2 workers (1-minute load 0.5 before, 2 after): **met**" in text
    assert "(d4)" in text and "in 20.0 min" in text and "after; busy): **NOT met**" in text
    assert "(d2)" not in text and "(d3)" not in text
    assert "no from-scratch run" in replication_report({"balance": table})
