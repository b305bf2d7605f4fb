package grounding

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The tests more than one pattern shares.
var (
	// A month's name (or its abbreviation beside a day) and a year: the
	// month is a word of its own, a run of letters the pattern reads whole.
	monthAndYear = &hold{test: func(s *scan) bool { return s.hasMonth(months, 4) }}
	// A month's full name and a digit.
	fullMonthAndDigit = &hold{test: func(s *scan) bool { return s.hasMonth(fullMonths, 1) }}
	// An apostrophe and two digits ('28), and a month's name.
	monthAndShortYear = &hold{test: func(s *scan) bool { return apostropheYear(s.orig) && s.hasMonth(months, 1) }}
	// A currency.
	currencyHold = &hold{test: hasCurrency}
)

// holds are, for a pattern, a cheap test of the text that every text
// holding a match passes: the literal or the word the pattern cannot match
// without. Each test over-approximates its pattern (true is always safe).
var holds = map[*regexp.Regexp]*hold{
	// "http" or "www." in any case ((?i) folds no other rune to h, t, p, w).
	urlRe:   {test: func(s *scan) bool { return containsFoldASCII(s.orig, "http") || containsFoldASCII(s.orig, "www.") }},
	emailRe: {test: func(s *scan) bool { return strings.IndexByte(s.orig, '@') >= 0 }},
	// A dot and a top-level domain's name.
	domainRe: {test: hasTopLevel},
	// Two capitals and two digits: PL61.
	ibanRe: {test: func(s *scan) bool {
		t := s.orig
		for i := 0; i+4 <= len(t); i++ {
			if isUpperASCII(t[i]) && isUpperASCII(t[i+1]) && isDigitByte(t[i+2]) && isDigitByte(t[i+3]) {
				return true
			}
		}
		return false
	}},
	// Four digits, a separator and a digit: 2027-05.
	isoDateRe: {test: func(s *scan) bool { return digitsThen(s.orig, 4, "-/.", true) }},
	// A separator, maybe a space, and a year: .2027, - 2027.
	numDateRe: {test: func(s *scan) bool { return sepThenYear(s.orig) }},
	// A digit, "." or "/", and a digit: 31.05.28.
	shortYearRe: {test: func(s *scan) bool { return digitsThen(s.orig, 1, "./", true) }},
	dmyRe:       monthAndYear,
	mdyRe:       monthAndYear,
	monthYearRe: monthAndYear,
	dayMonthRe:  fullMonthAndDigit,
	monthDayRe:  fullMonthAndDigit,
	// Four digits and a Roman month.
	romanDateRe: {test: func(s *scan) bool { return digitsThen(s.orig, 4, "", false) && s.hasRomanMonth() }},
	dmyShortRe:  monthAndShortYear,
	mdyShortRe:  monthAndShortYear,
	// Two digits and a Roman month.
	romanShortRe:   {test: func(s *scan) bool { return digitsThen(s.orig, 2, "", false) && s.hasRomanMonth() }},
	amountAfterRe:  currencyHold,
	amountBeforeRe: currencyHold,
	// A unit's word or a percent sign.
	durationRe: {test: hasUnit},
	// A word that can name a ticket (see ticketWord) and three digits.
	ticketNumberRe: {test: func(s *scan) bool { return digitsThen(s.orig, 3, "", false) && s.hasWord(ticketSegment) }},
	// Five digits in a row.
	numberRe: {test: func(s *scan) bool { return digitsThen(s.orig, 5, "", false) }},
}

func (s *scan) hasRomanMonth() bool {
	return s.hasWord(func(w word) bool { _, ok := romanMonths[w.text]; return ok })
}

// apostropheYear reports whether text has an apostrophe (' or ’) and two
// digits.
func apostropheYear(text string) bool {
	for _, q := range []string{"'", "\u2019"} {
		for i := strings.Index(text, q); i >= 0; {
			j := i + len(q)
			if j+2 <= len(text) && isDigitByte(text[j]) && isDigitByte(text[j+1]) {
				return true
			}
			k := strings.Index(text[j:], q)
			if k < 0 {
				break
			}
			i = j + k
		}
	}
	return false
}

// hasMonth reports whether orig has a run of digits digits long and a word
// among names.
func (s *scan) hasMonth(names map[string]int, digits int) bool {
	return digitsThen(s.orig, digits, "", false) && s.hasWord(func(w word) bool {
		_, ok := names[w.lower]
		return ok
	})
}

// hasWord reports whether one of orig's runs of letters satisfies f.
func (s *scan) hasWord(f func(w word) bool) bool {
	for _, w := range s.allWords() {
		if f(w) {
			return true
		}
	}
	return false
}

// allWords returns orig's runs of letters, read on first use.
func (s *scan) allWords() []word {
	if s.words == nil {
		s.words = words(s.orig)
		if s.words == nil {
			s.words = []word{}
		}
	}
	return s.words
}

