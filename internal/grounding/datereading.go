package grounding

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// dateReading is what a date pattern's match states: the calendar dates it
// can mean (two for an ambiguous 05/01/2027), or, for a list or a range of
// days ("30 i 31 maja 2027"), the dates it states, every one of them.
type dateReading struct {
	dates []string
	every bool
	// days are the list's days as written and where each starts in its
	// group of days (see ascending); from is where the days read start.
	days []listDay
	from int
	// until, when not 0, is where the days read end in the pattern's
	// last group, its days (see endsAtNoDay).
	until int
	// more: the list may go on before its first day (a list written
	// before its month) or after its last (one written after it): see
	// moreDays.
	more listEnd
}

// listDay is a day of a list as written: where it starts and ends in its
// group of days, and whether it is a day of the month.
type listDay struct {
	day, at, end int
	ok           bool
}

// listEnd is the end of a list of days more days may stand at.
type listEnd int

const (
	noMore listEnd = iota
	moreBefore
	moreAfter
)

// beforeMonth reads a list of days written before their month, after the
// text before: without the numbers before it that are not its days (see
// afterHours, afterNumber, ascending), and with the days before it no
// pattern read (see moreDays).
func (d dateReading) beforeMonth(before string) dateReading {
	d = d.afterHours(before).afterNumber(before).ascending()
	d.more = moreBefore
	return d
}

// ascending reads a list of days written before their month as its days
// run up to the month: a list whose days do not ascend ("godziny 8-16, 5
// maja") is numbers of something else before a date, and only the days
// after the last that does not ascend are the date's ("5 maja"). A list of
// days of one month is written in their order ("1, 2 lub 3 lipca", "30 i
// 31 maja").
func (d dateReading) ascending() dateReading {
	i := len(d.days) - 1
	for i > 0 && d.days[i-1].day < d.days[i].day {
		i--
	}
	return d.tail(i)
}

// allDays reports whether every number of the list is a day of its month.
func (d dateReading) allDays() bool {
	return !slices.ContainsFunc(d.days, func(day listDay) bool { return !day.ok })
}

// endsAtNoDay reads a list of days written after its month up to its
// first number that is no day of the month: "May 1st, 99%" states May 1,
// and its 99 is a percentage the list must not hide.
func (d dateReading) endsAtNoDay() dateReading {
	k := slices.IndexFunc(d.days, func(day listDay) bool { return !day.ok })
	switch k {
	case -1:
		return d
	case 0:
		return dateReading{}
	}
	return dateReading{dates: d.dates[:k], every: k > 1, days: d.days[:k], until: d.days[k-1].end, more: d.more}
}

// tail is the reading of the list's days from its i-th on (itself when
// i is 0, or when a day of the list is no date and the two do not match).
func (d dateReading) tail(i int) dateReading {
	if i <= 0 || i >= len(d.days) || !d.allDays() {
		return d
	}
	return dateReading{dates: d.dates[i:], every: len(d.dates)-i > 1, days: d.days[i:], from: d.days[i].at, more: d.more}
}

// afterHours reads a list of days written before their month after a
// range of hours ("w godzinach 8-16, 24 grudnia", "godz. 8 do 16, 24
// grudnia"): the range's two numbers are hours, and the date is the days
// after them. before is the text before the list, which may hold the
// range's first number (the list is at most three days: "godzinach 8-" and
// "16, 23 i 24 grudnia").
func (d dateReading) afterHours(before string) dateReading {
	n, ok := hoursBefore(before)
	if !ok || len(d.days) <= 2-n {
		return d
	}
	return d.tail(2 - n)
}

// afterNumber reads a list of days written before their month whose first
// number is the end of another number ("wersja 2.5, 24 grudnia", "do
// 30.04, 5 maja"): the date is the days after it. before is the text
// before the list.
func (d dateReading) afterNumber(before string) dateReading {
	n := len(before)
	if n < 2 || before[n-1] != '.' && before[n-1] != ',' || !isDigitByte(before[n-2]) {
		return d
	}
	return d.tail(1)
}

