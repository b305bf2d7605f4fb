package main

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
)

const consoleTestToken = "0123456789abcdef0123"

// freeAddr is a loopback address nothing listens on (for a server the
// test starts).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startConsole runs `triage console args...` on a free loopback port until
// the test ends, and returns its base URL once it answers.
func startConsole(t *testing.T, args ...string) string {
	t.Helper()
	t.Setenv("TRIAGE_CONSOLE_TOKEN", consoleTestToken)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		var out, errb strings.Builder
		code := run(ctx, append(append([]string{"console"}, args...), "--listen", addr), strings.NewReader(""), &out, &errb)
		done <- fmt.Sprintf("exit %d\n%s", code, errb.String())
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("console did not stop")
		}
	})
	base := "http://" + addr
	for range 200 {
		select {
		case out := <-done:
			t.Fatalf("console stopped: %s", out)
		default:
		}
		if code, _ := consoleDo(t, base, "GET", "/queue"); code == http.StatusOK {
			return base
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("console did not answer")
	return ""
}

// consoleDo sends an authenticated request and returns the status and body.
func consoleDo(t *testing.T, base, method, path string) (int, string) {
	t.Helper()
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader(url.Values{}.Encode())
	}
	req, _ := http.NewRequest(method, base+path, body)
	req.Header.Set("Authorization", "Bearer "+consoleTestToken)
	if method == "POST" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// storedDraft records in the ledger at target (and the tickets at
// ticketsAt) a customer email whose draft waits in the Drafts folder, as
// watch records it, and returns the email's ref.
func storedDraft(t *testing.T, target, ticketsAt string) string {
	t.Helper()
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: target})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ts, err := tickets.Open(ctx, ticketsAt)
	if err != nil {
		t.Fatal(err)
	}
	ts.Close()
	key := triage.Key("msgid:<anna-1@example.pl>|anna@example.pl")
	loc := ledger.Loc{Account: "support@example.com", Mailbox: "INBOX", UIDValidity: 1, UID: 1}
	if _, err := l.Begin(ctx, ledger.Entry{Loc: loc, Key: key, MessageID: "<anna-1@example.pl>", Sender: "anna@example.pl", Subject: "Ekspres"}); err != nil {
		t.Fatal(err)
	}
	r := &mail.Reply{From: "Serwis <support@example.com>", To: "anna@example.pl", Subject: "Re: Ekspres", Body: "Dzień dobry, ekspres jest na gwarancji.",
		InReplyTo: "<anna-1@example.pl>", References: []string{"<anna-1@example.pl>"}, MessageID: mail.MessageIDFor(key, "example.com"),
		Date: time.Now(), Key: key, Draft: true}
	raw, err := mail.Render(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: r.MessageID, To: r.To, Raw: raw, Kind: replies.KindDraft}); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().MarkDraftStored(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(ctx, loc, ledger.StateDrafted, "", "valid-warranty"); err != nil {
		t.Fatal(err)
	}
	return key.Ref()
}

// The console sends an approved draft exactly as triage watch sends its
// own replies: through the smtp section's OAuth2 token source (XOAUTH2,
// the only mechanism the server offers) over STARTTLS with a private CA
// (smtp.ca_file), threaded.
func TestConsoleSendsThroughWatchSMTP(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{User: "support@example.com"})
	serverTLS, _ := mailtest.SelfSigned(t)
	sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "support@example.com", Bearer: o.Valid, Mechanisms: []string{"XOAUTH2"}, TLS: serverTLS})
	writeTestFile(t, filepath.Join(dir, "ca.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: serverTLS.Certificates[0].Certificate[0]})))
	writeTestFile(t, filepath.Join(dir, "client.secret"), o.ClientSecret+"\n")
	ref := storedDraft(t, filepath.Join(dir, "ledger.db"), filepath.Join(dir, "tickets.db"))
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, fmt.Sprintf(`imap: {addr: 127.0.0.1:993, user: support@example.com}
smtp:
  addr: %s
  tls: starttls
  ca_file: ca.pem
  oauth2:
    token_url: %s
    client_id: %s
    client_secret_file: client.secret
    scopes: [https://outlook.office365.com/.default]
ledger: ledger.db
pipeline: {tickets_db: tickets.db, from: "Serwis <support@example.com>"}
`, sink.Addr, o.TokenURL, o.ClientID))
	base := startConsole(t, "--config", cfg)
	if code, body := consoleDo(t, base, "POST", "/conversation/"+ref+"/approve"); code != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", code, body)
	}
	msgs := sink.Messages()
	if len(msgs) != 1 {
		t.Fatalf("the SMTP server got %d messages, want 1", len(msgs))
	}
	if m := msgs[0]; m.User != "support@example.com" || m.Header("In-Reply-To") != "<anna-1@example.pl>" || len(m.To) != 1 || m.To[0] != "anna@example.pl" {
		t.Errorf("sent: user %q, In-Reply-To %q, To %v", m.User, m.Header("In-Reply-To"), m.To)
	}
	if auths := sink.Auths(); len(auths) != 1 || auths[0] != "XOAUTH2" {
		t.Errorf("SASL mechanisms used: %v, want [XOAUTH2]", auths)
	}
	if st := o.Stats(); st.Issued != 1 {
		t.Errorf("access tokens issued: %d, want 1", st.Issued)
	}
}

// triage console takes the shared store like every other command:
// --store URL alone reads it (nothing to send with), and $TRIAGE_STORE
// wins over the configuration's ledger and ticket files, which then need
// not exist; a draft approved there goes to the configuration's outbox.
func TestConsoleOnTheStore(t *testing.T) {
	noDefaultConfig(t)
	t.Setenv("TRIAGE_STORE", "")
	dburl := pgtest.URL(t)
	ref := storedDraft(t, dburl, dburl)

	t.Run("--store", func(t *testing.T) {
		base := startConsole(t, "--store", dburl)
		if _, body := consoleDo(t, base, "GET", "/queue"); !strings.Contains(body, "/conversation/"+ref) {
			t.Errorf("the queue on the store lacks the draft %s", ref)
		}
		if _, body := consoleDo(t, base, "GET", "/conversation/"+ref); !strings.Contains(body, "no smtp or outbox configured") {
			t.Error("without a configuration the console offers to send")
		}
	})
	t.Run("TRIAGE_STORE", func(t *testing.T) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "triage.yaml")
		writeTestFile(t, cfg, "imap: {addr: 127.0.0.1:993, user: support}\nledger: nowhere.db\noutbox: out\npipeline: {tickets_db: nowhere-tickets.db}\n")
		t.Setenv("TRIAGE_STORE", dburl)
		base := startConsole(t, "--config", cfg)
		if code, body := consoleDo(t, base, "POST", "/conversation/"+ref+"/approve"); code != http.StatusSeeOther {
			t.Fatalf("approve: %d\n%s", code, body)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "out", "*.eml"))
		if len(files) != 1 {
			t.Fatalf("outbox holds %d replies, want 1", len(files))
		}
		if raw, _ := os.ReadFile(files[0]); !strings.Contains(string(raw), "In-Reply-To: <anna-1@example.pl>") {
			t.Errorf("sent reply not threaded:\n%s", raw)
		}
		for _, f := range []string{"nowhere.db", "nowhere-tickets.db"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s was created: the store must be used instead", f)
			}
		}
	})
}
