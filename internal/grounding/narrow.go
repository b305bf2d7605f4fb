package grounding

import (
	"iter"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Reading a dozen patterns over every byte of every text is most of what
// grounding costs. find narrows each reading without changing what it
// finds: a pattern whose literal parts the text cannot hold is not run at
// all (mayHold), and a pattern that matches only around a digit is run over
// the stretches near digits alone (needsDigit), one that matches only
// around a month's name or a unit of time over those near one (nearWord),
// and one whose every match lies inside a window of its own kind over
// those windows alone (inWindows). TestNarrowReadsAsTheWholeText holds the
// narrowed readings to the whole ones.

// digitReach is how far either side of a digit (or a month's name) a
// pattern that needs one is looked for (before widening to whitespace):
// the longest stretch of a claim before or after its year ("1-szego oraz
// 2-szego albo 31-szego of października., 2027": three days, which is why
// a list holds at most three) is shorter.
const digitReach = 64

// find is re.FindAllSubmatchIndex over the masked text, narrowed as above,
// with the offsets of the whole text.
func (s *scan) find(re *regexp.Regexp) [][]int {
	if s.whole {
		return re.FindAllSubmatchIndex(s.masked, -1)
	}
	if !s.mayHold(re) {
		return nil
	}
	near, ok := s.windowsOf(re)
	if !ok {
		return re.FindAllSubmatchIndex(s.masked, -1)
	}
	var all [][]int
	for _, st := range near {
		for _, m := range re.FindAllSubmatchIndex(s.masked[st[0]:st[1]], -1) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += st[0]
				}
			}
			all = append(all, m)
		}
	}
	return all
}

// windowsOf returns the stretches of orig to read re over (see find),
// found on first use and kept in the scan: false when re is read over the
// whole text.
func (s *scan) windowsOf(re *regexp.Regexp) ([][2]int, bool) {
	if of, ok := inWindows[re]; ok {
		w, ok := s.windows[re]
		if !ok {
			if s.windows == nil {
				s.windows = map[*regexp.Regexp][][2]int{}
			}
			w = of(s.orig)
			s.windows[re] = w
		}
		return w, true
	}
	run := needsDigit[re]
	if w, ok := nearWord[re]; ok {
		run = w
	}
	if run == 0 {
		return nil, false
	}
	key := nearKey{run, endsWithDigits[re]}
	near, ok := s.near[key]
	if !ok {
		if s.near == nil {
			s.near = map[nearKey][][2]int{}
		}
		switch {
		case run == monthRun:
			near = wordStretches(s.orig, s.allWords(), isFullMonth, 0)
		case run == unitRun:
			near = wordStretches(s.orig, s.allWords(), isUnitWord, '%')
		case key.before:
			near = digitStretchesBefore(s.orig, run)
		default:
			near = digitStretches(s.orig, run)
		}
		s.near[key] = near
	}
	return near, true
}

// nearKey keys scan.near: the run of digits or the kind of word (monthRun,
// unitRun) the stretches are near, and whether they reach before the
// digits only.
type nearKey struct {
	run    int
	before bool
}

// mayHold reports whether orig holds what every match of re needs (see
// holds), remembered per scan for each test (patterns share some): the
// masked text is orig with spans blanked, so it never holds more.
func (s *scan) mayHold(re *regexp.Regexp) bool {
	h, ok := holds[re]
	if !ok {
		return true
	}
	if s.may[h.index] == 0 {
		s.may[h.index] = 2
		if h.test(s) {
			s.may[h.index] = 1
		}
	}
	return s.may[h.index] == 1
}

// maxHolds bounds the tests of holds, so a scan keeps what it learnt of
// each in an array (scan.may) rather than a map it allocates.
const maxHolds = 32

// hold is a test of holds; index numbers it for scan.may.
type hold struct {
	test  func(s *scan) bool
	index int
}

func init() {
	n := 0
	for _, h := range holds {
		if h.index == 0 {
			n++
			h.index = n
		}
	}
	if n >= maxHolds {
		panic("grounding: more tests in holds than maxHolds")
	}
}

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
	currency = &hold{test: hasCurrency}
)

