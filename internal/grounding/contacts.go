package grounding

import (
	"regexp"
	"strings"
)

var (
	urlRe = regexp.MustCompile(`(?i)\b(?:https?://|www\.)[^\s\x{00A0}<>"'\x00]*[^\s\x{00A0}<>"'\x00.,;:!?)\]]`)
	// An address's local part and domain; the domain ends in letters.
	emailRe = regexp.MustCompile(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,}`)
)

func (s *scan) urls() {
	s.each(urlRe, func(m []int) (Claim, bool) {
		u := s.asWritten(m[0], m[1])
		return Claim{Kind: KindURL, Text: u, key: normURL(u)}, true
	})
}

// normURL lower-cases a URL's scheme and host, drops the scheme, a leading
// "www." and a trailing slash: "HTTPS://Example.com/a/" -> "example.com/a".
func normURL(u string) string {
	low := strings.ToLower(u)
	for _, p := range []string{"https://", "http://"} {
		if strings.HasPrefix(low, p) {
			u, low = u[len(p):], low[len(p):]
		}
	}
	host, path := u, ""
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		host, path = u[:i], u[i:]
	}
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	return strings.TrimRight(host+path, "/")
}

func (s *scan) emails() {
	s.each(emailRe, func(m []int) (Claim, bool) {
		a := s.asWritten(m[0], m[1])
		return Claim{Kind: KindEmail, Text: a, key: strings.ToLower(a)}, true
	})
}

// A phone number: 7 to 15 digits, in groups separated by single spaces,
// dashes or parentheses, optionally after "+" or "00". After its first
// group a parenthesis opens only an area code it closes ("+48 (22) 123 45
// 67"): "601 234 567 (601-234-567)" is one number written twice.
var phoneRe = regexp.MustCompile(`(?:\+|\b)\(?\d[\d()]*(?:[ \-\x{00A0}]?(?:\(\d{1,4}\)|\d)[\d)]*)*`)

func (s *scan) phones() {
	s.each(phoneRe, func(m []int) (Claim, bool) {
		tok := strings.TrimRight(s.orig[m[0]:m[1]], " -")
		d := digitsOf(tok)
		if len(d) < 7 || !boundary(s.masked, m[0], m[1]) {
			return Claim{}, false
		}
		// A bare run of digits is a number, not a phone (see numbers).
		if !strings.ContainsAny(tok, " -()+\u00a0") {
			return Claim{}, false
		}
		// More digits than any phone number has: a bank account or card
		// number in groups ("61 1090 1014 0000 0712 1981 2874"), or a
		// number run on into the next.
		if len(d) > 15 {
			return Claim{Kind: KindAccount, key: d}, true
		}
		return Claim{Kind: KindPhone, key: phoneKey(tok)}, true
	})
}

// phoneKey is the digits of a phone number without an international prefix
// written as 00.
func phoneKey(p string) string {
	d := digitsOf(p)
	if !strings.HasPrefix(strings.TrimSpace(p), "+") {
		d = strings.TrimPrefix(d, "00")
	}
	return d
}

// international returns what follows the "+" or "00" a phone number
// written with its country code starts with, and whether it has one.
func international(p string) (string, bool) {
	p = strings.TrimLeft(strings.TrimSpace(p), "(")
	if rest, ok := strings.CutPrefix(p, "+"); ok {
		return rest, true
	}
	return strings.CutPrefix(p, "00")
}

// countryCode returns the country code of a phone number written with
// it in a group of its own ("+48 22 123 45 67", "0048-22-...", "(+48)
// 22..."): the one to three digits after "+" or "00" that a separator ends.
func countryCode(p string) (string, bool) {
	rest, ok := international(p)
	if !ok {
		return "", false
	}
	n := 0
	for n < len(rest) && isDigitByte(rest[n]) {
		n++
	}
	if n < 1 || n > 3 || n == len(rest) || strings.IndexByte(" -()", rest[n]) < 0 && !strings.HasPrefix(rest[n:], "\u00a0") {
		return "", false
	}
	return rest[:n], true
}

// samePhone: equal digits, or one ends with the other, the shorter has at
// least 9 digits and the longer at most 3 more (a national number written
// with and without its country code, which has 1 to 3 digits:
// "+48 22 123 45 67" and "22 123 45 67"; "9999 22 123 45 67" is another
// number).
func samePhone(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 9 && len(b)-len(a) <= 3 && strings.HasSuffix(b, a)
}
