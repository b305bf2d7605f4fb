package grounding

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A ticket number written as digits alone, after the word that names it:
// "zgłoszenie nr 4821", "ticket 4821", "Ticket-Nr. 4821", "case #4825". The
// expression finds any word before a number; ticketWord says which words
// name a ticket (an alternation of them makes the expression slow).
var ticketNumberRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}])(\p{L}[\p{L}\-]*\.?)[ \x{00A0}\n]*[:#]?[ \x{00A0}\n]*(\d{3,})`)

// ticketWord reports whether w (lower case) names a ticket, a case or its
// number in Polish, English or German.
func ticketWord(w string) bool {
	switch strings.TrimSuffix(w, ".") {
	case "nr", "no", "case", "ref", "reference", "sprawy", "sprawa", "ticket-nr", "ticketnr":
		return w != "no" // "no" only as "no."
	}
	for _, p := range []string{"ticket", "zgłoszeni", "numer", "vorgang"} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// ticketNumbers reads the text twice: first (last false) before the
// identifiers, phone numbers and long numbers, leaving them the digits that
// go on after a ticket word's number; then after every other reading (last
// true), taking what none of them took ("zgłoszenie nr 4711 31" is no
// phone, date or amount, and still a ticket number).
func (s *scan) ticketNumbers(last bool) {
	for found := true; found; {
		found = false
		for _, m := range s.find(ticketNumberRe) {
			start, end := m[4], m[5]
			if !ticketWord(strings.ToLower(s.group(m, 1))) {
				continue
			}
			// Digits that go on after a space, a dash, a slash or a dot are a
			// phone number, a date or an amount, not a ticket number.
			if rest := s.masked[end:]; !last && len(rest) > 1 && strings.IndexByte(" -/.,", rest[0]) >= 0 && rest[1] >= '0' && rest[1] <= '9' {
				continue
			}
			s.claim(Claim{Kind: KindTicket, key: s.orig[start:end]}, start, end)
			found = true
		}
	}
}

// An identifier: a token of letters, digits, dashes, underscores and slashes
// with at least one letter and one digit ("SN-48213-PL", "TKT-000123",
// "X200"); units and ordinals ("24h", "3rd", "500ml", "2FA") are not.
var (
	identRe  = regexp.MustCompile(`[\p{L}\p{N}](?:[\p{L}\p{N}_/\-]*[\p{L}\p{N}])?`)
	notIdent = regexp.MustCompile(`(?i)^(?:\d+(?:st|nd|rd|th|h|min|s|d|x|kg|g|mg|cm|mm|m|km|ml|l|gb|tb|mb|kb|mah|wh|kwh|w|kw|v|hz|khz|mhz|ghz|fa|k|p|pln|eur|usd|zł)|[a-z]{1,3}\d|utf-?8|iso-?8859-?\d+|mp\d|h\.?26\d|ipv[46]|wi-?fi\d*|covid-19|rfc\d+)$`)
	ticketRe = regexp.MustCompile(`(?i)^(?:TKT|TICKET|CASE|RMA|ZGL|INC|REQ)[-_/]?\d+$`)
)

func (s *scan) identifiers() {
	s.each(identRe, func(m []int) (Claim, bool) {
		tok := s.orig[m[0]:m[1]]
		if !hasLetter(tok) || !hasDigit(tok) || utf8.RuneCountInString(tok) < 3 || notIdent.MatchString(tok) {
			return Claim{}, false
		}
		if !boundary(s.masked, m[0], m[1]) {
			return Claim{}, false
		}
		kind := KindIdentifier
		if ticketRe.MatchString(tok) {
			kind = KindTicket
		}
		return Claim{Kind: kind, key: strings.ToUpper(tok)}, true
	})
}

// boundary reports whether masked[start:end] is not glued to a masked span
// (a token that touches an email address or a URL is part of it).
func boundary(masked []byte, start, end int) bool {
	return (start == 0 || masked[start-1] != 0) && (end == len(masked) || masked[end] != 0)
}

// A long number: five digits or more standing alone (an invented ticket or
// order number written without letters).
var numberRe = regexp.MustCompile(`#?\d{5,}`)

func (s *scan) numbers() {
	s.each(numberRe, func(m []int) (Claim, bool) {
		if m[0] > 0 && isWordByte(s.orig[m[0]-1]) || m[1] < len(s.orig) && isWordByte(s.orig[m[1]]) {
			return Claim{}, false
		}
		return Claim{Kind: KindNumber, key: digitsOf(s.orig[m[0]:m[1]])}, true
	})
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }
func hasDigit(s string) bool  { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

// A short reference after "nr", "Nr.", "no." or "#": "nr 77", "Nr. 42",
// "#7731". Read last, so it takes only the numbers no other reading took:
// a longer one after a ticket word is ticketNumbers', a long one after "#"
// numbers'. Two digits at least: "krok nr 1" counts steps.
var shortRefRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}#])(nr\.?|no\.|#)[ \x{00A0}]?(\d{2,})(?:[^\p{N}.,/\-]|[.,/\-](?:[^\p{N}]|$)|$)`)

func (s *scan) shortRefs() {
	if !s.whole && strings.IndexByte(s.orig, '#') < 0 && (!containsFoldASCII(s.orig, "nr") && !containsFoldASCII(s.orig, "no") ||
		!s.hasWord(func(w word) bool { return w.lower == "nr" || w.lower == "no" })) {
		return
	}
	s.eachGroups(shortRefRe, 1, 2, func(_, n string) (Claim, bool) {
		return Claim{Kind: KindTicket, key: n}, true
	})
}
