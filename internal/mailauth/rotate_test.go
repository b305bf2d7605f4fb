package mailauth_test

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"triage/internal/mailauth"
	"triage/internal/testkit/mailtest"
)

// Two processes share one refresh-token file (triage watch and triage
// console, each with its own Source): after one rotates the refresh token,
// the other's next refresh uses the rotated one instead of failing with
// invalid_grant until a restart; refreshing at the same time, they take
// turns, and the file ends with the newest token.
func TestSharedRefreshTokenFile(t *testing.T) {
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{Lifetime: time.Hour, Rotate: true})
	watch, rt := refreshSource(t, o, time.Minute)
	console, err := mailauth.New(mailauth.Config{TokenURL: o.TokenURL, ClientID: o.ClientID, Scopes: []string{"https://mail.google.com/"}, RefreshTokenFile: rt},
		mailauth.Options{Name: "smtp.oauth2", Getenv: secretEnv(o.ClientSecret)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := console.Token(); err != nil { // the console's first token
		t.Fatal(err)
	}
	if _, err := watch.Token(); err != nil { // watch rotates the refresh token
		t.Fatal(err)
	}
	console.Invalidate() // its access token ran out: it must refresh
	tok, err := console.Token()
	if err != nil {
		t.Fatalf("the console after watch rotated the refresh token: %v", err)
	}
	if !o.Valid(mailtest.DovecotUser, tok.AccessToken) {
		t.Error("the console's token is not valid at the server")
	}

	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 8 {
		src := watch
		if i%2 == 1 {
			src = console
		}
		wg.Go(func() {
			for range 5 {
				src.Invalidate()
				if _, err := src.Token(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("refreshing at the same time: %v", err)
	}
	data, err := os.ReadFile(rt)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); got != o.RefreshToken() {
		t.Errorf("the file holds %q, want the newest refresh token %q", got, o.RefreshToken())
	}
}
