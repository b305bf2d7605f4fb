package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"triage/internal/mailauth"
	"triage/internal/testkit/mailtest"
)

// `triage console --token-file F --users-file U`: a person signs in with
// their own token; the token file is read again when it is rewritten (the
// old token opens nothing); a malformed users file is a usage error
// naming its line.
func TestConsoleUsersAndTokenFiles(t *testing.T) {
	cfg := consoleWorld(t, "")
	t.Setenv("TRIAGE_CONSOLE_TOKEN", "")
	dir := t.TempDir()
	tokenFile, usersFile := filepath.Join(dir, "console.token"), filepath.Join(dir, "users")
	const shared, lena = "shared-token-0123456789", "lena-token-0123456789abc"
	sum := sha256.Sum256([]byte(lena))
	os.WriteFile(tokenFile, []byte(shared+"\n"), 0o600)
	os.WriteFile(usersFile, []byte("sha256:"+hex.EncodeToString(sum[:])+" Lena Lead\n"), 0o600)

	bad := filepath.Join(dir, "bad-users")
	os.WriteFile(bad, []byte("lena secret\n"), 0o600)
	if code, _, stderr := runCLI(t, "", "console", "--config", cfg, "--users-file", bad); code != exitUsage || !strings.Contains(stderr, "line 1") {
		t.Errorf("a malformed users file: exit %d, want %d naming line 1:\n%s", code, exitUsage, stderr)
	}

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		var out, errb strings.Builder
		done <- run(ctx, []string{"console", "--config", cfg, "--listen", addr, "--token-file", tokenFile, "--users-file", usersFile}, strings.NewReader(""), &out, &errb)
	}()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	get := func(tok string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/queue", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var code int
	var body string
	for range 100 {
		if code, body = get(lena); code != 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != http.StatusOK || !strings.Contains(body, "Lena Lead") {
		t.Fatalf("Lena's token: %d (named in the page: %v)", code, strings.Contains(body, "Lena Lead"))
	}
	if code, _ := get(shared); code != http.StatusOK {
		t.Errorf("the shared token: %d", code)
	}
	os.WriteFile(tokenFile, []byte("another-shared-token-987654\n"), 0o600)
	if code, _ := get(shared); code != http.StatusUnauthorized {
		t.Errorf("the old shared token after the file was rewritten: %d, want 401", code)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("console did not stop")
	}
}

// triage watch and triage console share the refresh-token file: watch
// rotating the refresh token after the console started does not make the
// console's next send fail with invalid_grant until a restart.
func TestConsoleSharesRotatedRefreshToken(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{User: "support@example.com", Rotate: true})
	serverTLS, _ := mailtest.SelfSigned(t)
	sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "support@example.com", Bearer: o.Valid, Mechanisms: []string{"XOAUTH2"}, TLS: serverTLS})
	writeTestFile(t, filepath.Join(dir, "ca.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: serverTLS.Certificates[0].Certificate[0]})))
	writeTestFile(t, filepath.Join(dir, "client.secret"), o.ClientSecret+"\n")
	writeTestFile(t, filepath.Join(dir, "refresh.token"), o.RefreshToken()+"\n")
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
    refresh_token_file: refresh.token
    scopes: [https://mail.google.com/]
ledger: ledger.db
pipeline: {tickets_db: tickets.db, from: "Serwis <support@example.com>"}
`, sink.Addr, o.TokenURL, o.ClientID))
	base := startConsole(t, "--config", cfg)
	// watch, sharing the file, refreshes first: the refresh token the
	// console read at start is rotated away.
	watchSide, err := mailauth.New(mailauth.Config{TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecretFile: filepath.Join(dir, "client.secret"),
		Scopes: []string{"https://mail.google.com/"}, RefreshTokenFile: filepath.Join(dir, "refresh.token")}, mailauth.Options{Name: "imap.oauth2", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watchSide.Token(); err != nil {
		t.Fatal(err)
	}
	if code, body := consoleDo(t, base, "POST", "/conversation/"+ref+"/approve"); code != http.StatusSeeOther {
		t.Fatalf("approve after watch rotated the refresh token: %d\n%s", code, body)
	}
	if msgs := sink.Messages(); len(msgs) != 1 {
		t.Fatalf("the SMTP server got %d messages, want 1", len(msgs))
	}
}
