package processor

import (
	"context"
	netmail "net/mail"
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

// TestReplySignerLanguages: a reply is signed, and carries the AI
// disclosure just above the signature and the From display name, in the
// language its body is written in (main.md has a style for each default
// language), whatever language it was to be written in: a Polish body to a
// Japanese customer is signed in Polish, not in English. A body too short
// to tell is signed in the reply's language (Reply.Language), else in the
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
	type signed struct{ From, Disclosure, Last string }
	style := func(lang string) signed {
		st := set.Replies[lang]
		return signed{(&netmail.Address{Name: st.FromName, Address: "serwis@example.com"}).String(), st.Disclosure, st.Signature}
	}
	tests := []struct {
		body, lang string
		want       signed
	}{
		{"Dzień dobry,\n\ngwarancja jest ważna do 2027-05-31. Utworzyliśmy zgłoszenie.", "", style("pl")},
		{"Dzień dobry,\n\ngwarancja jest ważna do 2027-05-31. Utworzyliśmy zgłoszenie.", "ja", style("pl")},
		{"Dzień dobry,\n\ngwarancja jest ważna do 2027-05-31. Utworzyliśmy zgłoszenie.", "ko", style("pl")},
		{"Hello,\n\nthe warranty is valid until 2027-05-31. We opened a ticket for you.", "fr", style("en")},
		{"Guten Tag,\n\ndie Garantie ist bis 2027-05-31 gültig. Wir haben eine Anfrage angelegt.", "", style("de")},
		{"Bonjour,\n\nla garantie est valable jusqu'au 2027-05-31. Nous avons ouvert une demande.", "fr", style("fr")},
		{"こんにちは。保証は2027-05-31まで有効です。", "ja", style("ja")},
		{"OK.", "", style("pl")},
		{"OK.", "de", style("de")},
	}
	for _, tt := range tests {
		c := &capture{}
		s := replySigner(c, set, det, true)
		if _, err := s.Send(context.Background(), &mail.Reply{From: "serwis@example.com", To: "a@example.org", Subject: "Re: x", Body: tt.body, Language: tt.lang}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(c.got.Body), "\n")
		got := signed{c.got.From, lines[len(lines)-3], lines[len(lines)-1]}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q to a customer in %q (-want +got):\n%s", tt.body, tt.lang, diff)
		}
	}
}

// TestReplySignerDisclosure: the AI disclosure of main.md is in each
// language's own words, is added once however often a reply is signed, and
// is left out when the switch is off (the signature stays); a staff notice
// carries neither.
func TestReplySignerDisclosure(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		t.Fatal(err)
	}
	det, err := language.New(language.Config{Default: "pl"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for lang, st := range set.Replies {
		if st.Disclosure == "" || strings.Contains(st.Disclosure, "\n") {
			t.Errorf("%s: disclosure %q, want one line", lang, st.Disclosure)
		}
		if other, dup := seen[st.Disclosure]; dup {
			t.Errorf("%s and %s share the disclosure %q", lang, other, st.Disclosure)
		}
		seen[st.Disclosure] = lang
	}
	en := set.Replies["en"].Disclosure
	body := "Hello,\n\nthe warranty is valid until 2027-05-31. We opened a ticket for you."
	send := func(disclose bool, r mail.Reply) string {
		t.Helper()
		c := &capture{}
		if _, err := replySigner(c, set, det, disclose).Send(context.Background(), &r); err != nil {
			t.Fatal(err)
		}
		return c.got.Body
	}
	once := send(true, mail.Reply{From: "serwis@example.com", To: "a@example.org", Body: body})
	want := body + "\n\n" + en + "\n\nWarranty Support Team\n"
	if once != want {
		t.Errorf("signed:\n%q\nwant\n%q", once, want)
	}
	if twice := send(true, mail.Reply{From: "serwis@example.com", To: "a@example.org", Body: once}); twice != want {
		t.Errorf("signed again:\n%q\nwant it unchanged\n%q", twice, want)
	}
	// The model wrote the Polish disclosure into an English reply.
	if got := send(true, mail.Reply{From: "serwis@example.com", To: "a@example.org", Body: body + "\n\n" + set.Replies["pl"].Disclosure, Language: "en"}); got != want {
		t.Errorf("a disclosure in the wrong language:\n%q\nwant\n%q", got, want)
	}
	if off := send(false, mail.Reply{From: "serwis@example.com", To: "a@example.org", Body: body}); off != body+"\n\nWarranty Support Team\n" {
		t.Errorf("--ai-disclosure=false:\n%q", off)
	}
	if n := send(true, mail.Reply{From: "serwis@example.com", To: "staff@example.com", Body: body, Notice: true}); n != body {
		t.Errorf("a staff notice was changed:\n%q", n)
	}
}
