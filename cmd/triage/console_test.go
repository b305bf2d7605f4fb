package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/testkit/pgtest"
)

// consoleWorld writes a watch configuration with relative paths to a
// ledger and a ticket store that exist, and returns its path.
func consoleWorld(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	l, err := ledger.Open(context.Background(), ledger.Config{Path: filepath.Join(dir, "ledger.db")})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	ts, err := tickets.OpenSQLite(filepath.Join(dir, "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	ts.Close()
	cfg := filepath.Join(dir, "triage.yaml")
	body := "imap: {addr: 127.0.0.1:993, user: support}\nledger: ledger.db\noutbox: out\npipeline:\n  tickets_db: tickets.db\n  from: Support <support@example.com>\n" + extra
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestConsoleUsageErrors(t *testing.T) {
	cfg := consoleWorld(t, "")
	noLedger := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(noLedger, []byte("outbox: out\n"), 0o600)
	missing := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(missing, []byte("ledger: nowhere.db\n"), 0o600)
	typo := filepath.Join(t.TempDir(), "t.yaml")
	os.WriteFile(typo, []byte("ledger: l.db\nsmtp: {adr: 127.0.0.1:25}\n"), 0o600)
	badStore := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(badStore, []byte("store: l.db\n"), 0o600)
	tests := []struct {
		name, token string
		args        []string
		want        string
	}{
		{"no config", "0123456789abcdef0123", []string{"console"}, "--config FILE is required"},
		{"no ledger key", "0123456789abcdef0123", []string{"console", "--config", noLedger}, "has no ledger"},
		{"ledger not there", "0123456789abcdef0123", []string{"console", "--config", missing}, "run triage watch first"},
		{"unknown key", "0123456789abcdef0123", []string{"console", "--config", typo}, `unknown field "adr" in smtp`},
		{"store not a URL", "0123456789abcdef0123", []string{"console", "--config", badStore}, `store "l.db" is not a postgres:// URL`},
		{"no credentials at all", "", []string{"console", "--config", cfg}, "a users file or a proxy header is required"},
		{"short token", "short", []string{"console", "--config", cfg}, "use at least 16"},
		{"bad listen", "0123456789abcdef0123", []string{"console", "--config", cfg, "--listen", "8080"}, "want host:port"},
		{"bad trusted proxy", "0123456789abcdef0123", []string{"console", "--config", cfg, "--trusted-proxy", "nope"}, "want an address or CIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TRIAGE_CONSOLE_TOKEN", tt.token)
			t.Setenv("TRIAGE_CONFIG", "")
			code, _, stderr := runCLI(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, exitUsage, tt.want, stderr)
			}
		})
	}
}

// TestConsoleServes runs `triage console` on a free loopback port: it
// answers an authenticated request, sends others to sign in, and stops
// cleanly when its context ends.
func TestConsoleServes(t *testing.T) {
	cfg := consoleWorld(t, "")
	t.Setenv("TRIAGE_CONSOLE_TOKEN", "0123456789abcdef0123")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		var out, errb strings.Builder
		done <- run(ctx, []string{"console", "--config", cfg, "--listen", addr}, strings.NewReader(""), &out, &errb)
	}()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	get := func(auth string) (int, error) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/queue", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var code int
	var err error
	for range 100 {
		if code, err = get("0123456789abcdef0123"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != http.StatusOK {
		t.Fatalf("authenticated GET /queue: %d, %v", code, err)
	}
	if code, _ := get(""); code != http.StatusSeeOther {
		t.Errorf("GET /queue without a token: %d, want 303 to the sign-in page", code)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after stop, want 0", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("console did not stop")
	}
}

// --store (or $TRIAGE_STORE) puts the console on the shared store: the
// configuration's ledger file need not exist, and the ledger and tickets
// are the store's; a store that is not a URL is a usage error.
func TestConsoleStoreFlag(t *testing.T) {
	t.Setenv("TRIAGE_CONSOLE_TOKEN", "0123456789abcdef0123")
	t.Setenv("TRIAGE_CONFIG", "")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("ledger: nowhere.db\noutbox: out\n"), 0o600)
	code, _, stderr := runCLI(t, "", "console", "--config", cfg, "--store", "l.db")
	if code != exitUsage || !strings.Contains(stderr, `"l.db" is not a postgres:// URL`) {
		t.Errorf("--store l.db: exit %d:\n%s", code, stderr)
	}
	t.Setenv("TRIAGE_STORE", "other.db")
	if code, _, stderr := runCLI(t, "", "console", "--config", cfg); code != exitUsage || !strings.Contains(stderr, `"other.db" is not a postgres:// URL`) {
		t.Errorf("TRIAGE_STORE=other.db: exit %d:\n%s", code, stderr)
	}

	url := pgtest.URL(t)
	parts, err := openConsoleParts(context.Background(), cfg, url)
	if err != nil {
		t.Fatalf("console on the store: %v", err)
	}
	defer parts.close()
	if !strings.HasPrefix(parts.ledger.Path(), "postgres") || parts.tickets == nil {
		t.Errorf("console on the store: ledger %s, tickets %v", parts.ledger.Path(), parts.tickets)
	}
}

