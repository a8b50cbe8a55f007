"""The R bridge (nordicstats.r) and the R package: conversions, calls, testthat, Rscript.

Skipped, with the reason, when R is not installed (``scripts/setup_r.sh``
installs it).  When R is present every failure is a failure: a missing rpy2, a
package that does not install, or a broken bridge.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

R = shutil.which("R")
RSCRIPT = shutil.which("Rscript")
if R is None or RSCRIPT is None:
    pytest.skip("R is not installed; run scripts/setup_r.sh to test the R interface",
                allow_module_level=True)

pytestmark = pytest.mark.r
ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def rlib(tmp_path_factory):
    """The R package installed from this repository into a temporary library."""
    lib = tmp_path_factory.mktemp("rlib")
    run = subprocess.run([R, "CMD", "INSTALL", "--no-test-load", f"--library={lib}", str(ROOT)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"R CMD INSTALL failed:\n{run.stdout}\n{run.stderr}"
    return lib


@pytest.fixture(scope="module")
def r_env(rlib):
    """Environment for R subprocesses: this Python, the temporary library, one thread."""
    # PYTHONPATH: the R side's Python must import this checkout's nordicstats (testthat
    # changes the working directory, so an installed copy would win otherwise)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "R_LIBS": str(rlib), "NORDICSTATS_PYTHON": sys.executable,
            "NORDICSTATS_REQUIRE_BRIDGE": "1", "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": path}


@pytest.fixture(scope="module")
def embedded(rlib):
    """R embedded in this process with the package loaded and the bridge registered."""
    from nordicstats.r import attach, initialize
    from nordicstats.r._rpy2 import ri

    initialize()
    ri.baseenv["eval"](ri.parse(f'.libPaths(c("{rlib}", .libPaths()))'))
    attach()
    return ri


def r_eval(ri, code):
    return ri.baseenv["eval"](ri.parse(textwrap.dedent(code)), ri.globalenv)


def run_r(args, env, timeout=900, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=ROOT, **kwargs)


# ----------------------------------------------------------------------------- conversions
EVERY_TYPE = """
d <- data.frame(
    num = c(1.5, NA, NaN, -Inf, 2), int = c(1L, NA, 3L, -5L, .Machine$integer.max),
    lgl = c(TRUE, NA, FALSE, TRUE, FALSE), chr = c("a", NA, "\\u00e9", "", "NA"),
    fac = factor(c("x", NA, "y", "x", "y"), levels = c("y", "x", "unused")),
    ord = factor(c("lo", "hi", NA, "mid", "lo"), levels = c("lo", "mid", "hi"), ordered = TRUE),
    stringsAsFactors = FALSE)
