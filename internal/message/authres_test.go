package message

import (
	"strings"
	"testing"
)

func TestAuthenticated(t *testing.T) {
	mx := []string{"mx.shop.example"}
	msg := func(from string, fields ...string) *Message {
		raw := ""
		for _, f := range fields {
			raw += "Authentication-Results: " + f + "\r\n"
		}
		m, err := Parse([]byte(raw + "From: " + from + "\r\nReply-To: friend@elsewhere.example\r\nSubject: x\r\n\r\nhi\r\n"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name    string
		m       *Message
		trusted []string
		pass    bool
		method  string
	}{
		{"dmarc pass on top", msg("anna@firm.example", "mx.shop.example; spf=pass smtp.mailfrom=firm.example; dmarc=pass (p=none dis=none) header.from=firm.example"), mx, true, "dmarc"},
		{"authserv-id case", msg("anna@firm.example", "MX.Shop.Example; dmarc=pass header.from=FIRM.example"), mx, true, "dmarc"},
		{"dkim aligned, a comment with a semicolon", msg("anna@firm.example", "mx.shop.example;\r\n dkim=pass (1024-bit key; unprotected) header.d=firm.example header.i=@firm.example; dmarc=fail header.from=firm.example"), mx, true, "dkim"},
		{"dkim of another domain", msg("anna@firm.example", "mx.shop.example; dkim=pass header.d=mailer.example; dmarc=none header.from=firm.example"), mx, false, ""},
		{"dmarc pass for another From", msg("anna@firm.example", "mx.shop.example; dmarc=pass header.from=evil.example"), mx, false, ""},
		{"dmarc fail", msg("anna@firm.example", "mx.shop.example; dmarc=fail header.from=firm.example; dkim=fail header.d=firm.example"), mx, false, ""},
		{"the second of two trusted fields", msg("anna@firm.example", "mx.shop.example; spf=none", "mx.shop.example; dkim=pass header.d=firm.example"), mx, true, "dkim"},
		{"a stranger's pass below the server's own fail", msg("anna@firm.example", "mx.shop.example; dkim=fail header.d=firm.example; dmarc=fail header.from=firm.example", "mx.shop.example; dkim=pass header.d=firm.example; dmarc=pass header.from=firm.example"), mx, false, ""},
		{"a stranger's field below another server's", msg("anna@firm.example", "relay.other.example; dkim=none", "mx.shop.example; dmarc=pass header.from=firm.example"), mx, false, ""},
		{"an untrusted server's pass", msg("anna@firm.example", "evil.example; dmarc=pass header.from=firm.example"), mx, false, ""},
		{"nothing trusted configured", msg("anna@firm.example", "mx.shop.example; dmarc=pass header.from=firm.example"), nil, false, ""},
		{"two From mailboxes", msg("anna@firm.example, bob@firm.example", "mx.shop.example; dmarc=pass header.from=firm.example"), mx, false, ""},
		{"no field", msg("anna@firm.example"), mx, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.m.Authenticated(tt.trusted)
			if a.Pass != tt.pass || a.Method != tt.method || a.Detail == "" {
				t.Errorf("Authenticated = %+v, want pass %v by %q with a detail", a, tt.pass, tt.method)
			}
		})
	}
}

func TestReplyAddress(t *testing.T) {
	tests := []struct {
		from, replyTo string
		auth          bool
		want          string
		setAside      bool
	}{
		{"anna@firm.example", "", false, "anna@firm.example", false},
		{"anna@firm.example", "office@FIRM.example", false, "office@FIRM.example", false},
		{"anna@firm.example", "victim@bank.example", false, "anna@firm.example", true},
		{"anna@firm.example", "anna@home.example", true, "anna@home.example", false},
		{"anna@firm.example", "anna@sub.firm.example", false, "anna@firm.example", true},
	}
	for _, tt := range tests {
		m := &Message{ReplyTo: tt.replyTo, FromMailboxes: 1}
		m.From.Address = tt.from
		if m.ReplyTo == "" {
			m.ReplyTo = tt.from
		}
		got, note := m.ReplyAddress(Authentication{Pass: tt.auth, Detail: "test"})
		if got != tt.want || (note != "") != tt.setAside || tt.setAside && !strings.Contains(note, tt.replyTo) {
			t.Errorf("From %s Reply-To %s auth %v: ReplyAddress = %q, %q; want %q (set aside %v)", tt.from, tt.replyTo, tt.auth, got, note, tt.want, tt.setAside)
		}
	}
}

func TestStripComments(t *testing.T) {
	for in, want := range map[string]string{
		`a; dkim=pass (1024-bit key; unprotected) header.d=x`: `a; dkim=pass   header.d=x`,
		`a (x (nested; y) \) z) b`:                            `a   b`,
		`a "quoted (not a comment)" b`:                        `a "quoted (not a comment)" b`,
		`a "q\"(" (c) b`:                                      `a "q\"("   b`,
	} {
		if got := stripComments(in); got != want {
			t.Errorf("stripComments(%q) = %q, want %q", in, got, want)
		}
	}
}
