package grounding

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// monthNames lists each month's names as written in Polish (nominative,
// genitive and locative), English or German, lower-cased; abbreviations
// are listed apart, because some are also ordinary words ("sie" is German
// for "you", "mar" and "lis" are words too) and so name a month only beside
// a day or a year (see monthBesideYear).
var monthNames = [12]struct{ full, abbr []string }{
	{[]string{"january", "styczeń", "stycznia", "styczniu", "styczen", "januar", "jänner"}, []string{"jan", "sty", "jänn"}},
	{[]string{"february", "luty", "lutego", "lutym", "februar"}, []string{"feb", "lut"}},
	{[]string{"march", "marzec", "marca", "marcu", "märz", "maerz", "marz"}, []string{"mar", "mär"}},
	{[]string{"april", "kwiecień", "kwietnia", "kwietniu", "kwiecien"}, []string{"apr", "kwi"}},
	{[]string{"may", "maj", "maja", "maju", "mai"}, nil},
	{[]string{"june", "czerwiec", "czerwca", "czerwcu", "juni"}, []string{"jun", "cze"}},
	{[]string{"july", "lipiec", "lipca", "lipcu", "juli"}, []string{"jul", "lip"}},
	{[]string{"august", "sierpień", "sierpnia", "sierpniu", "sierpien"}, []string{"aug", "sie"}},
	{[]string{"september", "wrzesień", "września", "wrześniu", "wrzesien", "wrzesnia", "wrzesniu"}, []string{"sep", "sept", "wrz"}},
	{[]string{"october", "październik", "października", "październiku", "pazdziernik", "pazdziernika", "pazdzierniku", "oktober"}, []string{"oct", "paź", "paz", "okt"}},
	{[]string{"november", "listopad", "listopada", "listopadzie"}, []string{"nov", "lis"}},
	{[]string{"december", "grudzień", "grudnia", "grudniu", "grudzien", "dezember"}, []string{"dec", "gru", "dez"}},
}

// months maps every month name (of monthNames and moreMonthNames, as
// readable writes it: see readableForms) and abbreviation to its number;
// fullMonths only the names.
var months, fullMonths = func() (all, full map[string]int) {
	all, full = map[string]int{}, map[string]int{}
	for i, n := range monthNames {
		for _, name := range append(n.full, moreMonthNames[i]...) {
			for _, f := range readableForms(name) {
				all[f], full[f] = i+1, i+1
			}
		}
		for _, name := range n.abbr {
			all[name] = i + 1
		}
	}
	return all, full
}()

// romanMonths are the months as Roman numerals ("31 V 2028", Polish).
var romanMonths = map[string]int{"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10, "XI": 11, "XII": 12}

// alternation matches every key of m, longest first (so "VIII" is not read
// as "V").
func alternation[V any](m map[string]V) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, regexp.QuoteMeta(n))
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) > len(names[j])
		}
		return names[i] < names[j]
	})
	return strings.Join(names, "|")
}

