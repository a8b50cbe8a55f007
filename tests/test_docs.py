"""The documentation site, checked as a reader sees it.

Builds the Sphinx site exactly as documented (``python -m sphinx -W -b html docs
docs/_build/html``, warnings as errors, vignettes executed at the small size),
then opens the vignette gallery, every vignette and the main API pages in
headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by
Selenium), saves a screenshot of each in ``docs/_build/screenshots/`` and asserts
what the browser shows: figures decoded (``naturalWidth > 0``) and laid out on
the page, the summary tables rendered with their rows, the section headings, the
API entries.  Skipped, with the reason, when Sphinx or Chromium is missing
(``pip install -e ".[docs]"``, ``scripts/setup_docs.sh``).
"""

from __future__ import annotations

import fcntl
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason='pip install -e ".[docs]" to build the site')
pytest.importorskip("myst_nb", reason='pip install -e ".[docs]" to build the site')
webdriver = pytest.importorskip("selenium.webdriver", reason='pip install -e ".[docs]"')

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "docs" / "_build"
HTML = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")

#: Section headings each vignette page must show (prose cells, so a page that lost cells fails).
HEADINGS = {
    "getting-started": ["Getting started with nordicstats", "The balance-scale data",
                        "NORDIC-2", "Prediction", "Why the boundaries cross", "The picture"],
    "inference": ["Inference for linear NORDIC", "A design with a known truth",
                  "The coefficient table", "Are the boundaries parallel?",
                  "Bootstrap vs Bahadur", "Coverage of the intervals"],
    "theory": ["Theory: the ordinal Bayes rule and Fisher consistency",
               "Mode versus median (the paper's Figure 2)", "Many losses, many eta"],
    "comparisons": ["Comparisons: NORDIC and its competitors", "The nonlinear example",
                    "The donut", "The balance scale", "One fit, by hand", "Class probabilities"],
    "reproducing-the-paper": ["Reproducing the paper", "The balance scale (Section 7)",
                              "The nonlinear three-class example", "The donut (Section 6.2)"],
}
MIN_FIGURES = {"getting-started": 1, "inference": 1, "theory": 2, "comparisons": 6,
               "reproducing-the-paper": 2}
#: Vignettes that show a NORDIC summary() as statsmodels' HTML tables: the boundary names
#: and how many coefficient tables (one per boundary of a linear fit) it has.
SUMMARY_TABLES = {"getting-started": (["L|B", "B|R"], 0), "inference": (["a|b", "b|c"], 2)}


def percent_vignettes():
    """Stems of the percent-format scripts in vignettes/ (each must be a gallery page)."""
    return sorted(p.stem for p in (ROOT / "vignettes").glob("*.py")
                  if re.search(r"^# %%", p.read_text(encoding="utf-8"), re.MULTILINE))


@pytest.fixture(scope="module")
def site():
    """Build the site as documented, once per test run; fail with Sphinx's output on any warning.

    Under pytest-xdist every worker that runs a test of this module asks for the site: the
    first builds it while the others wait on a lock, then they reuse that build (two Sphinx
    builds into one directory would overwrite each other's pages).
    """
    BUILD.mkdir(parents=True, exist_ok=True)
    stamp = BUILD / "built-by-test-run"
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the same in every worker of one run
    with open(BUILD / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if run and stamp.is_file() and stamp.read_text() == run:
            return HTML
        stamp.unlink(missing_ok=True)
        env = {**os.environ, "NORDICSTATS_VIGNETTE_SIZE": "small", "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
             "docs", str(HTML)], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=1800)
        assert proc.returncode == 0, \
            f"sphinx -W failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
        if run:
            stamp.write_text(run)
    return HTML


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("chromium and chromium-driver are not installed; run scripts/setup_docs.sh")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,2200", "--allow-file-access-from-files"]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def open_page(driver, site, page, shot):
    """Load ``page`` (relative to the site), wait for its images, save a screenshot."""
    driver.get((site / page).as_uri())
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "Promise.all(Array.from(document.images).map(i => i.complete ? 0 :"
        " new Promise(r => { i.onload = i.onerror = r; }))).then(() => done());")
    path = SCREENSHOTS / f"{shot}.png"
    assert driver.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000
    return driver


