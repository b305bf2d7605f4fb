package mail

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"
)

// sink is a go-smtp backend that keeps every accepted message.
type sink struct {
	mu       sync.Mutex
	msgs     []sunk
	user     string
	password string
	token    string
}

type sunk struct {
	From, To, User string
	Data           []byte
}

func (b *sink) NewSession(c *smtp.Conn) (smtp.Session, error) { return &sinkSession{b: b}, nil }

func (b *sink) messages() []sunk {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]sunk(nil), b.msgs...)
}

type sinkSession struct {
	b    *sink
	user string
	from string
	to   []string
}

func (s *sinkSession) AuthMechanisms() []string { return []string{sasl.Plain, "XOAUTH2"} }

func (s *sinkSession) Auth(mech string) (sasl.Server, error) {
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, user, pass string) error {
			if user != s.b.user || pass != s.b.password {
				return smtp.ErrAuthFailed
			}
			s.user = user
			return nil
		}), nil
	case "XOAUTH2":
		return &xoauth2Server{s: s}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

// xoauth2Server checks "user=U\x01auth=Bearer T\x01\x01"; on failure it sends
// the JSON challenge and fails after the client's empty answer, as Gmail does.
type xoauth2Server struct {
	s      *sinkSession
	failed bool
}

func (x *xoauth2Server) Next(resp []byte) ([]byte, bool, error) {
	if x.failed {
		return nil, false, smtp.ErrAuthFailed
	}
	want := "user=" + x.s.b.user + "\x01auth=Bearer " + x.s.b.token + "\x01\x01"
	if string(resp) == want {
		x.s.user = x.s.b.user
		return nil, true, nil
	}
	x.failed = true
	return []byte(`{"status":"401","schemes":"bearer"}`), false, nil
}

