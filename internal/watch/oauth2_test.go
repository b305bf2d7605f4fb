package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	tmail "triage/internal/clients/mail"
	"triage/internal/mailauth"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
	"triage/internal/trace"
)

// oauth2World is Dovecot with its oauth2 passdb, the OAuth2 server whose
// tokens it introspects, and an env whose IMAP and SMTP both log in with
// one token source (refresh-token grant, refreshed 1s before expiry).
type oauth2World struct {
	*env
	d       *mailtest.Dovecot
	o       *mailtest.OAuth2
	src     *mailauth.Source
	rtFile  string
	firstRT string
}

func newOAuth2World(t *testing.T, opts mailtest.OAuth2Options) *oauth2World {
	t.Helper()
	o := mailtest.StartOAuth2(t, opts)
	d := mailtest.StartDovecotOAuth2(t, o.IntrospectURL)
	dir := t.TempDir()
	rt := filepath.Join(dir, "refresh.token")
	if err := os.WriteFile(rt, []byte(o.RefreshToken()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "client.secret")
	if err := os.WriteFile(secret, []byte(o.ClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := mailauth.New(mailauth.Config{TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecretFile: secret,
		Scopes: []string{"https://mail.google.com/"}, RefreshTokenFile: rt},
		mailauth.Options{Name: "imap.oauth2", EarlyExpiry: time.Second, Getenv: func(string) string { return "" }, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, mailtest.Target{Name: "dovecot-oauth2", Addr: d.Addr, User: d.User, Append: d.Append, Client: d.Client})
	e.sink = mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: d.User, Bearer: o.Valid})
	smtpSender, err := tmail.NewSMTP(tmail.SMTPConfig{Addr: e.sink.Addr, TLS: tmail.TLSNone, Username: d.User, OAuth2: src})
	if err != nil {
		t.Fatal(err)
	}
	s, err := replies.NewLedgerSender(replies.LedgerSenderConfig{Replies: e.ledger.Replies(), Next: smtpSender, Domain: "example.com", Limits: Limits{}.Replies()})
	if err != nil {
		t.Fatal(err)
	}
	e.proc = &fakeProc{sender: s}
	return &oauth2World{env: e, d: d, o: o, src: src, rtFile: rt, firstRT: o.RefreshToken()}
}

func (ow *oauth2World) watcher(mod func(*Config)) *Watcher {
	return ow.env.watcher(func(c *Config) {
		c.Password, c.OAuth2 = "", ow.src
		if mod != nil {
			mod(c)
		}
	})
}

// Access tokens live 3 seconds; the server ends the session once its token
// has expired (as Microsoft 365 does). The daemon reconnects with a new
// token every time, never presents an expired one, keeps answering new mail
// through IDLE, sends over SMTP with the same tokens, and saves every
// rotated refresh token (mode 0600). No reconnect counts as a login failure.
// The reconnects count no imap error and never fail /healthz.
func TestDovecotOAuth2TokensExpire(t *testing.T) {
	ow := newOAuth2World(t, mailtest.OAuth2Options{Lifetime: 3 * time.Second, Rotate: true})
	met := trace.NewMetrics()
	w := ow.watcher(func(c *Config) { c.MaxAuthFailures = 1; c.Metrics = met })
	var unhealthy atomic.Int32
	stopProbe := probeHealth(t, met, &unhealthy)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	const rounds = 3
	var ids []string
	for i := range rounds {
		id := ow.deliver(i, fmt.Sprintf("klient%d@customer.example", i), fmt.Sprintf("Reklamacja %d", i))
		ids = append(ids, id)
		ow.sink.WaitFor(t, func() bool { return ow.repliesTo()[id] == 1 })
		// Past the newest token's expiry, the server ends the session.
		for exp := ow.o.LastExpiry(); !time.Now().After(exp); {
			time.Sleep(100 * time.Millisecond)
		}
		ow.d.DropConnections(t)
	}
	last := ow.deliver(rounds, "klient@customer.example", "Po wygaśnięciu tokenu")
	ids = append(ids, last)
	ow.sink.WaitFor(t, func() bool { return ow.repliesTo()[last] == 1 })
	stopProbe()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil: an expired token is a reconnect, not a failure", err)
	}
	if n := counter(t, met, "triage_errors_total", "imap"); n != 0 {
		t.Errorf("triage_errors_total{kind=imap} = %v after reconnects for expired tokens, want 0", n)
	}
	if n := unhealthy.Load(); n != 0 {
		t.Errorf("/healthz failed %d times across the reconnects, want never", n)
	}

	want := map[string]int{}
	for _, id := range ids {
		want[id] = 1
	}
	if diff := cmp.Diff(want, ow.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	st := ow.o.Stats()
	t.Logf("oauth2 server: %+v; watcher: %+v", st, w.Stats())
	if st.ExpiredPresented != 0 {
		t.Errorf("%d logins presented an expired or unknown token", st.ExpiredPresented)
	}
	if st.Refreshes < rounds+1 || w.Stats().Reconnects < rounds {
		t.Errorf("%d refreshes, %d reconnects; want at least %d and %d", st.Refreshes, w.Stats().Reconnects, rounds+1, rounds)
	}
	for _, m := range ow.sink.Auths() {
		if m != "OAUTHBEARER" {
			t.Errorf("SMTP authenticated with %s, want OAUTHBEARER (advertised)", m)
		}
	}
	data, err := os.ReadFile(ow.rtFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); got != ow.o.RefreshToken() || got == ow.firstRT {
		t.Errorf("refresh token file holds %q; want the newest rotated token %q", got, ow.o.RefreshToken())
	}
	if fi, err := os.Stat(ow.rtFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("refresh token file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(ow.rtFile), ".refresh.token.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A server that keeps the session when its token expires (Dovecot checks a
// token only at login; Gmail does the same): mail delivered after the
// token expired is answered through IDLE on the same connection (no
// reconnect), and its reply goes out over SMTP with a refreshed token (the
// sink accepts only unexpired ones).
func TestDovecotOAuth2TokenExpiresSessionStays(t *testing.T) {
	ow := newOAuth2World(t, mailtest.OAuth2Options{Lifetime: 3 * time.Second, Rotate: true})
	w := ow.watcher(func(c *Config) { c.MaxAuthFailures = 1 })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	first := ow.deliver(0, "klient0@customer.example", "Reklamacja")
	ow.sink.WaitFor(t, func() bool { return ow.repliesTo()[first] == 1 })
	before := ow.o.Stats()
	for exp := ow.o.LastExpiry(); !time.Now().After(exp); {
		time.Sleep(100 * time.Millisecond)
	}
	late := ow.deliver(1, "klient1@customer.example", "Po wygaśnięciu tokenu")
	ow.sink.WaitFor(t, func() bool { return ow.repliesTo()[late] == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	after := ow.o.Stats()
	t.Logf("oauth2 server before %+v after %+v; watcher %+v", before, after, w.Stats())
	if st := w.Stats(); st.Reconnects != 0 || st.Passes < 2 {
		t.Errorf("watcher %+v: want no reconnect and a pass for the late mail (IDLE)", st)
	}
	if after.Refreshes <= before.Refreshes || after.ExpiredPresented != 0 {
		t.Errorf("refreshes %d -> %d, expired tokens presented %d; want a refresh for the late reply and none expired",
			before.Refreshes, after.Refreshes, after.ExpiredPresented)
	}
	if diff := cmp.Diff(map[string]int{first: 1, late: 1}, ow.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

// probeHealth polls met's /healthz until the returned stop is called,
// counting the answers that are not 200 in bad. It waits for the first
// healthy answer before counting (the watcher is not connected at first).
func probeHealth(t *testing.T, met *trace.Metrics, bad *atomic.Int32) (stop func()) {
	t.Helper()
	h := met.Handler()
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		seenOK := false
		for {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			switch {
			case rec.Code == http.StatusOK:
				seenOK = true
			case seenOK:
				bad.Add(1)
			}
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() { close(quit); <-finished }
}

// counter is the value of a counter of met with the label value kind (0
// when it was never counted).
func counter(t *testing.T, met *trace.Metrics, name, kind string) float64 {
	t.Helper()
	mfs, err := met.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == kind {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// Refusals count toward MaxAuthFailures: a revoked grant (the token
// endpoint says invalid_grant), and a token the server refuses although it
// was just obtained. A refused cached token is first replaced by a new one:
// only a new token refused is a failure.
func TestDovecotOAuth2LoginRefused(t *testing.T) {
	tests := []struct {
		name       string
		opts       mailtest.OAuth2Options
		revoke     bool
		wantErr    []string
		wantIssued int
	}{
		{name: "revoked grant", revoke: true, wantErr: []string{"no OAuth2 access token", "invalid_grant", "imap.oauth2.refresh_token_file"}, wantIssued: 1},
		// Tokens for another account: the first attempt's token is new and
		// refused; each later attempt tries the cached one, then one more
		// new one: three tokens for three attempts.
		{name: "token refused after a refresh", opts: mailtest.OAuth2Options{User: "someone-else@example.com"},
			wantErr: []string{"refused the login", "imap.oauth2", "OAUTHBEARER"}, wantIssued: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ow := newOAuth2World(t, tt.opts)
			if tt.revoke {
				// One token works, then the grant is revoked and the
				// server ends the session.
				if _, err := ow.src.Token(); err != nil {
					t.Fatal(err)
				}
				ow.o.Revoke()
				ow.src.Invalidate()
			}
			w := ow.watcher(func(c *Config) { c.MaxAuthFailures = 3 })
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := w.Run(ctx)
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Attempts != 3 || ctx.Err() != nil {
				t.Fatalf("Run = %v, want an *AuthError after 3 attempts", err)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if got := ow.o.Stats().Issued; got != tt.wantIssued {
				t.Errorf("%d tokens issued, want %d", got, tt.wantIssued)
			}
		})
	}
}
