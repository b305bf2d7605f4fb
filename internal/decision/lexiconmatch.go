// Matching: the reply's text as words and clauses, and the phrases found in
// it.

package decision

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Hit is a phrase found in a reply: what it promises (Commitment) or
// states (Status, allowed on Bases).
type Hit struct {
	Phrase     string // as commitments.yaml lists it
	Lang       string
	Commitment Commitment // "" for a status
	Status     string     // "" for a commitment
	Bases      []Basis
}

// entry is one compiled phrase.
type entry struct {
	Hit
	pw
}

// pw are a phrase's normalized words; stem marks a word written with a
// trailing "*", which matches any word it begins ("zwrot*": zwrotu,
// zwrotem).
type pw struct {
	words []string
	stem  []bool
}

// is reports whether the phrase's k-th word is w.
func (p *pw) is(k int, w string) bool {
	if p.stem[k] {
		return strings.HasPrefix(w, p.words[k])
	}
	return w == p.words[k]
}

// phraseWords reads a phrase as written in commitments.yaml: its words,
// normalized, and which are stems ("*" right after a word of at least
// minStem letters; nowhere else).
func phraseWords(ph string) (pw, error) {
	var p pw
	for tok := range strings.FieldsSeq(normalize(ph)) {
		stem := strings.HasSuffix(tok, "*")
		tok = strings.TrimSuffix(tok, "*")
		if strings.Contains(tok, "*") {
			return pw{}, fmt.Errorf("%q: a \"*\" may only end a word", tok)
		}
		ws := words(tok)
		if stem && (len(ws) == 0 || utf8.RuneCountInString(ws[len(ws)-1]) < minStem || !strings.HasSuffix(tok, ws[len(ws)-1])) {
			return pw{}, fmt.Errorf("%q: a stem needs at least %d letters right before its \"*\"", tok+"*", minStem)
		}
		for i, w := range ws {
			p.words = append(p.words, w)
			p.stem = append(p.stem, stem && i == len(ws)-1)
		}
	}
	if len(p.words) == 0 {
		return pw{}, errors.New("no word")
	}
	return p, nil
}

// Lexicon is a compiled LexiconSpec: phrases indexed by their first word. It is
// safe for concurrent use.
type Lexicon struct {
	summary string
	first   map[string][]*entry
	// stems are the phrases whose first word is a stem, tried at every
	// word.
	stems     []*entry
	negations map[string]map[string]bool // lang -> words
	window    int
	gap       int
}

// Compile validates s and compiles its phrases once.
func CompileLexicon(s *LexiconSpec) (*Lexicon, error) {
	if ps := s.Validate(); len(ps) > 0 {
		errs := make([]error, len(ps))
		for i, p := range ps {
			errs[i] = errors.New(p.String())
		}
		return nil, errors.Join(errs...)
	}
	l := &Lexicon{first: map[string][]*entry{}, negations: map[string]map[string]bool{}, window: s.NegationWindow, gap: s.Gap}
	if l.window == 0 {
		l.window = DefaultNegationWindow
	}
	for i, ws := range s.Negations.byLang() {
		set := map[string]bool{}
		for _, w := range ws {
			set[words(normalize(w))[0]] = true
		}
		l.negations[Languages[i]] = set
	}
	add := func(h Hit, p *Phrases) {
		for i, ps := range p.byLang() {
			for _, ph := range ps {
				p, _ := phraseWords(ph) // Validate checked it
				e := &entry{Hit: h, pw: p}
				e.Phrase, e.Lang = ph, Languages[i]
				if p.stem[0] {
					l.stems = append(l.stems, e)
					continue
				}
				l.first[e.words[0]] = append(l.first[e.words[0]], e)
			}
		}
	}
	for name, p := range s.Commitments {
		add(Hit{Commitment: Commitment(name)}, &p)
	}
	for name, st := range s.Statuses {
		add(Hit{Status: name, Bases: slices.Clone(st.Bases)}, &st.Phrases)
	}
	n, langs := len(l.stems), map[string]bool{}
	for _, e := range l.stems {
		langs[e.Lang] = true
	}
	for _, es := range l.first {
		n += len(es)
		for _, e := range es {
			langs[e.Lang] = true
		}
	}
	var ls []string
	for _, lang := range Languages {
		if langs[lang] {
			ls = append(ls, lang)
		}
	}
	l.summary = fmt.Sprintf("%d commitments and %d statuses, %d phrases in %s", len(s.Commitments), len(s.Statuses), n, strings.Join(ls, ", "))
	// Longer phrases first, then by text: the hits' order is stable.
	for _, es := range l.first {
		slices.SortFunc(es, longerFirst)
	}
	slices.SortFunc(l.stems, longerFirst)
	return l, nil
}

