#!/bin/sh
# The whole test suite: Python (with every optional part, cvxpy/Clarabel as the
# independent reference solver), Debian's R with rpy2 and the R package, then
# ruff (the one lint configuration in pyproject.toml) and pytest (which also runs the R
# testthat suite and executes the vignettes).
set -eu
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
sh "$ROOT/scripts/setup_python.sh" all
sh "$ROOT/scripts/setup_r.sh"
cd "$ROOT"
"$ROOT/.venv/bin/python" -m ruff check nordicstats tests benchmarks vignettes
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NORDICSTATS_VIGNETTE_SIZE=small \
    "$ROOT/.venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider "$@"
