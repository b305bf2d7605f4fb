package mailtest

import (
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Target is an IMAP server a test runs against, whichever kind it is: the
// in-memory server (IMAP.Target) or Dovecot (Dovecot.Target).
type Target struct {
	Name     string
	Addr     string
	User     string
	Password string
	Append   func(t testing.TB, mailbox string, raw []byte, flags ...imap.Flag) imap.UID
	Client   func(t testing.TB) *imapclient.Client
}

// Target is the in-memory server as a Target.
func (s *IMAP) Target() Target {
	return Target{Name: "imapmem", Addr: s.Addr, User: s.User, Password: s.Password, Append: s.Append, Client: s.Client}
}

// Target is Dovecot, logged in as its default user, as a Target.
func (d *Dovecot) Target() Target {
	return Target{Name: "dovecot", Addr: d.Addr, User: d.User, Password: d.Password, Append: d.Append, Client: d.Client}
}

// HasFolder reports whether the target has folder.
func (tg Target) HasFolder(t testing.TB, folder string) bool {
	t.Helper()
	c := tg.Client(t)
	defer c.Close()
	_, err := c.Status(folder, &imap.StatusOptions{NumMessages: true}).Wait()
	return err == nil
}

// CreateFolder creates folder on the target unless it exists.
func (tg Target) CreateFolder(t testing.TB, folder string) {
	t.Helper()
	if tg.HasFolder(t, folder) {
		return
	}
	c := tg.Client(t)
	defer c.Close()
	if err := c.Create(folder, nil).Wait(); err != nil {
		t.Fatalf("create folder %s: %v", folder, err)
	}
}
