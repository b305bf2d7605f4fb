package grounding

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// months maps a month name as written in Polish (nominative and genitive),
// English or German, full or abbreviated, lower-cased, to its number.
var months = func() map[string]int {
	m := map[string]int{}
	for i, names := range [12][]string{
		{"january", "jan", "styczeń", "stycznia", "styczen", "sty", "januar", "jänner", "jänn"},
		{"february", "feb", "luty", "lutego", "lut", "februar"},
		{"march", "mar", "marzec", "marca", "märz", "maerz", "mär", "marz"},
		{"april", "apr", "kwiecień", "kwietnia", "kwiecien", "kwi"},
		{"may", "maj", "maja", "mai"},
		{"june", "jun", "czerwiec", "czerwca", "cze", "juni"},
		{"july", "jul", "lipiec", "lipca", "lip", "juli"},
		{"august", "aug", "sierpień", "sierpnia", "sierpien", "sie"},
		{"september", "sep", "sept", "wrzesień", "września", "wrzesien", "wrzesnia", "wrz"},
		{"october", "oct", "październik", "października", "pazdziernik", "pazdziernika", "paź", "paz", "oktober", "okt"},
		{"november", "nov", "listopad", "listopada", "lis"},
		{"december", "dec", "grudzień", "grudnia", "grudzien", "gru", "dezember", "dez"},
	} {
		for _, n := range names {
			m[n] = i + 1
		}
	}
	return m
}()

// monthPat matches every month name, longest first (so "maja" is not read
// as "maj").
var monthPat = func() string {
	names := make([]string, 0, len(months))
	for n := range months {
		names = append(names, regexp.QuoteMeta(n))
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) > len(names[j])
		}
		return names[i] < names[j]
	})
	return strings.Join(names, "|")
}()

var (
	// 2027-05-01, 2027/05/01, 2027.05.01, and the date of an RFC 3339 time.
	isoDateRe = regexp.MustCompile(`(?:^|[^\p{N}])(\d{4})([-/.])(\d{1,2})[-/.](\d{1,2})((?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)(?:[^\p{N}]|$)`)
	// 01.05.2027, 1.5.2027, 01-05-2027: day first; 05/01/2027: either way.
	numDateRe = regexp.MustCompile(`(?:^|[^\p{N}.,])(\d{1,2})([./-])\s?(\d{1,2})[./-]\s?(\d{4})(?:[^\p{N}]|$)`)
	// 1 maja 2027, 1. Mai 2027, 1st of May 2027, 1 May, 2027, 01 wrz. 2027 r.
	dmyRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])(\d{1,2})(?:st|nd|rd|th)?\.?[ \x{00A0}]+(?:of[ \x{00A0}]+)?(` + monthPat + `)\.?,?[ \x{00A0}]+(\d{4})(?:[^\p{N}]|$)`)
	// May 1, 2027; May 1st 2027; Mai 1 2027.
	mdyRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(` + monthPat + `)\.?[ \x{00A0}]+(\d{1,2})(?:st|nd|rd|th)?,?[ \x{00A0}]+(\d{4})(?:[^\p{N}]|$)`)
)

func (s *scan) dates() {
	// ISO: year, month, day.
	s.eachSpan(isoDateRe, 1, 5, func(m []int) []string {
		return validDates(s.group(m, 1), s.group(m, 3), s.group(m, 4))
	})
	// Written-out months before numeric day-first forms, so "1. Mai 2027"
	// is read whole.
	s.eachSpan(dmyRe, 1, 3, func(m []int) []string {
		return validDates(s.group(m, 3), strconv.Itoa(months[strings.ToLower(s.group(m, 2))]), s.group(m, 1))
	})
	s.eachSpan(mdyRe, 1, 3, func(m []int) []string {
		return validDates(s.group(m, 3), strconv.Itoa(months[strings.ToLower(s.group(m, 1))]), s.group(m, 2))
	})
	s.eachSpan(numDateRe, 1, 4, func(m []int) []string {
		a, sep, b, y := s.group(m, 1), s.group(m, 2), s.group(m, 3), s.group(m, 4)
		ds := validDates(y, b, a) // day first
		if sep == "/" {
			ds = append(ds, validDates(y, a, b)...) // month first (US)
		}
		return ds
	})
}

// eachSpan is each for a date pattern whose match includes a boundary
// character on either side: the claim covers groups first..last.
func (s *scan) eachSpan(re *regexp.Regexp, first, last int, f func(m []int) []string) {
	for _, m := range re.FindAllSubmatchIndex(s.masked, -1) {
		ds := f(m)
		if len(ds) == 0 {
			continue
		}
		start, end := m[2*first], m[2*last+1]
		s.claims = append(s.claims, Claim{Kind: KindDate, Text: s.orig[start:end], dates: ds})
		for i := start; i < end; i++ {
			s.masked[i] = 0
		}
	}
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
