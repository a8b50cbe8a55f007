#!/bin/sh
# Create the project's virtual environment (.venv) and install nordicstats with the
# given extras (default: all). Works on a fresh Debian machine with only python3:
# installs python3-venv through apt-get when the interpreter cannot make a venv.
# Usage: scripts/setup_python.sh [EXTRAS]     e.g. scripts/setup_python.sh milp,plot
set -eu

ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
EXTRAS=${1:-all}
PY=${NORDICSTATS_BASE_PYTHON:-python3}

if ! "$PY" -c "import ensurepip, venv" >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    echo "setup_python.sh: installing python3-venv"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends python3-venv python3-pip
fi
if [ ! -x "$ROOT/.venv/bin/python" ]; then
    "$PY" -m venv "$ROOT/.venv"
fi
"$ROOT/.venv/bin/python" -m pip install --quiet --upgrade pip
"$ROOT/.venv/bin/python" -m pip install --quiet -e "$ROOT[$EXTRAS]"
echo "setup_python.sh: nordicstats[$EXTRAS] installed in $ROOT/.venv"
