package decision_test

import (
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
