package mailtest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SinkMessage is one message the SMTP sink accepted.
type SinkMessage struct {
	From string
	To   []string
	User string // the authenticated user; "" without AUTH
	Data []byte
}

// Header returns a header field of the message ("" when absent or unparsable).
func (m SinkMessage) Header(name string) string {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return ""
	}
	return msg.Header.Get(name)
}

// SMTPOptions configure an SMTP sink.
type SMTPOptions struct {
	// User and Password, when set, require AUTH PLAIN (or XOAUTH2 with
	// Token, or Password when Token is empty, as the bearer token) before
	// MAIL FROM. Bad credentials fail with 535; a bad XOAUTH2 token first
	// gets Gmail's JSON challenge, then 535 after the client's empty answer.
	User, Password string
	Token          string
	// Bearer, when set, decides which bearer tokens XOAUTH2 and
	// OAUTHBEARER accept for the user (e.g. (*OAuth2).Valid), instead of
	// Token. A refused OAUTHBEARER token gets the RFC 7628 JSON challenge,
	// then 535.
	Bearer func(user, token string) bool
	// Mechanisms, when set, are the only SASL mechanisms offered and
	// accepted (e.g. [LOGIN], as some servers offer nothing else); any
	// other is answered 504 5.7.4, as go-smtp answers an unknown one.
	Mechanisms []string

	// TLS, when set, offers STARTTLS with this configuration (see
	// SelfSigned); with ImplicitTLS the listener speaks TLS from the first
	// byte instead. With TLS set, AUTH is accepted only over TLS, so a
	// successful AUTH proves the client used it.
	TLS         *tls.Config
	ImplicitTLS bool

	// Reject makes RCPT TO an address (compared case-insensitively) fail
	// with its error, e.g. &smtp.SMTPError{Code: 550, ...} for a permanent
	// rejection or Code 451 for a temporary one.
	Reject map[string]error
}

// SMTPSink is an in-process SMTP server on loopback that records every
// message it accepts. FailNext makes the next submissions fail, Refuse every
// one until lifted.
type SMTPSink struct {
	Addr string

	opts SMTPOptions
	srv  *smtp.Server

	mu       sync.Mutex
	msgs     []SinkMessage
	failNext []error
	refusal  error // every DATA fails with it while set
	auths    []string
	notify   chan struct{}
}

// StartSMTPSink starts an SMTP sink for the test.
func StartSMTPSink(t testing.TB, opts SMTPOptions) *SMTPSink {
	t.Helper()
	s := &SMTPSink{opts: opts, notify: make(chan struct{}, 1024)}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &sinkSession{s: s}, nil
	}))
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = opts.TLS == nil
	if opts.TLS != nil && !opts.ImplicitTLS {
		s.srv.TLSConfig = opts.TLS
	}
	s.srv.ReadTimeout = time.Minute
	s.srv.WriteTimeout = time.Minute
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: smtp listen: %v", err)
	}
	s.Addr = ln.Addr().String()
	if opts.TLS != nil && opts.ImplicitTLS {
		ln = tls.NewListener(ln, opts.TLS)
	}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// Messages returns a copy of what was accepted so far, in order.
func (s *SMTPSink) Messages() []SinkMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SinkMessage(nil), s.msgs...)
}

// Accepted receives a value each time a message is accepted.
func (s *SMTPSink) Accepted() <-chan struct{} { return s.notify }

// WaitFor waits (without a deadline of its own: the test binary's -timeout
// bounds it) until cond holds, checking after every acceptance or tick.
func (s *SMTPSink) WaitFor(t testing.TB, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-s.Accepted():
		case <-tick.C:
		}
	}
}

// Auths lists the SASL mechanisms clients authenticated with.
func (s *SMTPSink) Auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

// FailNext makes the next len(errs) DATA commands fail with errs in order
// (e.g. &smtp.SMTPError{Code: 451, ...} for a temporary failure).
func (s *SMTPSink) FailNext(errs ...error) {
	s.mu.Lock()
	s.failNext = append(s.failNext, errs...)
	s.mu.Unlock()
}

// Refuse makes every DATA command fail with err (e.g. &smtp.SMTPError{Code:
// 451, ...}, a server that refuses for now) until Refuse(nil).
func (s *SMTPSink) Refuse(err error) {
	s.mu.Lock()
	s.refusal = err
	s.mu.Unlock()
}

// CountByHeader counts accepted messages per value of a header field (e.g.
// In-Reply-To), to find duplicates.
func (s *SMTPSink) CountByHeader(name string) map[string]int {
	out := map[string]int{}
	for _, m := range s.Messages() {
		out[m.Header(name)]++
	}
	return out
}

