package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"triage/internal/mailtest"
)

// exitAuthForTest mirrors cmd/triage's exitAuth.
const exitAuthForTest = 5

// TestDovecotOAuth2Binary runs the real binary with oauth2 blocks (imap:
// refresh-token grant; smtp: "oauth2: imap") against Dovecot's oauth2
// passdb and the SMTP sink: check obtains a token and says for whom and
// how long (never the token), watch --once answers, the daemon exports the
// token expiry, and a revoked grant makes it exit 5 with a clear error.
func TestDovecotOAuth2Binary(t *testing.T) {
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{Rotate: true})
	d := mailtest.StartDovecotOAuth2(t, o.IntrospectURL)
	w := &world{t: t, dir: t.TempDir(), log: &bytes.Buffer{}, tgt: target{Name: "dovecot-oauth2", Addr: d.Addr, User: d.User, Append: d.Append, Client: d.Client}}
	w.sink = mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: d.User, Bearer: o.Valid})
	w.ledger = filepath.Join(w.dir, "ledger.db")
	for name, content := range map[string]string{
		"warranty.csv":  warrantyCSV,
		"client.secret": o.ClientSecret + "\n",
		"refresh.token": o.RefreshToken() + "\n",
	} {
		if err := os.WriteFile(filepath.Join(w.dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`imap:
  addr: %s
  tls: none
  user: %s
  sent_folder: Sent
  oauth2:
    token_url: %s
    client_id: %s
    client_secret_file: client.secret
    scopes: [https://mail.google.com/]
    refresh_token_file: refresh.token
smtp:
  addr: %s
  tls: none
  oauth2: imap
ledger: ledger.db
interval: 50ms
max_auth_failures: 2
limits:
  per_sender: -1
  global_per_hour: -1
log:
  format: json
  level: info
pipeline:
  from: "Serwis <serwis@example.com>"
  offline: true
  warranty_csv: warranty.csv
  tickets_db: tickets.db
`, d.Addr, d.User, o.TokenURL, o.ClientID, w.sink.Addr)
	w.config = filepath.Join(w.dir, "triage.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	createFolder(t, w.tgt, "Sent")

	code, out := w.run("check", "--config", w.config)
	wantLine := regexp.MustCompile(`imap\.oauth2: access token obtained for ` + regexp.QuoteMeta(d.User) + ` from \S+/token \(refresh token grant\), valid for (59m5\d|1h0m0)s \(smtp shares it\)`)
	if code != 0 || !wantLine.MatchString(out) {
		t.Errorf("check: exit %d, want 0 and a line matching %s:\n%s", code, wantLine, out)
	}
	if tok := regexp.MustCompile(`at-[a-z0-9]{16,}`).FindString(out); tok != "" {
		t.Errorf("check printed an access token: %s", tok)
	}
	if o.Stats().Issued != 1 {
		t.Errorf("check obtained %d tokens, want 1", o.Stats().Issued)
	}

	msgs := []inbound{w.deliver(0), w.deliver(1)}
	if code, out := w.run("watch", "--config", w.config, "--once"); code != 0 {
		t.Fatalf("watch --once: exit %d\n%s", code, out)
	}
	if tl, problems := w.tally(msgs); len(problems) > 0 || tl.Replied != 2 {
		t.Errorf("watch --once: %+v %v", tl, problems)
	}
	if got, err := os.ReadFile(filepath.Join(w.dir, "refresh.token")); err != nil || strings.TrimSpace(string(got)) != o.RefreshToken() {
		t.Errorf("refresh.token = %q (%v), want the rotated %q", got, err, o.RefreshToken())
	}

	daemon := w.command("watch", "--config", w.config, "--metrics-addr", "127.0.0.1:0")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill() })
	metricsAddr := w.waitLogAttr("metrics", "addr")
	for !healthy(metricsAddr) {
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := regexp.MustCompile(`(?m)^triage_oauth2_token_expiry_seconds\{server="imap"\} (\S+)$`).FindStringSubmatch(string(body)); m == nil {
		t.Errorf("no triage_oauth2_token_expiry_seconds{server=\"imap\"} in /metrics")
	} else if got, err := strconv.ParseFloat(m[1], 64); err != nil || int64(got) != o.LastExpiry().Unix() {
		t.Errorf("token expiry metric %s, want %d (the newest token's expiry)", m[1], o.LastExpiry().Unix())
	}

	// The grant is revoked and the server ends the session: the reconnects
	// get no token; after max_auth_failures the daemon exits 5.
	o.Revoke()
	d.DropConnections(t)
	err = daemon.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitAuthForTest {
		t.Fatalf("daemon after the revocation: %v, want exit %d\n%s", err, exitAuthForTest, w.logs())
	}
	if logs := w.logs(); !strings.Contains(logs, "invalid_grant") || !strings.Contains(logs, "imap.oauth2.refresh_token_file") {
		t.Errorf("the daemon's last words do not name the revoked grant and the file:\n%s", logs)
	}
}