// holds are, for a pattern, a cheap test of the text that every text
// holding a match passes: the literal or the word the pattern cannot match
// without. Each test over-approximates its pattern (true is always safe).
var holds = map[*regexp.Regexp]*hold{
	// "http" or "www." in any case ((?i) folds no other rune to h, t, p, w).
	urlRe:   {test: func(s *scan) bool { return containsFoldASCII(s.orig, "http") || containsFoldASCII(s.orig, "www.") }},
	emailRe: {test: func(s *scan) bool { return strings.IndexByte(s.orig, '@') >= 0 }},
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
	amountAfterRe:  currency,
	amountBeforeRe: currency,
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

// hasCurrency: a currency's name (currencies) in any case. The text is
// read once: at each byte, only the ASCII names that begin with it (in
// either case) are compared; the others are looked for in the lower-cased
// text, when it has a byte outside ASCII at all.
func hasCurrency(s *scan) bool {
	t := s.orig
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
// space character, then four digits.
func sepThenYear(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '.' && text[i] != '/' && text[i] != '-' {
			continue
		}
		j := i + 1
		if j < len(text) && asciiSpace(text[j]) {
			j++
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

// digitStretches returns the stretches of text within digitReach bytes of
// a run of at least n ASCII digits (claims has written every digit in
// ASCII by then: see readable), widened to ASCII whitespace (or the
// text's ends) so no word is cut, overlapping or touching ones merged, in
// order. A stretch starts after whitespace and ends before it, as a
// match's boundary character would: "^" and "$" at its ends read as the
// whitespace there.
func digitStretches(text string, n int) [][2]int { return digitRunStretches(text, n, digitReach) }

// digitStretchesBefore is digitStretches reaching before each run alone,
// for the patterns that end with their digits (endsWithDigits): after the
// run a stretch only goes on to whitespace.
func digitStretchesBefore(text string, n int) [][2]int { return digitRunStretches(text, n, 0) }

func digitRunStretches(text string, n, after int) [][2]int {
	var out [][2]int
	for i, j := range digitRuns(text, n) {
		out = widen(out, text, i, j, after)
	}
	return out
}

// digitRuns yields where each run of at least n ASCII digits of text
// starts and ends, in order.
func digitRuns(text string, n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; i < len(text); i++ {
			if !isDigitByte(text[i]) {
				continue
			}
			j := i + 1
			for j < len(text) && isDigitByte(text[j]) {
				j++
			}
			if j-i >= n && !yield(i, j) {
				return
			}
			i = j - 1
		}
	}
}

// wordStretches is digitStretches around the words (runs of letters, ws)
// of a kind (is), and around each byte sign when it is not 0.
func wordStretches(text string, ws []word, is func(w word) bool, sign byte) [][2]int {
	var out [][2]int
	next := func(from int) int {
		if sign == 0 {
			return -1
		}
		if i := strings.IndexByte(text[from:], sign); i >= 0 {
			return from + i
		}
		return -1
	}
	p := next(0)
	for _, w := range ws {
		for ; p >= 0 && p < w.start; p = next(p + 1) {
			out = widen(out, text, p, p+1, digitReach)
		}
		if is(w) {
			out = widen(out, text, w.start, w.end, digitReach)
		}
	}
	for ; p >= 0; p = next(p + 1) {
		out = widen(out, text, p, p+1, digitReach)
	}
	return out
}

func isFullMonth(w word) bool {
	_, ok := fullMonths[w.lower]
	return ok
}

// isMonth reports whether w is a month's name or abbreviation.
func isMonth(w word) bool {
	_, ok := months[w.lower]
	return ok
}

// widen adds text[i:j] with digitReach bytes either side, widened to
// whitespace, to the stretches out, merging it with the last one when they
// overlap or touch. Each widening stops at the stretch before, so a walk
// over the whole text is linear however long a run without whitespace is.
func widen(out [][2]int, text string, i, j, after int) [][2]int {
	k, floor := len(out), 0
	if k > 0 {
		floor = out[k-1][1]
	}
	lo, hi := max(i-digitReach, floor), max(min(j+after, len(text)), floor)
	for lo > floor && !asciiSpace(text[lo-1]) {
		lo--
	}
	for hi < len(text) && !asciiSpace(text[hi]) {
		hi++
	}
	if k > 0 && lo <= floor {
		out[k-1][1] = hi
		return out
	}
	return append(out, [2]int{lo, hi})
}

func asciiSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

// needsDigit are the patterns that match only where the text has a run of
// ASCII digits (\d; an identifier's decimal digit, which readable wrote
// in ASCII), by the shortest run every match holds (a year, a ticket's
// three digits, any digit), so find may read them over the stretches
// within digitReach bytes of such runs alone. Every other pattern reads
// the whole text.
var needsDigit = map[*regexp.Regexp]int{
	dmyRe: 4, mdyRe: 4, romanDateRe: 4, monthYearRe: 4, shortYearRe: 2,
	dmyShortRe: 2, mdyShortRe: 2, romanShortRe: 2,
	amountAfterRe: 1, amountBeforeRe: 1, durationRe: 1, taxIDRe: 1, ibanRe: 2,
}

// endsWithDigits are the patterns of needsDigit whose every match ends
// with its run of digits (a year), what may follow it up to whitespace
// aside: their stretches reach before the run alone (digitStretchesBefore).
var endsWithDigits = map[*regexp.Regexp]bool{
	dmyRe: true, mdyRe: true, romanDateRe: true, monthYearRe: true, dmyShortRe: true, mdyShortRe: true, romanShortRe: true,
}

// nearWord are the patterns that match only around a word of a kind (a day
// and its month with no year: a month's full name; a duration or a
// percentage: a unit's word or "%"), so find reads them over the stretches
// within digitReach bytes of one alone (wordStretches, kept in scan.near
// under the kind's key).
var nearWord = map[*regexp.Regexp]int{dayMonthRe: monthRun, monthDayRe: monthRun, durationRe: unitRun}

// Runs of nearKey for the stretches near a word (the stretches near digits
// are keyed by the run's length).
const (
	monthRun = -1
	unitRun  = -2
)

// inWindows are the patterns every match of which lies inside one window
// of the text that a reading of their own finds (kept in scan.windows), and
// which match inside a window as they do in the whole text: find reads
// them over the windows alone. A pattern that matches every word (an
// identifier), reads back from a number to the word before it (a ticket
// number) or reads each digit as the start of a date costs many times
// more over every stretch near a digit than over these. A window of a
// pattern that looks at the character before or after its match (a
// boundary, "^", "\b") holds that character too, which the window's
// characters never are; overlapping windows are merged, so a match that
// takes the character another's needs leaves it as it does in the whole
// text.
var inWindows = map[*regexp.Regexp]func(text string) [][2]int{
	identRe:        identWindows,
	emailRe:        emailWindows,
	ticketNumberRe: ticketWindows,
	isoDateRe:      isoDateWindows,
	numDateRe:      numDateWindows,
	phoneRe:        phoneWindows,
	numberRe:       numberWindows,
}

// identWindows are the runs of an identifier's characters (identRe's
// class: letters, numbers, "_", "/", "-") that hold an ASCII digit: identRe
// asserts nothing outside its match, and an identifier has a digit.
func identWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, identClass, nil, false)
}

// emailWindows are the runs of an email address's characters (emailRe's
// classes: letters, numbers, ".", "_", "%", "+", "-", "@") that hold "@".
func emailWindows(text string) [][2]int {
	return classRuns(text, &atSeeds, emailClass, nil, false)
}

// The characters of the windows classRuns finds: each pattern's classes
// (see the functions that use them), and the bytes a window grows from.
var (
	identClass   = classOf("_/-", true)
	emailClass   = classOf("._%+-@", true)
	isoDateClass = classOf("-/.T :Z+", false)
	numDateClass = classOf("./- \t\n\f\r", false)
	phoneClass   = classOf("() -\u00a0+", false)
	numberClass  = classOf("#", false)

	digitSeeds = byteSet("0123456789")
	atSeeds    = byteSet("@")
)

// runeClass is a set of runes: those in ASCII by a table, the others by a
// list and, with letters, every letter and number.
type runeClass struct {
	ascii   [utf8.RuneSelf]bool
	other   []rune
	letters bool
}

// classOf is the class of the ASCII digits and chars and, with letters,
// every letter and number (unicode.IsLetter, unicode.IsNumber).
func classOf(chars string, letters bool) *runeClass {
	c := &runeClass{letters: letters}
	for r := rune(0); r < utf8.RuneSelf; r++ {
		c.ascii[r] = r >= '0' && r <= '9' || letters && (unicode.IsLetter(r) || unicode.IsNumber(r))
	}
	for _, r := range chars {
		if r < utf8.RuneSelf {
			c.ascii[r] = true
		} else {
			c.other = append(c.other, r)
		}
	}
	return c
}

func (c *runeClass) has(r rune) bool {
	if r >= 0 && r < utf8.RuneSelf {
		return c.ascii[r]
	}
	return c.letters && (unicode.IsLetter(r) || unicode.IsNumber(r)) || slices.Contains(c.other, r)
}

func byteSet(bytes string) (set [256]bool) {
	for i := 0; i < len(bytes); i++ {
		set[bytes[i]] = true
	}
	return set
}

// classRuns returns the maximal runs of text's runes that in holds and
// that hold a byte of seeds (one in holds too: an ASCII digit, "@"), of
// those keep accepts (all when keep is nil); with pad, each with the rune
// before and the rune after it, windows that then overlap or touch merged.
// A run is found from its seed outwards, so text far from every seed costs
// one look-up a byte.
func classRuns(text string, seeds *[256]bool, in *runeClass, keep func(run string) bool, pad bool) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); i++ {
		if !seeds[text[i]] {
			continue
		}
		start, end := i, i
		for start > 0 {
			if b := text[start-1]; b < utf8.RuneSelf {
				if !in.ascii[b] {
					break
				}
				start--
				continue
			}
			r, size := utf8.DecodeLastRuneInString(text[:start])
			if !in.has(r) {
				break
			}
			start -= size
		}
		for end < len(text) {
			if b := text[end]; b < utf8.RuneSelf {
				if !in.ascii[b] {
					break
				}
				end++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[end:])
			if !in.has(r) {
				break
			}
			end += size
		}
		i = end
		if keep != nil && !keep(text[start:end]) {
			continue
		}
		if pad {
			if start > 0 {
				_, size := utf8.DecodeLastRuneInString(text[:start])
				start -= size
			}
			if end < len(text) {
				_, size := utf8.DecodeRuneInString(text[end:])
				end += size
			}
			if n := len(out); n > 0 && out[n-1][1] >= start {
				out[n-1][1] = end
				continue
			}
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

// isoDateWindows are the runs of what an ISO date and its time are written
// with (digits, "-", "/", ".", "T", " ", ":", "Z", "+") that hold four
// digits in a row, with their boundaries.
func isoDateWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, isoDateClass, func(run string) bool { return digitsThen(run, 4, "", false) }, true)
}

