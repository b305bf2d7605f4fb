package e2e

import (
	"bytes"
	"encoding/json"
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
	"syscall"
	"testing"
	"time"

	"triage/internal/testkit/mailtest"
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
	w := &world{t: t, dir: t.TempDir(), log: &bytes.Buffer{}, tgt: mailtest.Target{Name: "dovecot-oauth2", Addr: d.Addr, User: d.User, Append: d.Append, Client: d.Client}}
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
`+configTail, d.Addr, d.User, o.TokenURL, o.ClientID, w.sink.Addr)
	w.config = filepath.Join(w.dir, "triage.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	w.tgt.CreateFolder(t, "Sent")

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

// TestDovecotOAuth2BinaryClientCredentials runs the real binary in
// Microsoft 365's shape: the client-credentials grant (no refresh token)
// and mechanism: xoauth2, for IMAP (Dovecot's oauth2 passdb) and SMTP (the
// sink, sharing imap's tokens). Tokens live 3 seconds. The daemon answers
// mail; when the server ends the session after the token expired (as
// Microsoft 365 does), it logs the INFO reconnect line, logs in with a new
// token and answers the next mail: no login failure is counted
// (max_auth_failures: 1 would stop it at the first), no imap error, and it
// stops cleanly.
func TestDovecotOAuth2BinaryClientCredentials(t *testing.T) {
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{Lifetime: 3 * time.Second})
	d := mailtest.StartDovecotOAuth2(t, o.IntrospectURL)
	w := &world{t: t, dir: t.TempDir(), log: &bytes.Buffer{}, tgt: mailtest.Target{Name: "dovecot-oauth2", Addr: d.Addr, User: d.User, Append: d.Append, Client: d.Client}}
	w.sink = mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: d.User, Bearer: o.Valid})
	w.ledger = filepath.Join(w.dir, "ledger.db")
	writeFile(t, filepath.Join(w.dir, "warranty.csv"), warrantyCSV)
	writeFile(t, filepath.Join(w.dir, "client.secret"), o.ClientSecret+"\n")
	w.config = filepath.Join(w.dir, "triage.yaml")
	writeFile(t, w.config, fmt.Sprintf(`imap:
  addr: %s
  tls: none
  user: %s
  oauth2:
    token_url: %s
    client_id: %s
    client_secret_file: client.secret
    scopes: [https://outlook.office365.com/.default]
    mechanism: xoauth2
smtp:
  addr: %s
  tls: none
  oauth2: imap
ledger: ledger.db
max_auth_failures: 1
`+configTail, d.Addr, d.User, o.TokenURL, o.ClientID, w.sink.Addr))

	daemon := w.command("watch", "--config", w.config, "--metrics-addr", "127.0.0.1:0")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill() })
	metricsAddr := w.waitLogAttr("metrics", "addr")

	first := w.deliver(0)
	w.sink.WaitFor(t, func() bool { return w.sink.CountByHeader("In-Reply-To")[first.ID] == 1 })
	for exp := o.LastExpiry(); !time.Now().After(exp); {
		time.Sleep(100 * time.Millisecond)
	}
	d.DropConnections(t) // the server ends the session of the expired token
	w.waitLog("imap session ended after its access token expired; reconnecting with a new token")
	second := w.deliver(1)
	w.sink.WaitFor(t, func() bool { return w.sink.CountByHeader("In-Reply-To")[second.ID] == 1 })

	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := regexp.MustCompile(`(?m)^triage_errors_total\{kind="imap"\} (\S+)$`).FindStringSubmatch(string(body)); m != nil && m[1] != "0" {
		t.Errorf("triage_errors_total{kind=\"imap\"} = %s after a reconnect for an expired token, want none", m[1])
	}
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil {
		t.Fatalf("daemon: %v, want a clean exit (an expired token is no login failure)\n%s", err, w.logs())
	}

	var infoLine bool
	for _, line := range strings.Split(w.logs(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "imap session ended after its access token expired; reconnecting with a new token" {
			infoLine = rec["level"] == "INFO"
		}
		if s, _ := rec["msg"].(string); strings.Contains(s, "login refused") {
			t.Errorf("a login failure was logged: %s", line)
		}
	}
	if !infoLine {
		t.Errorf("the reconnect line is not at INFO:\n%s", w.logs())
	}
	st := o.Stats()
	if st.Refreshes != 0 || st.Issued < 2 || st.ExpiredPresented != 0 {
		t.Errorf("token endpoint %+v: want client-credentials tokens only (no refresh), a new one after the expiry, none presented expired", st)
	}
	for _, m := range w.sink.Auths() {
		if m != "XOAUTH2" {
			t.Errorf("SMTP authenticated with %s, want XOAUTH2 (configured)", m)
		}
	}
	// Dovecot logs every login with its mechanism (the test's own
	// deliveries log in with PLAIN).
	dlog, err := os.ReadFile(d.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if x, b := strings.Count(string(dlog), "method=XOAUTH2"), strings.Count(string(dlog), "method=OAUTHBEARER"); x < 2 || b != 0 {
		t.Errorf("Dovecot saw %d XOAUTH2 and %d OAUTHBEARER logins; want the daemon's two (first, and after the expiry) with XOAUTH2 only:\n%s", x, b, dlog)
	}
}
