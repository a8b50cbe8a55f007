#!/bin/sh
# Install the Debian packages named in the arguments that are not installed yet
# (apt-get, with sudo when not root); the first argument names the caller in
# the messages.  Used by setup_r.sh and setup_docs.sh.
set -eu

caller=$1
shift
missing=""
for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
if [ -n "$missing" ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    echo "$caller: installing$missing"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
else
    echo "$caller: Debian packages already installed"
fi
