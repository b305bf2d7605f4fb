package mail

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
)

type captured struct{ got []Reply }

func (c *captured) Send(_ context.Context, r *Reply) (triage.Receipt, error) {
	c.got = append(c.got, *r)
	return triage.Receipt{MessageID: r.MessageID}, nil
}

func TestSignerSignsInTheReplysLanguage(t *testing.T) {
	styles := map[string]Style{
		"pl": {FromName: "Serwis gwarancyjny", Signature: "Zespół serwisu gwarancyjnego"},
		"en": {FromName: "Warranty Service", Signature: "Warranty Support Team"},
	}
	lang := func(body string) (string, bool) {
		if strings.Contains(body, "Hello") {
			return "en", true
		}
		return "pl", true
	}
	tests := []struct {
		name, body, wantBody, wantFrom string
	}{
		{"english reply signed in English", "Hello Anna,\nyour warranty is valid.", "Hello Anna,\nyour warranty is valid.\n\nWarranty Support Team\n", `"Warranty Service" <serwis@example.com>`},
		{"polish reply signed in Polish", "Dzień dobry,\ngwarancja jest ważna.\n", "Dzień dobry,\ngwarancja jest ważna.\n\nZespół serwisu gwarancyjnego\n", `"Serwis gwarancyjny" <serwis@example.com>`},
		{"the model signed in the wrong language: replaced", "Hello Anna,\nvalid.\n\nZespół serwisu gwarancyjnego\n", "Hello Anna,\nvalid.\n\nWarranty Support Team\n", `"Warranty Service" <serwis@example.com>`},
		{"the model signed correctly: not doubled", "Hello Anna,\nvalid.\r\n\r\nWarranty Support Team", "Hello Anna,\nvalid.\n\nWarranty Support Team\n", `"Warranty Service" <serwis@example.com>`},
		{"signed before a note: moved to the end", "Hello Anna,\nvalid.\n\nKind regards,\nWarranty Support Team\n\n(An automatic reply.)\n", "Hello Anna,\nvalid.\n\nKind regards,\n\n(An automatic reply.)\n\nWarranty Support Team\n", `"Warranty Service" <serwis@example.com>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &captured{}
			s := &Signer{Next: c, Styles: styles, Language: lang, Default: "pl"}
			r := &Reply{From: "Serwis <serwis@example.com>", To: "anna@example.pl", Subject: "Re: x", Body: tt.body}
			if _, err := s.Send(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tt.wantBody, tt.wantFrom}, []string{c.got[0].Body, c.got[0].From}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if r.Body != tt.body {
				t.Errorf("the caller's reply was changed")
			}
		})
	}
	// A language without a style uses the default one; no styles: unchanged From.
	c := &captured{}
	s := &Signer{Next: c, Styles: map[string]Style{"pl": {Signature: "Zespół"}}, Language: func(string) (string, bool) { return "de", true }, Default: "pl"}
	if _, err := s.Send(context.Background(), &Reply{From: "Serwis <serwis@example.com>", To: "a@b.c", Body: "Guten Tag"}); err != nil {
		t.Fatal(err)
	}
	if c.got[0].Body != "Guten Tag\n\nZespół\n" || c.got[0].From != "Serwis <serwis@example.com>" {
		t.Errorf("default style: %q from %q", c.got[0].Body, c.got[0].From)
	}
}

// A reply is signed, and its From display name set, in the language its
// body is written in, whatever language it was to be written in
// (Reply.Language): a Polish body to a Japanese customer is signed in
// Polish, never in a third language. A body whose language cannot be told
// is signed in Reply.Language; a language without a style in the default
// one.
func TestSignerSignsInTheBodysLanguage(t *testing.T) {
	styles := map[string]Style{
		"pl": {FromName: "Serwis gwarancyjny", Signature: "Zespół serwisu gwarancyjnego"},
		"en": {FromName: "Warranty Service", Signature: "Warranty Support Team"},
		"de": {FromName: "Garantieservice", Signature: "Ihr Garantie-Team"},
	}
	told := func(b string) (string, bool) { // a stand-in for the detector
		switch {
		case strings.HasPrefix(b, "Dzień dobry"):
			return "pl", true
		case strings.HasPrefix(b, "Guten Tag"):
			return "de", true
		}
		return "pl", false
	}
	for _, tt := range []struct{ body, lang, wantSig, wantFrom string }{
		{"Dzień dobry,\ngwarancja jest ważna.", "ja", "Zespół serwisu gwarancyjnego", `"Serwis gwarancyjny" <serwis@example.com>`},
		{"Dzień dobry,\ngwarancja jest ważna.", "en", "Zespół serwisu gwarancyjnego", `"Serwis gwarancyjny" <serwis@example.com>`},
		{"Guten Tag,\nes ist gültig.", "pl", "Ihr Garantie-Team", `"Garantieservice" <serwis@example.com>`},
		{"OK.", " DE ", "Ihr Garantie-Team", `"Garantieservice" <serwis@example.com>`},
		{"OK.", "en", "Warranty Support Team", `"Warranty Service" <serwis@example.com>`},
		{"OK.", "fr", "Zespół serwisu gwarancyjnego", `"Serwis gwarancyjny" <serwis@example.com>`},
		{"OK.", "", "Zespół serwisu gwarancyjnego", `"Serwis gwarancyjny" <serwis@example.com>`},
	} {
		c := &captured{}
		s := &Signer{Next: c, Styles: styles, Language: told, Default: "pl"}
		r := &Reply{From: "Serwis <serwis@example.com>", To: "a@b.c", Body: tt.body, Language: tt.lang}
		if _, err := s.Send(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(c.got[0].Body, "\n\n"+tt.wantSig+"\n") || c.got[0].From != tt.wantFrom {
			t.Errorf("%q in Language %q: body %q from %q; want signed %q from %q", tt.body, tt.lang, c.got[0].Body, c.got[0].From, tt.wantSig, tt.wantFrom)
		}
	}
}

// The disclosure goes above the signature, in the style the signature is
// chosen by (the body's language, else the reply's, else the default), once:
// a reply signed again, or one where the model wrote a disclosure itself (in
// any configured language), still carries exactly one, its own. A style
// without a disclosure adds none; a staff notice is passed on unchanged.
func TestSignerDisclosesOnce(t *testing.T) {
	styles := map[string]Style{
		"pl": {FromName: "Serwis gwarancyjny", Signature: "Zespół serwisu", Disclosure: "Tę odpowiedź napisał asystent AI."},
		"en": {FromName: "Warranty Service", Signature: "Warranty Support Team", Disclosure: "An AI assistant wrote this reply."},
		"de": {FromName: "Garantieservice", Signature: "Ihr Garantie-Team"},
	}
	body := func(b string) (string, bool) {
		switch {
		case strings.HasPrefix(b, "Hello"):
			return "en", true
		case strings.HasPrefix(b, "Dzień"):
			return "pl", true
		}
		return "", false
	}
	tests := []struct {
		name, lang, body, want string
	}{
		{"the body's language over the reply's", "en", "Dzień dobry,\nważna.", "Dzień dobry,\nważna.\n\nTę odpowiedź napisał asystent AI.\n\nZespół serwisu\n"},
		{"the body's language", "", "Hello Anna,\nvalid.", "Hello Anna,\nvalid.\n\nAn AI assistant wrote this reply.\n\nWarranty Support Team\n"},
		{"a language without a style: the default's", "fr", "Bonjour,\nvalable.", "Bonjour,\nvalable.\n\nTę odpowiedź napisał asystent AI.\n\nZespół serwisu\n"},
		{"a style without a disclosure", "de", "Guten Tag,\ngültig.", "Guten Tag,\ngültig.\n\nIhr Garantie-Team\n"},
		{"signed already: not doubled", "en", "Hello Anna,\nvalid.\n\nAn AI assistant wrote this reply.\n\nWarranty Support Team\n", "Hello Anna,\nvalid.\n\nAn AI assistant wrote this reply.\n\nWarranty Support Team\n"},
		{"the model disclosed in the wrong language: replaced", "en", "Hello Anna,\nvalid.\n\n  Tę odpowiedź napisał asystent AI.\n", "Hello Anna,\nvalid.\n\nAn AI assistant wrote this reply.\n\nWarranty Support Team\n"},
		{"a disclosure mid-text: moved above the signature", "en", "Hello Anna,\nAn AI assistant wrote this reply.\nvalid.", "Hello Anna,\nvalid.\n\nAn AI assistant wrote this reply.\n\nWarranty Support Team\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &captured{}
			s := &Signer{Next: c, Styles: styles, Language: body, Default: "pl"}
			r := &Reply{From: "serwis@example.com", To: "anna@example.pl", Body: tt.body, Language: tt.lang}
			if _, err := s.Send(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if c.got[0].Body != tt.want {
				t.Errorf("body\n%q\nwant\n%q", c.got[0].Body, tt.want)
			}
			// Signing the signed reply again changes nothing.
			again := c.got[0]
			if _, err := s.Send(context.Background(), &again); err != nil {
				t.Fatal(err)
			}
			if c.got[1].Body != tt.want {
				t.Errorf("signed twice:\n%q\nwant\n%q", c.got[1].Body, tt.want)
			}
		})
	}
	c := &captured{}
	s := &Signer{Next: c, Styles: styles, Default: "en"}
	if _, err := s.Send(context.Background(), &Reply{From: "serwis@example.com", To: "staff@example.com", Body: "Anna asks for a person.", Notice: true}); err != nil {
		t.Fatal(err)
	}
	if c.got[0].Body != "Anna asks for a person." {
		t.Errorf("a notice was changed: %q", c.got[0].Body)
	}
}