// unsetEnv unsets the variables for the test and restores them after:
// an env file never overrides a variable that is set, even to "".
func unsetEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			t.Cleanup(func() { os.Setenv(n, v) })
		} else {
			t.Cleanup(func() { os.Unsetenv(n) })
		}
		os.Unsetenv(n)
	}
}

// --env-file loads the installed secrets file (the SMTP password and the
// console token) before the configuration is read, as watch's does: the
// documented start command works on an installed system, and without the
// file the missing password is named.
func TestConsoleEnvFile(t *testing.T) {
	cfg := consoleWorld(t, "smtp: {addr: 127.0.0.1:2525, user: support, tls: none}\n")
	unsetEnv(t, "TRIAGE_CONSOLE_TOKEN", "TRIAGE_SMTP_PASSWORD", "TRIAGE_CONFIG", "TRIAGE_STORE")
	env := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(env, []byte("TRIAGE_SMTP_PASSWORD=pw\nTRIAGE_CONSOLE_TOKEN=0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "console", "--config", cfg, "--listen", freeAddr(t))
	if code != exitUsage || !strings.Contains(stderr, "TRIAGE_SMTP_PASSWORD") && !strings.Contains(stderr, "a users file or a proxy header") {
		t.Fatalf("without --env-file: exit %d, want %d naming what is missing:\n%s", code, exitUsage, stderr)
	}
	code, _, stderr = runCLI(t, "", "console", "--config", cfg, "--env-file", filepath.Join(t.TempDir(), "none"))
	if code != exitUsage || !strings.Contains(stderr, "--env-file") {
		t.Fatalf("missing env file: exit %d, want %d naming --env-file:\n%s", code, exitUsage, stderr)
	}

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb strings.Builder
	go func() {
		var out strings.Builder
		done <- run(ctx, []string{"console", "--env-file", env, "--config", cfg, "--listen", addr}, strings.NewReader(""), &out, &errb)
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	status := 0
	for range 100 {
		req, _ := http.NewRequest("GET", "http://"+addr+"/queue", nil)
		req.Header.Set("Authorization", "Bearer 0123456789abcdef0123") // the env file's token
		if resp, err := client.Do(req); err == nil {
			status = resp.StatusCode
			resp.Body.Close()
			break
		}
		select {
		case c := <-done:
			t.Fatalf("console with --env-file exited %d:\n%s", c, errb.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	if c := <-done; c != 0 || status != http.StatusOK {
		t.Fatalf("console with --env-file: GET /queue %d, exit %d:\n%s", status, c, errb.String())
	}
	if !strings.Contains(errb.String(), "sending=true") {
		t.Errorf("the console did not build its SMTP sender from the env file's password:\n%s", errb.String())
	}
}
