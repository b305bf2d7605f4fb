// Package e2e holds the end-to-end tests: they build ./cmd/triage and run
// the binary against real servers on loopback (IMAP, SMTP, Dovecot,
// PostgreSQL, the offline model) and measure it.
package e2e
