package grounding

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Amounts: a number with a currency before or after it. The number has
// thousands separated by a space, a no-break space, a dot, a comma or an
// apostrophe, and at most two decimals after a comma or a dot.
const numPat = `\d{1,3}(?:[ \x{00A0}\n.,']\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`

var (
	// curPat is what may be a currency's name, sign or code: a word of up
	// to ten letters, maybe with "$" or a dot after it ("us$", "fr.",
	// "руб."), or a sign; currencyCode tells which are (an alternation of
	// every name and code makes the patterns several times slower).
	curPat = `(?:\p{L}{1,10}\$?\.?|[$€£¥₹₺₩₪₦₫₱₸₾₽₴])`
	// multPat is a multiplier written between an amount's number and its
	// currency, or after the number of one written after its currency:
	// "7,3 tys. zł", "7k PLN", "€7k", "1,5 mln zł", "2 Mio. €".
	multPat        = `(?i:` + alternation(multipliers) + `)`
	amountAfterRe  = regexp.MustCompile(`(?:^|[^\p{L}\p{N}.,])(` + numPat + `)(?:,-|,–)?[ \x{00A0}\n]?(?:(` + multPat + `)[ \x{00A0}\n]?)?(` + curPat + `)(?:[^\p{L}]|$)`)
	amountBeforeRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}])(` + curPat + `)[ \x{00A0}\n]?(` + numPat + `)(?:[ \x{00A0}]?(` + multPat + `)(?:[^\p{L}\p{N}]|$)|(?:[^\p{N}]|$))`)
)

func (s *scan) amounts() {
	for _, re := range []*regexp.Regexp{amountAfterRe, amountBeforeRe} {
		num, mult, cur := 1, 2, 3
		if re == amountBeforeRe {
			cur, num, mult = 1, 2, 3
		}
		for found := true; found; {
			found = false
			// A match turned down (a word that is no currency: "5 dni 7
			// zł", "042 na 1 299,00 zł") took the character after it,
			// which may be the next one's boundary: a match is read again
			// from where the one turned down ends, before the matches
			// after it (which it may overlap).
			end := 0 // where the last match read from such a place ends
			for _, m := range s.find(re) {
				if m[0] < end {
					continue
				}
				for {
					k, ok := s.amount(m, num, mult, cur)
					if ok {
						found = true
						break
					}
					if k < 0 {
						break
					}
					if m = matchAt(re, s.masked, k); m == nil || min(m[2*num], m[2*cur]) <= k {
						break
					}
					end = m[1]
				}
			}
		}
	}
}

// amount reads a match of an amount pattern whose number, multiplier
// and currency are groups num, mult and cur, and claims it; when it is
// none, k is where a match may be read again from (the end of what it
// took for its currency, when it took a character after it), or -1.
func (s *scan) amount(m []int, num, mult, cur int) (k int, ok bool) {
	cents, ok := parseAmount(s.group(m, num))
	code, dot := currencyCode(s.group(m, cur))
	curStart, curEnd, factor := m[2*cur], m[2*cur+1], multipliers[strings.ToLower(s.group(m, mult))]
	if code == "" && m[2*mult] >= 0 && m[2*mult+1] == curStart {
		// A multiplier glued to what follows is the currency's start:
		// "900 Kč" is no "k" and "č".
		code, dot = currencyCode(s.orig[m[2*mult]:curEnd])
		curStart, factor = m[2*mult], 0
	}
	if !ok || code == "" {
		if k := max(m[2*num+1], m[2*cur+1]); k < m[1] {
			return k, false
		}
		return -1, false
	}
	if factor > 0 {
		cents = int64(float64(cents) * factor)
	}
	if dot {
		curEnd-- // the dot ends the sentence
	}
	start, end := min(m[2*num], curStart), max(m[2*num+1], curEnd)
	if factor > 0 {
		end = max(end, m[2*mult+1])
	}
	s.claim(Claim{Kind: KindAmount, cents: cents, currency: code}, start, end)
	return 0, true
}

// currencyCode is the ISO code of a currency's name, sign or code (in
// capitals) as written, or ""; dot reports a dot after it that is not the
// name's ("5 zł.").
func currencyCode(name string) (code string, dot bool) {
	if c, ok := currencies[strings.ToLower(name)]; ok {
		return c, false
	}
	if isoCodes[name] {
		return name, false
	}
	if n, ok := strings.CutSuffix(name, "."); ok {
		c, _ := currencyCode(n)
		return c, c != ""
	}
	return "", false
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
		code, _ := currencyCode(name)
		s.claim(Claim{Kind: KindAmount, Text: s.orig[at:end], cents: cents, currency: code}, start, end)
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
