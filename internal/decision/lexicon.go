// The lexicon reads a reply's own words for what they promise: the
// commitment and status phrases of commitments.yaml, per language, found as
// whole words in the reply's text outside the lines it quotes (">"), a
// phrase preceded by a negation word of its language in the same clause
// aside. The dispatcher holds a reply's words to the commitments it
// declares and its decision's basis.

package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// LexiconFile is the name of the lexicon in an instructions directory.
const LexiconFile = "commitments.yaml"

// DefaultNegationWindow is how many words before a phrase a negation word
// cancels it, when commitments.yaml does not say.
const DefaultNegationWindow = 3

// MaxGap bounds LexiconSpec.Gap: a wider gap joins words that say nothing
// together.
const MaxGap = 4

// minStem is the fewest letters a stem ("zwrot*") may have before its "*".
const minStem = 3

// Languages are the languages a lexicon may list phrases in.
var Languages = []string{"pl", "en", "de", "fr", "es", "it", "cs"}

// Phrases are one entry's phrases (or the negation words), by language.
type Phrases struct {
	PL []string `yaml:"pl"`
	EN []string `yaml:"en"`
	DE []string `yaml:"de"`
	FR []string `yaml:"fr"`
	ES []string `yaml:"es"`
	IT []string `yaml:"it"`
	CS []string `yaml:"cs"`
}

// byLang is p's lists, in Languages order.
func (p *Phrases) byLang() [][]string {
	return [][]string{p.PL, p.EN, p.DE, p.FR, p.ES, p.IT, p.CS}
}

// StatusPhrases is a status a reply may state only on some bases (a guarantee
// still running, one that expired), with its phrases.
type StatusPhrases struct {
	Bases   []Basis `yaml:"bases"`
	Phrases `yaml:",inline"`
}

// LexiconSpec is commitments.yaml as written.
type LexiconSpec struct {
	// NegationWindow: a negation word at most this many words before a
	// phrase, in the same clause, cancels it (0: DefaultNegationWindow).
	NegationWindow int `yaml:"negation_window"`
	// Gap: at most this many other words may stand between two words of
	// a phrase, in the same clause, none of them a negation word ("zwrócimy
	// też pieniądze" is "zwrócimy pieniądze"); 0 keeps a phrase's words in
	// a row. At most MaxGap.
	Gap int `yaml:"gap"`
	// Negations are single words, per language.
	Negations Phrases `yaml:"negations"`
	// Commitments are the phrases that promise each commitment.
	Commitments map[string]Phrases `yaml:"commitments"`
	// Statuses are the phrases that state each status, and the bases it
	// may be stated on.
	Statuses map[string]StatusPhrases `yaml:"statuses"`
}

// (commitments.repair.pl[2]).

var bases = []Basis{Guarantee, Statutory, None, NeedsProof, NeedsInfo}

// Validate reports every problem of s, in a stable order: an unknown
// commitment (or none, callback, ticket: they have no words), a status
// without bases or with an unknown one, an entry without phrases, a phrase
// without a word, a phrase listed twice in one language, a negation that is
// not one word, a negative window.
func (s *LexiconSpec) Validate() []Problem {
	var out []Problem
	add := func(path, format string, a ...any) {
		out = append(out, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	if s.NegationWindow < 0 {
		add("negation_window", "%d is negative", s.NegationWindow)
	}
	if s.Gap < 0 || s.Gap > MaxGap {
		add("gap", "%d: want 0 to %d words", s.Gap, MaxGap)
	}
	for i, ws := range s.Negations.byLang() {
		for j, w := range ws {
			if n := len(words(normalize(w))); n != 1 {
				add(fmt.Sprintf("negations.%s[%d]", Languages[i], j), "%q is not one word", w)
			}
		}
	}
	if len(s.Commitments) == 0 && len(s.Statuses) == 0 {
		add("commitments", "declare at least one commitment or status")
	}
	seen := map[string]string{} // lang + normalized phrase -> path
	phrases := func(path string, p *Phrases) {
		n := 0
		for i, ps := range p.byLang() {
			for j, ph := range ps {
				n++
				at := fmt.Sprintf("%s.%s[%d]", path, Languages[i], j)
				ws, clauses := split(normalize(ph), nil, 0)
				if len(ws) == 0 {
					add(at, "%q has no word", ph)
					continue
				}
				if clauses > 0 && ws[len(ws)-1].clause > 0 {
					add(at, "%q has punctuation that ends a clause: it never matches", ph)
					continue
				}
				pws, err := phraseWords(ph)
				if err != nil {
					add(at, "%q: %v", ph, err)
					continue
				}
				key := Languages[i] + "\x00" + strings.Join(pws.words, " ") + fmt.Sprint(pws.stem)
				if prev, dup := seen[key]; dup {
					add(at, "%q is already listed at %s", ph, prev)
					continue
				}
				seen[key] = at
			}
		}
		if n == 0 {
			add(path, "list at least one phrase (%s)", strings.Join(Languages, ", "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Commitments)) {
		path := "commitments." + name
		c := Commitment(name)
		switch {
		case c == NoCommitment || c == Callback || c == Ticket:
			add(path, "%s is not checked against the reply's words; list a remedy or %s", name, CourierPickup)
			continue
		case !slices.Contains(Known, c):
			add(path, "%q is not a commitment (one of %s)", name, worded())
			continue
		}
		p := s.Commitments[name]
		phrases(path, &p)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Statuses)) {
		path := "statuses." + name
		st := s.Statuses[name]
		if len(st.Bases) == 0 {
			add(path+".bases", "list the bases the status may be stated on")
		}
		for i, b := range st.Bases {
			if !slices.Contains(bases, b) {
				add(fmt.Sprintf("%s.bases[%d]", path, i), "%q is not a basis (one of %s)", b, joined(bases))
			}
		}
		phrases(path, &st.Phrases)
	}
	return out
}

// worded are the commitments a lexicon may list.
func worded() string {
	var s []string
	for _, c := range Known {
		if c != NoCommitment && c != Callback && c != Ticket {
			s = append(s, string(c))
		}
	}
	return strings.Join(s, ", ")
}

func joined[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}
