package mailauth_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/mailauth"
	"triage/internal/testkit/mailtest"
)

func secretEnv(secret string) func(string) string {
	return func(k string) string {
		if k == mailauth.SecretEnv {
			return secret
		}
		return ""
	}
}

// refreshSource is a refresh-token source for o, its refresh token in a
// file of its own.
func refreshSource(t *testing.T, o *mailtest.OAuth2, early time.Duration) (*mailauth.Source, string) {
	t.Helper()
	rt := filepath.Join(t.TempDir(), "refresh.token")
	if err := os.WriteFile(rt, []byte(o.RefreshToken()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := mailauth.New(mailauth.Config{TokenURL: o.TokenURL, ClientID: o.ClientID, Scopes: []string{"https://mail.google.com/"}, RefreshTokenFile: rt},
		mailauth.Options{Name: "imap.oauth2", Getenv: secretEnv(o.ClientSecret), EarlyExpiry: early})
	if err != nil {
		t.Fatal(err)
	}
	return src, rt
}

// A token is cached until EarlyExpiry before it expires; Invalidate drops
// it. Every rotated refresh token is written to the file (0600), which the
// next refresh uses.
func TestTokenCacheAndRotation(t *testing.T) {
	tests := []struct {
		name      string
		lifetime  time.Duration
		early     time.Duration
		wantFresh []bool // per call; Invalidate after the third
	}{
		{"cached for its life", time.Hour, time.Minute, []bool{true, false, false, true, false}},
		{"replaced when within the early margin", 2 * time.Second, 5 * time.Second, []bool{true, true, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{Lifetime: tt.lifetime, Rotate: true})
			src, rt := refreshSource(t, o, tt.early)
			var fresh []bool
			for i := range tt.wantFresh {
				if i == 3 {
					src.Invalidate()
				}
				tok, err := src.Token()
				if err != nil {
					t.Fatalf("token %d: %v", i, err)
				}
				if !o.Valid(mailtest.DovecotUser, tok.AccessToken) {
					t.Errorf("token %d is not valid at the server", i)
				}
				fresh = append(fresh, tok.Fresh)
			}
			if diff := cmp.Diff(tt.wantFresh, fresh); diff != "" {
				t.Errorf("fresh per call (-want +got):\n%s", diff)
			}
			data, err := os.ReadFile(rt)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(data)); got != o.RefreshToken() {
				t.Errorf("file holds %q, want the newest refresh token %q", got, o.RefreshToken())
			}
			if fi, _ := os.Stat(rt); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode().Perm())
			}
		})
	}
}

// Errors from the token endpoint say what to fix; 4xx answers are
// permanent, 5xx and network failures temporary.
func TestTokenErrors(t *testing.T) {
	answer := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/token"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/token"
	ln.Close()
	tests := []struct {
		name      string
		url       string
		refresh   bool
		permanent bool
		want      []string
	}{
		{"revoked refresh token", answer(400, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`), true, true,
			[]string{"refresh token grant", "invalid_grant", "obtain a new one", "imap.oauth2.refresh_token_file"}},
		{"wrong secret", answer(401, `{"error":"invalid_client"}`), false, true,
			[]string{"client credentials grant", "invalid_client", "imap.oauth2.client_id", mailauth.SecretEnv}},
		{"no admin consent", answer(400, `{"error":"invalid_grant","error_description":"AADSTS65001"}`), false, true,
			[]string{"an administrator granted the application permissions"}},
		{"endpoint down", answer(503, `busy`), false, false, []string{"503"}},
		{"nothing listening", closed, false, false, []string{"connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mailauth.Config{TokenURL: tt.url, ClientID: "app", Scopes: []string{"s"}}
			if tt.refresh {
				cfg.RefreshTokenFile = filepath.Join(t.TempDir(), "rt")
				os.WriteFile(cfg.RefreshTokenFile, []byte("1//old\n"), 0o600)
			}
			src, err := mailauth.New(cfg, mailauth.Options{Name: "imap.oauth2", Getenv: secretEnv("s3cret")})
			if err != nil {
				t.Fatal(err)
			}
			_, err = src.Token()
			if err == nil {
				t.Fatal("Token succeeded")
			}
			if mailauth.IsPermanent(err) != tt.permanent {
				t.Errorf("IsPermanent = %v, want %v (%v)", !tt.permanent, tt.permanent, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestChoose(t *testing.T) {
	tests := []struct {
		configured string
		offered    []string
		want       string
		wantErr    bool
	}{
		{"", []string{"PLAIN", "XOAUTH2", "OAUTHBEARER"}, "oauthbearer", false},
		{"", []string{"XOAUTH2", "PLAIN"}, "xoauth2", false}, // Microsoft 365
		{"", nil, "xoauth2", false},                          // nothing advertised: the common one
		{"xoauth2", []string{"OAUTHBEARER", "XOAUTH2"}, "xoauth2", false},
		{"OAUTHBEARER", []string{"XOAUTH2"}, "oauthbearer", false},
		{"", []string{"PLAIN", "LOGIN"}, "", true},
	}
	for _, tt := range tests {
		got, err := mailauth.Choose(tt.configured, tt.offered)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("Choose(%q, %v) = %q, %v; want %q (error %v)", tt.configured, tt.offered, got, err, tt.want, tt.wantErr)
		}
	}
}
