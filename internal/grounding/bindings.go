package grounding

import "strings"

// A date or an amount a function result states is backed for what that
// result is about: check_warranty's expiry date for the serial it looked
// up, not for the customer's other device. Each result (a map AddValue is
// given) that names a serial or another id binds its dates and amounts to
// those ids; where a reply names one of them next to a date or an amount
// (in the same clause, the nearest before it, else after it), the date
// or amount must be one a result about that id states, unless a source
// that is about no id (the instructions, the case facts, a result naming
// none) states it too.

// binds is what Sources keeps of the results' bindings.
type binds struct {
	// group collects the result AddValue is reading, nil between results.
	group    *binding
	bindings []*binding
	// boundIDs are the ids some binding names; free the dates and amounts
	// some source about no id states.
	boundIDs map[string]bool
	free     facts
	// boundOnly are the texts AddText read only inside a result: one added
	// again outside any adds its facts to free.
	boundOnly map[string]bool
}

// facts are dates (the keys Sources.dates has: a day, its month, year and
// yearless day) and amounts in hundredths.
type facts struct {
	dates map[string]bool
	cents map[int64]bool
}

func newFacts() facts { return facts{dates: map[string]bool{}, cents: map[int64]bool{}} }

func (f facts) empty() bool { return len(f.dates) == 0 && len(f.cents) == 0 }

// addClaim adds a source's date (with its month, year and yearless day, as
// AddText backs them) or amount.
func (f facts) addClaim(c Claim) {
	if c.Kind == KindAmount {
		f.cents[c.cents] = true
		return
	}
	for _, d := range c.dates {
		f.dates[d] = true
		if len(d) == len("2006-01-02") {
			f.dates[d[:7]], f.dates["--"+d[5:]] = true, true
		}
		if len(d) >= len("2006-01") && d[0] != '-' {
			f.dates[d[:4]] = true
		}
	}
}

// states reports whether f states a reply's date (one of the days it may
// mean) or amount.
func (f facts) states(c Claim) bool {
	if c.Kind == KindAmount {
		return f.cents[c.cents]
	}
	for _, d := range c.dates {
		if f.dates[d] {
			return true
		}
	}
	return false
}

// binding is one function result: the ids it names (squashed) and the
// dates and amounts it states.
type binding struct {
	ids map[string]bool
	facts
}

// maxBindingGap bounds how far apart, in bytes of the reply, an id and the
// date or amount it is read with may stand.
const maxBindingGap = 160

// note records what a text's claims bind: into the result being read, or,
// outside any result, as free facts.
func (s *Sources) note(text string, claims []Claim) {
	if s.group != nil {
		s.boundOnly[text] = !s.added[text] || s.boundOnly[text]
	} else {
		delete(s.boundOnly, text)
	}
	for _, c := range claims {
		switch c.Kind {
		case KindIdentifier, KindTicket:
			if s.group != nil {
				s.group.ids[squash(c.key)] = true
			}
		case KindDate, KindAmount:
			s.factsNow().addClaim(c)
		}
	}
}

// factsNow are the facts a source adds to: the result's being read, else
// the free ones.
func (s *Sources) factsNow() facts {
	if s.group != nil {
		return s.group.facts
	}
	return s.free
}

// bind ends the result being read: a result that names an id and states a
// date or an amount binds them; any other's facts are free.
func (s *Sources) bind() {
	g := s.group
	s.group = nil
	if len(g.ids) == 0 || g.empty() {
		for d := range g.dates {
			s.free.dates[d] = true
		}
		for c := range g.cents {
			s.free.cents[c] = true
		}
		return
	}
	s.bindings = append(s.bindings, g)
	for id := range g.ids {
		s.boundIDs[id] = true
	}
}

// misattached returns the id, as written, next to which a reply states a
// backed date or amount that only results about other ids state: a true
// date attached to the wrong serial; "" when it is not.
func (s *Sources) misattached(c Claim, all []Claim, text string) string {
	if len(s.bindings) == 0 || c.Kind != KindDate && c.Kind != KindAmount || s.free.states(c) {
		return ""
	}
	idc := s.attachedID(c, all, text)
	if idc == nil {
		return ""
	}
	id := squash(idc.key)
	for _, b := range s.bindings {
		if b.ids[id] && b.states(c) {
			return ""
		}
	}
	return idc.Text
}

// attachedID is the id claim naming what a result is about that the reply
// writes in the same clause as c: the nearest before it, else the nearest
// after; nil when none.
func (s *Sources) attachedID(c Claim, all []Claim, text string) *Claim {
	before, after := -1, -1
	for i, o := range all {
		if o.Kind != KindIdentifier && o.Kind != KindTicket || !s.boundIDs[squash(o.key)] {
			continue
		}
		switch {
		case o.at < c.at && c.at-o.at <= maxBindingGap && !sentenceEnds(text[idEnd(text, o.at, c.at):c.at]):
			if before < 0 || o.at > all[before].at {
				before = i
			}
		case o.at > c.at && o.at-c.at <= maxBindingGap && !sentenceEnds(text[c.at:o.at]):
			if after < 0 || o.at < all[after].at {
				after = i
			}
		}
	}
	switch {
	case before >= 0:
		return &all[before]
	case after >= 0:
		return &all[after]
	}
	return nil
}

// idEnd is where the id written at i ends (its letters, digits, - / _),
// at most at limit.
func idEnd(text string, i, limit int) int {
	for i < limit && i < len(text) {
		b := text[i]
		if !isWordByte(b) && b != '-' && b != '/' && b != '_' {
			break
		}
		i++
	}
	return i
}

// sentenceEnds reports whether a clause, a sentence or a line ends in
// text: a line break, or , . ! ? ; followed by a space ("do 2027-09-30, a
// dla SN-2 ...": the date is not the second serial's).
func sentenceEnds(text string) bool {
	if strings.ContainsRune(text, '\n') {
		return true
	}
	for i := 0; i+1 < len(text); i++ {
		switch text[i] {
		case ',', '.', '!', '?', ';':
			if text[i+1] == ' ' {
				return true
			}
		}
	}
	return false
}