def rendered_figures(driver):
    """Figures in the article that the browser decoded and laid out with a real size."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('article img'))"
        ".filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100"
        " && i.getBoundingClientRect().width > 100).length;")


def headings(driver):
    """The article's h1/h2 texts, typographic apostrophes made plain."""
    return [h.replace("\u2019", "'") for h in driver.execute_script(
        "return Array.from(document.querySelectorAll('article h1, article h2'))"
        ".map(h => h.innerText.replace(/#$/, '').trim());")]


def visible_tables(driver, selector):
    """Visible tables matching ``selector``: (rows, text) of each."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".filter(t => t.getBoundingClientRect().height > 20)"
        ".map(t => [t.rows.length, t.innerText]);", selector)


# --------------------------------------------------------------------------- gallery
def test_gallery_lists_every_vignette(site, browser):
    open_page(browser, site, "gallery.html", "gallery")
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('article a.reference.internal'))"
        ".map(a => a.getAttribute('href'));")
    pages = {Path(link.split("#")[0]).stem for link in links if link.startswith("vignettes/")}
    assert set(percent_vignettes()) <= pages, (percent_vignettes(), links)


@pytest.mark.parametrize("name", sorted(HEADINGS))
def test_vignette_page(site, browser, name):
    open_page(browser, site, f"vignettes/{name}.html", f"vignette-{name}")
    shown = headings(browser)
    for heading in HEADINGS[name]:
        assert any(h.startswith(heading) for h in shown), (heading, shown)
    assert rendered_figures(browser) >= MIN_FIGURES[name]
    text = browser.find_element("css selector", "article").text
    assert "size: small" in text and "Traceback" not in text
    if name in SUMMARY_TABLES:
        boundaries, n_coef = SUMMARY_TABLES[name]
        tables = visible_tables(browser, "article table.simpletable")
        assert any(t.startswith("NORDIC Ordinal Classification") and rows >= 5
                   for rows, t in tables), tables
        assert any(t.startswith("Boundaries") and all(b in t for b in boundaries)
                   for _, t in tables), tables
        coef_tables = [(rows, t) for rows, t in tables if "coef" in t and "std err" in t]
        assert len(coef_tables) >= n_coef, tables
        assert all(rows >= 3 for rows, _ in coef_tables)
    frames = visible_tables(browser, "article table.dataframe")
    assert frames and all(rows >= 2 for rows, _ in frames)


def test_new_percent_vignettes_are_pages(site):
    # Any percent-format script dropped into vignettes/ becomes a page (no list to edit).
    for name in percent_vignettes():
        assert (site / "vignettes" / f"{name}.html").is_file(), name


# --------------------------------------------------------------------------- API
def test_api_pages(site, browser):
    open_page(browser, site, "api/index.html", "api-index")
    modules = browser.execute_script(
        "return Array.from(document.querySelectorAll('article table.autosummary td:first-child a'))"
        ".map(a => a.innerText);")
    # Every public module of the package as it is now, found independently of docs/conf.py.
    import nordicstats

    public = ["nordicstats"] + [
        info.name for info in pkgutil.walk_packages(nordicstats.__path__, "nordicstats.")
        if not any(part.startswith("_") for part in info.name.split("."))]
    assert "nordicstats.covariance" in public and "nordicstats.solvers.nordic0" in public
    assert sorted(public) == sorted(modules)

    # A module that re-exports an object links to the page where it is documented.
    open_page(browser, site, "api/generated/nordicstats.results.html", "api-results-module")
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('article a.reference.internal'))"
        ".map(a => [a.innerText, a.getAttribute('href')]);")
    assert ["nordicstats.NORDICResults", "nordicstats.NORDICResults.html#nordicstats.NORDICResults"
            ] in links, links

    open_page(browser, site, "api/generated/nordicstats.NORDICResults.html", "api-results")
    for method in ["summary", "conf_int", "test_parallel", "wald_test", "predict"]:
        entry = browser.find_element("id", f"nordicstats.NORDICResults.{method}")
        assert entry.is_displayed() and entry.size["height"] > 0
    text = browser.find_element("css selector", "article").text
    assert "Parameters" in text and "Returns" in text

    open_page(browser, site, "api/generated/nordicstats.NORDIC.html", "api-nordic")
    text = browser.find_element("css selector", "article").text
    for word in ["Parameters", "method", "kernel", "from_formula", "fit"]:
        assert word in text, word


# --------------------------------------------------------------------------- pkgdown (R)
R_CMD = shutil.which("R")
RSCRIPT = shutil.which("Rscript")
PKGDOWN = BUILD / "pkgdown"
#: Reference pages and what each must show: its title and output of its examples.
PKGDOWN_PAGES = {
    "reference/nordic.html": ["Noncrossing Ordinal Classification", "Intercepts:"],
    "reference/tune_nordic.html": ["Choose C and the Kernel Width", "Best parameters:"],
    "reference/tidy.nordic.html": ["Tidy Tables", "conf.low"],
    "reference/predict.nordicstats_fit.html": ["Predictions, Residuals", "TRUE"],
    "reference/parallel_test.html": ["Wald test of parallel boundaries", "p-value"],
    "articles/from-r.html": ["Coefficients, boundary a|b:"],
    "articles/housing.html": ["Tests of nominal effects"],
}
#: Pages whose examples draw plots (images the browser must decode).
PKGDOWN_FIGURES = {"reference/tune_nordic.html": 1, "reference/predict.nordicstats_fit.html": 2}


@pytest.fixture(scope="module")
def pkgdown_site(tmp_path_factory):
    """The R package's pkgdown site: reference pages with their examples run, the knitr
    vignettes as articles (through the Python side of this checkout)."""
    if R_CMD is None or RSCRIPT is None:
        pytest.skip("R is not installed; run scripts/setup_r.sh")
    has = subprocess.run([RSCRIPT, "-e", "quit(status = !requireNamespace('pkgdown', "
                          "quietly = TRUE))"], capture_output=True)
    if has.returncode != 0:
        pytest.skip("pkgdown is not installed; run scripts/setup_r.sh (r-cran-pkgdown)")
    lib = tmp_path_factory.mktemp("pkgdown-rlib")
    install = subprocess.run([R_CMD, "CMD", "INSTALL", "--no-test-load", f"--library={lib}",
                              str(ROOT)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-4000:]
    env = {**os.environ, "R_LIBS": str(lib), "NORDICSTATS_PYTHON": sys.executable,
           "NORDICSTATS_VIGNETTE_SIZE": "small", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    # pkgdown.internet = FALSE: no look-up of the package on CRAN (offline machines)
    code = (f"options(pkgdown.internet = FALSE); pkgdown::build_site('.', preview = FALSE, "
            f"new_process = FALSE, install = FALSE, override = list(destination = "
            f"'{PKGDOWN}'))")
    proc = subprocess.run([RSCRIPT, "-e", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, f"pkgdown failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return PKGDOWN


def test_pkgdown_reference_lists_every_exported_function(pkgdown_site, browser):
    open_page(browser, pkgdown_site, "reference/index.html", "pkgdown-reference")
    text = browser.find_element("tag name", "main").text
    for name in ["nordic", "tune_nordic", "ordinal_svr", "predict(", "parallel_test",
                 "tidy(", "bayes_rule_ordinal", "nordic_python"]:
        assert name in text, name


@pytest.mark.parametrize("page", sorted(PKGDOWN_PAGES))
def test_pkgdown_page(pkgdown_site, browser, page):
    open_page(browser, pkgdown_site, page, "pkgdown-" + page.replace("/", "-")[:-5])
    text = browser.find_element("tag name", "main").text
    assert "built without the Python side" not in text
    for expected in PKGDOWN_PAGES[page]:
        assert expected in text, (page, expected)
    figures = browser.execute_script(
        "return Array.from(document.querySelectorAll('main img'))"
        ".filter(i => i.complete && i.naturalWidth > 100"
        " && i.getBoundingClientRect().width > 100).length;")
    assert figures >= PKGDOWN_FIGURES.get(page, 0), (page, figures)
