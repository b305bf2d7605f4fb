package grounding

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Sources is what a reply may state: the texts the shop controls that the
// model was given (the instructions, the trusted case facts) and the
// values functions returned. Add texts and values, then call Unsupported.
// The customer's own words (AddCustomerText) back only what a reply quotes
// as theirs. The zero value is empty and ready to use; it is not safe for
// concurrent use.
type Sources struct {
	texts    []string // upper-cased, for identifier and number lookups
	keys     map[Kind]map[string]bool
	dates    map[string]bool
	amounts  map[string]bool // "PLN 120000"
	values   map[int64]bool  // numbers returned by functions, in hundredths
	phones   []string
	squashed map[string]bool // identifiers without separators: "SN48213PL"
	// ticketDigits are the numbers of the ticket ids, without leading
	// zeros: TKT-000123 backs "zgłoszenie nr 123".
	ticketDigits map[string]bool
	// lengths are the durations and percentages of the texts ("time
	// 20160", see Claim.lengths); fnNumbers the numbers functions
	// returned ("14", "1.5"), which back a duration or a percentage of
	// that number.
	lengths   map[string]bool
	fnNumbers map[string]bool
	// codes are the first one to three digits of the phone numbers the
	// sources write with their country code ("+48 ...": 4, 48, 482), the
	// codes a reply may add to a national number.
	codes map[string]bool
	// added are the texts AddText has read: one added again (the sender's
	// address as From and Reply-To, a ticket's id in two results) adds
	// nothing more.
	added map[string]bool
	// hosts are the hosts of the URLs and the domains of the addresses
	// the sources write: they back a domain written alone.
	hosts map[string]bool
	// customer are the customer's own words (AddCustomerText).
	customer *Sources
	// The serials and ids each function result binds its dates and
	// amounts to (bindings.go).
	binds
}

// AddCustomerText adds a text the customer wrote (the email's subject,
// text and quoted history, the fields of the user turn they wrote). It
// backs no claim of a reply but one the reply quotes as theirs (see
// quotedSpans), and a duration: how long a device worked or has been
// broken is the customer's to tell ("przestał działać po 3 miesiącach").
// A date, an amount, a reference, a phone number or an address the
// customer wrote backs nothing unquoted: a customer who claims a warranty
// until 2031 does not get it confirmed.
func (s *Sources) AddCustomerText(text string) {
	if s.customer == nil {
		s.customer = &Sources{}
	}
	s.customer.AddText(text)
}

// AddLanguage adds what the customer's language (ISO 639-1) tells: the
// country codes of the countries that speak it (Polish: +48; German: +49,
// +43, +41), which a reply may add to a national number the sources write.
// English is spoken too widely to tell one.
func (s *Sources) AddLanguage(lang string) {
	s.init()
	for _, c := range callingCodes[lang] {
		s.codes[c] = true
	}
}

var callingCodes = map[string][]string{"pl": {"48"}, "de": {"49", "43", "41"}}

// AddText adds a text the model was given (the email, the facts, the
// instructions, a function's message).
func (s *Sources) AddText(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if len(text) > MaxText {
		text = text[:MaxText]
	}
	s.init()
	again := s.added[text]
	if again && s.group == nil && !s.boundOnly[text] {
		return
	}
	read := sourceClaims(text)
	s.note(text, read.claims)
	if again {
		return
	}
	s.added[text] = true
	s.texts = append(s.texts, read.upper)
	claims := read.claims
	for _, c := range claims {
		switch c.Kind {
		case KindDate:
			// A day backs itself, its month ("maja 2027" is backed by
			// 2027-05-31), its year ("do 2027 roku") and itself with no
			// year ("31 maja"); a month itself and its year; a day with
			// no year, or a year, only itself.
			for _, d := range c.dates {
				s.dates[d] = true
				if len(d) == len("2006-01-02") {
					s.dates[d[:7]], s.dates["--"+d[5:]] = true, true
				}
				if len(d) >= len("2006-01") && d[0] != '-' {
					s.dates[d[:4]] = true
				}
			}
		case KindURL:
			s.hosts[host(c.key)] = true
		case KindEmail:
			s.hosts[c.key[strings.LastIndexByte(c.key, '@')+1:]] = true
		case KindTaxID:
			s.squashed[c.key] = true
		case KindAmount:
			// An amount written with its currency backs that currency
			// alone: "5 USD" does not back "5 EUR".
			s.amounts[amountKey(c)] = true
		case KindPhone:
			s.phones = append(s.phones, c.key)
			if code, ok := countryCode(c.Text); ok {
				s.codes[code] = true
			} else if _, ok := international(c.Text); ok {
				// Written in one run ("+48221234567"): the code is one of
				// its first three digits' prefixes.
				for n := 1; n <= 3 && n < len(c.key); n++ {
					s.codes[c.key[:n]] = true
				}
			}
		case KindDuration, KindPercent:
			for _, l := range c.lengths {
				s.lengths[l] = true
			}
		case KindTicket, KindIdentifier:
			s.squashed[squash(c.key)] = true
			if m := trailingDigits.FindString(c.key); c.Kind == KindTicket && m != "" {
				s.ticketDigits[strings.TrimLeft(m, "0")] = true
			}
		}
		s.keys[c.Kind][c.key] = true
	}
	// A phone number may be written in the sources without separators.
	for _, c := range claims {
		if c.Kind == KindNumber && len(c.key) >= 7 && len(c.key) <= 15 {
			s.phones = append(s.phones, c.key)
		}
	}
}

