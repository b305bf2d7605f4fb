// Package mailtest runs mail servers for tests: an in-process IMAP server
// (go-imap's imapserver + imapmemserver) with knobs for server quirks, an
// in-process SMTP sink (go-smtp) that records what it accepts, and a real
// Dovecot on loopback. Every server listens on 127.0.0.1 and stops at test
// cleanup.
package mailtest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
)

// IMAPOptions are the quirks of an in-memory IMAP server.
type IMAPOptions struct {
	// User and Password log in; defaults "support@example.com" and "secret".
	User, Password string
	// NoKeywords makes the server refuse keywords: PERMANENTFLAGS lists only
	// system flags and STORE of a keyword fails.
	NoKeywords bool
	// NoMove hides the MOVE and UIDPLUS capabilities (clients fall back to
	// COPY + STORE \Deleted + EXPUNGE).
	NoMove bool
	// Mailboxes are created at start besides INBOX.
	Mailboxes []string
	// SpecialUse are mailboxes created at start with a special-use
	// attribute (RFC 6154), e.g. {"Sent Items": imap.MailboxAttrSent}. The
	// server offers SPECIAL-USE and LIST-EXTENDED, so LIST ... RETURN
	// (SPECIAL-USE) reports them.
	SpecialUse map[string]imap.MailboxAttr
	// PlainListRoles hides SPECIAL-USE and LIST-EXTENDED and reports the
	// special-use attributes in every LIST, as Microsoft 365 does.
	PlainListRoles bool
	// TLS, when set, offers STARTTLS with this configuration (see
	// SelfSigned); with ImplicitTLS the listener speaks TLS from the first
	// byte instead.
	TLS         *tls.Config
	ImplicitTLS bool
	// Debug, when set, receives the raw protocol (credentials included).
	Debug io.Writer
}

// IMAP is an in-memory IMAP server on loopback. Addr, User and Password are
// what a client needs; the methods change the server under the client.
type IMAP struct {
	Addr     string
	User     string
	Password string

	user *imapmemserver.User
	srv  *imapserver.Server

	noKeywords     atomic.Bool
	plainListRoles bool
	idle           chan struct{}
	implicit       bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	// special holds every mailbox and its special-use attributes (see
	// specialuse.go); guarded by mu.
	special map[string][]imap.MailboxAttr
}

