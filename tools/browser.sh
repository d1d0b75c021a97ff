#!/usr/bin/env bash
# Debian's Chromium for the browser tests (tests/test_apps_browser.py), installed when missing.
# Needs root or password-less sudo; otherwise says so, and the browser tests skip with that reason.
set -uo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "browser: chromium is missing and this user cannot install it (apt-get needs root);" \
         "the browser tests will skip. Fix: sudo apt-get install chromium" >&2
    exit 0
fi
echo "browser: installing Debian's chromium for the browser tests ..." >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -q chromium >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q chromium >/dev/null 2>&1; } \
    || echo "browser: apt-get could not install chromium; the browser tests will skip" >&2
exit 0