// hoursBefore tells whether text ends in a word of hours and then at most
// one number with its separators ("godzinach ", "godz. 8 do ",
// "hours 8-"), and how many numbers follow the word.
func hoursBefore(text string) (numbers int, ok bool) {
	for {
		text = strings.TrimRight(text, " \u00a0\n-,/")
		w, rest := cutLastWord(text)
		if w == "do" || w == "to" || w == "bis" {
			text = rest
			continue
		}
		j := len(text)
		for j > 0 && isDigitByte(text[j-1]) {
			j--
		}
		if j == len(text) {
			break
		}
		if numbers++; numbers > 1 {
			return 0, false
		}
		text = text[:j]
	}
	w, _ := cutLastWord(strings.TrimSuffix(text, "."))
	return numbers, hoursWords[w]
}

// hoursWords are the words, lower-cased, a range of hours is written after.
var hoursWords = map[string]bool{
	"godzina": true, "godziny": true, "godzinach": true, "godzinie": true, "godz": true,
	"hours": true, "hour": true, "h": true, "stunden": true, "zeit": true,
}

// cutLastWord is the run of letters text ends in, lower-cased, and the
// text before it.
func cutLastWord(text string) (word, rest string) {
	start := len(text)
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:start])
		if !unicode.IsLetter(r) {
			break
		}
		start -= size
	}
	return strings.ToLower(text[start:]), text[:start]
}

func oneOf(dates []string) dateReading { return dateReading{dates: dates} }

// listDates reads the days of a list ("30 i 31", "1. bis 5.") in month mo
// of year y, or of no year (y empty: see yearless). A day that is not one
// of the month's (30 February) is not a date.
func listDates(y string, mo int, days string) dateReading {
	var ds []string
	var read []listDay
	for i := 0; i < len(days); {
		if !isDigitByte(days[i]) {
			i++
			continue
		}
		j := i
		for j < len(days) && isDigitByte(days[j]) {
			j++
		}
		d := days[i:j]
		n, _ := strconv.Atoi(d)
		start := i
		i = j
		var one []string
		if y == "" {
			if one = validDates(leapYear, strconv.Itoa(mo), d); len(one) > 0 {
				one[0] = "--" + one[0][5:]
			}
		} else {
			one = validDates(y, strconv.Itoa(mo), d)
		}
		ds = append(ds, one...)
		read = append(read, listDay{day: n, at: start, end: j, ok: len(one) > 0})
	}
	return dateReading{dates: ds, every: len(ds) > 1, days: read}
}

// leapYear is a year in which every day of the calendar is one, for
// checking a day written without its year (29 February).
const leapYear = "2000"

// yearless reads a day and a month written with no year ("31 maja", "June
// 5"), as ISO 8601 writes it ("--05-31"): only a month's full name, and an
// English one only capitalized, for "may", "march" and "august" are words
// too ("option 1 may help"); an abbreviation is a month only beside a year.
func yearless(month, days string) dateReading {
	mo, ok := fullMonths[strings.ToLower(month)]
	if !ok || englishMonths[strings.ToLower(month)] && !unicode.IsUpper([]rune(month)[0]) {
		return dateReading{}
	}
	return listDates("", mo, days)
}

// englishMonths are the months' English names.
var englishMonths = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range monthNames {
		m[n.full[0]] = true
	}
	return m
}()

// dayMonth reads a numeric date written day first (a, b), or, with a
// slash, either way (05/01/2027 is 5 January or 1 May).
func dayMonth(a, sep, b, y string) []string {
	ds := validDates(y, b, a) // day first
	if sep == "/" {
		ds = append(ds, validDates(y, a, b)...) // month first (US)
	}
	return ds
}

