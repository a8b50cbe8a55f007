#!/bin/sh
# Set up what the documentation checks need besides the Python extra `docs`:
# Debian's chromium and its driver, which tests/test_docs.py uses to open the
# built site headless (skipped when they are installed already).
set -eu

PACKAGES="chromium chromium-driver"
missing=""
for pkg in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
if [ -n "$missing" ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    echo "setup_docs.sh: installing$missing"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
else
    echo "setup_docs.sh: chromium already installed"
fi
