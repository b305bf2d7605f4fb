// Package serial finds product serial numbers in customer text with
// configurable regular expressions.
package serial

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// DefaultPatterns catch forms like SN12345, SN-48213-PL, S/N: ABC123456,
// "numer seryjny: …", "nr seryjny …", "serial number …". Each pattern has
// exactly one capturing group: the serial itself. Captures without a digit,
// shorter than five characters (normalized) or shaped like a date are
// dropped whatever the pattern.
var DefaultPatterns = []string{
	// SN-prefixed serials written as one token: SN12345, SN-48213-PL, SN 12345.
	`(?i)\b(SN(?:[- ]?[0-9]|-[A-Z])[A-Z0-9]*(?:-[A-Z0-9]+)*)\b`,
	// Labelled serials, English and Polish (with common inflections):
	// "S/N: ABC123456", "SN: X1", "serial number is X1", "serial no. X1",
	// "numer seryjny: X1", "numeru seryjnego X1", "nr seryjny X1",
	// "nr ser. X1", "numer fabryczny X1". Up to three words may stand between
	// the label and a ":"/"to"/"is" ("numer seryjny urządzenia to X1",
	// "serial number of my kettle is X1").
	`(?i)\b(?:S/N|S\.N\.|SN\s*[:#]|serial(?:\s+(?:number|num\.?|no\.?|nr\.?|#))?|(?:numer(?:u|em|ze)?|nr\.?)\s+(?:seryjn(?:y|ego|ym)|ser\.|fabryczn(?:y|ego|ym)))` +
		`(?:(?:\s+\pL+){1,3}?\s*(?::|\bto\b|\bis\b|\bjest\b))?` +
		`(?:\s*(?:[:#=*"'„(–-]|\bis\b|\bto\b|\bjest\b))*\s*([A-Z0-9][A-Z0-9./-]*[A-Z0-9])`,
}

// Extractor finds serials with a fixed set of compiled patterns. It is safe
// for concurrent use.
type Extractor struct {
	patterns []*regexp.Regexp
}

// New compiles patterns (DefaultPatterns when none are given). An invalid
// pattern is an error naming it.
func New(patterns ...string) (*Extractor, error) {
	if len(patterns) == 0 {
		patterns = DefaultPatterns
	}
	e := &Extractor{}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("serial: pattern %q: %w", p, err)
		}
		if re.NumSubexp() != 1 {
			return nil, fmt.Errorf("serial: pattern %q: want exactly one capturing group, have %d", p, re.NumSubexp())
		}
		e.patterns = append(e.patterns, re)
	}
	return e, nil
}

// Extract returns every distinct serial found, serials in text first (in
// order of appearance), then those found only in quoted history.
// Serials are returned upper-cased as written (dashes kept).
func (e *Extractor) Extract(text, quoted string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range []string{text, quoted} {
		for _, sn := range e.find(s) {
			if k := Normalize(sn); !seen[k] {
				seen[k] = true
				out = append(out, sn)
			}
		}
	}
	return out
}

type hit struct {
	pos    int
	serial string
}

// find returns the plausible serials in s ordered by position.
func (e *Extractor) find(s string) []string {
	var hits []hit
	for _, re := range e.patterns {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			if m[2] < 0 {
				continue
			}
			sn := strings.ToUpper(strings.Trim(s[m[2]:m[3]], "./-"))
			if plausible(sn) {
				hits = append(hits, hit{m[2], sn})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].pos < hits[j].pos })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.serial)
	}
	return out
}

// dateLike matches dates such as 2024-05-12, 12.05.2024 or 12/05/24.
var dateLike = regexp.MustCompile(`^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$`)

// plausible rejects captures that cannot be serials: fewer than five
// characters, no digit, or a date.
func plausible(sn string) bool {
	n := Normalize(sn)
	if len(n) < 5 || !strings.ContainsAny(n, "0123456789") {
		return false
	}
	return !dateLike.MatchString(sn)
}

// Normalize maps a serial to the form used for comparisons: upper case,
// without spaces, dashes, dots and slashes.
func Normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r', '-', '.', '/', '\u2013', '\u00a0':
			return -1
		}
		return r
	}, strings.ToUpper(s))
}
