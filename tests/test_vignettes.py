"""The vignettes run end to end at the reduced size, and their numbers make sense.

Each Python vignette is executed top to bottom by ``vignettes/render.py`` with
``NORDICSTATS_VIGNETTE_SIZE=small`` into a temporary build directory; the test
fails on any error in any cell, checks the HTML page (section headings) and the
PNG figures, and then checks substantive numbers the vignette computed, read
from the namespace the renderer returns.  The R vignette is run with Rscript
(skipped when R or the installed R package is absent).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
VIGNETTES = ROOT / "vignettes"
PYTHON_VIGNETTES = ["getting-started", "inference", "theory", "comparisons"]

#: Section headings each page must contain (prose cells, so a page that lost cells fails).
HEADINGS = {
    "getting-started": ["Getting started with nordicstats", "The balance-scale data",
                        "NORDIC-2", "Prediction", "Why the boundaries cross", "The picture"],
    "inference": ["Inference for linear NORDIC", "A design with a known truth",
                  "The coefficient table", "Are the boundaries parallel?",
                  "Bootstrap vs Bahadur", "Coverage of the intervals"],
    "theory": ["Theory: the ordinal Bayes rule and Fisher consistency",
               "Mode versus median (the paper's Figure 2)", "Many losses, many eta"],
    "comparisons": ["Comparisons: NORDIC and its competitors", "The nonlinear example",
                    "The donut", "The balance scale", "One fit, by hand"],
}
MIN_FIGURES = {"getting-started": 1, "inference": 1, "theory": 2, "comparisons": 5}


@pytest.fixture(scope="module")
def renderer():
    spec = importlib.util.spec_from_file_location("nordicstats_vignette_render",
                                                  VIGNETTES / "render.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    # Stable timings on the shared 2-core machine; BLAS threads are read at first use.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")


def render_small(renderer, name, build_dir):
    """Render ``name`` at the small size and check the page and figures; return the namespace."""
    result = renderer.render(VIGNETTES / f"{name}.py", small=True, build_dir=build_dir)
    page = result.html.read_text(encoding="utf-8")
    headings = re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", page)
    for heading in HEADINGS[name]:
        assert any(h.startswith(heading) for h in headings), (heading, headings)
    assert "reduced size" in page
    assert len(result.figures) >= MIN_FIGURES[name]
    for fig in result.figures:
        assert fig.suffix == ".png" and fig.stat().st_size > 1024, fig
        assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{name}/{fig.name}"' in page
    assert result.namespace["SMALL"] is True
    return result.namespace


def crossing_share(F):
    """Share of rows where a negative f_k is followed by a nonnegative f_{k+1}."""
    F = np.asarray(F)
    return float(np.mean(np.any((F[:, :-1] < 0) & (F[:, 1:] >= 0), axis=1)))


# --------------------------------------------------------------------------- vignettes
def test_getting_started(renderer, tmp_path):
    ns = render_small(renderer, "getting-started", tmp_path)
    # The constructed example: separate SVMs cross at training points, NORDIC-1 never does.
    assert ns["bsvm_crossing_rate"] > 0
    assert ns["nordic_crossing_rate"] == 0
    bsvm, nordic = ns["bsvm"], ns["nordic"]
    assert crossing_share(bsvm.decision_function()) == pytest.approx(ns["bsvm_crossing_rate"])
    assert crossing_share(nordic.decision_function()) == 0.0
    # NORDIC-1's constraints f_k(x_i) >= f_{k+1}(x_i) hold at every training point.
    F = nordic.decision_function()
    assert np.all(F[:, :-1] - F[:, 1:] >= -1e-7)
    # Noncrossing costs objective (the constraints bind here), never saves it.
    assert nordic.objective > bsvm.objective
    assert ns["ambiguous_share"]["BSVM"] > ns["ambiguous_share"]["NORDIC-1"]
    # The balance-scale fits are far better than a constant rule (weighted error ~1.0).
    scores = ns["scores"]
    assert (scores["error"] < 0.25).all() and (scores["weighted error"] < 0.3).all()
    assert ns["nordic1"].crossing_rate() == 0 and ns["nordic2"].crossing_rate() == 0
    assert ns["nordic2"].model.method == "nordic2"


def test_inference(renderer, tmp_path):
    ns = render_small(renderer, "inference", tmp_path)
    fit, truth = ns["bahadur"], ns["truth"]
    # Estimates within 4 standard errors of the closed-form truth (population_svm).
    z = (fit.params - truth) / fit.bse
    assert np.all(np.abs(z.to_numpy()) < 4), z
    # Bahadur and bootstrap SEs near the true asymptotic SD (n = 400: within a factor 2).
    ratio = ns["se_compare"][["Bahadur", "bootstrap"]].div(ns["se_compare"]["true asymptotic"],
                                                           axis=0)
    assert ratio.to_numpy().min() > 0.5 and ratio.to_numpy().max() < 2.0, ratio
    # The truth is not parallel (x2 slopes 0.09 vs 0.70): the test rejects.
    assert truth.loc["x2", "b|c"] - truth.loc["x2", "a|b"] > 0.5
    assert ns["parallel_test"].df == 2 and ns["parallel_test"].pvalue < 0.05
    # 40 Bahadur replications: average coverage near 0.95 (MC sd of the mean ~0.015).
    coverage = ns["coverage"]
    assert coverage.shape == (6, 2) and ns["coverage_reps"]["Bahadur"] == 40
    assert 0.85 <= coverage["Bahadur"].mean() <= 1.0
    assert coverage["Bahadur"].min() >= 0.75
    # The default cov_type="auto": Bahadur in the regular design; in the latent-logistic
    # design boundary 2|3 (constant BSVM) is bootstrapped and forced Bahadur withholds it.
    assert fit.cov_type == "auto"
    assert fit.cov_sources["estimator"].tolist() == ["bahadur", "bahadur"]
    latent = ns["latent_auto"]
    assert latent.cov_sources["estimator"].tolist() == ["bahadur", "bahadur", "bootstrap"]
    assert np.all(latent.bse["2|3"] < 0.15) and ns["forced"].bse["2|3"].isna().all()


def test_theory(renderer, tmp_path):
    ns = render_small(renderer, "theory", tmp_path)
    # The paper's Figure 2: top row mode 1 / median 2, bottom row mode 4 / median 3.
    assert list(ns["mode_rule"]) == [1, 4] and list(ns["median_rule"]) == [2, 3]
    # The median minimises the absolute loss pointwise, so also on average.
    comp = ns["rule_comparison"]
    assert (comp["absolute risk, median"] <= comp["absolute risk, mode"] + 1e-12).all()
    assert (comp["mode != median"] > 0).all()
    failing = ns["consistency"]["boundaries failing"]
    for loss in ["hinge", "squared_hinge", "logistic", "exponential", "dwd", "psi"]:
        assert failing[(loss, True)] == 0 and failing[(loss, False)] == 0, loss
    assert failing[("perceptron", True)] > 0 and failing[("kinked_hinge", True)] > 0
    assert ns["hinge_top"].is_consistent
    assert list(np.sign(ns["hinge_top"].f_star)) == [1, -1, -1]


def test_comparisons(renderer, tmp_path):
    ns = render_small(renderer, "comparisons", tmp_path)
    for name in ["nonlinear", "donut", "balance"]:
        table = ns[name]
        assert (table["status"] == "ok").all(), table.loc[table["status"] != "ok", "message"]
        assert set(table["method"]) == set(ns["METHODS"])
        assert table["error"].between(0, 1).all()
    # Paper's confusion view: columns (true classes) sum to one.
    conf = ns["conf"]
    sums = conf.groupby(["method", "true"])["proportion"].sum()
    np.testing.assert_allclose(sums.to_numpy(), 1.0, atol=1e-9)
    # Balance scale: NORDIC-1 is far better than a constant rule (weighted error >= 0.6).
    summary = ns["balance_summary"]["mean"]
    assert summary.xs("NORDIC-1", level="method").max() < 0.45


# --------------------------------------------------------------------------- R
def test_from_r(renderer):
    ok, reason = renderer.r_available()
    if not ok:
        pytest.skip(f"R vignette not run: {reason}")
    # this interpreter, not the one recorded when the R package was installed
    env = {**os.environ, "NORDICSTATS_VIGNETTE_SIZE": "small", "OMP_NUM_THREADS": "1",
           "NORDICSTATS_PYTHON": sys.executable}
    proc = subprocess.run(["Rscript", str(VIGNETTES / "from-r.R")], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    # The coefficient table of summary(lin), one block per boundary.
    for block in ["Coefficients, boundary a|b:", "Coefficients, boundary b|c:",
                  "Intercepts (one per boundary):"]:
        assert block in out
    assert re.search(r"Estimate\s+Std\. Error\s+z value\s+Pr\(>\|z\|\)", out)
    assert re.search(r"^x2\s+-?\d", out, re.MULTILINE)
    bsvm = float(re.search(r"BSVM crossing rate on training rows: (\S+)", out).group(1))
    nordic = float(re.search(r"NORDIC-1 crossing rate on training rows: (\S+)", out).group(1))
    assert bsvm > 0 and nordic == 0


# --------------------------------------------------------------------------- the renderer
def test_parse_cells_percent_format(renderer):
    text = ("# ---\n# jupyter: header\n# ---\n\n# %% [markdown]\n# # Title\n#\n# Some *text*.\n"
            "# %%\nx = 1\n\n# %% tags=['a']\ny = x + 1\n")
    cells = renderer.parse_cells(text)
    assert [(c.kind, c.source, c.line) for c in cells] == [
        ("markdown", "# Title\n\nSome *text*.", 6), ("code", "x = 1", 10),
        ("code", "y = x + 1", 13)]


def test_markdown_subset(renderer):
    md = ("## A <b> & `x < 1`\n\nPara **bold** and *it*\ncontinued [link](http://a.b).\n\n"
          "- one\n  two\n- three\n\n1. first\n2. second\n\n```python\nif a < b:\n```\n")
    out = renderer.markdown_to_html(md)
    assert '<h2 id="a-b-x-1">A &lt;b&gt; &amp; <code>x &lt; 1</code></h2>' in out
    assert ("<p>Para <strong>bold</strong> and <em>it</em> continued "
            '<a href="http://a.b">link</a>.</p>') in out
    assert "<ul>\n<li>one two</li>\n<li>three</li>\n</ul>" in out
    assert "<ol>\n<li>first</li>\n<li>second</li>\n</ol>" in out
    assert '<pre><code class="language-python">if a &lt; b:</code></pre>' in out


def test_render_executes_in_one_namespace_and_reports_errors(renderer, tmp_path, monkeypatch):
    monkeypatch.delenv("NORDICSTATS_VIGNETTE_SIZE", raising=False)
    good = tmp_path / "good.py"
    good.write_text("# %% [markdown]\n# # Good\n# %%\nimport os\nimport matplotlib.pyplot as plt\n"
                    "SIZE = os.environ.get('NORDICSTATS_VIGNETTE_SIZE')\nprint('hello', 6 * 7)\n"
                    "# %%\nfig, ax = plt.subplots()\nax.plot([0, 1], [1, 0])\nSIZE\n")
    res = renderer.render(good, small=True, build_dir=tmp_path / "build")
    assert res.namespace["SIZE"] == "small" and "hello 42" in res.output
    assert len(res.figures) == 1 and res.figures[0].stat().st_size > 1024
    page = res.html.read_text()
    assert "hello 42" in page and "&#x27;small&#x27;" in page and 'id="good"' in page
    assert "NORDICSTATS_VIGNETTE_SIZE" not in os.environ  # restored after the run
    bad = tmp_path / "bad.py"
    bad.write_text("# %%\nx = 1\n# %%\nprint('before')\nraise KeyError('boom')\n")
    with pytest.raises(renderer.VignetteError, match=r"line 4 .*KeyError: 'boom'(?s:.*)before"):
        renderer.render(bad, build_dir=tmp_path / "build")


def test_spin_fallback_layout(renderer):
    text = ("#' ---\n#' title: x\n#' ---\n#' # Title\n#'\n#' Prose with `code`.\n"
            "fit <- 1\nprint(fit)\n#' ## Next\nx <- 2\n")
    out = renderer._spin_fallback(text)
    assert "title: x" not in out
    assert out.index('<h1 id="title">Title</h1>') < out.index("<p>Prose with <code>code</code>.")
    assert '<code class="language-r">fit &lt;- 1\nprint(fit)</code>' in out
    assert out.index('<h2 id="next">Next</h2>') < out.index("x &lt;- 2")
