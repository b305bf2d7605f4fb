// Package grounding checks that a reply states only facts triage can back:
// it finds the factual claims in a text (identifiers such as ticket and
// serial numbers, long numbers, dates in any written form of Polish, English
// or German, amounts with a currency, durations and percentages, phone
// numbers, bank account and card numbers, email addresses and URLs) and
// tells which of them appear nowhere in the sources the model was given (the
// customer's email, the function results of this email, the trusted facts,
// the instructions). Dates are compared as calendar dates, amounts as
// numbers and durations as lengths, so "1 maja 2027" is backed by
// "2027-05-01", "1 maja" (no year) by the first of May of any year, "30 i 31
// maja 2027" by both days, "1 200,00 zł" by 1200 and "2 tygodnie" by "14
// days". A text is read as a customer reads it (readable): digits of any
// script, fullwidth forms, any dash, no invisible characters, any space as
// one space, a letter of another script that looks like a Latin one as that
// letter.
package grounding

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
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
}

// String names the claim for a person or the model: `"2027-06-01" (date)`.
func (c Claim) String() string { return fmt.Sprintf("%q (%s)", c.Text, c.Kind) }

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
	s.emails()
	s.ibans()
	s.taxIDs()
	s.dates()
	s.amounts()
	s.durations()
	s.wordDurations()
	s.ticketNumbers(false)
	s.identifiers()
	s.phones()
	s.numbers()
	s.ticketNumbers(true)
	s.sharedCurrencies()
	return s.claims
}

// readable is text as a customer reads it, in the characters the claim
// patterns know:
//   - a decimal digit of any script in ASCII ("２０２７", "٢٠٢٧"), a fullwidth
//     letter or sign in ASCII ("ＴＫＴ－");
//   - a dash of any kind (en dash, minus sign) as "-", a fraction or
//     division slash as "/";
//   - no invisible format character (zero-width space or joiner, soft
//     hyphen);
//   - any space (a tab, a thin or an em space) as a space, a narrow
//     no-break space as a no-break one, a run of them as one, and a run
//     with a line break in it as one line break (the date,
//     amount, ticket and tax patterns read across it: "31\nmaja 2027" that
//     a hard wrap cut is one date);
//   - a letter of another script that looks like a Latin one as that letter
//     (a Cyrillic "а" in "31 mаja 2027", a Greek "Τ" in "ΤKT-000123").
//
// A date written with any of them looks like a date, so it is one; claims
// are shown as readable writes them. URLs and email addresses are the
// exception: one spelled with a look-alike letter leads somewhere else, so
// it is read and shown as written (readText.lookalikes).
func readable(text string) readText {
	// The text up to i is as readable writes it; a run of blanks is
	// rewritten from its start.
	i, run := 0, -1
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		w, keep, _ := readableRune(r)
		if !keep || w != r {
			if run >= 0 {
				i = run
			}
			break
		}
		if isBlank(w) {
			if run >= 0 {
				i = run
				break
			}
			run = i
		} else {
			run = -1
		}
		i += size
	}
	if i == len(text) {
		return readText{text: text}
	}
	var b strings.Builder
	b.Grow(len(text))
	b.WriteString(text[:i])
	var lookalikes map[int]rune
	var blank rune // the run of blanks being read, as it is written
	for _, r := range text[i:] {
		w, keep, lookalike := readableRune(r)
		if !keep {
			continue
		}
		if isBlank(w) {
			if blank == 0 || w == '\n' {
				blank = w
			}
			continue
		}
		if blank != 0 {
			b.WriteRune(blank)
			blank = 0
		}
		if lookalike {
			if lookalikes == nil {
				lookalikes = map[int]rune{}
			}
			lookalikes[b.Len()] = r
		}
		b.WriteRune(w)
	}
	if blank != 0 {
		b.WriteRune(blank)
	}
	return readText{b.String(), lookalikes}
}

// isSpace: r is a space as readable writes one: a space, or the no-break
// space the patterns know (a thousands separator, "1\u00a0200 zł"), which
// a narrow no-break space is written as.
func isSpace(r rune) bool { return r == ' ' || r == '\u00a0' }

