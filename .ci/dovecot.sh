#!/usr/bin/env bash
# Installs Dovecot's IMAP server for the integration tests (internal/testkit/mailtest.StartDovecot).
# Idempotent and quiet: does nothing when Dovecot's IMAP server is already installed. The tests
# start their own Dovecot on loopback with a config in a temp dir; the system service is not
# used, so the package's postinst is kept from starting it (policy-rc.d).
set -euo pipefail

installed() { [ -x /usr/sbin/dovecot ] && [ -x /usr/lib/dovecot/imap ]; }

if installed; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -n bash "$0" "$@"
	fi
	echo "dovecot.sh: need root to install dovecot-imapd" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
# No init system in containers: keep the package's postinst from starting the system service.
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

if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends dovecot-imapd; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "dovecot.sh: installing dovecot-imapd failed" >&2
	exit 1
fi

if ! installed; then
	echo "dovecot.sh: /usr/sbin/dovecot or /usr/lib/dovecot/imap missing after install" >&2
	exit 1
fi
