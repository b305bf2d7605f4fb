package mailtest

// This file is an OAuth2 authorization server on loopback: the token
// endpoint triage asks (client-credentials and refresh-token grants) and the
// introspection endpoint (RFC 7662) Dovecot's oauth2 passdb asks about every
// token presented to it, so a test sees both sides of a token's life.

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// OAuth2Options configure an OAuth2 server.
type OAuth2Options struct {
	// User is the account every token is for: introspection returns it as
	// "username" (default DovecotUser).
	User string
	// Lifetime is how long an access token is valid (expires_in; default
	// one hour). A few seconds make a test see tokens expire.
	Lifetime time.Duration
	// Rotate makes every refresh answer with a new refresh token; the old
	// one stops working at once (strict rotation).
	Rotate bool
}

// OAuth2 is a running OAuth2 server.
type OAuth2 struct {
	TokenURL      string // POST: grant_type client_credentials or refresh_token
	IntrospectURL string // POST token=...: {"active":..., "username":..., "exp":...}
	ClientID      string
	ClientSecret  string

	opts OAuth2Options

	mu      sync.Mutex
	refresh string // the refresh token that works
	access  map[string]time.Time
	revoked bool
	stats   OAuth2Stats
}

// OAuth2Stats counts what the server saw.
type OAuth2Stats struct {
	Issued         int // access tokens issued
	Refreshes      int // refresh-token grants answered with a token
	Introspections int // tokens the mail server asked about
	// ExpiredPresented counts introspections of a token that had expired
	// or was never issued: a client logged in with a stale token.
	ExpiredPresented int
	Refused          int // token requests refused (bad client, revoked grant)
}

// StartOAuth2 starts an OAuth2 server for the test.
func StartOAuth2(t testing.TB, opts OAuth2Options) *OAuth2 {
	t.Helper()
	if opts.User == "" {
		opts.User = DovecotUser
	}
	if opts.Lifetime <= 0 {
		opts.Lifetime = time.Hour
	}
	s := &OAuth2{
		ClientID:     "triage-test-client",
		ClientSecret: randomPassword(t),
		opts:         opts,
		refresh:      "rt-" + randomPassword(t),
		access:       map[string]time.Time{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /introspect", s.introspect)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.TokenURL = srv.URL + "/token"
	s.IntrospectURL = srv.URL + "/introspect"
	return s
}

// RefreshToken is the refresh token that works now (the first one, until a
// rotation replaces it).
func (s *OAuth2) RefreshToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refresh
}

// Revoke revokes the grant: refreshes fail with invalid_grant, client
// credentials with invalid_client, and every access token is inactive.
func (s *OAuth2) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
	s.access = map[string]time.Time{}
}

// Stats returns what the server saw so far.
func (s *OAuth2) Stats() OAuth2Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Valid reports whether token is an access token of user that has not
// expired (the check a mail server makes; the SMTP sink uses it).
func (s *OAuth2) Valid(user, token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[token]
	return ok && user == s.opts.User && time.Now().Before(exp)
}

// LastExpiry is the expiry of the newest access token (zero before the first).
func (s *OAuth2) LastExpiry() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last time.Time
	for _, exp := range s.access {
		if exp.After(last) {
			last = exp
		}
	}
	return last
}

func (s *OAuth2) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != s.ClientID || secret != s.ClientSecret {
		s.stats.Refused++
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	resp := map[string]any{"token_type": "Bearer", "expires_in": int(s.opts.Lifetime / time.Second)}
	switch r.PostForm.Get("grant_type") {
	case "client_credentials":
		if s.revoked {
			s.stats.Refused++
			oauthError(w, http.StatusUnauthorized, "invalid_client", "the application's access was revoked")
			return
		}
	case "refresh_token":
		if s.revoked || r.PostForm.Get("refresh_token") != s.refresh {
			s.stats.Refused++
			oauthError(w, http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
			return
		}
		s.stats.Refreshes++
		if s.opts.Rotate {
			s.refresh = "rt-" + randomHex()
			resp["refresh_token"] = s.refresh
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", r.PostForm.Get("grant_type"))
		return
	}
	tok := "at-" + randomHex()
	s.access[tok] = time.Now().Add(s.opts.Lifetime)
	s.stats.Issued++
	resp["access_token"] = tok
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// introspect answers RFC 7662 requests: the token from the form (POST), the
// query, or an Authorization: Bearer header.
func (s *OAuth2) introspect(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	tok := r.Form.Get("token")
	if tok == "" {
		tok, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	s.mu.Lock()
	exp, ok := s.access[tok]
	active := ok && time.Now().Before(exp)
	s.stats.Introspections++
	if !active {
		s.stats.ExpiredPresented++
	}
	s.mu.Unlock()
	resp := map[string]any{"active": active}
	if active {
		resp["username"] = s.opts.User
		resp["exp"] = exp.Unix()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func randomHex() string { return strings.ToLower(rand.Text()) }
