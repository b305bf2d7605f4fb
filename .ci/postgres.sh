#!/usr/bin/env bash
# Installs PostgreSQL's server binaries for the store tests (internal/testkit/pgtest).
# Idempotent and quiet: does nothing when initdb and postgres are already
# installed. The tests run their own server on loopback in a temp dir (as the
# user nobody when run as root); the system cluster and service are not used,
# so the package's postinst is kept from starting it (policy-rc.d).
set -euo pipefail

installed() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
			return 0
		fi
	done
	return 1
}

if installed; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -n bash "$0" "$@"
	fi
	echo "postgres.sh: need root to install postgresql" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod +x "$policy"
	made_policy=1
fi
cleanup() {
	rm -f "$log"
	if [ -n "$made_policy" ]; then rm -f "$policy"; fi
}
trap cleanup EXIT

if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "postgres.sh: installing postgresql failed" >&2
	exit 1
fi

if ! installed; then
	echo "postgres.sh: no /usr/lib/postgresql/*/bin/initdb after install" >&2
	exit 1
fi
