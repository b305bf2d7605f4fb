package main

import (
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/mailtest"
)

// The daemon stops on a refused login (exit 5, saying so) instead of
// retrying it for ever.
func TestWatchStopsOnRefusedLogin(t *testing.T) {
	noDefaultConfig(t)
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	dir := t.TempDir()
	csv, _ := filepath.Abs(filepath.Join("..", "..", "examples", "warranty.csv"))
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "imap: {addr: "+srv.Addr+", tls: none, user: "+srv.User+", password: wrong}\noutbox: out\nledger: ledger.db\nmax_auth_failures: 2\nlog: {format: json}\npipeline: {offline: true, warranty_csv: "+csv+", tickets_db: tickets.db}\n")
	code, _, stderr := runArgs(t, "watch", "--config", cfg)
	if code != exitAuth || !strings.Contains(stderr, "refused the login") || !strings.Contains(stderr, "(2 attempt(s))") {
		t.Errorf("exit %d, want 5 naming the refused login:\n%s", code, stderr)
	}
}