// Pieces of the date patterns.
const (
	dateSpace = `[ \x{00A0}\n]`
	// A day's ordinal ending: 1st, 31-go, 31-szego, 31te, or the German
	// dot (1.). Not both: "June 1st. December 9" is two dates.
	dayOrdinal = `(?:st|nd|rd|th|-?(?:go|ego|giego|ciego|tego|szego)|-?te[nr]?|\.)?`
	// What stands between two days of a list or a range: "30 i 31",
	// "30-31", "1. bis 5.", "1st and 2nd", "1, 2".
	daySep = `(?:` + dateSpace + `?[-/,&+]` + dateSpace + `?|` + dateSpace + `(?:i|a|lub|albo|oraz|do|and|or|to|und|oder|bis)` + dateSpace + `)`
	// The days written before their month, as one group: "31", "30 i 31",
	// "1. bis 5.", at most three (see digitReach).
	daysBefore = `((?:\d{1,2}` + dayOrdinal + daySep + `){0,2}\d{1,2})` + dayOrdinal
	// The days written after their month, as one group: "31", "30 and 31".
	daysAfter = `((?:\d{1,2}(?:st|nd|rd|th)?` + daySep + `){0,2}\d{1,2}(?:st|nd|rd|th)?)`
	// A year's last two digits after an apostrophe: '28, ’28.
	shortYear = `['\x{2019}](\d{2})`
	// What stands before a year where nothing can run into it (after a
	// month's name, before an apostrophe): spaces, a comma, or nothing at
	// all ("31 maja2027", "31. Mai,2027", "May 31'28"). A year glued to
	// its month is still the date's year, not a number nobody reads.
	beforeYear = dateSpace + `*,?` + dateSpace + `*(?:(?i:de|del)` + dateSpace + `+)?`
	// What may stand between a day and its month: "of" (English), "de"
	// or "del" (Spanish).
	dayOf = `(?:(?:of|de|del)` + dateSpace + `+)?`
	// What stands between a day and its year: a comma, spaces or both
	// ("May 31,2027", "May 31 ,2027"); not nothing, which is one number.
	afterDay = `(?:` + dateSpace + `*,` + dateSpace + `*|` + dateSpace + `+)`
)

