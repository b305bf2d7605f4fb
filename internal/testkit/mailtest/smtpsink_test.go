package mailtest

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"
)

// xoauth2 is a client for SASL XOAUTH2 that records the server's challenge
// and answers it with an empty response, as Gmail clients must.
type xoauth2 struct {
	user, token string
	challenge   string
}

func (x *xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x *xoauth2) Next(challenge []byte) ([]byte, error) {
	x.challenge = string(challenge)
	return []byte{}, nil
}

// TestSMTPSinkKnobs covers TLS (STARTTLS and implicit), AUTH only over TLS,
// PLAIN and XOAUTH2 with a separate Token, 535 on bad credentials after the
// XOAUTH2 challenge, and per-recipient rejections.
func TestSMTPSinkKnobs(t *testing.T) {
	serverTLS, pool := SelfSigned(t)
	clientTLS := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	reject := map[string]error{"Busy@example.com": &smtpErr451}
	tests := []struct {
		name          string
		implicit      bool
		plain         bool // STARTTLS skipped
		auth          sasl.Client
		to            string
		wantAuthCode  int // 0: AUTH succeeds
		wantRcptCode  int // 0: RCPT succeeds
		wantChallenge string
		wantAuths     []string
	}{
		{name: "starttls plain", auth: sasl.NewPlainClient("", "u", "p"), to: "b@example.com", wantAuths: []string{"PLAIN"}},
		{name: "implicit tls xoauth2", implicit: true, auth: &xoauth2{user: "u", token: "tok"}, to: "b@example.com", wantAuths: []string{"XOAUTH2"}},
		{name: "password is not the token", auth: &xoauth2{user: "u", token: "p"}, wantAuthCode: 535, wantChallenge: `{"status":"401","schemes":"bearer"}`},
		{name: "bad password", auth: sasl.NewPlainClient("", "u", "nope"), wantAuthCode: 535},
		{name: "rejected recipient", auth: sasl.NewPlainClient("", "u", "p"), to: "busy@EXAMPLE.com", wantRcptCode: 451, wantAuths: []string{"PLAIN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := StartSMTPSink(t, SMTPOptions{User: "u", Password: "p", Token: "tok", TLS: serverTLS, ImplicitTLS: tt.implicit, Reject: reject})
			var c *gosmtp.Client
			var err error
			if tt.implicit {
				c, err = gosmtp.DialTLS(s.Addr, clientTLS)
			} else {
				c, err = gosmtp.DialStartTLS(s.Addr, clientTLS)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, ok := c.TLSConnectionState(); !ok {
				t.Error("connection is not TLS")
			}
			err = c.Auth(tt.auth)
			if got := smtpCode(err); got != tt.wantAuthCode {
				t.Fatalf("AUTH: %v, want code %d", err, tt.wantAuthCode)
			}
			if x, ok := tt.auth.(*xoauth2); ok && x.challenge != tt.wantChallenge {
				t.Errorf("XOAUTH2 challenge %q, want %q", x.challenge, tt.wantChallenge)
			}
			if err != nil {
				return
			}
			if err := c.Mail("a@example.com", nil); err != nil {
				t.Fatal(err)
			}
			err = c.Rcpt(tt.to, nil)
			if got := smtpCode(err); got != tt.wantRcptCode {
				t.Fatalf("RCPT: %v, want code %d", err, tt.wantRcptCode)
			}
			if err == nil {
				w, err := c.Data()
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte(testMsg))
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				want := []SinkMessage{{From: "a@example.com", To: []string{tt.to}, User: "u", Data: []byte(testMsg)}}
				if diff := cmp.Diff(want, s.Messages()); diff != "" {
					t.Errorf("messages (-want +got):\n%s", diff)
				}
			} else if n := len(s.Messages()); n != 0 {
				t.Errorf("%d messages accepted", n)
			}
			if diff := cmp.Diff(tt.wantAuths, s.Auths()); diff != "" {
				t.Errorf("auths (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSMTPSinkAuthOnlyOverTLS: with TLS configured, a client that skips
// STARTTLS is not offered AUTH and cannot submit.
func TestSMTPSinkAuthOnlyOverTLS(t *testing.T) {
	serverTLS, _ := SelfSigned(t)
	s := StartSMTPSink(t, SMTPOptions{User: "u", Password: "p", TLS: serverTLS})
	c, err := gosmtp.Dial(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Error("STARTTLS not offered")
	}
	if c.SupportsAuth(sasl.Plain) {
		t.Error("AUTH PLAIN offered before TLS")
	}
	if err := c.Mail("a@example.com", nil); smtpCode(err) != 530 {
		t.Errorf("MAIL without AUTH: %v, want 530", err)
	}
}

// smtpCode is the reply code of an SMTP error, 0 for nil, -1 otherwise.
func smtpCode(err error) int {
	if err == nil {
		return 0
	}
	var se *gosmtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return -1
}

// Refuse fails every DATA with its error until lifted; then the sink
// accepts again.
func TestSMTPSinkRefuse(t *testing.T) {
	s := StartSMTPSink(t, SMTPOptions{})
	send := func() error {
		c, err := gosmtp.Dial(s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.SendMail("a@example.com", []string{"b@example.com"}, strings.NewReader(testMsg))
	}
	s.Refuse(&smtpErr451)
	for i := range 2 {
		if err := send(); smtpCode(err) != 451 {
			t.Errorf("submission %d while refusing: %v, want 451", i, err)
		}
	}
	s.Refuse(nil)
	if err := send(); err != nil {
		t.Fatalf("after Refuse(nil): %v", err)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("%d messages accepted, want 1", n)
	}
}