// isBlank: r is a space or a line break as readable writes them.
func isBlank(r rune) bool { return isSpace(r) || r == '\n' }

// readText is a text as readable writes it.
type readText struct {
	text string
	// lookalikes are the letters readable wrote as the Latin letters they
	// look like, as written, by their byte offset in text.
	lookalikes map[int]rune
}

// asWritten is text[start:end] with each look-alike letter in it as
// written.
func (r readText) asWritten(start, end int) string {
	if len(r.lookalikes) == 0 {
		return r.text[start:end]
	}
	var b strings.Builder
	for i := start; i < end; i++ {
		if l, ok := r.lookalikes[i]; ok {
			b.WriteRune(l)
			continue
		}
		b.WriteByte(r.text[i])
	}
	return b.String()
}

// readableRune is r as readable writes it; keep is false for a character
// it leaves out, lookalike true for a letter written as the Latin letter it
// looks like.
func readableRune(r rune) (w rune, keep, lookalike bool) {
	switch {
	case r == '\t':
		return ' ', true, false
	case r == '\r' || r == '\v' || r == '\f':
		return '\n', true, false
	case r < utf8.RuneSelf:
		return r, true, false
	case r == '\u202f':
		return '\u00a0', true, false
	case unicode.Is(unicode.Zs, r) && !isSpace(r):
		return ' ', true, false
	case r == '\u0085' || unicode.In(r, unicode.Zl, unicode.Zp):
		return '\n', true, false
	case unicode.IsDigit(r):
		return '0' + digitValue(r), true, false
	case isFullwidth(r):
		return r - 0xFEE0, true, false
	case unicode.Is(unicode.Pd, r) || r == '\u2212':
		return '-', true, false
	case r == '\u2044' || r == '\u2215':
		return '/', true, false
	case unicode.Is(unicode.Cf, r):
		return 0, false, false
	}
	if l, ok := latinLookalike(r); ok {
		return l, true, true
	}
	return r, true, false
}

// isFullwidth: r is the fullwidth form of an ASCII character.
func isFullwidth(r rune) bool { return r >= 0xFF01 && r <= 0xFF5E }

// latinLookalike is the ASCII letter the letter r is confusable with, by
// Unicode's confusables data (UTS #39): the one letter whose skeleton is
// r's, or of two (capital I and small l share one) the one of r's case.
// A letter with no case counts as small. Letters with a diacritic ("ą",
// "ł", "ö") look like none.
func latinLookalike(r rune) (rune, bool) {
	if r < utf8.RuneSelf || !unicode.IsLetter(r) {
		return 0, false
	}
	if r < twoByteEnd {
		l := twoByteLookalikes()[r-utf8.RuneSelf]
		return l, l != 0
	}
	l := skeletonLookalike(r)
	return l, l != 0
}

// twoByteEnd ends the letters whose look-alikes are worked out once, on
// first use, rather than for each: those UTF-8 writes in two bytes (Latin
// with diacritics, Greek, Cyrillic, Armenian), which most mail uses.
const twoByteEnd = 0x800

var twoByteLookalikes = sync.OnceValue(func() []rune {
	t := make([]rune, twoByteEnd-utf8.RuneSelf)
	for r := rune(utf8.RuneSelf); r < twoByteEnd; r++ {
		if unicode.IsLetter(r) {
			t[r-utf8.RuneSelf] = skeletonLookalike(r)
		}
	}
	return t
})

// skeletonLookalike is latinLookalike worked out; 0 for none.
func skeletonLookalike(r rune) rune {
	var found rune
	for _, a := range asciiSkeletons()[confusables.Skeleton(string(r))] {
		if found == 0 || unicode.IsUpper(a) == unicode.IsUpper(r) {
			found = a
		}
	}
	return found
}

// asciiSkeletons are the ASCII letters by their skeleton.
var asciiSkeletons = sync.OnceValue(func() map[string][]rune {
	m := map[string][]rune{}
	for a := 'A'; a <= 'z'; a++ {
		if unicode.IsLetter(a) {
			k := confusables.Skeleton(string(a))
			m[k] = append(m[k], a)
		}
	}
	return m
})

