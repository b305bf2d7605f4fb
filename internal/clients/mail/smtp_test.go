package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/testkit/mailtest"
)

var (
	rcptBusy   = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	rcptNobody = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
)

// startSink runs mailtest's SMTP sink in the TLS mode the client will use.
// With TLS, the sink accepts AUTH only over TLS, so a successful AUTH
// proves STARTTLS or implicit TLS happened. It requires AUTH (PLAIN with
// bot/s3cret, XOAUTH2 or OAUTHBEARER with bot/tok-123) unless mode is TLSNone, and rejects
// busy@example.org with 451 and nobody@example.org with 550.
func startSink(t *testing.T, mode string, serverTLS *tls.Config) *mailtest.SMTPSink {
	t.Helper()
	opts := mailtest.SMTPOptions{Reject: map[string]error{"busy@example.org": rcptBusy, "nobody@example.org": rcptNobody}}
	if mode != TLSNone {
		opts.User, opts.Password, opts.Token = "bot", "s3cret", "tok-123"
		opts.TLS, opts.ImplicitTLS = serverTLS, mode == TLSImplicit
	}
	return mailtest.StartSMTPSink(t, opts)
}

func TestSMTPSend(t *testing.T) {
	serverTLS, pool := mailtest.SelfSigned(t)
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
		wantAuths []string // mechanisms the sink saw succeed
		wantErr   string   // substring; "" means success
		temporary bool
	}{
		{name: "starttls + plain", mode: TLSStartTLS, user: "bot", pass: "s3cret", to: "jan@example.org", wantUser: "bot", wantAuths: []string{"PLAIN"}},
		{name: "implicit tls + plain", mode: TLSImplicit, user: "bot", pass: "s3cret", to: "jan@example.org", wantUser: "bot", wantAuths: []string{"PLAIN"}},
		{name: "starttls + static token", mode: TLSStartTLS, user: "bot", token: "tok-123", to: "jan@example.org", wantUser: "bot", wantAuths: []string{"OAUTHBEARER"}},
		{name: "loopback without tls or auth", mode: TLSNone, to: "jan@example.org"},
		{name: "bad password", mode: TLSStartTLS, user: "bot", pass: "wrong", to: "jan@example.org", wantErr: "auth: SMTP error 535"},
		{name: "bad token", mode: TLSStartTLS, user: "bot", token: "nope", to: "jan@example.org", wantErr: "auth: SMTP error 535"},
		{name: "451 is temporary", mode: TLSStartTLS, user: "bot", pass: "s3cret", to: "busy@example.org", wantErr: "rcpt: SMTP error 451", temporary: true},
		{name: "550 is permanent", mode: TLSStartTLS, user: "bot", pass: "s3cret", to: "nobody@example.org", wantErr: "rcpt: SMTP error 550"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := startSink(t, tt.mode, serverTLS)
			s, err := NewSMTP(SMTPConfig{
				Addr: sink.Addr, Username: tt.user, Password: tt.pass, Token: tt.token, TLS: tt.mode,
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
				if n := len(sink.Messages()); n != 0 {
					t.Errorf("%d messages delivered despite the error", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(triage.Receipt{MessageID: "<triage-1@example.com>", To: "jan@example.org"}, rc); diff != "" {
				t.Errorf("receipt (-want +got):\n%s", diff)
			}
			want, err := Render(reply(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			got := sink.Messages()
			if diff := cmp.Diff([]mailtest.SinkMessage{{From: "support@example.com", To: []string{tt.to}, User: tt.wantUser, Data: want}}, got); diff != "" {
				t.Errorf("delivered (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAuths, sink.Auths()); diff != "" {
				t.Errorf("auth mechanisms (-want +got):\n%s", diff)
			}
			if len(got) == 1 && !bytes.Contains(got[0].Data, []byte("Auto-Submitted: auto-replied\r\n")) {
				t.Errorf("delivered message lacks Auto-Submitted")
			}
		})
	}
}

func TestSMTPUntrustedCertificateIsPermanent(t *testing.T) {
	serverTLS, _ := mailtest.SelfSigned(t) // the client is not given the pool
	sink := startSink(t, TLSStartTLS, serverTLS)
	s, err := NewSMTP(SMTPConfig{Addr: sink.Addr, Username: "bot", Password: "s3cret", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), &Reply{From: "support@example.com", To: "a@example.org", Subject: "s", Body: "b"})
	var se *SMTPError
	var cve *tls.CertificateVerificationError
	if !errors.As(err, &se) || se.Temporary() || !errors.As(err, &cve) || se.Op != "starttls" {
		t.Errorf("err = %v, want a permanent certificate error labelled starttls", err)
	}
	if n := len(sink.Messages()); n != 0 {
		t.Errorf("%d messages delivered over an untrusted connection", n)
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
	sink := startSink(t, TLSNone, nil)
	s, err := NewSMTP(SMTPConfig{Addr: sink.Addr, TLS: TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), &Reply{From: "support@example.com", To: "a@example.org, b@example.org"})
	var se *SMTPError
	if !errors.As(err, &se) || se.Op != "render" || se.Temporary() {
		t.Errorf("err = %v, want a permanent render SMTPError", err)
	}
	if n := len(sink.Messages()); n != 0 {
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

// SMTP smuggling: a model's body with a lone "." line and bare CR/LF
// sequences ("\r.\n", "\n\r.\r\n") followed by SMTP commands. Render turns
// every line end into CRLF and the DATA writer dot-stuffs: the sink gets one
// message, to the one recipient, with the commands as body text.
func TestSMTPSmugglingInBody(t *testing.T) {
	sink := startSink(t, TLSNone, nil)
	s, err := NewSMTP(SMTPConfig{Addr: sink.Addr, TLS: TLSNone, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reply{From: "support@example.com", To: "jan@example.org", Subject: "Re: x", MessageID: "<triage-9@example.com>", Date: date}
	r.Body = "Dzień dobry\r.\nMAIL FROM:<eve@evil.example>\nRCPT TO:<victim@bank.example>\n\r.\r\nDATA\r\rSpam\n.\n"
	if _, err := s.Send(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	got := sink.Messages()
	if len(got) != 1 || !slices.Equal(got[0].To, []string{"jan@example.org"}) || got[0].From != "support@example.com" {
		t.Fatalf("delivered %d message(s): %+v", len(got), got)
	}
	if !bytes.Contains(got[0].Data, []byte("RCPT TO:<victim@bank.example>")) {
		t.Errorf("the smuggled commands are not body text:\n%s", got[0].Data)
	}
}
