package dispatcher_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"triage/internal/clients/warranty"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/testkit/toolstest"
)

// shippedLexicon is the built-in commitments.yaml, compiled.
func shippedLexicon(t testing.TB) *decision.Lexicon {
	t.Helper()
	lex, err := instructions.LoadLexicon(nil)
	if err != nil {
		t.Fatal(err)
	}
	return lex
}

// lexSession is commitSession with the shipped lexicon: a complaint whose
// check_warranty answers res under the shipped policy has run.
func lexSession(t *testing.T, res warranty.Result) *dispatcher.Session {
	t.Helper()
	pol, err := instructions.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatcher.New(dispatcher.Config{
		Tools:    toolstest.Shipped(t),
		Builtins: map[string]dispatcher.Func{dispatcher.FuncCheckWarranty: dispatcher.For(dispatcher.CheckWarranty(fakeRegistry{res}, pol))},
		Routes:   okRoutes(dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail, dispatcher.FuncNotifyStaff),
		Lexicon:  shippedLexicon(t),
		Now:      func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := toolstest.Message()
	msg.Date = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	s := d.Session(msg, commitScenario(t, true), "k")
	if r := s.Call(context.Background(), dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "ABC-123456"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	s.StartTurn()
	return s
}

var guaranteeClaim = warranty.Result{Status: warranty.StatusValid, ExpirationDate: "2027-05-31", PurchaseDate: "2025-05-31", Buyer: "consumer"}

// A reply's words against its commitments and its decision's basis, per
// language: a promise it declares passes, one it does not is refused
// (naming the phrase), a negated one and one in a quoted line of the
// customer's pass, a status its basis does not allow is refused. The claim
// is statutory (repair, replacement, then price reduction, refund).
func TestLexiconPerLanguage(t *testing.T) {
	type lang struct {
		promise, phrase, negated, status string
	}
	langs := map[string]lang{
		"pl": {"Dzień dobry,\nbezpłatnie naprawimy ekspres.", "bezpłatnie naprawimy", "Niestety nie naprawimy ekspresu.", "Ekspres jest nadal objęty gwarancją."},
		"en": {"Hello,\nwe will repair the kettle.", "we will repair", "We cannot offer a free repair.", "The kettle is still under warranty."},
		"de": {"Guten Tag,\nwir reparieren das Gerät.", "wir reparieren", "Leider ist keine kostenlose Reparatur möglich.", "Das Gerät ist noch unter Garantie."},
		"fr": {"Bonjour,\nnous réparerons l'appareil.", "nous réparerons", "Nous ne proposons pas de réparation gratuite.", "L'appareil est sous garantie."},
		"es": {"Hola,\nrepararemos el aparato.", "repararemos", "No ofrecemos reparación gratuita.", "El aparato está en garantía."},
		"it": {"Buongiorno,\nripareremo l'apparecchio.", "ripareremo", "Non offriamo riparazione gratuita.", "L'apparecchio è in garanzia."},
		"cs": {"Dobrý den,\nopravíme spotřebič.", "opravíme", "Bohužel nelze provést bezplatnou opravu.", "Spotřebič je v záruce."},
	}
	for code, l := range langs {
		for _, tt := range []struct {
			name    string
			body    string
			commits []string
			refused string // a part of the refusal; "" accepted
		}{
			{"declared", l.promise, []string{"repair"}, ""},
			{"undeclared", l.promise, []string{"none"}, `"` + l.phrase + `" promise repair`},
			{"negated", l.negated, []string{"none"}, ""},
			{"quoted", "Odpowiadamy.\n\n> " + strings.ReplaceAll(l.promise, "\n", "\n> ") + "\n> " + l.status, []string{"none"}, ""},
			{"status on the wrong basis", l.status, []string{"none"}, "state under_guarantee, which only a decision on guarantee allows, and the decision is statutory"},
		} {
			t.Run(code+"/"+tt.name, func(t *testing.T) {
				s := lexSession(t, statutoryClaim)
				args := reply("statutory", tt.commits...)
				args["body"] = tt.body
				r := s.Call(context.Background(), dispatcher.FuncSendEmail, args)
				switch {
				case tt.refused == "" && r.Err != nil:
					t.Fatalf("refused: %v", r.Err)
				case tt.refused != "" && (r.Err == nil || r.Err.Code != dispatcher.CodeCommitmentNotAllowed || !strings.Contains(r.Err.Message, tt.refused)):
					t.Fatalf("got %v, want commitment_not_allowed saying %q", r.Err, tt.refused)
				}
			})
		}
	}
}

// The statuses on their bases, and the edges of matching: a negation in an
// earlier clause does not cancel a promise, a phrase written in other
// Unicode forms (full-width letters, decomposed diacritics) or across a
// line break is still found, a phrase inside a longer word is not.
func TestLexiconStatusesAndMatching(t *testing.T) {
	expired := warranty.Result{Status: warranty.StatusExpired, ExpirationDate: "2026-03-31", PurchaseDate: "2025-03-24", Buyer: "consumer"}
	for _, tt := range []struct {
		name    string
		res     warranty.Result
		basis   string
		body    string
		refused string
	}{
		{"under warranty on a guarantee", guaranteeClaim, "guarantee", "Your kettle is still under warranty.", ""},
		{"expired on a guarantee", guaranteeClaim, "guarantee", "Gwarancja wygasła.", `"gwarancja wygasła" state guarantee_expired`},
		{"expired on a statutory claim", expired, "statutory", "Gwarancja wygasła, ale przysługuje Pani reklamacja z tytułu niezgodności towaru z umową.", ""},
		{"no longer under warranty", expired, "statutory", "Your kettle is no longer under warranty.", ""},
		{"a negation in an earlier clause", expired, "statutory", "Nie martw się, wymienimy go.", `"wymienimy" promise replacement`},
		{"a negation in an earlier sentence", expired, "statutory", "Nie.\nWymienimy go.", `"wymienimy" promise replacement`},
		{"a negation too far before", expired, "statutory", "We do not think that we can offer you a free replacement quickly.", `"free replacement" promise replacement`},
		{"full-width letters", expired, "statutory", "\uff37\uff45 \uff57\uff49\uff4c\uff4c \uff52\uff45\uff46\uff55\uff4e\uff44 you.", `"we will refund" promise refund`},
		{"decomposed diacritics", guaranteeClaim, "guarantee", "Zwro\u0301cimy pieniądze.", `"zwrócimy pieniądze" promise refund`},
		{"across a line break", expired, "statutory", "We will\nreplace it.", `"we will replace" promise replacement`},
		{"inside a longer word", expired, "statutory", "Naprawimyśmy (sic) nic.", ""},
		{"in the subject only", expired, "statutory", "Odpowiadamy w sprawie reklamacji.", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := lexSession(t, tt.res)
			args := reply(tt.basis, "none")
			args["body"] = tt.body
			args["subject"] = "Re: Wymienimy? Full refund?"
			r := s.Call(context.Background(), dispatcher.FuncSendEmail, args)
			switch {
			case tt.refused == "" && r.Err != nil:
				t.Fatalf("refused: %v", r.Err)
			case tt.refused != "" && (r.Err == nil || !strings.Contains(r.Err.Message, tt.refused)):
				t.Fatalf("got %v, want a refusal saying %q", r.Err, tt.refused)
			}
		})
	}
}

// BenchmarkLexicon is the lexicon's check of a typical reply (some 150
// words with a quoted customer message): well under 0.2 ms.
func BenchmarkLexicon(b *testing.B) {
	lex := shippedLexicon(b)
	body := strings.Repeat("Dzień dobry, dziękujemy za wiadomość. Gwarancja dla urządzenia o numerze seryjnym SN-48213-PL wygasła 31 marca 2026. "+
		"Urządzenie jest jednak nadal objęte ustawową odpowiedzialnością sprzedawcy, w jej ramach bezpłatnie naprawimy urządzenie lub wymienimy je na nowe.\n", 3) +
		"\n> Dzień dobry, mój ekspres nie działa, proszę o wymianę na nowy albo pełny zwrot pieniędzy.\n> Anna\n"
	b.ReportAllocs()
	for b.Loop() {
		if len(lex.Find(body)) == 0 {
			b.Fatal("nothing found")
		}
	}
}
