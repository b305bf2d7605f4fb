#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser tests (internal/console TestBrowser drives it
# headless through chromedp). Idempotent and quiet: does nothing when chromium is already installed.
set -euo pipefail

installed() { command -v chromium >/dev/null 2>&1; }

if installed; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -n bash "$0" "$@"
	fi
	echo "chromium.sh: need root to install chromium" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "chromium.sh: installing chromium failed" >&2
	exit 1
fi

if ! installed; then
	echo "chromium.sh: chromium missing after install" >&2
	exit 1
fi