// AddValue adds a function result or argument: every string in it (map
// values, list items, nested) as a text, and every number as a value an
// amount may state ({"price": 199} backs "199 zł").
func (s *Sources) AddValue(v any) {
	s.init()
	switch v := v.(type) {
	case string:
		s.AddText(v)
		// A string is a value an amount may state only when it is a number
		// and nothing else ("349.50"): a product's name ("Aroma 5000") or
		// a serial backs no amount.
		if n, ok := plainNumber(strings.TrimSpace(v)); ok {
			s.fnNumbers[n] = true
			if cents, ok := parseAmount(n); ok {
				s.values[cents] = true
				s.factsNow().cents[cents] = true
			}
		}
	case float64:
		s.addNumber(strconv.FormatFloat(v, 'f', -1, 64))
	case float32:
		s.addNumber(strconv.FormatFloat(float64(v), 'f', -1, 32))
	case int:
		s.addNumber(strconv.Itoa(v))
	case int64:
		s.addNumber(strconv.FormatInt(v, 10))
	case map[string]any:
		if s.group == nil { // a function's result: what it binds (bindings.go)
			s.group = &binding{ids: map[string]bool{}, facts: newFacts()}
			defer s.bind()
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			s.AddValue(v[k])
		}
	case []any:
		for _, x := range v {
			s.AddValue(x)
		}
	case []string:
		for _, x := range v {
			s.AddValue(x)
		}
	}
}

func (s *Sources) addNumber(n string) {
	s.texts = append(s.texts, n)
	if n, ok := plainNumber(n); ok {
		s.fnNumbers[n] = true
	}
	if cents, ok := parseAmount(n); ok {
		s.values[cents] = true
		s.factsNow().cents[cents] = true
	}
}

func (s *Sources) init() {
	if s.keys != nil {
		return
	}
	s.keys = map[Kind]map[string]bool{}
	for _, k := range []Kind{KindURL, KindEmail, KindDate, KindAmount, KindPhone, KindTicket, KindIdentifier, KindTaxID, KindNumber, KindAccount, KindDuration, KindPercent} {
		s.keys[k] = map[string]bool{}
	}
	s.dates = map[string]bool{}
	s.amounts = map[string]bool{}
	s.values = map[int64]bool{}
	s.squashed = map[string]bool{}
	s.ticketDigits = map[string]bool{}
	s.lengths = map[string]bool{}
	s.fnNumbers = map[string]bool{}
	s.codes = map[string]bool{}
	s.added = map[string]bool{}
	s.free = newFacts()
	s.boundOnly = map[string]bool{}
	s.boundIDs = map[string]bool{}
	s.hosts = map[string]bool{}
}

var trailingDigits = regexp.MustCompile(`\d+$`)

// Unsupported returns the claims of text that the sources do not back, in
// the order Claims finds them, each distinct claim once.
func (s *Sources) Unsupported(text string) []Claim {
	s.init()
	if len(text) > MaxText {
		text = text[:MaxText]
	}
	r := readable(text)
	var quoted [][2]int
	if s.customer != nil {
		quoted = quotedSpans(r.text)
	}
	var out []Claim
	seen := map[string]bool{}
	all := claimsOf(r, false)
	for _, c := range all {
		if seen[string(c.Kind)+"\x00"+c.Text] {
			continue
		}
		if s.supports(c) {
			if c.wrongID = s.misattached(c, all, r.text); c.wrongID == "" {
				continue
			}
		}
		if s.customer != nil && (c.Kind == KindDuration || inSpans(quoted, c.at)) && s.customer.backs(c, s.codes) {
			continue
		}
		seen[string(c.Kind)+"\x00"+c.Text] = true
		out = append(out, c)
	}
	return out
}

// supports reports whether the sources back one claim.
func (s *Sources) supports(c Claim) bool { return s.backs(c, nil) }

