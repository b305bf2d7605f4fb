package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
