// Package grounding checks that a reply states only facts triage can back:
// it finds the factual claims in a text (identifiers such as ticket and
// serial numbers, short references after "nr" or "#", long numbers, dates
// in any written form of Polish, English or German and with the month's
// name in French, Spanish, Italian, Czech, Russian, Ukrainian or Estonian,
// a year a word places something in ("do 2031 roku", "Q4 2031"), amounts
// with a currency (any ISO 4217 code, common signs and names, a multiplier
// such as "tys." or "k", or in words), durations and percentages, phone
// numbers, bank account and card numbers, email addresses, also spelled
// out ("anna (at) example (dot) pl"), and URLs, also a domain without a
// scheme) and tells which of them appear nowhere in the sources the shop
// controls (the function results of this email, the trusted facts, the
// instructions): the customer's own words back nothing, but a claim the
// reply quotes as theirs (see Sources.AddCustomerText). Dates are compared as calendar
// dates, amounts as numbers and durations as lengths, so "1 maja 2027" is
// backed by "2027-05-01", "1 maja" (no year) by the first of May of any
// year, "do 2027 roku" by any date of 2027, "30 i 31 maja 2027" by both
// days, "1 200,00 zł" by 1200 (an amount only by an amount or a number a
// function returned, never by a number in a name: "Aroma 5000") and "2
// tygodnie" by "14 days". A text is read as a customer reads it
// (readable): digits of any script, fullwidth forms, any dash, no
// invisible characters, any space as one space, a letter of another
// script that looks like a Latin one as that letter, a character with a
// compatibility form (NFKC: circled or superscript digits, a one dot
// leader) as that form.
package grounding

import (
	"fmt"
	"regexp"
)

// Kind is what a claim states.
type Kind string

// Kinds of claim.
const (
	KindURL        Kind = "url"
	KindEmail      Kind = "email address"
	KindDate       Kind = "date"
	KindAmount     Kind = "amount"
	KindPhone      Kind = "phone number"
	KindTicket     Kind = "ticket number"
	KindIdentifier Kind = "serial or reference number"
	KindTaxID      Kind = "tax number"
	KindNumber     Kind = "number"
	KindAccount    Kind = "bank account or card number"
	KindDuration   Kind = "duration"
	KindPercent    Kind = "percentage"
)

// Claim is one fact stated in a text.
type Claim struct {
	Kind Kind
	// Text is the claim as written.
	Text string
	// key is the normalized form compared with the sources: a lower-cased
	// address or URL, an upper-cased identifier, the digits of a phone
	// number or a long number.
	key string
	// dates are the calendar dates the text can mean (two for an
	// ambiguous 05/01/2027), as "YYYY-MM-DD", "YYYY-MM" for a month and
	// its year, "--MM-DD" for a day and its month with no year; every: the
	// dates a list of days states ("30 i 31 maja 2027"), each of them.
	dates []string
	every bool
	// amount is the value in hundredths and its currency (ISO code).
	cents    int64
	currency string
	// numbers are a duration's or a percentage's numbers as written
	// ("3-5 dni": 3 and 5), lengths each as a length in its measure's
	// base unit ("time 4320", "months 24", "percent 20"); every one must
	// be backed. A vague duration has no number and one length, its
	// degree and unit ("few time 1440": "kilka dni", "a few days").
	numbers []string
	lengths []string
	// at is where the claim starts in the text as readable writes it.
	at int
	// wrongID is the serial or id, as written, next to which a reply
	// states a date or amount that only a result about another id states
	// (bindings.go); "" otherwise.
	wrongID string
}

// String names the claim for a person or the model: `"2027-06-01" (date)`,
// or, for a date or amount written next to the wrong serial, `"2026-03-31"
// (date, written for SN-51001-PL: a function result states it for another
// serial or id)`.
func (c Claim) String() string {
	if c.wrongID != "" {
		return fmt.Sprintf("%q (%s, written for %s: a function result states it for another serial or id)", c.Text, c.Kind, c.wrongID)
	}
	return fmt.Sprintf("%q (%s)", c.Text, c.Kind)
}

// MaxText bounds the text Claims reads; the rest is ignored (a reply body is
// capped far below this by the dispatcher).
const MaxText = 64 << 10

// Claims returns the claims stated in text, in the order the extractors run
// (URLs, email addresses, IBANs, tax numbers, dates, amounts, durations and
// percentages, ticket numbers written as digits, identifiers, phone numbers
// and bank account numbers in groups, long numbers), each span of the text
// claimed once.
func Claims(text string) []Claim { return claims(text, false) }

// claims is Claims; whole reads every pattern over the whole text.
func claims(text string, whole bool) []Claim {
	if len(text) > MaxText {
		text = text[:MaxText]
	}
	return claimsOf(readable(text), whole)
}

// claimsOf reads a text readable has already read.
func claimsOf(r readText, whole bool) []Claim {
	s := &scan{orig: r.text, masked: []byte(r.text), whole: whole, lookalikes: r.lookalikes}
	s.urls()
	s.spelledEmails()
	s.emails()
	s.domains()
	s.ibans()
	s.taxIDs()
	s.dates()
	s.amounts()
	s.wordAmounts()
	s.durations()
	s.wordDurations()
	s.years()
	s.ticketNumbers(false)
	s.identifiers()
	s.phones()
	s.numbers()
	s.ticketNumbers(true)
	s.shortRefs()
	s.sharedCurrencies()
	return s.claims
}

// scan extracts claims from orig; masked is orig with every claimed span
// overwritten by NUL bytes (same length, so offsets stay valid), so a later
// extractor never sees a span an earlier one took.
type scan struct {
	orig   string
	masked []byte
	claims []Claim
	// whole reads every pattern over the whole text: the reference the
	// narrowed readings (see find) are tested against.
	whole bool
	// lookalikes: see readText.
	lookalikes map[int]rune
	// near are the stretches of orig near its runs of digits or its
	// words of a kind (see windowsOf), found on first use; windows the
	// windows of the patterns of inWindows, by pattern.
	near    map[nearKey][][2]int
	windows map[*regexp.Regexp][][2]int
	// words are orig's runs of letters (see hasWord); may remembers which
	// patterns orig may hold (see mayHold), by hold.index: 0 not tested
	// yet, 1 may, 2 cannot.
	words []word
	may   [maxHolds]uint8
}

func (s *scan) each(re *regexp.Regexp, f func(m []int) (Claim, bool)) {
	for _, m := range s.find(re) {
		c, ok := f(m)
		if !ok {
			continue
		}
		s.claim(c, m[0], m[1])
	}
}

// claim records c as the text from start to end and masks that span, so
// no later reading takes it again.
func (s *scan) claim(c Claim, start, end int) {
	if c.Text == "" {
		c.Text = s.orig[start:end]
	}
	c.at = start
	s.claims = append(s.claims, c)
	clear(s.masked[start:end])
}

// asWritten is orig[start:end] with its look-alike letters as written.
func (s *scan) asWritten(start, end int) string {
	return readText{s.orig, s.lookalikes}.asWritten(start, end)
}

func (s *scan) group(m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return s.orig[m[2*i]:m[2*i+1]]
}
