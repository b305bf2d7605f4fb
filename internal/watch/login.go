package watch

import (
	"net"
	"strconv"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/mailauth"
)

// login authenticates a new connection: LOGIN with the password, or
// AUTHENTICATE with an OAuth2 access token (a new one when the cached one
// is near its expiry), the mechanism chosen from the server's AUTH=
// capabilities unless configured.
func (w *Watcher) login(c *imapclient.Client) error {
	if w.cfg.OAuth2 == nil {
		return c.Login(w.cfg.Username, w.cfg.Password).Wait()
	}
	host, p, _ := net.SplitHostPort(w.cfg.Addr)
	port, _ := strconv.Atoi(p)
	tok, err := w.cfg.OAuth2.Login(mailauth.Server{
		User: w.cfg.Username, Offered: c.Caps().AuthMechanisms(), Host: host, Port: port,
		Auth: c.Authenticate, Refused: refusedLogin,
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.tokenExpiry = tok.Expiry
	w.mu.Unlock()
	if !tok.Expiry.IsZero() {
		w.log.Debug("imap oauth2 login", "mechanism", tok.Mechanism, "token_expires_in", time.Until(tok.Expiry).Round(time.Second).String())
	}
	return nil
}

// lastTokenExpiry is the expiry of the access token of the last login.
func (w *Watcher) lastTokenExpiry() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tokenExpiry
}
