package mail

import (
	"context"
	"errors"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/google/go-cmp/cmp"

	"triage/internal/testkit/mailtest"
)

// AUTH LOGIN: chosen when the server offers it and not PLAIN, or when
// configured; PLAIN otherwise. A refused LOGIN is permanent, like PLAIN.
func TestSMTPAuthLogin(t *testing.T) {
	tests := []struct {
		name      string
		offered   []string // nil: the sink's default (PLAIN, XOAUTH2, OAUTHBEARER)
		mechanism string
		pass      string
		wantAuths []string
		wantCode  int // the server's reply when the send fails
	}{
		{name: "only LOGIN offered", offered: []string{sasl.Login}, pass: "s3cret", wantAuths: []string{sasl.Login}},
		{name: "both offered: PLAIN", offered: []string{sasl.Login, sasl.Plain}, pass: "s3cret", wantAuths: []string{sasl.Plain}},
		{name: "configured login", offered: []string{sasl.Plain, sasl.Login}, mechanism: MechLogin, pass: "s3cret", wantAuths: []string{sasl.Login}},
		{name: "configured plain, only LOGIN offered", offered: []string{sasl.Login}, mechanism: MechPlain, pass: "s3cret", wantCode: 504},
		{name: "LOGIN with a wrong password", offered: []string{sasl.Login}, pass: "wrong", wantCode: 535},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "bot", Password: "s3cret", Mechanisms: tc.offered})
			s, err := NewSMTP(SMTPConfig{Addr: sink.Addr, TLS: TLSNone, Username: "bot", Password: tc.pass, Mechanism: tc.mechanism})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Send(context.Background(), &Reply{From: "support@example.com", To: "jan@example.org", Subject: "Re: x", Body: "ok", Date: date})
			if tc.wantCode != 0 {
				var se *SMTPError
				if !errors.As(err, &se) {
					t.Fatalf("err = %v, want an SMTPError", err)
				}
				if code, _ := se.Reply(); code != tc.wantCode || se.Temporary() || se.Op != "auth" {
					t.Errorf("err = %v (code %d, temporary %v), want a permanent %d at auth", err, code, se.Temporary(), tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantAuths, sink.Auths()); diff != "" {
				t.Errorf("mechanisms (-want +got):\n%s", diff)
			}
			if n := len(sink.Messages()); n != 1 {
				t.Errorf("sink accepted %d messages, want 1", n)
			}
		})
	}
	if _, err := NewSMTP(SMTPConfig{Addr: "127.0.0.1:25", TLS: TLSNone, Username: "bot", Password: "x", Mechanism: "cram-md5"}); err == nil {
		t.Error("mechanism cram-md5 accepted")
	}
}
