package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestExampleConfigLoads(t *testing.T) {
	wf, err := loadWatchFile(filepath.Join("..", "..", "deploy", "triage.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := []any{wf.IMAP.Addr, wf.IMAP.TLS, wf.SMTP.Addr, wf.Ledger, wf.Limits.PerSenderLimit, wf.Limits.PerSenderWindow, wf.Interval}
	want := []any{"imap.example.com:993", "tls", "smtp.example.com:587", "/var/lib/triage/ledger.db", 5, 24 * time.Hour, time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("example config (-want +got):\n%s", diff)
	}
}

func TestWatchUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeTestFile(t, bad, "imap:\n  adress: x\n")
	noPass := filepath.Join(dir, "nopass.yaml")
	writeTestFile(t, noPass, "imap:\n  addr: 127.0.0.1:1\n  user: u\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no config", []string{"watch"}, exitUsage, "no configuration: give --config FILE (or set $TRIAGE_CONFIG"},
		{"unknown field", []string{"watch", "--config", bad}, exitUsage, `line 2: unknown field "adress" in imap; valid: account, addr,`},
		{"no password", []string{"watch", "--config", noPass}, exitUsage, "TRIAGE_IMAP_PASSWORD"},
		{"bad concurrency", []string{"watch", "--config", noPass, "--concurrency", "0"}, exitUsage, "concurrency must be at least 1, got 0"},
		{"password flag does not exist", []string{"watch", "--password", "x"}, exitUsage, "unknown flag"},
		{"missing ledger", []string{"ledger", "--ledger", filepath.Join(dir, "none.db")}, exitUsage, "no such file"},
	}
	noDefaultConfig(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TRIAGE_IMAP_PASSWORD", "")
			t.Setenv("TRIAGE_IMAP_TOKEN", "")
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(""), &out, &errb)
			if code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d containing %q", code, errb.String(), tt.code, tt.want)
			}
		})
	}
}

func TestWatchHelpDocumentsConfig(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"watch", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"--once", "--interval", "--processed-folder", "--failed-folder", "--metrics-addr", "--log-format",
		"TRIAGE_IMAP_PASSWORD", "TRIAGE_SMTP_TOKEN", "password_file", "per_sender", "sent_folder", "Exit status", "second signal", "--concurrency", "concurrency (messages handled at once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("watch --help lacks %q", want)
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
