package watch

import (
	"errors"
	"fmt"

	"github.com/emersion/go-imap/v2"

	"triage/internal/mailauth"
)

// DefaultMaxAuthFailures is how many refused logins in a row end Run.
const DefaultMaxAuthFailures = 3

// AuthError is a login the server refused: wrong credentials, an expired
// token, a disabled account. Retrying will not help, so Run stops after
// Config.MaxAuthFailures of them in a row instead of retrying forever; a
// network error is retried with backoff as before.
type AuthError struct {
	Addr, User string
	Attempts   int
	OAuth2     bool  // the login used OAuth2 access tokens
	Err        error // the server's answer (an *imap.Error), or why no token was had
}

func (e *AuthError) Error() string {
	var te *mailauth.TokenError
	switch {
	case errors.As(e.Err, &te):
		return fmt.Sprintf("watch: no OAuth2 access token to log in to %s as %s (%d attempt(s)): %v; not retrying",
			e.Addr, e.User, e.Attempts, e.Err)
	case e.OAuth2:
		return fmt.Sprintf("watch: the IMAP server %s refused the login as %s (%d attempt(s)): %v; check imap.user (the mailbox the token is for) and imap.oauth2 (scopes, and the application's mailbox permission; see docs/watch.md), or the token in TRIAGE_IMAP_TOKEN / imap.token_file; not retrying",
			e.Addr, e.User, e.Attempts, e.Err)
	}
	return fmt.Sprintf("watch: the IMAP server %s refused the login as %s (%d attempt(s)): %v; check imap.user and the password or token (TRIAGE_IMAP_PASSWORD / TRIAGE_IMAP_TOKEN, imap.password_file / imap.token_file); not retrying",
		e.Addr, e.User, e.Attempts, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// refusedLogin reports whether err is the server's NO (or BAD) to LOGIN or
// AUTHENTICATE; a NO [UNAVAILABLE] is temporary, like a network error.
func refusedLogin(err error) bool {
	var ie *imap.Error
	if !errors.As(err, &ie) {
		return false
	}
	if ie.Code == imap.ResponseCodeUnavailable {
		return false
	}
	return ie.Type == imap.StatusResponseTypeNo || ie.Type == imap.StatusResponseTypeBad
}
