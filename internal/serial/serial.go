// Package serial finds product serial numbers in customer text with
// configurable regular expressions.
package serial

// DefaultPatterns catch forms like SN12345, SN-48213-PL, S/N: ABC123456,
// "numer seryjny: …", "nr seryjny …", "serial number …". Each pattern has
// exactly one capturing group: the serial itself.
var DefaultPatterns = []string{}

// Extractor finds serials with a fixed set of compiled patterns. It is safe
// for concurrent use.
type Extractor struct{}

// New compiles patterns (DefaultPatterns when none are given). An invalid
// pattern is an error naming it.
func New(patterns ...string) (*Extractor, error) {
	panic("TODO")
}

// Extract returns every distinct serial found, serials in text first (in
// order of appearance), then those found only in quoted history.
// Serials are returned upper-cased as written (dashes kept).
func (e *Extractor) Extract(text, quoted string) []string {
	panic("TODO")
}

// Normalize maps a serial to the form used for comparisons: upper case,
// without spaces, dashes, dots and slashes.
func Normalize(s string) string {
	panic("TODO")
}