// StartIMAP starts an in-memory IMAP server for the test.
func StartIMAP(t testing.TB, opts IMAPOptions) *IMAP {
	t.Helper()
	if opts.User == "" {
		opts.User = "support@example.com"
	}
	if opts.Password == "" {
		opts.Password = "secret"
	}
	s := &IMAP{
		User:     opts.User,
		Password: opts.Password,
		user:     imapmemserver.NewUser(opts.User, opts.Password),
		idle:     make(chan struct{}, 64),
		conns:    map[net.Conn]struct{}{},
		special:  map[string][]imap.MailboxAttr{},
	}
	s.noKeywords.Store(opts.NoKeywords)
	s.implicit = opts.TLS != nil && opts.ImplicitTLS
	for _, name := range append([]string{"INBOX"}, opts.Mailboxes...) {
		s.special[name] = nil
		if err := s.user.Create(name, nil); err != nil {
			t.Fatalf("mailtest: create %s: %v", name, err)
		}
	}
	for name, attr := range opts.SpecialUse {
		if err := s.user.Create(name, nil); err != nil {
			t.Fatalf("mailtest: create %s: %v", name, err)
		}
		s.special[name] = []imap.MailboxAttr{attr}
	}
	caps := imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapNamespace: {}}
	if !opts.PlainListRoles {
		caps[imap.CapSpecialUse], caps[imap.CapCreateSpecialUse], caps[imap.CapListExtended] = struct{}{}, struct{}{}, struct{}{}
	}
	s.plainListRoles = opts.PlainListRoles
	if !opts.NoMove {
		caps[imap.CapMove] = struct{}{}
		caps[imap.CapUIDPlus] = struct{}{}
	}
	var starttls *tls.Config
	if opts.TLS != nil && !opts.ImplicitTLS {
		starttls = opts.TLS
	}
	s.srv = imapserver.New(&imapserver.Options{
		NewSession: func(c *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &memSession{s: s}, nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		TLSConfig:    starttls,
		Logger:       log.New(io.Discard, "", 0),
		DebugWriter:  opts.Debug,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	s.Addr = ln.Addr().String()
	var tracked net.Listener = &trackingListener{Listener: ln, s: s}
	if opts.TLS != nil && opts.ImplicitTLS {
		tracked = tls.NewListener(tracked, opts.TLS)
	}
	go s.srv.Serve(tracked)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// SetKeywords turns keyword support on or off for later SELECTs and STOREs.
func (s *IMAP) SetKeywords(on bool) { s.noKeywords.Store(!on) }

// IdleStarted receives a value each time a client enters IDLE.
func (s *IMAP) IdleStarted() <-chan struct{} { return s.idle }

// DropConnections closes every open client connection abruptly (no BYE), as
// a network failure or a server restart would, and returns how many it
// closed.
func (s *IMAP) DropConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		c.Close()
		delete(s.conns, c)
		n++
	}
	return n
}

// Append stores a raw message in mailbox directly (as a delivery would) and
// returns its UID.
func (s *IMAP) Append(t testing.TB, mailbox string, raw []byte, flags ...imap.Flag) imap.UID {
	t.Helper()
	// imapmemserver panics on nil options.
	data, err := s.user.Append(mailbox, literal{bytes.NewReader(raw), int64(len(raw))}, &imap.AppendOptions{Flags: flags, Time: time.Now()})
	if err != nil {
		t.Fatalf("mailtest: append to %s: %v", mailbox, err)
	}
	return data.UID
}

// ChangeUIDValidity recreates mailbox with a new UIDVALIDITY and the same
// messages under new UIDs, without their flags (the worst case: nothing on
// the server says they were handled).
func (s *IMAP) ChangeUIDValidity(t testing.TB, mailbox string) {
	t.Helper()
	msgs := s.Messages(t, mailbox)
	s.DropConnections()
	if err := s.user.Delete(mailbox); err != nil {
		t.Fatalf("mailtest: delete %s: %v", mailbox, err)
	}
	if err := s.user.Create(mailbox, nil); err != nil {
		t.Fatalf("mailtest: create %s: %v", mailbox, err)
	}
	for _, m := range msgs {
		s.Append(t, mailbox, m.Raw)
	}
}

// Client dials the server and logs in; the connection closes at cleanup.
func (s *IMAP) Client(t testing.TB) *imapclient.Client {
	t.Helper()
	var c *imapclient.Client
	var err error
	if s.implicit {
		// A test helper: the certificate is the test's own.
		c, err = imapclient.DialTLS(s.Addr, &imapclient.Options{TLSConfig: &tls.Config{InsecureSkipVerify: true}})
	} else {
		c, err = imapclient.DialInsecure(s.Addr, nil)
	}
	if err != nil {
		t.Fatalf("mailtest: dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(s.User, s.Password).Wait(); err != nil {
		t.Fatalf("mailtest: login: %v", err)
	}
	return c
}

// Messages returns every message of mailbox, read with a fresh client.
func (s *IMAP) Messages(t testing.TB, mailbox string) []Message {
	t.Helper()
	return ReadMailbox(t, s.Client(t), mailbox)
}

// Message is a stored message as a test sees it.
type Message struct {
	UID   imap.UID
	Flags []imap.Flag
	Raw   []byte
}

// HasFlag reports whether m carries flag (case-insensitive).
func (m Message) HasFlag(flag imap.Flag) bool {
	for _, f := range m.Flags {
		if strings.EqualFold(string(f), string(flag)) {
			return true
		}
	}
	return false
}

// ReadMailbox selects mailbox read-only on c and returns all its messages
// (UID, flags, full bytes). A missing mailbox yields nil. It works against
// any server (the in-memory one or Dovecot).
func ReadMailbox(t testing.TB, c *imapclient.Client, mailbox string) []Message {
	t.Helper()
	data, err := c.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		if isNoMailbox(err) {
			return nil
		}
		t.Fatalf("mailtest: select %s: %v", mailbox, err)
	}
	if data.NumMessages == 0 {
		return nil
	}
	var seq imap.SeqSet
	seq.AddRange(1, 0)
	bufs, err := c.Fetch(seq, &imap.FetchOptions{
		UID:         true,
		Flags:       true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}},
	}).Collect()
	if err != nil {
		t.Fatalf("mailtest: fetch %s: %v", mailbox, err)
	}
	out := make([]Message, 0, len(bufs))
	for _, b := range bufs {
		m := Message{UID: b.UID, Flags: b.Flags}
		if len(b.BodySection) > 0 {
			m.Raw = b.BodySection[0].Bytes
		}
		out = append(out, m)
	}
	return out
}

