#!/bin/sh
# Demo: set up Python, then fit every method on the built-in balance-scale
# data and print a NORDIC summary and a comparison table (studies.demo, run from the repository root).
set -eu
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
sh "$ROOT/scripts/setup_python.sh" milp,plot
cd "$ROOT"
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$ROOT/.venv/bin/python" -m studies.demo "$@"
