package grounding

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/currency"
)

// currencies are the names and signs of a currency the amount patterns
// read in any case, lower-cased, with its ISO 4217 code: the codes of the
// currencies customers pay in, and the names and signs Polish, English,
// German, French, Spanish, Italian, Czech, Russian and Ukrainian write.
// A sign several currencies share ("kr", "$" aside, which reads as US
// dollars) is none; a name that is a word of its own too ("ft") is none.
var currencies = readableKeys(map[string]string{
	"pln": "PLN", "zł": "PLN", "zl": "PLN", "złotych": "PLN", "złote": "PLN", "złoty": "PLN", "złotego": "PLN", "złotówek": "PLN",
	"eur": "EUR", "euro": "EUR", "euros": "EUR", "€": "EUR", "евро": "EUR", "євро": "EUR",
	"usd": "USD", "us$": "USD", "$": "USD", "dollars": "USD", "dollar": "USD", "dolarów": "USD", "dolary": "USD", "dolar": "USD",
	"dólares": "USD", "dollari": "USD", "долларов": "USD", "доллара": "USD", "доларів": "USD",
	"gbp": "GBP", "£": "GBP", "pounds": "GBP", "funtów": "GBP", "funty": "GBP", "funt": "GBP",
	"chf": "CHF", "fr.": "CHF", "franków": "CHF", "franken": "CHF",
	"czk": "CZK", "kč": "CZK", "korun": "CZK", "koruny": "CZK", "koruna": "CZK", "koron": "CZK",
	"₽": "RUB", "руб": "RUB", "руб.": "RUB", "рублей": "RUB", "рубля": "RUB", "рубль": "RUB",
	"rubli": "RUB", "rubel": "RUB", "ruble": "RUB", "rubles": "RUB", "rouble": "RUB", "roubles": "RUB", "rubel'": "RUB",
	"uah": "UAH", "₴": "UAH", "грн": "UAH", "грн.": "UAH", "гривень": "UAH", "гривні": "UAH", "гривня": "UAH", "hrywien": "UAH", "hrywny": "UAH",
	"huf": "HUF", "forint": "HUF", "forintów": "HUF", "forints": "HUF",
	"jpy": "JPY", "¥": "JPY", "yen": "JPY", "jenów": "JPY",
	"inr": "INR", "₹": "INR", "rupees": "INR",
	"₺": "TRY",
	"₩": "KRW", "₪": "ILS", "₦": "NGN", "₫": "VND", "₱": "PHP", "₸": "KZT", "₾": "GEL", "лв": "BGN", "лв.": "BGN",
	"r$": "BRL", "c$": "CAD", "ca$": "CAD", "a$": "AUD", "au$": "AUD",
})

// isoCodes are the ISO 4217 codes of the currencies in use, read as a
// currency only in capitals ("5 ALL" is 5 leks, "5 all" is not).
var isoCodes = func() map[string]bool {
	m := map[string]bool{}
	for it := currency.Query(); it.Next(); {
		m[it.Unit().String()] = true
	}
	delete(m, "XXX") // no currency
	return m
}()

// multipliers are the words and abbreviations written between an
// amount's number and its currency, lower-cased, with what they multiply
// it by: "7,3 tys. zł", "7k PLN", "1,5 mln zł", "2 Mio. €", "5 тыс. руб.".
var multipliers = readableKeys(map[string]float64{
	"k": 1e3, "tys.": 1e3, "tys": 1e3, "tysięcy": 1e3, "tysiące": 1e3, "tysiąc": 1e3, "thousand": 1e3, "tsd.": 1e3, "tausend": 1e3,
	"tis.": 1e3, "тыс.": 1e3, "тыс": 1e3, "тис.": 1e3, "тис": 1e3, "mil": 1e3,
	"mln": 1e6, "mln.": 1e6, "million": 1e6, "millionen": 1e6, "mio.": 1e6, "mio": 1e6, "millions": 1e6, "млн": 1e6, "млн.": 1e6,
})

