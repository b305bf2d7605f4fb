package decision_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/decision"
)

// Settle keeps a statement only when the reply contains its quote, read
// as the reply writes it up to Unicode form, case, white space and
// typographic quotes; a verifier that invents or empties a quote is
// ignored, never obeyed.
func TestSettle(t *testing.T) {
	reply := "Dzień dobry,\n\nwymienimy  ekspres na nowy.\nOdbierze go „nasz” kurier jutro."
	st := func(q string) decision.Statement {
		return decision.Statement{Quote: q, Kind: decision.KindPromise, Reason: "r"}
	}
	for _, tt := range []struct {
		name    string
		listed  []decision.Statement
		verdict decision.Verdict
		flagged int
	}{
		{"nothing listed", nil, decision.VerifyPass, 0},
		{"exact quote", []decision.Statement{st("Odbierze go „nasz” kurier jutro.")}, decision.VerifyFlagged, 1},
		{"case, white space and quotes folded", []decision.Statement{st("WYMIENIMY ekspres\nna nowy")}, decision.VerifyFlagged, 1},
		{"typographic quotes as plain", []decision.Statement{st(`go "nasz" kurier`)}, decision.VerifyFlagged, 1},
		{"NFKC: full-width letters", []decision.Statement{st("ｗｙｍｉｅｎｉｍｙ ekspres")}, decision.VerifyFlagged, 1},
		{"invented quote", []decision.Statement{st("zwrócimy pieniądze")}, decision.VerifyPass, 0},
		{"empty quote", []decision.Statement{st("  \n")}, decision.VerifyPass, 0},
		{"one real, one invented", []decision.Statement{st("zwrócimy pieniądze"), st("kurier jutro")}, decision.VerifyFlagged, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := decision.Settle("m", reply, tt.listed)
			if v.Verdict != tt.verdict || len(v.Flagged) != tt.flagged || len(v.Flagged)+len(v.Ignored) != len(tt.listed) || v.Model != "m" {
				t.Errorf("%+v, want %s with %d flagged of %d", v, tt.verdict, tt.flagged, len(tt.listed))
			}
		})
	}
}

// A statement's quote and reason are kept to MaxQuote bytes; the quote is
// matched before it is cut.
func TestSettleBounds(t *testing.T) {
	long := strings.Repeat("słowo ", 200)
	v := decision.Settle("m", long, []decision.Statement{{Quote: long, Kind: decision.KindFact, Reason: long}})
	if v.Verdict != decision.VerifyFlagged || len(v.Flagged[0].Quote) > decision.MaxQuote+len("…") || len(v.Flagged[0].Reason) > decision.MaxQuote+len("…") {
		t.Errorf("verdict %s, quote %d bytes, reason %d bytes; want flagged within %d", v.Verdict, len(v.Flagged[0].Quote), len(v.Flagged[0].Reason), decision.MaxQuote)
	}
}

func TestReplyText(t *testing.T) {
	got := decision.ReplyText("Dzień dobry,\n> zwrócicie mi pieniądze?\n  > tak\nnaprawimy go.\n")
	if diff := cmp.Diff("Dzień dobry,\nnaprawimy go.\n", got); diff != "" {
		t.Error(diff)
	}
}

func TestCheckStatements(t *testing.T) {
	ok := make([]decision.Statement, decision.MaxStatements)
	for i := range ok {
		ok[i] = decision.Statement{Quote: "q", Kind: decision.StatementKinds[i%len(decision.StatementKinds)]}
	}
	if err := decision.CheckStatements(ok); err != nil {
		t.Errorf("%d statements of known kinds: %v", len(ok), err)
	}
	if err := decision.CheckStatements(append(ok, ok[0])); err == nil || !strings.Contains(err.Error(), "at most 20") {
		t.Errorf("over the bound: %v", err)
	}
	if err := decision.CheckStatements([]decision.Statement{{Quote: "q", Kind: "opinion"}}); err == nil || !strings.Contains(err.Error(), `kind "opinion"`) {
		t.Errorf("unknown kind: %v", err)
	}
}