var (
	// 2027-05-01, 2027/05/01, 2027.05.01, and the date of an RFC 3339 time.
	isoDateRe = regexp.MustCompile(`(?:^|[^\p{N}])(\d{4})([-/.])(\d{1,2})[-/.](\d{1,2})((?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)(?:[^\p{N}]|$)`)
	// 01.05.2027, 1.5.2027, 01-05-2027, 31 . 12 . 2031: day first; 05/01/2027:
	// either way.
	numDateRe = regexp.MustCompile(`(?:^|[^\p{N}.,])(\d{1,2})[ \x{00A0}]?([./-])[\s\x{00A0}]?(\d{1,2})[ \x{00A0}]?[./-][\s\x{00A0}]?(\d{4})(?:[^\p{N}]|$)`)
	// 1 maja 2027, 1. Mai 2027, 1st of May 2027, 1 May, 2027, 01 wrz. 2027 r.,
	// 31-go maja 2027, 1-szego maja, der 31te Mai 2027, 30 i 31 maja 2027.
	// The month is any word here, looked up in months: an alternation of
	// every month name makes the expression many times slower.
	dmyRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])` + daysBefore + dateSpace + `+` + dayOf + `(\p{L}+)\.?` + beforeYear + `(\d{4})(?:[^\p{N}]|$)`)
	// May 1, 2027; May 1st 2027; Mai 1 2027; May 30 and 31, 2027.
	mdyRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(\p{L}+)\.?` + dateSpace + `+` + daysAfter + afterDay + `(\d{4})(?:[^\p{N}]|$)`)
	// 31.05.28, 05/31/28: a two-digit year (20yy), never followed by
	// another number part (so a version 1.2.3.4 or a phone is not one).
	shortYearRe = regexp.MustCompile(`(?:^|[^\p{N}.,/])(\d{1,2})([./])(\d{1,2})[./](\d{2})(?:[^\p{N}./]|[./](?:[^\p{N}]|$)|$)`)
	// 31 V 2028, 31.V.2028: a Roman-numeral month (upper case only).
	romanDateRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}])(\d{1,2})[. \x{00A0}\n]+(` + alternation(romanMonths) + `)[. \x{00A0}\n]+(\d{4})(?:[^\p{N}]|$)`)
	// The same with a two-digit year (20yy): 31 May '28, May 31, '28,
	// 1. Mai ’28; 30.V.28 (with dots only: in capitals "30 I 31 MAJA" is
	// two days of May).
	dmyShortRe   = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])` + daysBefore + dateSpace + `+` + dayOf + `(\p{L}+)\.?` + beforeYear + shortYear + `(?:[^\p{N}]|$)`)
	mdyShortRe   = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(\p{L}+)\.?` + dateSpace + `+` + daysAfter + beforeYear + shortYear + `(?:[^\p{N}]|$)`)
	romanShortRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}])(\d{1,2})\.[ \x{00A0}\n]?(` + alternation(romanMonths) + `)\.[ \x{00A0}\n]?(\d{2})(?:[^\p{N}.,:]|[.,:](?:[^\p{N}]|$)|$)`)
	// maja 2028, May 2028, Mai 2028, w maju 2028, Jun 2028, Dez. 2028: a
	// month and a year, no day (see monthBesideYear).
	monthYearRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}])(\p{L}+)(\.?),?` + dateSpace + `+(?:(?i:de|del)` + dateSpace + `+)?(\d{4})(?:[^\p{N}]|$)`)
	// 31 maja, 1. Juni, 30 i 31 maja, 5th of June; June 5, May 30 and 31:
	// a day and its month with no year (see yearless). Neither takes the
	// character after it, so a match the month's name turns down leaves
	// the next one its boundary: the month's name is a whole word as it
	// is, and the last day ends at a word boundary (\b, which takes
	// nothing: "December 9 /2027" is December 9, not a list of 9 and 20).
	dayMonthRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])` + daysBefore + dateSpace + `+` + dayOf + `(\p{L}+)`)
	monthDayRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(\p{L}+)` + dateSpace + `+` + daysAfter + `\b`)
)

func (s *scan) dates() {
	// ISO: year, month, day.
	s.eachSpan(isoDateRe, 1, 5, func(m []int) dateReading {
		return oneOf(validDates(s.group(m, 1), s.group(m, 3), s.group(m, 4)))
	})
	// 30.V.28 before a written-out month takes its "28." for a day.
	s.eachSpan(romanShortRe, 1, 3, s.romanDate("20"))
	// Written-out months before numeric day-first forms, so "1. Mai 2027"
	// is read whole.
	s.eachSpan(dmyRe, 1, 3, s.writtenDate(2, 1, ""))
	s.eachSpan(mdyRe, 1, 3, s.writtenDate(1, 2, ""))
	s.eachSpan(romanDateRe, 1, 3, s.romanDate(""))
	// The same with a two-digit year after an apostrophe.
	s.eachSpan(dmyShortRe, 1, 3, s.writtenDate(2, 1, "20"))
	s.eachSpan(mdyShortRe, 1, 3, s.writtenDate(1, 2, "20"))
	s.eachSpan(numDateRe, 1, 4, func(m []int) dateReading {
		return oneOf(dayMonth(s.group(m, 1), s.group(m, 2), s.group(m, 3), s.group(m, 4)))
	})
	s.eachSpan(shortYearRe, 1, 4, func(m []int) dateReading {
		return oneOf(dayMonth(s.group(m, 1), s.group(m, 2), s.group(m, 3), "20"+s.group(m, 4)))
	})
	// A day written as a word, before its month and year are read alone.
	s.wordDates()
	// A month and a year alone, once every fuller form has been read.
	s.eachSpan(monthYearRe, 1, 3, func(m []int) dateReading {
		mo, ok := monthBesideYear(s.group(m, 1), s.group(m, 2) != "")
		y, err := strconv.Atoi(s.group(m, 3))
		if !ok || err != nil || y < 1900 || y > 2200 {
			return dateReading{}
		}
		return oneOf([]string{fmt.Sprintf("%04d-%02d", y, mo)})
	})
	// A day and its month with no year, last of all.
	s.eachSpan(dayMonthRe, 1, 2, func(m []int) dateReading {
		return yearless(s.group(m, 2), s.group(m, 1)).beforeMonth(s.orig[:m[2]])
	})
	s.eachSpan(monthDayRe, 1, 2, func(m []int) dateReading {
		d := yearless(s.group(m, 1), s.group(m, 2)).endsAtNoDay()
		d.more = moreAfter
		return d
	})
	s.daysAfterTakenMonths()
}

// An English month's name may stand between two days, read with the one
// before it ("24. December 9", "1st December 9th", "23 December 9 and
// 24": "24. December", "1st December", "23 December"), so the days after
// it are read by none. daysAfterTakenMonths reads the days right after
// such a name as a date of their own, but for a time ("24 December
// 10:00"). "1 December 2 engineers" reads as December 2 too: a reply
// that means a number of engineers writes it as a word.
var (
	daysAfterMonthRe = regexp.MustCompile(`(?i)^` + dateSpace + `+` + daysAfter + `\b`)
	timeAfterRe      = regexp.MustCompile(`^[:.]\d`)
)

func (s *scan) daysAfterTakenMonths() {
	if !s.whole && !s.hasWord(isMonth) {
		return
	}
	for _, w := range s.allWords() {
		if !englishMonths[w.lower] || s.masked[w.start] != 0 {
			continue
		}
		m := daysAfterMonthRe.FindStringSubmatchIndex(s.orig[w.end:min(len(s.orig), w.end+listReach*3)])
		if m == nil {
			continue
		}
		from, to := w.end+m[2], w.end+m[1]
		d := yearless(w.text, s.orig[from:to]).endsAtNoDay()
		if d.until > 0 {
			to = from + d.until
		}
		if len(d.dates) == 0 || timeAfterRe.MatchString(s.orig[to:]) || bytes.IndexByte(s.masked[w.end:to], 0) >= 0 {
			continue
		}
		s.claim(Claim{Kind: KindDate, Text: w.text + s.orig[w.end:to], dates: d.dates, every: d.every}, from, to)
	}
}

// monthBesideYear reads the month a word before a year names: its full
// name ("maja 2028", not "maja. 2028", the end of a sentence and a number
// starting the next), or its abbreviation ("Jun 2028", "jun 2028", "Dez.
// 2028", "cze 2028"). The abbreviations that are words too name a month
// only written as one: "sie" with its dot, for "erhalten Sie 2028 Ersatz"
// is German "you" and a number; "mar" and "lis" capitalized or with it.
func monthBesideYear(word string, dot bool) (int, bool) {
	lower := strings.ToLower(word)
	if mo, ok := fullMonths[lower]; ok {
		return mo, !dot
	}
	mo, ok := months[lower]
	switch {
	case !ok || dot:
		return mo, ok
	case lower == "sie":
		return mo, false
	case lower == "mar" || lower == "lis":
		return mo, unicode.IsUpper([]rune(word)[0])
	}
	return mo, true
}

// writtenDate reads a match of a pattern whose month's name, days and
// year are groups month, days and the last (3), the year after century
// ("20" for '28).
func (s *scan) writtenDate(month, days int, century string) func(m []int) dateReading {
	return func(m []int) dateReading {
		mo, ok := months[strings.ToLower(s.group(m, month))]
		if !ok {
			return dateReading{}
		}
		d := listDates(century+s.group(m, 3), mo, s.group(m, days))
		if days < month {
			d = d.beforeMonth(s.orig[:m[2*days]])
		} else if !d.allDays() {
			// Read without its year (monthDayRe), up to the number that
			// is no day.
			return dateReading{}
		}
		return d
	}
}

// romanDate reads a match of a Roman-numeral month's pattern: day, month,
// year after century.
func (s *scan) romanDate(century string) func(m []int) dateReading {
	return func(m []int) dateReading {
		return oneOf(validDates(century+s.group(m, 3), strconv.Itoa(romanMonths[s.group(m, 2)]), s.group(m, 1)))
	}
}

// MentionsDate reports whether text states the calendar day iso
// ("YYYY-MM-DD") in any form Claims reads: 2027-05-31, 31.05.2027, 31.05.27,
// 31 maja 2027, May 31, 2027, 31. Mai 2027, 31 V 2027. A month named with
// its year alone ("maja 2027") does not state the day.
func MentionsDate(text, iso string) bool {
	if _, err := time.Parse("2006-01-02", iso); err != nil {
		return false
	}
	for _, c := range Claims(text) {
		if c.Kind == KindDate && slices.Contains(c.dates, iso) {
			return true
		}
	}
	return false
}

// eachSpan is each for a date pattern whose match includes a boundary
// character on either side: the claim covers groups first..last. A match
// takes the character after it, which the next claim may need as its own
// boundary ("01.05.2027 02.05.2027"): the text is read again, claimed
// spans masked, until a reading finds nothing new.
func (s *scan) eachSpan(re *regexp.Regexp, first, last int, f func(m []int) dateReading) {
	for found := true; found; {
		found = s.eachSpanOnce(re, first, last, f)
	}
}

func (s *scan) eachSpanOnce(re *regexp.Regexp, first, last int, f func(m []int) dateReading) (found bool) {
	// A match turned down took the character after it, which may be the
	// next one's boundary ("nr 4821 Dez. 2031": "nr 4821" is no date, and
	// "Dez. 2031" lost its space; "45.13.2031 31.12.2031"): hidden holds
	// where each such character is, to read a match from there.
	var hidden []int
	take := func(m []int) {
		d := f(m)
		if len(d.dates) == 0 {
			if k := m[2*last+1]; k < m[1] {
				hidden = append(hidden, k)
			}
			return
		}
		start, end := m[2*first]+d.from, m[2*last+1]
		if d.until > 0 {
			end = m[2*last] + d.until
		}
		start, end, d = s.moreDays(start, end, d)
		s.claim(Claim{Kind: KindDate, dates: d.dates, every: d.every}, start, end)
		found = true
	}
	for _, m := range s.find(re) {
		take(m)
	}
	// A chain of such matches is read once: each is read from where the
	// one before it ends, and reached again from where FindAll's ones do.
	seen := map[int]bool{}
	for len(hidden) > 0 {
		k := hidden[0]
		hidden = hidden[1:]
		if seen[k] {
			continue
		}
		seen[k] = true
		if m := matchAt(re, s.masked, k); m != nil && m[2*first] > k {
			take(m)
		}
	}
	return found
}

// anchored are the date patterns anchored at the start of the text they
// read, by pattern, made on first use.
var anchored sync.Map

// matchAt is re's match that starts at text[i], its offsets in text, or
// nil. One whose first group starts at i too took the start of text[i:]
// for its boundary: the caller knows what stands before.
func matchAt(re *regexp.Regexp, text []byte, i int) []int {
	a, ok := anchored.Load(re)
	if !ok {
		a, _ = anchored.LoadOrStore(re, regexp.MustCompile(`^(?:`+re.String()+`)`))
	}
	m := a.(*regexp.Regexp).FindSubmatchIndex(text[i:])
	for j := range m {
		if m[j] >= 0 {
			m[j] += i
		}
	}
	return m
}

// validDates returns the date as "YYYY-MM-DD" when y, m, d name a real
// calendar day, else nothing.
func validDates(y, m, d string) []string {
	yy, err1 := strconv.Atoi(y)
	mm, err2 := strconv.Atoi(m)
	dd, err3 := strconv.Atoi(d)
	if err1 != nil || err2 != nil || err3 != nil || mm < 1 || mm > 12 || dd < 1 || dd > 31 || yy < 1900 || yy > 2200 {
		return nil
	}
	t := time.Date(yy, time.Month(mm), dd, 0, 0, 0, 0, time.UTC)
	if t.Day() != dd {
		return nil // 31 April
	}
	return []string{fmt.Sprintf("%04d-%02d-%02d", yy, mm, dd)}
}