// word is a run of letters of a text, where it stands and in lower case.
type word struct {
	start, end  int
	text, lower string
}

// words returns the runs of letters of text in order.
func words(text string) []word {
	var out []word
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsLetter(r) {
				break
			}
			j += size
		}
		out = append(out, word{i, j, text[i:j], strings.ToLower(text[i:j])})
		i = j
	}
	return out
}

// ticketSegment reports whether a run of letters can begin a word
// ticketWord accepts: the word is the run, the run and a dot ("no."), or
// the run and a hyphenated rest ("Ticket-Nr.", whose run "Ticket" names a
// ticket already).
func ticketSegment(w word) bool {
	return ticketWord(w.lower) || ticketWord(w.lower+".")
}

// hasCurrency: an ISO code in capitals, or a currency's name (currencies)
// in any case. The text is
// read once: at each byte, only the ASCII names that begin with it (in
// either case) are compared; the others are looked for in the lower-cased
// text, when it has a byte outside ASCII at all.
func hasCurrency(s *scan) bool {
	t := s.orig
	if hasISOCode(t) {
		return true
	}
	for i := 0; i < len(t); i++ {
		for _, c := range currencyNames.byFirst[t[i]|0x20] {
			if hasFoldASCIIAt(t, i, c) {
				return true
			}
		}
	}
	if isASCII(t) {
		return false
	}
	lower := strings.ToLower(t)
	for _, c := range currencyNames.other {
		if strings.Contains(lower, c) {
			return true
		}
	}
	return false
}

// hasISOCode reports whether text has three capitals in a row, no
// capital either side, that are an ISO 4217 code (isoCodes): the amount
// patterns read a code with no letter beside it.
func hasISOCode(text string) bool {
	for i := 0; i+3 <= len(text); i++ {
		if !isUpperASCII(text[i]) || i > 0 && isUpperASCII(text[i-1]) {
			continue
		}
		if isUpperASCII(text[i+1]) && isUpperASCII(text[i+2]) && (i+3 == len(text) || !isUpperASCII(text[i+3])) && isoCodes[text[i:i+3]] {
			return true
		}
	}
	return false
}

// currencyNames are the names of currencies as hasCurrency looks for
// them: those in ASCII by their first byte, the others apart, and of
// either only the names that hold no other ("złotych" holds "zł").
var currencyNames = func() (n struct {
	byFirst [256][]string
	other   []string
}) {
names:
	for c := range currencies {
		for o := range currencies {
			if o != c && strings.Contains(c, o) {
				continue names
			}
		}
		if isASCII(c) {
			n.byFirst[c[0]] = append(n.byFirst[c[0]], c)
		} else {
			n.other = append(n.other, c)
		}
	}
	return n
}()

// hasFoldASCIIAt reports whether text holds lit at i, ASCII letters in
// any ASCII case (lit is lower-case ASCII).
func hasFoldASCIIAt(text string, i int, lit string) bool {
	if i+len(lit) > len(text) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		if text[i+j]|0x20 != lit[j] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// digitsThen reports whether text has n ASCII digits in a row followed by
// one of the bytes in seps and, when digitAfter, by a digit after that.
// With seps empty it reports a run of n digits.
func digitsThen(text string, n int, seps string, digitAfter bool) bool {
	run := 0
	for i := 0; i < len(text); i++ {
		if isDigitByte(text[i]) {
			run++
			if seps == "" && run >= n {
				return true
			}
			continue
		}
		if run >= n && strings.IndexByte(seps, text[i]) >= 0 && (!digitAfter || i+1 < len(text) && isDigitByte(text[i+1])) {
			return true
		}
		run = 0
	}
	return false
}

// sepThenYear reports whether text has ".", "/" or "-", maybe one ASCII
// space character or no-break space, then four digits.
func sepThenYear(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '.' && text[i] != '/' && text[i] != '-' {
			continue
		}
		j := i + 1
		if j < len(text) && asciiSpace(text[j]) {
			j++
		} else if strings.HasPrefix(text[j:], "\u00a0") {
			j += len("\u00a0")
		}
		if j+4 <= len(text) && isDigitByte(text[j]) && isDigitByte(text[j+1]) && isDigitByte(text[j+2]) && isDigitByte(text[j+3]) {
			return true
		}
	}
	return false
}

func isDigitByte(b byte) bool { return b >= '0' && b <= '9' }

func isUpperASCII(b byte) bool { return b >= 'A' && b <= 'Z' }

func isLetterASCII(b byte) bool { return isUpperASCII(b &^ ('a' - 'A')) }

// containsFoldASCII reports whether text holds lit (lower-case ASCII) in
// any ASCII case.
func containsFoldASCII(text, lit string) bool {
	for i := 0; i+len(lit) <= len(text); i++ {
		if hasFoldASCIIAt(text, i, lit) {
			return true
		}
	}
	return false
}
