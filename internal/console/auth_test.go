package console

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"triage/internal/replies"
)

func TestAuthentication(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	tests := []struct {
		name     string
		r        req
		want     int
		location string
	}{
		{"page without credentials goes to login", req{path: "/queue"}, http.StatusSeeOther, "/login"},
		{"action without credentials", req{method: "POST", path: "/conversation/" + f.Draft + "/reject", form: url.Values{}}, http.StatusUnauthorized, ""},
		{"wrong bearer token", req{path: "/queue", header: map[string]string{"Authorization": "Bearer nope-nope-nope-nope"}}, http.StatusUnauthorized, ""},
		{"basic auth is not a token", req{path: "/queue", header: map[string]string{"Authorization": "Basic " + testToken}}, http.StatusUnauthorized, ""},
		{"bearer token", req{path: "/queue", header: bearer}, http.StatusOK, ""},
		{"proxy header not configured is ignored", req{path: "/queue", header: map[string]string{"X-Forwarded-Email": "eve@example.com"}}, http.StatusSeeOther, "/login"},
		{"forged session cookie", req{path: "/queue", cookie: &http.Cookie{Name: SessionCookie, Value: "forged"}}, http.StatusSeeOther, "/login"},
		{"login page is open", req{path: "/login"}, http.StatusOK, ""},
		{"static files are open", req{path: "/static/htmx.min.js"}, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := do(t, ts.URL, tt.r)
			if resp.StatusCode != tt.want || resp.Header.Get("Location") != tt.location {
				t.Errorf("status %d location %q, want %d %q", resp.StatusCode, resp.Header.Get("Location"), tt.want, tt.location)
			}
			if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "script-src 'self'") {
				t.Errorf("Content-Security-Policy %q lacks script-src 'self'", got)
			}
		})
	}
}

// login signs in through the form and returns the session cookie.
func login(t *testing.T, base, name string) *http.Cookie {
	t.Helper()
	resp, _ := do(t, base, req{method: "POST", path: "/login", form: url.Values{"token": {testToken}, "name": {name}}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: status %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			return c
		}
	}
	t.Fatal("login set no session cookie")
	return nil
}

func TestSession(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	resp, body := do(t, ts.URL, req{method: "POST", path: "/login", form: url.Values{"token": {"wrong-token-wrong-token"}, "name": {"anna"}}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not the console token") || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong token: status %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	c := login(t, ts.URL, "Lena Lead")
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/", c)
	}
	resp, body = do(t, ts.URL, req{path: "/queue", cookie: c})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Lena Lead") {
		t.Fatalf("with session: status %d, user shown %v", resp.StatusCode, strings.Contains(body, "Lena Lead"))
	}
	// The session ends at its time.
	f.Clock.Set(f.Clock.Now().Add(13 * 60 * 60 * 1e9))
	if resp, _ := do(t, ts.URL, req{path: "/queue", cookie: c}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("expired session: status %d, want 303 to login", resp.StatusCode)
	}
	c = login(t, ts.URL, "Lena Lead")
	do(t, ts.URL, req{method: "POST", path: "/logout", cookie: c, form: url.Values{}})
	if resp, _ := do(t, ts.URL, req{path: "/queue", cookie: c}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after logout: status %d, want 303 to login", resp.StatusCode)
	}
}

func TestProxyHeader(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		trusted []netip.Prefix
		want    int
	}{
		{"from a trusted proxy (loopback by default)", nil, http.StatusOK},
		{"from an address that is not a trusted proxy", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, ProxyHeader: "X-Forwarded-Email", TrustedProxies: tt.trusted})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s)
			defer ts.Close()
			resp, body := do(t, ts.URL, req{path: "/queue", header: map[string]string{"X-Forwarded-Email": "eve@example.com"}})
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == http.StatusOK && !strings.Contains(body, "eve@example.com") {
				t.Error("the proxy's user is not shown")
			}
		})
	}
}

func TestNewRefusesWeakSetups(t *testing.T) {
	f := newFixture(t)
	for _, cfg := range []Config{
		{Ledger: f.Ledger},
		{Ledger: f.Ledger, Token: "short"},
		{Token: testToken},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestCrossOriginActionRefused(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	c := login(t, ts.URL, "lena")
	resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/reject", form: url.Values{}, cookie: c,
		header: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site POST: status %d, want 403", resp.StatusCode)
	}
	r := draftRow(t, f)
	if r.Outcome != "" {
		t.Errorf("draft outcome %q after a refused request, want none", r.Outcome)
	}
	// The same request from the console's own page goes through.
	resp, _ = do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/reject", form: url.Values{"reason": {"wrong_facts"}}, cookie: c,
		header: map[string]string{"Origin": ts.URL, "Sec-Fetch-Site": "same-origin"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("same-origin POST: status %d, want 303", resp.StatusCode)
	}
	if r := draftRow(t, f); r.Outcome != replies.DraftRejected {
		t.Errorf("draft outcome %q after reject, want %q", r.Outcome, replies.DraftRejected)
	}
}