// digitValue is the value of the decimal digit r: Unicode encodes each
// script's digits 0 to 9 in a row, and its table of decimal digits lists
// them in runs that start at a zero.
func digitValue(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return (r - lo) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return (r - lo) % 10
		}
	}
	return 0
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

// Amounts: a number with a currency before or after it. The number has
// thousands separated by a space, a no-break space, a dot, a comma or an
// apostrophe, and at most two decimals after a comma or a dot.
const numPat = `\d{1,3}(?:[ \x{00A0}\n.,']\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`

var (
	curPat         = `(?i:` + alternation(currencies) + `)`
	amountAfterRe  = regexp.MustCompile(`(?:^|[^\p{L}\p{N}.,])(` + numPat + `)(?:,-|,–)?[ \x{00A0}\n]?(` + curPat + `)(?:[^\p{L}]|$)`)
	amountBeforeRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}])(` + curPat + `)[ \x{00A0}\n]?(` + numPat + `)(?:[^\p{N}]|$)`)
)

// currencies are the names of a currency the amount patterns read, in any
// case, lower-cased, with its ISO code.
var currencies = map[string]string{
	"pln": "PLN", "zł": "PLN", "zl": "PLN", "złotych": "PLN", "złote": "PLN", "złoty": "PLN",
	"eur": "EUR", "euro": "EUR", "€": "EUR",
	"usd": "USD", "us$": "USD", "$": "USD",
	"gbp": "GBP", "£": "GBP",
	"chf": "CHF", "fr.": "CHF",
}

func (s *scan) amounts() {
	for _, re := range []*regexp.Regexp{amountAfterRe, amountBeforeRe} {
		num, cur := 1, 2
		if re == amountBeforeRe {
			num, cur = 2, 1
		}
		s.eachGroups(re, num, cur, func(n, c string) (Claim, bool) {
			cents, ok := parseAmount(n)
			if !ok {
				return Claim{}, false
			}
			return Claim{Kind: KindAmount, cents: cents, currency: currencies[strings.ToLower(c)]}, true
		})
	}
}

// A currency written between two numbers ("$5 EUR 999") is read by the
// amount patterns with the number before it ("5 EUR"), so the number after
// it is read by none: a reader sees "EUR 999" too. sharedCurrencies reads,
// after every other reading, a number no reading took that follows a
// currency written before its amounts (a sign or an ISO code, not "zł":
// "50 zł 2 razy" is no amount of 2) as an amount in it.
var (
	bareAmountRe   = regexp.MustCompile(`(?:^|[^\p{L}\p{N}.,])(` + numPat + `)(?:[^\p{N}]|$)`)
	currencyBefore = regexp.MustCompile(`(?i:` + alternation(leadingCurrencies) + `)[ \x{00A0}\n]?$`)
)

// leadingCurrencies are the currencies' names written before an amount.
var leadingCurrencies = func() map[string]bool {
	m := map[string]bool{}
	for name, code := range currencies {
		if strings.ToLower(code) == name || strings.ContainsAny(name, "$€£") {
			m[name] = true
		}
	}
	return m
}()

func (s *scan) sharedCurrencies() {
	if !slices.ContainsFunc(s.claims, func(c Claim) bool { return c.Kind == KindAmount }) {
		return
	}
	for _, m := range bareAmountRe.FindAllSubmatchIndex(s.masked, -1) {
		start, end := m[2], m[3]
		// A leading currency's name is at most 3 bytes ("us$", "€"), and
		// a no-break space 2.
		from := max(0, start-5)
		c := currencyBefore.FindStringIndex(s.orig[from:start])
		if c == nil {
			continue
		}
		at := from + c[0]
		// A code is a word of its own ("EUR", not the end of "DEUR"); a
		// sign may follow anything ("5$ 999").
		if r, _ := utf8.DecodeLastRuneInString(s.orig[:at]); at > 0 && isLetterASCII(s.orig[at]) && (unicode.IsLetter(r) || unicode.IsNumber(r)) {
			continue
		}
		cents, ok := parseAmount(s.orig[start:end])
		if !ok {
			continue
		}
		name := strings.TrimRight(s.orig[at:start], " \u00a0\n")
		s.claim(Claim{Kind: KindAmount, Text: s.orig[at:end], cents: cents, currency: currencies[strings.ToLower(name)]}, start, end)
	}
}

// eachGroups is each for a pattern whose match includes a boundary
// character on either side: the claim (and the mask) covers only the span
// from the first to the last of groups a and b. As in eachSpan, the text
// is read again until a reading finds nothing new, so a claim right after
// another ("5 zł 6 zł") is not lost to the boundary the first one took.
func (s *scan) eachGroups(re *regexp.Regexp, a, b int, f func(ga, gb string) (Claim, bool)) {
	for found := true; found; {
		found = false
		for _, m := range s.find(re) {
			c, ok := f(s.group(m, a), s.group(m, b))
			if !ok {
				continue
			}
			start, end := min(m[2*a], m[2*b]), max(m[2*a+1], m[2*b+1])
			s.claim(c, start, end)
			found = true
		}
	}
}

// parseAmount reads "1 200,50", "1.200,50", "1,200.50", "49.99", "49,99" or
// "1200" as hundredths. A separator followed by one or two final digits is
// the decimal separator; every other one separates thousands.
func parseAmount(n string) (int64, bool) {
	var digits strings.Builder
	frac := ""
	last := strings.LastIndexAny(n, ".,")
	if last >= 0 && len(n)-last-1 <= 2 {
		frac = n[last+1:]
		n = n[:last]
	}
	for _, r := range n {
		if r >= '0' && r <= '9' {
			digits.WriteRune(r)
		}
	}
	whole, err := strconv.ParseInt(digits.String(), 10, 64)
	if err != nil || whole > 1e15 {
		return 0, false
	}
	cents := whole * 100
	switch len(frac) {
	case 1:
		cents += int64(frac[0]-'0') * 10
	case 2:
		f, _ := strconv.Atoi(frac)
		cents += int64(f)
	}
	return cents, true
}

// An IBAN: a country's two letters, two check digits and the account, in
// groups of four or not ("PL61 1090 1014 0000 0712 1981 2874",
// "GB29 NWBK 6016 1331 9268 19"). Its key is the account without the
// country's letters, so it is the same claim as the account written the
// national way (the 26 digits of a Polish one), which phones reads.
var ibanRe = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?:[ \x{00A0}]?[A-Z0-9]{4}){2,7}(?:[ \x{00A0}]?[A-Z0-9]{1,3})?\b`)