func isNoMailbox(err error) bool {
	var ie *imap.Error
	return errors.As(err, &ie) && ie.Type == imap.StatusResponseTypeNo
}

type literal struct {
	*bytes.Reader
	size int64
}

func (l literal) Size() int64 { return l.size }

// memSession is an imapmemserver session with the server's knobs applied.
type memSession struct {
	*imapmemserver.UserSession // nil until login
	s                          *IMAP
}

func (sess *memSession) Login(username, password string) error {
	if err := sess.s.user.Login(username, password); err != nil {
		return err
	}
	sess.UserSession = imapmemserver.NewUserSession(sess.s.user)
	return nil
}

func (sess *memSession) Close() error {
	if sess.UserSession == nil {
		return nil
	}
	return sess.UserSession.Close()
}

// AuthenticateMechanisms offers PLAIN and XOAUTH2 (the token is the user's
// password).
func (sess *memSession) AuthenticateMechanisms() []string { return []string{sasl.Plain, "XOAUTH2"} }

func (sess *memSession) Authenticate(mech string) (sasl.Server, error) {
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, username, password string) error { return sess.Login(username, password) }), nil
	case "XOAUTH2":
		return &xoauth2Server{check: sess.Login}, nil
	}
	return nil, &imap.Error{Type: imap.StatusResponseTypeNo, Text: "SASL mechanism not supported"}
}

var systemFlags = []imap.Flag{imap.FlagSeen, imap.FlagAnswered, imap.FlagFlagged, imap.FlagDeleted, imap.FlagDraft}

func (sess *memSession) Select(name string, options *imap.SelectOptions) (*imap.SelectData, error) {
	data, err := sess.UserSession.Select(name, options)
	if err == nil && sess.s.noKeywords.Load() {
		data.PermanentFlags = append([]imap.Flag(nil), systemFlags...)
	}
	return data, err
}

func (sess *memSession) Store(w *imapserver.FetchWriter, numSet imap.NumSet, flags *imap.StoreFlags, options *imap.StoreOptions) error {
	if sess.s.noKeywords.Load() {
		for _, f := range flags.Flags {
			if !strings.HasPrefix(string(f), `\`) {
				return &imap.Error{Type: imap.StatusResponseTypeNo, Text: "Keywords are not supported"}
			}
		}
	}
	return sess.UserSession.Store(w, numSet, flags, options)
}

// idlePoll is how often an idling session looks for mailbox changes.
const idlePoll = 10 * time.Millisecond

// Idle reports every change to the selected mailbox that the client has not
// seen yet, including those made between its last command and IDLE, as real
// servers (Dovecot) do when IDLE begins. imapmemserver's own Idle reports
// only changes made after it has registered, so mail delivered in that
// window went unreported until the next change (a watcher slept through it);
// and IdleStarted could fire before the registration, so a test delivering
// on that signal could lose the race. Polling the session's queue from the
// moment IdleStarted fires closes both windows.
func (sess *memSession) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	select {
	case sess.s.idle <- struct{}{}:
	default:
	}
	tick := time.NewTicker(idlePoll)
	defer tick.Stop()
	for {
		if err := sess.UserSession.Poll(w, true); err != nil {
			return err
		}
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
	}
}

// trackingListener remembers open connections so they can be dropped.
type trackingListener struct {
	net.Listener
	s *IMAP
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.s.mu.Lock()
	l.s.conns[c] = struct{}{}
	l.s.mu.Unlock()
	return &trackedConn{Conn: c, s: l.s}, nil
}

type trackedConn struct {
	net.Conn
	s *IMAP
}

func (c *trackedConn) Close() error {
	c.s.mu.Lock()
	delete(c.s.conns, c.Conn)
	c.s.mu.Unlock()
	return c.Conn.Close()
}
