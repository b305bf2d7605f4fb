package mailauth_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/mailauth"
	"triage/internal/testkit/mailtest"
)

// imapLogin dials d and logs in with src, as the watcher does; on success
// the session must work (SELECT INBOX).
func imapLogin(t *testing.T, d *mailtest.Dovecot, src *mailauth.Source) (mailauth.Token, error) {
	t.Helper()
	c, err := imapclient.DialInsecure(d.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	host, p, _ := net.SplitHostPort(d.Addr)
	port, _ := strconv.Atoi(p)
	tok, err := src.Login(mailauth.Server{
		User: d.User, Offered: c.Caps().AuthMechanisms(), Host: host, Port: port,
		Auth: c.Authenticate,
		Refused: func(err error) bool {
			var ie *imap.Error
			return errors.As(err, &ie)
		},
	})
	if err == nil {
		if _, serr := c.Select("INBOX", nil).Wait(); serr != nil {
			t.Errorf("select after login: %v", serr)
		}
	} else if nerr := c.Noop().Wait(); nerr != nil {
		// A refusal finishes the AUTHENTICATE command: the connection
		// still answers.
		t.Errorf("connection after a refused login: %v", nerr)
	}
	return tok, err
}

// writeSecret writes the test client's secret to a file.
func writeSecret(t *testing.T, o *mailtest.OAuth2) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(o.ClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func noEnv(string) string { return "" }

// Both mechanisms log in to Dovecot's oauth2 passdb, chosen from what it
// advertises (OAUTHBEARER first) or as configured; a token Dovecot's
// introspection calls inactive is refused with the server's detail, and
// the connection stays usable.
func TestDovecotMechanisms(t *testing.T) {
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{})
	d := mailtest.StartDovecotOAuth2(t, o.IntrospectURL)
	secret := writeSecret(t, o)
	for _, tc := range []struct {
		mech, want string
	}{
		{"", "OAUTHBEARER"},
		{mailauth.XOAUTH2, "XOAUTH2"},
		{mailauth.OAUTHBEARER, "OAUTHBEARER"},
	} {
		t.Run("mechanism="+tc.mech, func(t *testing.T) {
			src, err := mailauth.New(mailauth.Config{TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecretFile: secret,
				Scopes: []string{"https://outlook.office365.com/.default"}, Mechanism: tc.mech},
				mailauth.Options{Name: "imap.oauth2", Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := imapLogin(t, d, src)
			if err != nil {
				t.Fatalf("login: %v\n%s", err, readLog(d))
			}
			if tok.Mechanism != tc.want || !tok.Fresh || time.Until(tok.Expiry) < 50*time.Minute {
				t.Errorf("logged in with %s, fresh=%v, expiring in %v; want %s, fresh, for an hour", tok.Mechanism, tok.Fresh, time.Until(tok.Expiry), tc.want)
			}
		})
	}
	for _, mech := range []string{mailauth.XOAUTH2, mailauth.OAUTHBEARER} {
		t.Run("refused/"+mech, func(t *testing.T) {
			_, err := imapLogin(t, d, mailauth.Static("at-never-issued", mech))
			var re *mailauth.RefusedError
			var ie *imap.Error
			if !errors.As(err, &re) || !errors.As(err, &ie) {
				t.Fatalf("login with a token never issued = %v, want a *RefusedError wrapping the server's NO", err)
			}
			if !strings.EqualFold(re.Mechanism, mech) || re.Challenge == "" {
				t.Errorf("refusal %q: want mechanism %s and the server's challenge", err, mech)
			}
		})
	}
	if st := o.Stats(); st.Introspections != 5 || st.ExpiredPresented != 2 {
		t.Errorf("introspections %d (of stale tokens %d), want 5 (2)", st.Introspections, st.ExpiredPresented)
	}
}

func readLog(d *mailtest.Dovecot) string {
	b, _ := os.ReadFile(d.LogPath)
	return string(b)
}