func (s *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.b.user != "" && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	switch {
	case strings.HasPrefix(to, "busy@"):
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	case strings.HasPrefix(to, "nobody@"):
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *sinkSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	for _, to := range s.to {
		s.b.msgs = append(s.b.msgs, sunk{From: s.from, To: to, User: s.user, Data: data})
	}
	return nil
}

func (s *sinkSession) Reset()        { s.from, s.to = "", nil }
func (s *sinkSession) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "triage test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// startServer runs a go-smtp server on 127.0.0.1:0; mode is the TLS mode
// the client will use.
func startServer(t *testing.T, b *sink, mode string, cert tls.Certificate) string {
	t.Helper()
	srv := smtp.NewServer(b)
	srv.Domain = "localhost"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	// AUTH only over TLS: a successful AUTH proves STARTTLS/TLS happened.
	srv.AllowInsecureAuth = mode == TLSNone
	var l net.Listener
	var err error
	if mode == TLSImplicit {
		l, err = tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	} else {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func TestSMTPSend(t *testing.T) {
	cert, pool := selfSigned(t)
	reply := func(to string) *Reply {
		return &Reply{
			From: "Dział Wsparcia <support@example.com>", To: to, Subject: "Re: Gwarancja — SN-1",
			Body: "Dzień dobry,\ngwarancja jest ważna.", InReplyTo: "<in@example.org>",
			References: []string{"<in@example.org>"}, MessageID: "<triage-1@example.com>", Date: date,
		}
	}
	tests := []struct {
		name      string
		mode      string
		user      string
		pass      string
		token     string
		to        string
		wantUser  string
		wantErr   string // substring; "" means success
		temporary bool
	}{
		{name: "starttls + plain", mode: TLSStartTLS, user: "bot", pass: "s3cret", to: "jan@example.org", wantUser: "bot"},
		{name: "implicit tls + plain", mode: TLSImplicit, user: "bot", pass: "s3cret", to: "jan@example.org", wantUser: "bot"},
		{name: "starttls + xoauth2", mode: TLSStartTLS, user: "bot", token: "tok-123", to: "jan@example.org", wantUser: "bot"},
		{name: "loopback without tls or auth", mode: TLSNone, to: "jan@example.org"},
		{name: "bad password", mode: TLSStartTLS, user: "bot", pass: "wrong", to: "jan@example.org", wantErr: "auth: SMTP error 535"},
		{name: "bad token", mode: TLSStartTLS, user: "bot", token: "nope", to: "jan@example.org", wantErr: "auth: SMTP error 535"},
		{name: "451 is temporary", mode: TLSStartTLS, user: "bot", pass: "s3cret", to: "busy@example.org", wantErr: "rcpt: SMTP error 451", temporary: true},
		{name: "550 is permanent", mode: TLSStartTLS, user: "bot", pass: "s3cret", to: "nobody@example.org", wantErr: "rcpt: SMTP error 550"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &sink{user: "bot", password: "s3cret", token: "tok-123"}
			if tt.mode == TLSNone {
				b.user = ""
			}
			addr := startServer(t, b, tt.mode, cert)
			s, err := NewSMTP(SMTPConfig{
				Addr: addr, Username: tt.user, Password: tt.pass, Token: tt.token, TLS: tt.mode,
				Timeout: 10 * time.Second, TLSConfig: &tls.Config{RootCAs: pool},
			})
			if err != nil {
				t.Fatal(err)
			}
			r := reply(tt.to)
			rc, err := s.Send(context.Background(), r)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var te interface{ Temporary() bool }
				if !errors.As(err, &te) || te.Temporary() != tt.temporary {
					t.Errorf("Temporary() = %v, want %v (%v)", te != nil && te.Temporary(), tt.temporary, err)
				}
				if n := len(b.messages()); n != 0 {
					t.Errorf("%d messages delivered despite the error", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Receipt{MessageID: "<triage-1@example.com>", Status: StatusSent}, rc); diff != "" {
				t.Errorf("receipt (-want +got):\n%s", diff)
			}
			want, err := Render(reply(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			got := b.messages()
			if diff := cmp.Diff([]sunk{{From: "support@example.com", To: tt.to, User: tt.wantUser, Data: want}}, got); diff != "" {
				t.Errorf("delivered (-want +got):\n%s", diff)
			}
			if len(got) == 1 && !bytes.Contains(got[0].Data, []byte("Auto-Submitted: auto-replied\r\n")) {
				t.Errorf("delivered message lacks Auto-Submitted")
			}
		})
	}
}

func TestSMTPUntrustedCertificateIsPermanent(t *testing.T) {
	cert, _ := selfSigned(t)
	addr := startServer(t, &sink{user: "bot", password: "s3cret"}, TLSStartTLS, cert)
	s, err := NewSMTP(SMTPConfig{Addr: addr, Username: "bot", Password: "s3cret", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), &Reply{From: "support@example.com", To: "a@example.org", Subject: "s", Body: "b"})
	var te interface{ Temporary() bool }
	if err == nil || !errors.As(err, &te) || te.Temporary() {
		t.Errorf("err = %v, want a permanent certificate error", err)
	}
}

func TestSMTPTransportErrorIsTemporary(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	s, err := NewSMTP(SMTPConfig{Addr: addr, TLS: TLSNone, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), &Reply{From: "support@example.com", To: "a@example.org", Subject: "s", Body: "b"})
	var te interface{ Temporary() bool }
	if err == nil || !errors.As(err, &te) || !te.Temporary() || !strings.Contains(err.Error(), "mail: smtp: dial") {
		t.Errorf("err = %v, want a temporary dial error", err)
	}
}

func TestNewSMTP(t *testing.T) {
	tests := []struct {
		name    string
		cfg     SMTPConfig
		wantErr string
	}{
		{"no addr", SMTPConfig{}, "Addr is required"},
		{"no port", SMTPConfig{Addr: "mail.example.com"}, "Addr"},
		{"plaintext to a remote host", SMTPConfig{Addr: "mail.example.com:25", TLS: TLSNone}, "loopback"},
		{"unknown tls mode", SMTPConfig{Addr: "mail.example.com:25", TLS: "ssl"}, "starttls, tls or none"},
		{"password without user", SMTPConfig{Addr: "mail.example.com:587", Password: "x"}, "Username"},
		{"plaintext to localhost", SMTPConfig{Addr: "localhost:25", TLS: TLSNone}, ""},
		{"plaintext to ::1", SMTPConfig{Addr: "[::1]:25", TLS: TLSNone}, ""},
		{"defaults", SMTPConfig{Addr: "mail.example.com:587", Username: "u", Password: "p"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSMTP(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "mail: smtp: ") {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.cfg.TLS == "" || s.cfg.Timeout == 0 || s.cfg.TLSConfig.ServerName == "" {
				t.Errorf("defaults not applied: %+v", s.cfg)
			}
		})
	}
}

func TestSMTPRenderErrorSendsNothing(t *testing.T) {
	b := &sink{}
	cert, _ := selfSigned(t)
	addr := startServer(t, b, TLSNone, cert)
	s, err := NewSMTP(SMTPConfig{Addr: addr, TLS: TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), &Reply{From: "support@example.com", To: "a@example.org, b@example.org"})
	var se *SMTPError
	if !errors.As(err, &se) || se.Op != "render" || se.Temporary() {
		t.Errorf("err = %v, want a permanent render SMTPError", err)
	}
	if n := len(b.messages()); n != 0 {
		t.Errorf("%d messages delivered", n)
	}
}

// TestSMTPSilentServerTimesOut: a server that accepts but never greets must
// not hang Send past its context.
func TestSMTPSilentServerTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }()
		}
	}()
	s, err := NewSMTP(SMTPConfig{Addr: l.Addr().String(), TLS: TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = s.Send(ctx, &Reply{From: "support@example.com", To: "a@example.org", Subject: "s", Body: "b"})
	var se *SMTPError
	if !errors.As(err, &se) || !se.Temporary() || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a temporary deadline error", err)
	}
}