// A list of days is read by the patterns up to three days (see
// digitReach), and a list whose separator is a word may be read no
// further than the word, taken for its month's name ("5, 6, 23 i 24
// grudnia" is first "5, 6, 23" of a month "i"). moreDays reads the rest of
// such a list from the days the patterns read: the days written before
// the first one, each lower than the next ("5, 6, 23 i"), up to a number
// that is one of a range of hours (see afterHours); or the days after the
// last one of a list written after its month, each higher than the one
// before ("December 5, 6, 23 and 24"). A day that is no day of the month
// ends the list. It returns the list's span and reading.
var (
	dayBeforeListRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}.,])(\d{1,2})` + dayOrdinal + daySep + `$`)
	dayAfterListRe  = regexp.MustCompile(`(?i)^` + daySep + `(\d{1,2})(?:st|nd|rd|th)?\b`)
)

// listReach bounds the text read for one more day: a day, its ordinal
// ending and a separator word with spaces.
const listReach = 24

func (s *scan) moreDays(start, end int, d dateReading) (int, int, dateReading) {
	if len(d.days) == 0 || !d.allDays() {
		return start, end, d
	}
	switch d.more {
	case moreBefore:
		for {
			from, n, ok := s.dayBefore(start)
			if !ok || n >= d.days[0].day {
				break
			}
			if _, hours := hoursBefore(s.orig[:from]); hours {
				break
			}
			one := sameMonth(d.dates[0], n)
			if one == "" {
				break
			}
			d.dates = append([]string{one}, d.dates...)
			d.days = append([]listDay{{day: n}}, d.days...)
			start, d.every = from, true
		}
	case moreAfter:
		for {
			to, n, ok := s.dayAfter(end)
			if !ok || n <= d.days[len(d.days)-1].day {
				break
			}
			one := sameMonth(d.dates[len(d.dates)-1], n)
			if one == "" {
				break
			}
			d.dates = append(d.dates, one)
			d.days = append(d.days, listDay{day: n})
			end, d.every = to, true
		}
	}
	return start, end, d
}

// dayBefore reads a day and a list's separator no reading took that end
// at i ("23 i "): where the day starts, and the day.
func (s *scan) dayBefore(i int) (int, int, bool) {
	at := max(0, i-listReach)
	m := dayBeforeListRe.FindStringSubmatchIndex(s.orig[at:i])
	if m == nil || bytes.IndexByte(s.masked[at+m[2]:i], 0) >= 0 {
		return 0, 0, false
	}
	if m[0] == 0 && at > 0 {
		// The window's start is no boundary: look at what stands before.
		if r, _ := utf8.DecodeLastRuneInString(s.orig[:at]); unicode.IsLetter(r) || unicode.IsNumber(r) || r == '.' || r == ',' {
			return 0, 0, false
		}
	}
	n, _ := strconv.Atoi(s.orig[at+m[2] : at+m[3]])
	return at + m[2], n, true
}

// dayAfter reads a list's separator and a day no reading took from i ("
// and 24"): where the day ends, and the day.
func (s *scan) dayAfter(i int) (int, int, bool) {
	m := dayAfterListRe.FindStringSubmatchIndex(s.orig[i:min(len(s.orig), i+listReach)])
	if m == nil || bytes.IndexByte(s.masked[i:i+m[3]], 0) >= 0 {
		return 0, 0, false
	}
	n, _ := strconv.Atoi(s.orig[i+m[2] : i+m[3]])
	return i + m[3], n, true
}

// sameMonth is day n of the month of date ("2027-05-31", or "--05-31"
// with no year), written as date is, or "" when the month has no such day.
func sameMonth(date string, n int) string {
	y := strings.TrimSuffix(date[:len(date)-6], "-")
	mo, _ := strconv.Atoi(date[len(date)-5 : len(date)-3])
	if d := listDates(y, mo, strconv.Itoa(n)); d.allDays() {
		return d.dates[0]
	}
	return ""
}