// numDateWindows are the runs of what 01.05.2027 is written with (digits,
// ".", "/", "-", ASCII white space) that hold four digits in a row, with
// their boundaries.
func numDateWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, numDateClass, func(run string) bool { return digitsThen(run, 4, "", false) }, true)
}

// phoneWindows are the runs of what a phone number is written with
// (digits, "(", ")", " ", "-", a no-break space, "+") that hold a digit,
// with their boundaries (phoneRe's \b looks at the character before).
func phoneWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, phoneClass, nil, true)
}

// numberWindows are the runs of digits and "#" that hold five digits in a
// row.
func numberWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, numberClass, func(run string) bool { return digitsThen(run, 5, "", false) }, false)
}

// ticketWindows are, for each run of three ASCII digits or more, what
// ticketNumberRe can read before it: the separators ("[ \x{00A0}\n]*[:#]?
// [ \x{00A0}\n]*"), a dot, the run of letters and hyphens before them, and
// the character before that (the boundary the pattern takes, which is no
// letter: "^" cannot match at the window's start where the text has none).
func ticketWindows(text string) [][2]int {
	var out [][2]int
	for i, j := range digitRuns(text, 3) {
		b := skipSpaceBack(text, i)
		if b > 0 && (text[b-1] == ':' || text[b-1] == '#') {
			b = skipSpaceBack(text, b-1)
		}
		if b > 0 && text[b-1] == '.' {
			b--
		}
		for b > 0 {
			r, size := utf8.DecodeLastRuneInString(text[:b])
			if !unicode.IsLetter(r) && r != '-' {
				break
			}
			b -= size
		}
		if b > 0 {
			_, size := utf8.DecodeLastRuneInString(text[:b])
			b -= size
		}
		if n := len(out); n > 0 && out[n-1][1] >= b {
			out[n-1][1] = j
		} else {
			out = append(out, [2]int{b, j})
		}
	}
	return out
}

// skipSpaceBack returns where the spaces, no-break spaces and line breaks
// that end text[:i] start.
func skipSpaceBack(text string, i int) int {
	for i > 0 {
		switch {
		case text[i-1] == ' ' || text[i-1] == '\n':
			i--
		case strings.HasSuffix(text[:i], "\u00a0"):
			i -= len("\u00a0")
		default:
			return i
		}
	}
	return i
}
