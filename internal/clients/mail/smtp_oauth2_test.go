package mail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/mailauth"
	"triage/internal/testkit/mailtest"
)

// oauth2Source is a refresh-token source for the test OAuth2 server.
func oauth2Source(t *testing.T, o *mailtest.OAuth2, mech string, early time.Duration) *mailauth.Source {
	t.Helper()
	dir := t.TempDir()
	rt := filepath.Join(dir, "refresh.token")
	if err := os.WriteFile(rt, []byte(o.RefreshToken()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := mailauth.New(mailauth.Config{TokenURL: o.TokenURL, ClientID: o.ClientID, Scopes: []string{"https://mail.google.com/"},
		RefreshTokenFile: rt, Mechanism: mech},
		mailauth.Options{Name: "smtp.oauth2", EarlyExpiry: early, Getenv: func(k string) string {
			if k == mailauth.SecretEnv {
				return o.ClientSecret
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// Every send authenticates with a token from the source, by the mechanism
// the sink advertises or the one configured; a token near its expiry is
// replaced before a dial; a revoked grant is a permanent error that says so.
func TestSMTPOAuth2(t *testing.T) {
	tests := []struct {
		mech string
		want []string // mechanisms the sink saw, one per send
	}{
		{"", []string{"OAUTHBEARER", "OAUTHBEARER"}},
		{mailauth.XOAUTH2, []string{"XOAUTH2", "XOAUTH2"}},
		{mailauth.OAUTHBEARER, []string{"OAUTHBEARER", "OAUTHBEARER"}},
	}
	for _, tt := range tests {
		t.Run("mechanism="+tt.mech, func(t *testing.T) {
			o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{User: "support@example.com", Lifetime: 2 * time.Second})
			sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "support@example.com", Bearer: o.Valid})
			// Tokens live 2s and are replaced 1.5s early: the second send,
			// after the first token's half-life, must not reuse it.
			s, err := NewSMTP(SMTPConfig{Addr: sink.Addr, TLS: TLSNone, Username: "support@example.com", OAuth2: oauth2Source(t, o, tt.mech, 1500*time.Millisecond)})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if i > 0 {
					time.Sleep(600 * time.Millisecond)
				}
				if _, err := s.Send(context.Background(), &Reply{From: "support@example.com", To: "jan@example.org", Subject: "s", Body: "b"}); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			if diff := cmp.Diff(tt.want, sink.Auths()); diff != "" {
				t.Errorf("mechanisms (-want +got):\n%s", diff)
			}
			if st := o.Stats(); st.Issued != 2 {
				t.Errorf("%d tokens issued, want 2 (one per send: the first was near its expiry)", st.Issued)
			}

			o.Revoke()
			time.Sleep(600 * time.Millisecond)
			_, err = s.Send(context.Background(), &Reply{From: "support@example.com", To: "jan@example.org", Subject: "s", Body: "b"})
			var se *SMTPError
			if !errors.As(err, &se) || se.Temporary() || se.Op != "auth" || !strings.Contains(err.Error(), "invalid_grant") || !strings.Contains(err.Error(), "refresh_token_file") {
				t.Errorf("send after the grant was revoked = %v, want a permanent auth error naming invalid_grant and refresh_token_file", err)
			}
		})
	}
}
