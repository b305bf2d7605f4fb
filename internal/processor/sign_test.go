package processor

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	embedded "triage/instructions"
	"triage/internal/clients/mail"
	"triage/internal/instructions"
	"triage/internal/language"
)

// capture is a mail.Sender that keeps what it was given.
type capture struct{ got *mail.Reply }

func (c *capture) Send(_ context.Context, r *mail.Reply) (triage.Receipt, error) {
	cp := *r
	c.got = &cp
	return triage.Receipt{}, nil
}

// TestReplySignerLanguages: a reply is signed in its own language when
// main.md has a style for it (pl, en, de), in replies_fallback (en) when it
// has none (French, Japanese), and a reply too short to tell in the
// inbox's default language.
func TestReplySignerLanguages(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		t.Fatal(err)
	}
	det, err := language.New(language.Config{Default: "pl"})
	if err != nil {
		t.Fatal(err)
	}
	type signed struct{ From, Last string }
	tests := []struct {
		body string
		want signed
	}{
		{"Dzień dobry,\n\ngwarancja jest ważna do 2027-05-31. Utworzyliśmy zgłoszenie.", signed{`"Serwis gwarancyjny" <serwis@example.com>`, "Zespół serwisu gwarancyjnego"}},
		{"Hello,\n\nthe warranty is valid until 2027-05-31. We opened a ticket for you.", signed{`"Warranty Service" <serwis@example.com>`, "Warranty Support Team"}},
		{"Guten Tag,\n\ndie Garantie ist bis 2027-05-31 gültig. Wir haben eine Anfrage angelegt.", signed{`"Garantieservice" <serwis@example.com>`, "Ihr Garantieservice-Team"}},
		{"Bonjour,\n\nla garantie est valable jusqu'au 2027-05-31. Nous avons ouvert une demande.", signed{`"Warranty Service" <serwis@example.com>`, "Warranty Support Team"}},
		{"こんにちは。保証は2027-05-31まで有効です。", signed{`"Warranty Service" <serwis@example.com>`, "Warranty Support Team"}},
		{"OK.", signed{`"Serwis gwarancyjny" <serwis@example.com>`, "Zespół serwisu gwarancyjnego"}},
	}
	for _, tt := range tests {
		c := &capture{}
		s := replySigner(c, set, det)
		if _, err := s.Send(context.Background(), &mail.Reply{From: "serwis@example.com", To: "a@example.org", Subject: "Re: x", Body: tt.body}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(c.got.Body), "\n")
		got := signed{c.got.From, lines[len(lines)-1]}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.body, diff)
		}
	}
}
