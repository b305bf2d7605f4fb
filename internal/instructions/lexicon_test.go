package instructions_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"triage/internal/decision"
	"triage/internal/instructions"
)

const goodLexicon = `negations:
  en: [not]
commitments:
  repair: {en: [we will repair]}
statuses:
  under_guarantee: {bases: [guarantee], en: [under warranty]}
`

// The built-in lexicon loads with the instructions; a directory without
// commitments.yaml gets it too.
func TestLoadLexiconBuiltIn(t *testing.T) {
	for _, dir := range []string{"", "testdata/basic"} {
		set, err := instructions.Load(dir, builtinNames)
		if err != nil {
			t.Fatal(err)
		}
		hits := set.Lexicon.Find("Wymienimy ekspres na nowy.")
		if len(hits) != 1 || hits[0].Commitment != decision.CommitReplacement {
			t.Errorf("%q: hits %+v", dir, hits)
		}
	}
}

// An instructions directory's commitments.yaml replaces the built-in one.
func TestLoadLexiconFS(t *testing.T) {
	l, err := instructions.LoadLexicon(fstest.MapFS{"commitments.yaml": {Data: []byte(goodLexicon)}})
	if err != nil {
		t.Fatal(err)
	}
	if hits := l.Find("We will repair it. It is not under warranty. Wymienimy."); len(hits) != 1 || hits[0].Phrase != "we will repair" {
		t.Errorf("hits %+v", hits)
	}
}

func TestParseLexiconErrors(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "\n", []string{"lexicon: commitments.yaml: empty"}},
		{"unknown key and language", "commitments:\n  repair: {en: [we will repair], pt: [vamos reparar]}\nstatus: {}\n",
			[]string{`line 2: unknown field "pt"`, `line 3: unknown field "status"`}},
		{"bad entries", `negation_window: -1
negations:
  en: [not, "no way"]
commitments:
  fix: {en: [we will fix]}
  none: {en: [nothing]}
  repair: {en: [we will repair, "We  will   REPAIR", "!!", "we will, repair"]}
  refund: {}
statuses:
  under_guarantee: {en: [under warranty]}
  expired: {bases: [gone], en: [expired]}
`, []string{
			`line 1: negation_window: -1 is negative`,
			`line 3: negations.en[1]: "no way" is not one word`,
			`line 5: commitments.fix: "fix" is not a commitment (one of repair, replacement, refund, price_reduction, paid_repair_quote, courier_pickup)`,
			`line 6: commitments.none: none is not checked against the reply's words`,
			`line 7: commitments.repair.en[1]: "We  will   REPAIR" is already listed at commitments.repair.en[0]`,
			`line 7: commitments.repair.en[2]: "!!" has no word`,
			`line 7: commitments.repair.en[3]: "we will, repair" has punctuation that ends a clause`,
			`line 8: commitments.refund: list at least one phrase`,
			`line 10: statuses.under_guarantee.bases: list the bases`,
			`line 11: statuses.expired.bases[0]: "gone" is not a basis`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := instructions.ParseLexicon("commitments.yaml", []byte(tt.text))
			if err == nil {
				t.Fatal("parsed")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// A broken commitments.yaml is a Load error naming the directory, file and
// line.
func TestLoadBrokenLexicon(t *testing.T) {
	dir := basicDirWith(t, "commitments.yaml", "commitments:\n  repair: {en: []}\n")
	_, err := instructions.Load(dir, builtinNames)
	if err == nil || !strings.Contains(err.Error(), dir+":\n") || !strings.Contains(err.Error(), "lexicon: commitments.yaml: line 2: commitments.repair: list at least one phrase") {
		t.Errorf("Load = %v", err)
	}
}
