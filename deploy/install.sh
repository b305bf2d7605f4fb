#!/bin/sh
# Install triage watch as a systemd service. From the repository, after
# `make build`, as root:
#
#   sh deploy/install.sh
#
# It installs the binary, /etc/triage/{triage.yaml,env,warranty.csv} (never
# overwriting an existing one), the documentation the unit links to, the
# unit itself (and its template for one process per inbox), the review
# console's unit and its token (/etc/triage/console.token), the
# unprivileged triage user, and reloads systemd. Then edit
# /etc/triage/triage.yaml and /etc/triage/env, check, and start (see the
# header of deploy/triage-watch.service).
#
# DESTDIR=/some/root installs into a staging root instead: no user, no
# ownership change, no systemctl (the tests use this).
set -eu
cd "$(dirname "$0")/.."
D="${DESTDIR:-}"
BIN="${TRIAGE_BIN:-bin/triage}"

[ -x "$BIN" ] || { echo "install.sh: $BIN missing: run 'make build' first" >&2; exit 2; }

if [ -z "$D" ] && ! id triage >/dev/null 2>&1; then
	useradd --system --home /var/lib/triage --shell /usr/sbin/nologin triage
fi

install -D -m 0755 "$BIN" "$D/usr/local/bin/triage"
install -d -m 0750 "$D/etc/triage"
# Configuration, secrets and the registry: installed once, then yours.
[ -e "$D/etc/triage/triage.yaml" ] || install -m 0640 deploy/triage.example.yaml "$D/etc/triage/triage.yaml"
[ -e "$D/etc/triage/warranty.csv" ] || install -m 0640 examples/warranty.csv "$D/etc/triage/warranty.csv"
if [ ! -e "$D/etc/triage/env" ]; then
	install -m 0640 /dev/null "$D/etc/triage/env"
	printf '%s\n' '# KEY=value lines: read by systemd (EnvironmentFile) and by triage watch --env-file (cron).' \
		'TRIAGE_IMAP_PASSWORD=' 'TRIAGE_SMTP_PASSWORD=' \
		'# OAuth2 (imap.oauth2 / smtp.oauth2 blocks) instead of passwords: the client secret' \
		'TRIAGE_OAUTH2_CLIENT_SECRET=' 'GEMINI_API_KEY=' \
		'TRIAGE_MANUALS=/usr/local/share/triage/manuals' >"$D/etc/triage/env"
fi
install -D -m 0644 docs/watch.md "$D/usr/share/doc/triage/watch.md"
install -D -m 0644 docs/console.md "$D/usr/share/doc/triage/console.md"
# The sample manuals the built-in product-question scenario searches
# (tools.yaml search_manual; $TRIAGE_MANUALS in the env file names them).
install -d -m 0755 "$D/usr/local/share/triage/manuals"
cp -R examples/manuals/. "$D/usr/local/share/triage/manuals/"
install -D -m 0644 deploy/triage-watch.service "$D/etc/systemd/system/triage-watch.service"
# The template for one process per inbox: triage-watch@NAME reads /etc/triage/NAME.yaml.
install -D -m 0644 deploy/triage-watch@.service "$D/etc/systemd/system/triage-watch@.service"
# The review console beside the daemon, with a random token of its own
# (installed once, then yours).
install -D -m 0644 deploy/triage-console.service "$D/etc/systemd/system/triage-console.service"
if [ ! -e "$D/etc/triage/console.token" ]; then
	install -m 0640 /dev/null "$D/etc/triage/console.token"
	od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$D/etc/triage/console.token"
fi
install -d -m 0750 "$D/var/log/triage" # for the cron recipe's log
# The state directory (ledger, tickets, outbox): systemd's StateDirectory=
# creates it only when it starts the unit, but `triage check` and the cron
# recipe need it before that.
install -d -m 0750 "$D/var/lib/triage"

if [ -z "$D" ]; then
	chgrp triage /etc/triage /etc/triage/triage.yaml /etc/triage/warranty.csv /etc/triage/env /etc/triage/console.token /var/log/triage /var/lib/triage
	chown triage /var/log/triage /var/lib/triage
	systemctl daemon-reload
fi
echo "installed. Next: edit $D/etc/triage/triage.yaml and $D/etc/triage/env, then"
echo "  runuser -u triage -- /usr/local/bin/triage check --env-file /etc/triage/env --config /etc/triage/triage.yaml"
echo "  systemctl enable --now triage-watch"
echo "  systemctl enable --now triage-console    # the review console on 127.0.0.1:8080 (token in /etc/triage/console.token)"