"""


def test_embedded_r_leaves_child_processes_this_python(embedded):
    # Starting R puts R's library folders into LD_LIBRARY_PATH; a child Python linked
    # to libpython by name would then load the system's libpython (seen: a pyenv
    # 3.11.7 venv running Debian's 3.11.2 library, whose regex engine broke Sphinx).
    child = subprocess.run([sys.executable, "-c", "import sys; print(sys.version)"],
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == sys.version
    assert "/usr/lib/R" not in os.environ.get("LD_LIBRARY_PATH", "")


@pytest.mark.parametrize("expr", ["d", "d[c(2, 4), ]", "{e <- d; rownames(e) <- letters[1:5]; e}",
                                  "d[0, ]"])
def test_r_python_r_round_trip_is_identical(embedded, expr):
    from nordicstats.r import py_to_r, r_to_py

    ri = embedded
    r_eval(ri, EVERY_TYPE)
    original = r_eval(ri, expr)
    ri.globalenv["back"] = py_to_r(r_to_py(original))
    ri.globalenv["orig"] = original
    assert r_eval(ri, "identical(back, orig)")[0], r_eval(ri, "all.equal(back, orig)")[0]


def test_r_data_frame_arrives_with_pandas_missing_values(embedded):
    from nordicstats.r import r_to_py

    r_eval(embedded, EVERY_TYPE)
    df = r_to_py(r_eval(embedded, "d"))
    assert df["num"].isna().tolist() == [False, True, True, False, False]
    assert df["int"].dtype == "Int64" and df["int"].isna().sum() == 1
    assert df["int"].iloc[4] == 2**31 - 1
    assert df["lgl"].dtype == "boolean" and df["lgl"].isna().tolist()[1]
    assert df["chr"].isna().tolist() == [False, True, False, False, False]
    assert df["chr"].iloc[4] == "NA"          # the text "NA" is not a missing value
    assert list(df["fac"].cat.categories) == ["y", "x", "unused"]
    assert not df["fac"].cat.ordered and df["ord"].cat.ordered
    assert df["ord"].cat.codes.tolist() == [0, 2, -1, 1, 0]
    # R's NA_real_ keeps its bit pattern (NaN with payload 1954); R's NaN does not have it
    bits = df["num"].to_numpy().view(np.uint64)
    assert bits[1] & 0xFFFFFFFF == 1954 and bits[2] & 0xFFFFFFFF != 1954


def test_python_r_python_round_trip_keeps_values_and_dtypes(embedded):
    from nordicstats.r import py_to_r, r_to_py

    df = pd.DataFrame({
        "f": [0.5, np.nan, 2.0],
        "i": pd.array([1, None, 3], dtype="Int64"),
        "b": pd.array([True, None, False], dtype="boolean"),
        "s": pd.array(["u", None, "w"], dtype="str"),
        "c": pd.Categorical(["lo", None, "hi"], categories=["lo", "hi"], ordered=True),
    }, index=pd.Index(["r1", "r2", "r3"], dtype=object))
    back = r_to_py(py_to_r(df))
    pd.testing.assert_frame_equal(back, df, check_index_type=False)
    ints = r_to_py(py_to_r(pd.DataFrame({"n": np.array([1, 2], dtype=np.int64)})))
    assert ints["n"].tolist() == [1, 2]


def test_conversion_refuses_what_it_cannot_represent(embedded):
    from nordicstats.r import py_to_r, r_to_py

    with pytest.raises(TypeError, match="column 'when'"):
        r_to_py(r_eval(embedded, "data.frame(when = Sys.Date())"))
    with pytest.raises(TypeError, match="mixed"):
        py_to_r(pd.DataFrame({"m": [1, "a"]}))
    with pytest.warns(UserWarning, match="32-bit"):
        out = py_to_r(np.array([2**40, 1]))
    assert list(out) == [2.0**40, 1.0]


# ----------------------------------------------------------------------------- wording
@pytest.mark.parametrize("python, r", [
    ("The 'C' parameter of NORDIC must be a float in (0, inf). Got -1 instead.",
     "The 'C' argument of nordic() must be a number in (0, Inf). Got -1 instead."),
    ("The 'which' parameter of predict must be one of ['class', 'decision'].",
     "The 'type' argument of predict() must be one of c(\"class\", \"decision\")."),
    ("exog column(s) ['x1'] are constant", "covariates column(s) c(\"x1\") are constant"),
    ("The 'scale' parameter of OrdinalSVR must be True or False. Got None instead.",
     "The 'scale' argument of ordinal_svr() must be TRUE or FALSE. Got NULL instead."),
    ("Got -1.0 at row 0 (3 bad value(s))", "Got -1 at row 1 (3 bad value(s))"),
    ("Got 2.5 and 1e-07 and 10.0 in R 4.2.0", "Got 2.5 and 1e-07 and 10 in R 4.2.0"),
    ("The 'probability_kwds['n_folds']' parameter == 1, must be >= 2.",
     "The 'probability_kwds$n_folds' argument == 1, must be >= 2."),
    ("unknown solver option(s) ['foo'] for solver='smo' (chosen by solver=auto)",
     "unknown solver option(s) c(\"foo\") for solver = \"smo\" (chosen by solver = \"auto\")"),
    ("row 4 sums to np.float64(1.1)", "row 5 sums to 1.1"),
    ("NORDICResults has no cov_params(); see test_parallel()",
     "the nordic() fit has no vcov(); see parallel_test()"),
    ("The 'weights' parameter of tune: sample_weight, n_splits=3, random_state",
     "The 'weights' argument of tune_nordic(): weights, folds=3, seed"),
    ("NORDIC-1 and NORDIC-2 fits; endog is ordered", "NORDIC-1 and NORDIC-2 fits; response "
                                                     "is ordered"),
    ("OrderedModel (bfgs) did not converge. Check mle_retvals",
     "ordered_logit() (bfgs) did not converge."),
])
def test_python_messages_are_reworded_for_r(python, r):
    from nordicstats.r.wording import r_message

    assert r_message(python) == r


# ----------------------------------------------------------------------------- calls
def test_python_errors_and_warnings_become_r_conditions(embedded):
    from nordicstats.r import expose

    @expose(name="_test_fail")
    def fail(x):
        warnings.warn("careful", RuntimeWarning, stacklevel=1)
        raise ValueError(f"bad x = {x}")

    out = r_eval(embedded, """
        withCallingHandlers(
            tryCatch(nordicstats:::.py("_test_fail", x = 2), ValueError = function(e)
                     paste(c(class(e)[1:2], conditionMessage(e)), collapse = "/")),
            RuntimeWarning = function(w) {
                assign("seen", conditionMessage(w), globalenv())
                invokeRestart("muffleWarning")
            })
    """)
    assert out[0] == "ValueError/nordicstats_python_error/bad x = 2"  # as R prints 2
    assert embedded.globalenv["seen"][0] == "careful"


def test_r_predictions_equal_python_predictions_exactly(embedded):
    from nordicstats.model import NORDIC
    from nordicstats.r import r_to_py

    r_eval(embedded, """
        set.seed(11)
        d <- data.frame(x1 = rnorm(50), x2 = rnorm(50))
        d$y <- cut(d$x1 - d$x2 + rnorm(50, sd = 0.4), c(-Inf, -0.6, 0.6, Inf),
                   labels = c("bad", "fair", "good"), ordered_result = TRUE)
        new <- data.frame(x1 = seq(-2, 2, length.out = 9), x2 = rep(c(-1, 0, 1), 3))
        fit <- nordicstats::nordic(y ~ x1 + x2, data = d, kernel = "rbf", gamma = 0.7, C = 2)
        dec <- predict(fit, newdata = new, type = "decision")
        cls <- predict(fit, newdata = new)
    """)
    d = r_to_py(embedded.globalenv["d"])
    new = r_to_py(embedded.globalenv["new"])
    res = NORDIC(d["y"], d[["x1", "x2"]], kernel="rbf", gamma=0.7, C=2.0).fit()
    expected = res.predict(new[["x1", "x2"]], which="decision").to_numpy()
    got = r_to_py(embedded.globalenv["dec"])
    assert np.array_equal(np.asarray(got, dtype=float), expected)
    cls = r_to_py(embedded.globalenv["cls"])
    assert list(cls) == list(res.predict(new[["x1", "x2"]]))
    assert list(cls.categories) == ["bad", "fair", "good"] and cls.ordered


def _nordic_has_probabilities():
    import inspect

    from nordicstats.model import NORDIC
    return "probability" in inspect.signature(NORDIC.fit).parameters


@pytest.mark.parametrize("family, calibration", [("nordic", "logistic"), ("nordic", "pooled"),
                                                 ("ordered_logit", None)])
def test_r_probabilities_equal_python_probabilities(embedded, family, calibration):
    """predict(type = "probs") is Python's predict(which="proba"), levels as columns; the
    map and folds chosen with probability_kwds = list(method = ..., n_folds = ...) through
    nordic()'s dots."""
    from nordicstats.compare import OrderedLogit
    from nordicstats.model import NORDIC
    from nordicstats.r import r_to_py

    if family == "nordic" and not _nordic_has_probabilities():
        pytest.skip("NORDIC.fit(probability=True) is not in this version of the Python side")
    # n_folds = 4 is a double in R: the bridge passes whole numbers on as ints
    extra = (f", kernel = \"linear\", probability = TRUE, "
             f"probability_kwds = list(method = \"{calibration}\", n_folds = 4)"
             if family == "nordic" else "")
    r_eval(embedded, f"""
        set.seed(12)
        d <- data.frame(x1 = rnorm(120), x2 = rnorm(120))
        d$y <- cut(d$x1 - d$x2 + rnorm(120, sd = 0.6), c(-Inf, -0.6, 0.6, Inf),
                   labels = c("bad", "fair", "good"), ordered_result = TRUE)
        new <- data.frame(x1 = seq(-2, 2, length.out = 9), x2 = rep(c(-1, 0, 1), 3))
        fit <- nordicstats::{family}(y ~ x1 + x2, data = d{extra})
        probs <- predict(fit, newdata = new, type = "probs")
    """)
    d = r_to_py(embedded.globalenv["d"])
    new = r_to_py(embedded.globalenv["new"])[["x1", "x2"]]
    if family == "nordic":
        res = NORDIC(d["y"], d[["x1", "x2"]], kernel="linear").fit(
            probability=True, probability_kwds={"method": calibration, "n_folds": 4})
        which = "proba"
    else:
        res = OrderedLogit(d["y"], d[["x1", "x2"]]).fit()
        which = "proba" if "proba" in res._predictions() else "prob"
    expected = res.predict(new, which=which)
    got = r_to_py(embedded.globalenv["probs"])
    assert list(got.columns) == ["bad", "fair", "good"]
    np.testing.assert_allclose(np.asarray(got, dtype=float), expected.to_numpy(), rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("protocol", ["cv", "holdout"])
def test_tune_nordic_chooses_what_python_tune_chooses(embedded, protocol):
    """Balance scale at the paper's n = 208: same grid scores, same C and width."""
    from nordicstats.datasets import load_balance_scale, stratified_split
    from nordicstats.r import py_to_r, r_to_py
    from nordicstats.tuning import tune

    data = load_balance_scale()
    train, tuning, _ = stratified_split(data["balance"], [208, 208], random_state=0)
    embedded.globalenv["train"] = py_to_r(data.iloc[train].reset_index(drop=True))
    embedded.globalenv["tuning"] = py_to_r(data.iloc[tuning].reset_index(drop=True))
    extra = "seed = 1" if protocol == "cv" else "tune_data = tuning"
    r_eval(embedded, f"tuned <- nordicstats::tune_nordic(balance ~ ., "
                     f"data = train, {extra})")
    X, y = data.drop(columns="balance"), data["balance"]
    holdout = ({"cv": 5, "random_state": 1} if protocol == "cv" else
               {"X_tune": X.iloc[tuning], "y_tune": y.iloc[tuning]})
    expected = tune("nordic1", X.iloc[train], y.iloc[train], refit=False, **holdout)
    best = r_to_py(r_eval(embedded, "tuned$best.parameters"))
    assert best.iloc[0].to_dict() == expected.best_params
    scores = r_to_py(r_eval(embedded, "tuned$performances"))
    np.testing.assert_array_equal(scores["score"], expected.scores["score"])
    np.testing.assert_array_equal(scores["gamma"], expected.scores["gamma"])
    # the refitted model is nordic() at the chosen C and width
    assert r_eval(embedded, "tuned$best.model$C")[0] == expected.best_params["C"]
    assert r_eval(embedded, "tuned$best.model$gamma")[0] == expected.best_params["gamma"]


# ----------------------------------------------------------------------------- R processes
def test_testthat_suite_passes(r_env):
    run = run_r([RSCRIPT, "-e", 'testthat::test_dir("tests/testthat", package = "nordicstats", '
                 'load_package = "installed", reporter = "summary", stop_on_failure = TRUE)'],
                r_env)
    assert run.returncode == 0, f"testthat failed:\n{run.stdout}\n{run.stderr}"
    assert "DONE" in run.stdout


def test_rscript_library_summary_from_a_fresh_process(r_env):
    code = textwrap.dedent("""
        library(nordicstats)
        d <- data.frame(x = seq(-2, 2, length.out = 30), z = rep(c(0, 1), 15))
        d$y <- cut(d$x + 0.3 * d$z, c(-Inf, -0.7, 0.7, Inf), labels = c("lo", "mid", "hi"),
                   ordered_result = TRUE)
        print(summary(nordic(y ~ x + z, data = d, kernel = "linear")))
    """)
    run = run_r([RSCRIPT, "-e", code], r_env)
    assert run.returncode == 0, run.stderr
    assert "Coefficients, boundary lo|mid:" in run.stdout
    assert "Intercepts (one per boundary):" in run.stdout


def test_python_m_nordicstats_r_behaves_like_rscript(r_env, tmp_path):
    script = tmp_path / "job.R"
    script.write_text(textwrap.dedent("""
        library(nordicstats)
        cat("args:", commandArgs(trailingOnly = TRUE), "\\n")
        d <- data.frame(x = seq(-2, 2, length.out = 12))

        d$y <- cut(d$x, c(-Inf, -0.7, 0.7, Inf), labels = c("a", "b", "c"),
                   ordered_result = TRUE)
        levels(predict(nordic(y ~ x, data = d), d))
        quit(status = 3)
    """))
    run = run_r([sys.executable, "-m", "nordicstats.r", str(script), "one", "two"], r_env)
    assert run.returncode == 3, run.stderr
    assert "args: one two" in run.stdout
    assert '[1] "a" "b" "c"' in run.stdout        # visible values print, as in Rscript
    fail = run_r([sys.executable, "-m", "nordicstats.r", "-e",
                  'library(nordicstats); nordic(y ~ x, data.frame(x = 1:3, y = 1:3), C = -1)'],
                 r_env)
    assert fail.returncode == 1
    assert "The 'C' argument of nordic() must be a number" in fail.stderr
    assert "Execution halted" in fail.stderr