type sinkSession struct {
	s    *SMTPSink
	user string // authenticated user
	from string
	to   []string
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (ss *sinkSession) AuthMechanisms() []string {
	if ss.s.opts.User == "" {
		return nil
	}
	if m := ss.s.opts.Mechanisms; m != nil {
		return m
	}
	return []string{sasl.Plain, "XOAUTH2", sasl.OAuthBearer}
}

// bearerOK reports whether token is accepted for user.
func (ss *sinkSession) bearerOK(user, token string) bool {
	if ss.s.opts.Bearer != nil {
		return ss.s.opts.Bearer(user, token)
	}
	want := ss.s.opts.Token
	if want == "" {
		want = ss.s.opts.Password
	}
	return user == ss.s.opts.User && token == want
}

func (ss *sinkSession) Auth(mech string) (sasl.Server, error) {
	if m := ss.s.opts.Mechanisms; m != nil && !slices.Contains(m, mech) {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	switch mech {
	case sasl.Login:
		return &loginServer{check: func(user, pass string) error {
			if user != ss.s.opts.User || pass != ss.s.opts.Password {
				return smtp.ErrAuthFailed
			}
			ss.authOK(mech, user)
			return nil
		}}, nil
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, username, password string) error {
			if username != ss.s.opts.User || password != ss.s.opts.Password {
				return smtp.ErrAuthFailed
			}
			ss.authOK(mech, username)
			return nil
		}), nil
	case "XOAUTH2":
		return &xoauth2Server{challenge: true, check: func(user, token string) error {
			if !ss.bearerOK(user, token) {
				return smtp.ErrAuthFailed
			}
			ss.authOK(mech, user)
			return nil
		}}, nil
	case sasl.OAuthBearer:
		return authFailed{sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			if !ss.bearerOK(o.Username, o.Token) {
				return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
			}
			ss.authOK(mech, o.Username)
			return nil
		})}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (ss *sinkSession) authOK(mech, user string) {
	ss.user = user
	ss.s.mu.Lock()
	ss.s.auths = append(ss.s.auths, mech)
	ss.s.mu.Unlock()
}

func (ss *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.User != "" && ss.user == "" {
		return errAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	for addr, err := range ss.s.opts.Reject {
		if strings.EqualFold(addr, to) {
			return err
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *sinkSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	if err := ss.s.refusal; err != nil {
		ss.s.mu.Unlock()
		return err
	}
	if len(ss.s.failNext) > 0 {
		err := ss.s.failNext[0]
		ss.s.failNext = ss.s.failNext[1:]
		ss.s.mu.Unlock()
		return err
	}
	ss.s.msgs = append(ss.s.msgs, SinkMessage{From: ss.from, To: append([]string(nil), ss.to...), User: ss.user, Data: data})
	ss.s.mu.Unlock()
	select {
	case ss.s.notify <- struct{}{}:
	default:
	}
	return nil
}

func (ss *sinkSession) Reset()        { ss.from, ss.to = "", nil }
func (ss *sinkSession) Logout() error { return nil }

// authFailed reports a failed SASL exchange as 535, as mail servers do
// (go-smtp answers other errors with 454, temporary).
type authFailed struct{ sasl.Server }

func (a authFailed) Next(response []byte) ([]byte, bool, error) {
	ch, done, err := a.Server.Next(response)
	if err != nil {
		var se *smtp.SMTPError
		if !errors.As(err, &se) {
			err = smtp.ErrAuthFailed
		}
	}
	return ch, done, err
}

// xoauth2Server is the server side of SASL XOAUTH2:
// "user=" user "\x01auth=Bearer " token "\x01\x01". With challenge, a
// failed check first sends Gmail's JSON error challenge and reports the
// failure after the client's (empty) answer, as Gmail and Outlook do.
type xoauth2Server struct {
	check     func(user, token string) error
	challenge bool
	done      bool
	failed    error
}

func (x *xoauth2Server) Next(response []byte) ([]byte, bool, error) {
	if x.failed != nil {
		return nil, true, x.failed
	}
	if x.done {
		return nil, true, errors.New("unexpected response")
	}
	if response == nil {
		return []byte{}, false, nil
	}
	x.done = true
	var user, token string
	for _, part := range strings.Split(string(response), "\x01") {
		switch {
		case strings.HasPrefix(part, "user="):
			user = strings.TrimPrefix(part, "user=")
		case strings.HasPrefix(part, "auth=Bearer "):
			token = strings.TrimPrefix(part, "auth=Bearer ")
		}
	}
	if err := x.check(user, token); err != nil {
		if x.challenge {
			x.failed = err
			return []byte(`{"status":"401","schemes":"bearer"}`), false, nil
		}
		return nil, true, err
	}
	return nil, true, nil
}

// loginServer is the server side of AUTH LOGIN (draft-murchison-sasl-login):
// the "Username:" and "Password:" challenges, then the check. go-sasl has
// only the client.
type loginServer struct {
	step  int
	user  string
	check func(user, pass string) error
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	l.step++
	switch l.step {
	case 1:
		if response != nil { // an initial response is the user name
			l.user = string(response)
			l.step++
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 2:
		l.user = string(response)
		return []byte("Password:"), false, nil
	default:
		return nil, true, l.check(l.user, string(response))
	}
}
