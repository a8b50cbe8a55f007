#!/bin/sh
# Set up what the documentation checks need besides the Python extra `docs`:
# Debian's chromium and its driver, which tests/test_docs.py uses to open the
# built site headless (skipped when they are installed already).
set -eu

ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
sh "$ROOT/scripts/apt_install.sh" setup_docs.sh chromium chromium-driver
