package grounding

import (
	"regexp"
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