func longerFirst(a, b *entry) int {
	if d := len(b.words) - len(a.words); d != 0 {
		return d
	}
	return strings.Compare(a.Lang+a.Phrase, b.Lang+b.Phrase)
}

// String says what l reads: how many commitments and statuses, phrases
// and which languages.
func (l *Lexicon) String() string {
	if l == nil {
		return "no lexicon"
	}
	return l.summary
}

// word is one word of a reply and the clause it is in.
type word struct {
	w      string
	clause int
}

// Find returns the phrases body states, each once, in the order they first
// occur: case-insensitively after Unicode (NFKC) normalisation, as whole
// words (a phrase's words in order, across line breaks, at most the gap's
// other words between two of them, none a negation word; a stem "zwrot*"
// matching any word it begins), outside the lines that quote earlier mail
// (those starting with ">"). A phrase is not counted where a negation word
// of its language stands at most the window's words before it in the same
// clause (a clause ends at . , ; : ! ? or a blank line). Where phrases
// overlap, the longest one that starts first counts (negated or not). A
// nil Lexicon finds nothing.
func (l *Lexicon) Find(body string) []Hit {
	if l == nil {
		return nil
	}
	ws := reply(normalize(body))
	var hits []Hit
	var found []*entry
	next := 0 // the words before it are inside a phrase found
	for i := range ws {
		if i < next {
			continue
		}
		e, end := l.longest(ws, i)
		if e == nil {
			continue
		}
		next = end
		if !slices.Contains(found, e) && !l.negated(ws, i, e.Lang) {
			found = append(found, e)
			hits = append(hits, e.Hit)
		}
	}
	return hits
}

// longest returns the longest phrase that starts at ws[i] and the index
// after its last word; nil when none does.
func (l *Lexicon) longest(ws []word, i int) (*entry, int) {
	var best *entry
	end := 0
	for _, es := range [][]*entry{l.first[ws[i].w], l.stems} { // each the longest first
		for _, e := range es {
			if best != nil && len(e.words) <= len(best.words) {
				break
			}
			if !e.is(0, ws[i].w) {
				continue
			}
			if n, ok := l.rest(ws, i, e, 1); ok {
				best, end = e, n
				break
			}
		}
	}
	return best, end
}

// rest reports whether the phrase's words from the k-th on follow ws[j] in
// its clause, each at most the gap's words after the one before, no
// negation word skipped; and the index after the last one.
func (l *Lexicon) rest(ws []word, j int, e *entry, k int) (int, bool) {
	if k == len(e.words) {
		return j + 1, true
	}
	neg := l.negations[e.Lang]
	for g := 0; g <= l.gap; g++ {
		n := j + 1 + g
		if n >= len(ws) || ws[n].clause != ws[j].clause {
			return 0, false
		}
		if g > 0 && neg[ws[n-1].w] {
			return 0, false // "we will not replace" is no "we will replace"
		}
		if e.is(k, ws[n].w) {
			if end, ok := l.rest(ws, n, e, k+1); ok {
				return end, true
			}
		}
	}
	return 0, false
}

// negated reports whether a negation word of lang stands within the window
// before ws[i], in its clause.
func (l *Lexicon) negated(ws []word, i int, lang string) bool {
	neg := l.negations[lang]
	for j := i - 1; j >= 0 && j >= i-l.window && ws[j].clause == ws[i].clause; j-- {
		if neg[ws[j].w] {
			return true
		}
	}
	return false
}

// normalize is s in NFKC, lower case, with typographic apostrophes plain.
func normalize(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	return strings.ReplaceAll(s, "\u2019", "'")
}

// words are the words of a normalized phrase.
func words(s string) []string {
	var out []string
	ws, _ := split(s, nil, 0)
	for _, w := range ws {
		out = append(out, w.w)
	}
	return out
}

// reply is the words of a normalized reply body, its quoted lines left out.
func reply(s string) []word {
	ws := make([]word, 0, len(s)/6)
	clause := 0
	for line := range strings.Lines(s) {
		t := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(t, ">") || strings.TrimSpace(t) == "" {
			clause++ // a quotation or a blank line ends the clause
			continue
		}
		ws, clause = split(line, ws, clause)
	}
	return ws
}

// split appends the words of s to ws, in clauses counted from clause, and
// returns them and the clause after s: letters and digits make words (an
// apostrophe between letters too: can't), . , ; : ! ? end a clause.
func split(s string, ws []word, clause int) ([]word, int) {
	start := -1
	for i, r := range s {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		if !inWord && r == '\'' && start >= 0 {
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			inWord = unicode.IsLetter(next)
		}
		if inWord {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			ws = append(ws, word{s[start:i], clause})
			start = -1
		}
		switch r {
		case '.', ',', ';', ':', '!', '?':
			clause++
		}
	}
	if start >= 0 {
		ws = append(ws, word{s[start:], clause})
	}
	return ws, clause
}
