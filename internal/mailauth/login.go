package mailauth

import (
	"fmt"
	"strings"

	"github.com/emersion/go-sasl"
)

// Server is what Login needs of a mail server connection.
type Server struct {
	User    string   // the mailbox to log in as
	Offered []string // SASL mechanisms the server advertises
	Host    string   // for OAUTHBEARER's host and port fields
	Port    int
	// Auth runs one SASL exchange (imapclient.Client.Authenticate,
	// smtp.Client.Auth).
	Auth func(sasl.Client) error
	// Refused reports whether an error of Auth is the server refusing the
	// credentials (IMAP NO, SMTP 535), as opposed to a broken connection.
	Refused func(error) bool
}

// Login logs in with a token from s. A refused token that came from the
// cache is dropped and a new one tried once (the server may have revoked
// it, or ended its validity before our clock did): only a refused fresh
// token is returned as a refusal. It returns the token that was accepted
// (or last refused). An error getting a token is a *TokenError; a refusal
// is Auth's error, with the server's error challenge appended.
func (s *Source) Login(srv Server) (Token, error) {
	for {
		tok, err := s.Token()
		if err != nil {
			return Token{}, err
		}
		mech, err := Choose(s.mech, srv.Offered)
		if err != nil {
			return tok, err
		}
		tok.Mechanism = strings.ToUpper(mech)
		c := newClient(mech, srv.User, tok.AccessToken, srv.Host, srv.Port)
		err = srv.Auth(c)
		if err == nil {
			return tok, nil
		}
		if !srv.Refused(err) {
			return tok, err
		}
		if !tok.Fresh {
			s.logger().Info("server refused a cached oauth2 access token; getting a new one", "config", s.name, "mechanism", mech)
			s.Invalidate()
			continue
		}
		if ch := c.challenge(); ch != "" {
			return tok, &RefusedError{Mechanism: tok.Mechanism, Challenge: ch, Err: err}
		}
		return tok, &RefusedError{Mechanism: tok.Mechanism, Err: err}
	}
}

// RefusedError is a server refusing a freshly obtained (or static) access
// token.
type RefusedError struct {
	Mechanism string
	Challenge string // the server's JSON error challenge, when it sent one
	Err       error
}

func (e *RefusedError) Error() string {
	if e.Challenge != "" {
		return fmt.Sprintf("%v (%s; server detail: %s)", e.Err, e.Mechanism, e.Challenge)
	}
	return fmt.Sprintf("%v (%s)", e.Err, e.Mechanism)
}

func (e *RefusedError) Unwrap() error { return e.Err }
