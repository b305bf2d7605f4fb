package mailauth

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-sasl"
)

// XOAuth2 is the SASL XOAUTH2 client (Microsoft 365, Google), which go-sasl
// does not provide: the initial response carries the user and the bearer
// token. When the server refuses the token it sends a JSON challenge; the
// client answers it with an empty response so that the server can finish
// with its error reply (Challenge keeps the JSON).
func XOAuth2(user, token string) *XOAuth2Client { return &XOAuth2Client{user: user, token: token} }

// XOAuth2Client implements sasl.Client for XOAUTH2.
type XOAuth2Client struct {
	user, token string
	// Challenge is the server's error challenge, when there was one.
	Challenge string
}

var _ sasl.Client = (*XOAuth2Client)(nil)

func (a *XOAuth2Client) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + a.user + "\x01auth=Bearer " + a.token + "\x01\x01"), nil
}

func (a *XOAuth2Client) Next(challenge []byte) ([]byte, error) {
	a.Challenge = boundedText(challenge)
	return []byte{}, nil
}

// OAuthBearer is go-sasl's OAUTHBEARER client (RFC 7628) made to finish a
// refused exchange the way the RFC says: go-sasl's client returns the
// server's JSON error challenge as an error, which would leave the IMAP
// AUTHENTICATE command unfinished; this one answers it with %x01 so the
// server replies NO (IMAP) or 535 (SMTP), and keeps the JSON in Challenge.
func OAuthBearer(user, token, host string, port int) *OAuthBearerClient {
	return &OAuthBearerClient{c: sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: user, Token: token, Host: host, Port: port})}
}

// OAuthBearerClient implements sasl.Client for OAUTHBEARER.
type OAuthBearerClient struct {
	c         sasl.Client
	Challenge string
}

var _ sasl.Client = (*OAuthBearerClient)(nil)

func (a *OAuthBearerClient) Start() (string, []byte, error) { return a.c.Start() }

func (a *OAuthBearerClient) Next(challenge []byte) ([]byte, error) {
	a.Challenge = boundedText(challenge)
	return []byte{0x01}, nil
}

// Choose picks the SASL mechanism: the configured one (xoauth2,
// oauthbearer), else OAUTHBEARER when the server advertises it (the
// standard one, RFC 7628), else XOAUTH2. offered is the server's list
// (IMAP AUTH= capabilities, the SMTP EHLO AUTH line); a server that lists
// mechanisms but neither of these is an error naming what it offers.
func Choose(configured string, offered []string) (string, error) {
	has := func(m string) bool {
		return slices.ContainsFunc(offered, func(o string) bool { return strings.EqualFold(o, m) })
	}
	switch strings.ToLower(configured) {
	case XOAUTH2:
		return XOAUTH2, nil
	case OAUTHBEARER:
		return OAUTHBEARER, nil
	}
	switch {
	case has(sasl.OAuthBearer):
		return OAUTHBEARER, nil
	case has("XOAUTH2") || len(offered) == 0:
		return XOAUTH2, nil
	}
	return "", fmt.Errorf("%w (it offers %s)", ErrNoMechanism, strings.Join(offered, " "))
}

// ErrNoMechanism: the server advertises neither XOAUTH2 nor OAUTHBEARER.
var ErrNoMechanism = errors.New("mailauth: the server offers neither XOAUTH2 nor OAUTHBEARER: OAuth2 login is not possible there")

// challenger is a SASL client that keeps the server's error challenge.
type challenger interface {
	sasl.Client
	challenge() string
}

func (a *XOAuth2Client) challenge() string     { return a.Challenge }
func (a *OAuthBearerClient) challenge() string { return a.Challenge }

func newClient(mech, user, token, host string, port int) challenger {
	if mech == OAUTHBEARER {
		return OAuthBearer(user, token, host, port)
	}
	return XOAuth2(user, token)
}

// boundedText is a server challenge as printable text of bounded length.
func boundedText(b []byte) string {
	const limit = 300
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, string(b))
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}