// readableKeys is m with each key as readable writes it, lower-cased: a
// Cyrillic name's letters that look like Latin ones are Latin ones in the
// text the patterns read ("руб." reads "pyб."). Some look like one in a
// single case (capital "Т" like "T", small "т" like none): the key is
// there as each of its lower case, capitals and capitalized reads.
func readableKeys[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		for _, f := range readableForms(k) {
			out[f] = v
		}
	}
	return out
}

// readableForms are the forms of the name k (lower case) in the text the
// patterns read, lower-cased: as readable writes it in lower case, in
// capitals and capitalized.
func readableForms(k string) []string {
	var out []string
	for _, c := range []string{k, strings.ToUpper(k), capitalized(k)} {
		if f := strings.ToLower(readable(c).text); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// capitalized is w with its first letter in capitals.
func capitalized(w string) string {
	r, size := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[size:]
}

// Amounts written in words: "pięć tysięcy złotych", "two hundred euros",
// "dwieście złotych", "fünfhundert Euro" is read as "fünf" and "hundert".
// The number is the run of number words right before a currency's name,
// one space or hyphen apart ("and" may join English ones).
var (
	hundredWords = map[string]float64{
		"sto": 100, "dwieście": 200, "trzysta": 300, "czterysta": 400, "pięćset": 500, "sześćset": 600,
		"siedemset": 700, "osiemset": 800, "dziewięćset": 900,
	}
	scaleWords = map[string]float64{
		"hundred": 100, "hundert": 100,
		"tysiąc": 1e3, "tysiące": 1e3, "tysięcy": 1e3, "thousand": 1e3, "tausend": 1e3,
		"milion": 1e6, "miliony": 1e6, "milionów": 1e6, "million": 1e6, "millionen": 1e6, "millions": 1e6,
	}
)

func (s *scan) wordAmounts() {
	if !s.whole && !s.mayHold(amountAfterRe) {
		return
	}
	ws := s.allWords()
	for k := 1; k < len(ws); k++ {
		code, ok := currencies[ws[k].lower]
		if !ok || s.masked[ws[k].start] == 0 {
			continue
		}
		first, v, ok := wordsNumberBefore(s.orig, ws, k)
		if !ok || bytes.IndexByte(s.masked[ws[first].start:ws[k].end], 0) >= 0 {
			continue
		}
		s.claim(Claim{Kind: KindAmount, cents: int64(v * 100), currency: code}, ws[first].start, ws[k].end)
	}
}

// wordsNumberBefore reads the number words that end one gap before word
// k: where they start, and the number. A number is built as it is said:
// units, tens and hundreds add up, "hundred" multiplies what stands
// before it, "thousand" and "million" close a group.
func wordsNumberBefore(text string, ws []word, k int) (first int, v float64, ok bool) {
	first = k
	for j := k - 1; j >= 0 && joined(text, ws[j], ws[j+1]); j-- {
		w := ws[j].lower
		if w == "and" && j < k-1 && j > 0 {
			continue
		}
		if _, n := numberWords[w]; !n && !isTens(w) && hundredWords[w] == 0 && scaleWords[w] == 0 {
			break
		}
		first = j
	}
	if first == k || ws[first].lower == "and" {
		return 0, 0, false
	}
	total, group := 0.0, 0.0
	for j := first; j < k; j++ {
		w := ws[j].lower
		switch {
		case w == "and":
		case scaleWords[w] == 100:
			group = max(group, 1) * 100
		case scaleWords[w] > 0:
			total += max(group, 1) * scaleWords[w]
			group = 0
		case hundredWords[w] > 0:
			group += hundredWords[w]
		case isTens(w):
			group += tensWords[w]
		default:
			group += numberWords[w]
		}
	}
	return first, total + group, total+group > 0
}

func isTens(w string) bool { _, ok := tensWords[w]; return ok }
