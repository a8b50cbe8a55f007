"""The R package as R users get it: ``R CMD build .`` knits the vignettes, and
``R CMD check`` on the tarball passes with status OK (no ERROR, WARNING or NOTE),
running the Rd examples and the testthat suite.

The vignettes run their analyses through the Python side (this interpreter, via
``NORDICSTATS_PYTHON``), so the test also checks that the knitted pages hold the
computed results rather than the "built without Python" fallback.  Skipped, with
the reason, when R, knitr, rmarkdown or pandoc is missing (``scripts/setup_r.sh``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
R = shutil.which("R")
RSCRIPT = shutil.which("Rscript")
if R is None or RSCRIPT is None or shutil.which("pandoc") is None:
    pytest.skip("R or pandoc is not installed; run scripts/setup_r.sh", allow_module_level=True)
_has = subprocess.run([RSCRIPT, "-e", "quit(status = !all(sapply(c('knitr', 'rmarkdown'), "
                       "requireNamespace, quietly = TRUE)))"], capture_output=True)
if _has.returncode != 0:
    pytest.skip("knitr/rmarkdown are not installed; run scripts/setup_r.sh",
                allow_module_level=True)

pytestmark = [pytest.mark.r, pytest.mark.slow]

VERSION = re.search(r"^Version:\s*(\S+)", (ROOT / "DESCRIPTION").read_text(), re.M).group(1)
#: Text each knitted vignette must show (computed output, not only code).
VIGNETTE_OUTPUT = {
    "from-r": ["Coefficients, boundary a|b:", "BSVM crossing rate on training rows:",
               "Std. Error", "5-fold cross-validation", "conf.low"],
    "housing": ["Tests of nominal effects", "nordic_saturated", "mean_absolute_error",
                "InflHigh"],
}


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp("rbuild")
    env = {**os.environ, "NORDICSTATS_PYTHON": sys.executable, "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "NORDICSTATS_VIGNETTE_SIZE": "small"}
    proc = subprocess.run([R, "CMD", "build", str(ROOT)], cwd=out, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, f"R CMD build failed:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    assert "creating vignettes ... OK" in proc.stdout, proc.stdout
    return out / f"nordicstats_{VERSION}.tar.gz", env


def test_build_knits_the_vignettes(tarball):
    path, _ = tarball
    with tarfile.open(path) as tar:
        names = tar.getnames()
        for name, expected in VIGNETTE_OUTPUT.items():
            assert f"nordicstats/inst/doc/{name}.html" in names, names
            assert f"nordicstats/vignettes/{name}.Rmd" in names
            page = tar.extractfile(f"nordicstats/inst/doc/{name}.html").read().decode()
            assert "built without the Python side" not in page
            for text in expected:
                assert text in page.replace("&gt;", ">").replace("&lt;", "<"), (name, text)
    # The Python side stays out of the R package.
    assert not any(n.endswith(".py") for n in names), [n for n in names if n.endswith(".py")]


def test_check_passes(tarball, tmp_path):
    path, env = tarball
    proc = subprocess.run([R, "CMD", "check", "--no-manual", str(path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=2400)
    log = (tmp_path / "nordicstats.Rcheck" / "00check.log").read_text()
    status = re.search(r"^Status: (.*)$", log, re.M)
    assert proc.returncode == 0 and status, f"{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    # no ERROR, WARNING or NOTE: none is unavoidable for this package
    assert status.group(1).strip() == "OK", log[-6000:]
    assert "checking re-building of vignette outputs ... OK" in log
    # the Rd examples ran with the Python side (they are skipped without it)
    assert "checking examples ... OK" in log
    examples = (tmp_path / "nordicstats.Rcheck" / "nordicstats-Ex.Rout").read_text()
    assert "Best parameters:" in examples and "conf.low" in examples
    assert re.search(r"checking tests \.\.\.\s*\n\s*Running .testthat\.R.\s*\n?\s*OK", log) or \
        "Running ‘testthat.R’" in log, log[-4000:]
