package decision_test

import (
	"strings"
	"testing"

	"triage/internal/decision"
)

func TestFind(t *testing.T) {
	l, err := decision.CompileLexicon(&decision.LexiconSpec{
		NegationWindow: 2,
		Negations:      decision.Phrases{EN: []string{"not"}, PL: []string{"nie"}},
		Commitments: map[string]decision.Phrases{
			"repair":      {EN: []string{"free repair", "free repair at home"}, PL: []string{"naprawimy"}},
			"replacement": {EN: []string{"we'll replace"}},
		},
		Statuses: map[string]decision.StatusPhrases{"under_guarantee": {Bases: []decision.Basis{decision.Guarantee}, Phrases: decision.Phrases{EN: []string{"under warranty"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		body string
		want []string // phrases found, in order
	}{
		{"A FREE REPAIR at home, then a free repair.", []string{"free repair at home", "free repair"}},
		{"We’ll replace it.", []string{"we'll replace"}},                      // a typographic apostrophe
		{"It is not a free repair.", nil},                                     // within the window
		{"It is not, sadly, a free repair.", []string{"free repair"}},         // another clause
		{"Not that it matters much: a free repair.", []string{"free repair"}}, // another clause
		{"It is not in any way a free repair.", []string{"free repair"}},      // beyond the window
		{"> naprawimy\n>> under warranty\n  > free repair\nOK.", nil},         // quoted lines
		{"Nie naprawimy.\nUnder\nwarranty.", []string{"under warranty"}},      // negation per language, across a line break
		{"Under\n\nwarranty; free\n> x\nrepair.", nil},                        // a blank line and a quoted line end the clause
	} {
		var got []string
		for _, h := range l.Find(tt.body) {
			got = append(got, h.Phrase)
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) || (len(got) > 1 && got[1] != tt.want[1]) {
			t.Errorf("Find(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	var none *decision.Lexicon
	if hits := none.Find("free repair"); hits != nil {
		t.Errorf("a nil lexicon found %v", hits)
	}
}

// TestFindGapAndStems: up to Gap other words may stand between a phrase's
// words, in its clause and never a negation word; a stem ("zwrot*")
// matches every word it begins.
func TestFindGapAndStems(t *testing.T) {
	spec := func(gap int) *decision.LexiconSpec {
		return &decision.LexiconSpec{
			Gap:       gap,
			Negations: decision.Phrases{EN: []string{"not"}, PL: []string{"nie"}, DE: []string{"nicht"}},
			Commitments: map[string]decision.Phrases{
				"refund":      {PL: []string{"zwrócimy pieniądze", "zwrot* pieniędzy"}},
				"replacement": {EN: []string{"we will replace"}, DE: []string{"Gerät ersetzen"}},
			},
		}
	}
	l, err := decision.CompileLexicon(spec(2))
	if err != nil {
		t.Fatal(err)
	}
	tight, err := decision.CompileLexicon(spec(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		body       string
		want, gap0 bool
	}{
		{"Zwrócimy też pieniądze.", true, false},
		{"Zwrócimy Panu też pieniądze.", true, false},
		{"Zwrócimy Panu także całe pieniądze.", false, false}, // three words between
		{"We will of course replace it.", true, false},
		{"We will not replace it.", false, false},                             // a negation in the gap
		{"We will, of course, replace it.", false, false},                     // another clause
		{"Wir werden das Gerät selbstverständlich ersetzen.", true, false},    // gap 1
		{"Wir werden das Gerät leider nicht ersetzen.", false, false},         // a negation in the gap
		{"Gwarantujemy zwrotu pieniędzy w 14 dni.", true, true},               // a stem's inflection
		{"Zwrot pieniędzy nastąpi jutro.", true, true},                        // the stem itself
		{"Zwrotka pieniędzy.", true, true},                                    // any word it begins
		{"Nie przysługuje zwrot pieniędzy.", false, false},                    // negated before
		{"Zwroty pieniędzy są możliwe, ale nie zwrot pieniędzy.", true, true}, // found once, first
	} {
		if got := len(l.Find(tt.body)) > 0; got != tt.want {
			t.Errorf("gap 2: Find(%q) found %v, want %v", tt.body, got, tt.want)
		}
		if got := len(tight.Find(tt.body)) > 0; got != tt.gap0 {
			t.Errorf("gap 0: Find(%q) found %v, want %v", tt.body, got, tt.gap0)
		}
	}
}

func TestLexiconGapAndStemsValidated(t *testing.T) {
	for _, tt := range []struct {
		spec decision.LexiconSpec
		want string
	}{
		{decision.LexiconSpec{Gap: 5, Commitments: map[string]decision.Phrases{"repair": {EN: []string{"free repair"}}}}, "gap: 5: want 0 to 4 words"},
		{decision.LexiconSpec{Gap: -1, Commitments: map[string]decision.Phrases{"repair": {EN: []string{"free repair"}}}}, "gap: -1"},
		{decision.LexiconSpec{Commitments: map[string]decision.Phrases{"repair": {EN: []string{"re* it"}}}}, "a stem needs at least 3 letters"},
		{decision.LexiconSpec{Commitments: map[string]decision.Phrases{"repair": {EN: []string{"rep*air"}}}}, `may only end a word`},
	} {
		_, err := decision.CompileLexicon(&tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CompileLexicon: err %v, want %q", err, tt.want)
		}
	}
}
