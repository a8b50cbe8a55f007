#!/bin/sh
# The whole test suite: Python (with every optional part, cvxpy/Clarabel as the
# independent reference solver, the docs tools), Debian's R with rpy2, knitr and
# the R package, Debian's chromium, then ruff (the one lint configuration in
# pyproject.toml) and pytest, which also runs the docstring examples, the R
# testthat suite, the vignettes, builds the documentation site (sphinx -W) and
# opens it in headless chromium, and builds and checks the R package with its
# knitr vignettes (R CMD build, R CMD check).
set -eu
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
sh "$ROOT/scripts/setup_python.sh" all
sh "$ROOT/scripts/setup_r.sh"
sh "$ROOT/scripts/setup_docs.sh"
cd "$ROOT"
"$ROOT/.venv/bin/python" -m ruff check nordicstats studies tests benchmarks vignettes docs
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NORDICSTATS_VIGNETTE_SIZE=small \
    "$ROOT/.venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider "$@"