// backs is supports with the country codes of more (the sources' a
// customer's quoted number may be written with) besides s.codes.
func (s *Sources) backs(c Claim, more map[string]bool) bool {
	switch c.Kind {
	case KindURL:
		return s.keys[KindURL][c.key] || host(c.key) == c.key && s.hosts[c.key]
	case KindEmail:
		return s.keys[KindEmail][c.key]
	case KindDate:
		if c.every {
			return !slices.ContainsFunc(c.dates, func(d string) bool { return !s.dates[d] })
		}
		return slices.ContainsFunc(c.dates, func(d string) bool { return s.dates[d] })
	case KindAmount:
		return s.amounts[amountKey(c)] || s.values[c.cents]
	case KindPhone:
		// A country code the reply adds to a number of the sources must
		// be one the sources write ("+48 22 123 45 67" backs "+48" before
		// the customer's "601 234 567", not "+45").
		for _, p := range s.phones {
			if samePhone(p, c.key) && (len(c.key) <= len(p) || s.codes[c.key[:len(c.key)-len(p)]] || more[c.key[:len(c.key)-len(p)]]) {
				return true
			}
		}
		return false
	case KindTicket, KindIdentifier:
		if s.keys[KindTicket][c.key] || s.keys[KindIdentifier][c.key] || s.squashed[squash(c.key)] {
			return true
		}
		if digitsOf(c.key) == c.key { // "zgłoszenie nr 123": TKT-000123, or the number itself
			return s.ticketDigits[strings.TrimLeft(c.key, "0")] || s.containsToken(c.key, isDigitRune)
		}
		return s.containsToken(c.key, isIdentRune)
	case KindTaxID:
		if s.squashed[c.key] || slices.Contains(s.phones, c.key) {
			return true
		}
		return s.containsToken(c.key, isDigitRune)
	case KindNumber:
		return s.containsToken(c.key, isDigitRune)
	case KindDuration, KindPercent:
		for i, l := range c.lengths {
			if !s.lengths[l] && (i >= len(c.numbers) || !s.fnNumbers[c.numbers[i]]) {
				return false
			}
		}
		return true
	case KindAccount:
		// Written in groups or as one run of digits in the sources.
		return s.keys[KindAccount][c.key] || s.containsToken(c.key, isIdentRune)
	}
	return false
}

// containsToken reports whether a source text holds tok (upper-cased) with
// no rune of the token's own class (in) glued to either side.
func (s *Sources) containsToken(tok string, in func(rune) bool) bool {
	for _, t := range s.texts {
		for i := 0; ; {
			j := strings.Index(t[i:], tok)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(tok)
			before, after := lastRune(t[:start]), firstRune(t[end:])
			if !in(before) && !in(after) {
				return true
			}
			i = start + 1
		}
	}
	return false
}

func amountKey(c Claim) string { return c.currency + " " + strconv.FormatInt(c.cents, 10) }

func squash(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '/' {
			return -1
		}
		return r
	}, id)
}

func isIdentRune(r rune) bool {
	return r == '-' || r == '_' || r == '/' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r > 0x7f
}

func isDigitRune(r rune) bool { return r >= '0' && r <= '9' }

func lastRune(s string) rune {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < 0x80 || s[i] >= 0xC0 {
			r := []rune(s[i:])
			if len(r) > 0 {
				return r[0]
			}
		}
	}
	return 0
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return 0
}

// Every email's sources include the same instructions (main.md, the
// scenario's text): sourceClaims keeps what it read of long texts, so each
// is scanned once per process rather than once per reply.
var claimCache struct {
	sync.Mutex
	m map[string]reading
}

// reading is what AddText takes from a text: its claims and the text in
// upper case.
type reading struct {
	claims []Claim
	upper  string
}

// Bounds of claimCache: texts shorter than cacheMinText are scanned
// every time (a customer's short email rarely comes twice); at most
// cacheEntries texts are kept, then the cache starts afresh.
const (
	cacheMinText = 2 << 10
	cacheEntries = 64
)

// sourceClaims reads text, remembered for long texts. The claims returned
// are shared: callers only read them.
func sourceClaims(text string) reading {
	if len(text) < cacheMinText {
		return read(text)
	}
	claimCache.Lock()
	r, ok := claimCache.m[text]
	claimCache.Unlock()
	if ok {
		return r
	}
	r = read(text)
	claimCache.Lock()
	if claimCache.m == nil || len(claimCache.m) >= cacheEntries {
		claimCache.m = map[string]reading{}
	}
	claimCache.m[text] = r
	claimCache.Unlock()
	return r
}

// read is what AddText takes from text: its claims, and the text in upper
// case as Claims reads it (readable), so the token look-ups agree.
func read(text string) reading {
	r := readable(text)
	return reading{claimsOf(r, false), strings.ToUpper(r.text)}
}
