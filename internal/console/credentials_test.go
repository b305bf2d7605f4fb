package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve sends one request to s from addr with the bearer token tok.
func serveFrom(s *Server, addr, tok string) int {
	r := httptest.NewRequest(http.MethodGet, "/queue", nil)
	r.RemoteAddr = addr + ":4711"
	r.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Code
}

// Wrong tokens are throttled per address: after FailureBurst wrong tries
// an address is refused (even with the right token) until its budget grows
// back; another address is not affected.
func TestWrongTokensThrottled(t *testing.T) {
	f := newFixture(t)
	s, _ := f.server(t, nil)
	refused := 0
	for range 300 {
		switch serveFrom(s, "192.0.2.7", "wrong-token-wrong-token") {
		case http.StatusTooManyRequests:
			refused++
		case http.StatusUnauthorized:
		default:
			t.Fatal("a wrong token was let in")
		}
	}
	if refused != 300-FailureBurst {
		t.Errorf("%d of 300 wrong tokens refused as too many, want %d", refused, 300-FailureBurst)
	}
	if code := serveFrom(s, "192.0.2.7", testToken); code != http.StatusTooManyRequests {
		t.Errorf("the right token from the throttled address: %d, want 429", code)
	}
	if code := serveFrom(s, "192.0.2.8", testToken); code != http.StatusOK {
		t.Errorf("the right token from another address: %d, want 200", code)
	}
	f.Clock.Set(f.Clock.Now().Add(FailureEvery))
	if code := serveFrom(s, "192.0.2.7", testToken); code != http.StatusOK {
		t.Errorf("the right token once the budget grew back: %d, want 200", code)
	}
	// The sign-in form counts the same budget.
	for range FailureBurst + 1 {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {"nope-nope-nope-nope"}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = "198.51.100.1:1"
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code == http.StatusTooManyRequests {
			return
		}
	}
	t.Error("the sign-in form let an address try more wrong tokens than the budget")
}

// A rewritten token file takes effect at once: the old token opens
// nothing, the sessions signed in with it end, the new one works.
func TestTokenFileRewriteRevokes(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(t.TempDir(), "console.token")
	if err := os.WriteFile(file, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, TokenFile: file, Now: f.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	c := login(t, ts.URL, "Lena Lead")
	if resp, _ := do(t, ts.URL, req{path: "/queue", cookie: c}); resp.StatusCode != http.StatusOK {
		t.Fatalf("session before the rewrite: %d", resp.StatusCode)
	}
	const fresh = "a-new-console-token-9876543210"
	if err := os.WriteFile(file, []byte(fresh+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, _ := do(t, ts.URL, req{path: "/queue", header: bearer}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old token after the rewrite: %d, want 401", resp.StatusCode)
	}
	if resp, _ := do(t, ts.URL, req{path: "/queue", cookie: c}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the old token's session after the rewrite: %d, want 303 to the sign-in form", resp.StatusCode)
	}
	if resp, _ := do(t, ts.URL, req{path: "/queue", header: map[string]string{"Authorization": "Bearer " + fresh}}); resp.StatusCode != http.StatusOK {
		t.Errorf("the new token: %d, want 200", resp.StatusCode)
	}
	// A token file that is removed opens nothing.
	os.Remove(file)
	if resp, _ := do(t, ts.URL, req{path: "/queue", header: map[string]string{"Authorization": "Bearer " + fresh}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a token after its file was removed: %d, want 401", resp.StatusCode)
	}
}

// usersFile writes a users file naming each person with their token.
func usersFile(t *testing.T, people map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# people of the console\n")
	for name, tok := range people {
		b.WriteString("sha256:" + tokenHash(tok) + " " + name + "\n")
	}
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const lenaToken, omarToken = "lena-token-0123456789abcdef", "omar-token-0123456789abcdef"

// A person of the users file signs in with their own token and is who the
// file says, whatever name they type; removing them from the file ends
// their session and refuses their token; a malformed file is refused at
// start, naming the line.
func TestUsersFile(t *testing.T) {
	f := newFixture(t)
	file := usersFile(t, map[string]string{"Lena Lead": lenaToken, "Omar Ops": omarToken})
	s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, UsersFile: file, Now: f.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp, _ := do(t, ts.URL, req{method: "POST", path: "/login", form: url.Values{"token": {lenaToken}, "name": {"Somebody Else"}}})
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == SessionCookie {
			c = k
		}
	}
	if c == nil {
		t.Fatalf("login with a person's token: status %d, no session", resp.StatusCode)
	}
	if _, body := do(t, ts.URL, req{path: "/queue", cookie: c}); !strings.Contains(body, "Lena Lead") || strings.Contains(body, "Somebody Else") {
		t.Error("the session is not Lena Lead's, as the users file says")
	}
	if _, body := do(t, ts.URL, req{path: "/queue", header: map[string]string{"Authorization": "Bearer " + omarToken}}); !strings.Contains(body, "Omar Ops") {
		t.Error("Omar's bearer token does not sign him in as Omar Ops")
	}
	if err := os.WriteFile(file, []byte("sha256:"+tokenHash(omarToken)+" Omar Ops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, _ := do(t, ts.URL, req{path: "/queue", cookie: c}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("Lena's session after she left the users file: %d, want 303 to the sign-in form", resp.StatusCode)
	}
	if resp, _ := do(t, ts.URL, req{path: "/queue", header: map[string]string{"Authorization": "Bearer " + lenaToken}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Lena's token after she left the users file: %d, want 401", resp.StatusCode)
	}
	for text, want := range map[string]string{
		"sha256:abc Lena\n": "line 1",
		"sha256:" + tokenHash(lenaToken) + " Lena\nsha256:" + tokenHash(omarToken) + " lena\n": `line 2: "lena" is named twice`,
		"# only a comment\nsha256:" + tokenHash(lenaToken) + "\n":                              "line 2: no name",
	} {
		bad := filepath.Join(t.TempDir(), "users")
		os.WriteFile(bad, []byte(text), 0o600)
		if _, err := New(Config{Ledger: f.Ledger, UsersFile: bad}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("users file %q: %v, want an error with %q", text, err, want)
		}
	}
}
