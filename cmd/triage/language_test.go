package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomail "github.com/emersion/go-message/mail"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/instructions"
	"triage/internal/clients/mail"
	"triage/internal/language"
	"triage/internal/scenario"
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
	set, err := scenario.Load(instructions.FS, nil)
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

// TestProcessGermanCustomer: triage process labels a German email de,
// the offline stand-in answers in German (saying it is a stand-in) and
// the reply is signed in German.
func TestProcessGermanCustomer(t *testing.T) {
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox,
		"testdata/language/de.eml", "testdata/language/fr.eml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var langs []string
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var o struct{ Language, Status string }
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		langs = append(langs, o.Status+"/"+o.Language)
	}
	if diff := cmp.Diff([]string{"replied/de", "replied/fr"}, langs); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	german := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gomail.CreateReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		to, _ := r.Header.AddressList("To")
		from, _ := r.Header.AddressList("From")
		p, err := r.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(p.Body)
		text := strings.TrimSpace(string(body))
		if to[0].Address != "klaus.becker@example.de" {
			continue
		}
		german++
		if from[0].Name != "Garantieservice" || !strings.HasPrefix(text, "Guten Tag,") ||
			!strings.Contains(text, "Offline-Modell") || !strings.HasSuffix(text, "\nIhr Garantieservice-Team") {
			t.Errorf("German reply: From %q, body:\n%s", from[0].Name, text)
		}
	}
	if german != 1 {
		t.Errorf("%d German replies among %d", german, len(files))
	}
}