func (s *scan) ibans() {
	s.each(ibanRe, func(m []int) (Claim, bool) {
		tok := s.orig[m[0]:m[1]]
		key := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\u00a0' {
				return -1
			}
			return r
		}, tok)[2:]
		if len(digitsOf(key)) < 10 || !boundary(s.masked, m[0], m[1]) {
			return Claim{}, false // too few digits for an account: a product code
		}
		return Claim{Kind: KindAccount, key: key}, true
	})
}

// A tax number (NIP 525-000-00-00, USt-IdNr. DE123456789): a company's
// number after its name, whatever its grouping; never a phone number.
var (
	taxIDRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])(?:NIP|REGON|KRS|VAT(?:[ -]?ID)?|USt-?Id(?:Nr)?\.?|Steuer-?Nr\.?|Steuernummer|tax[ -]ID)[.:]?[ \x{00A0}\n]*((?:PL|DE)?[ \x{00A0}]?\d+(?:[ \-/]\d+)*)`)
	// taxIDWords are the words the expression starts with, as whole words.
	taxIDWords = map[string]bool{"nip": true, "regon": true, "krs": true, "vat": true, "ust": true, "steuer": true, "steuernummer": true, "tax": true}
)

func (s *scan) taxIDs() {
	if !s.hasWord(func(w word) bool { return len(w.text) <= 12 && taxIDWords[w.lower] }) {
		return // most texts name no tax number: skip the expression
	}
	s.eachGroups(taxIDRe, 1, 1, func(n, _ string) (Claim, bool) {
		d := digitsOf(n)
		if len(d) < 7 || len(d) > 15 {
			return Claim{}, false
		}
		return Claim{Kind: KindTaxID, key: d}, true
	})
}

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
