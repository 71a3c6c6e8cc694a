#!/usr/bin/env bash
# Install Debian's Chromium + ChromeDriver for the viewer's browser tests (tests/trace/test_viewer.py,
# marked `browser`). Idempotent: does nothing when /usr/bin/chromium already runs. Playwright is
# pointed at /usr/bin/chromium; never run `playwright install` (it downloads a browser, which fails
# offline).
set -euo pipefail

if [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install_browser.sh: need root (or sudo) to apt-get install chromium" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q chromium chromium-driver
/usr/bin/chromium --version 2>/dev/null
