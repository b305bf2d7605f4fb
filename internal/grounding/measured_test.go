package grounding_test

import (
	"testing"

	"triage/internal/grounding"
)

// shopSources are what the shop's side gives a reply about one device: the
// warranty register's result, the ticket, the policy's contacts.
func shopSources() *grounding.Sources {
	var src grounding.Sources
	src.AddValue(map[string]any{"serial_number": "SN-48213-PL", "status": "valid", "expiration_date": "2027-05-01", "product": "Aroma 5000"})
	src.AddValue(map[string]any{"ticket_id": "TKT-004821", "status": "created"})
	src.AddText("Kontakt: serwis@example.pl, https://www.example.com/serwis, infolinia +48 22 123 45 67.")
	return &src
}

// A fact written with look-alike digits or separators (a one dot leader,
// circled, superscript digits, middle dots, spaced dots) is a claim like
// any other.
func TestLookalikeDigitsHideNoClaim(t *testing.T) {
	checkUnsupported(t, shopSources(), []unsupportedCase{
		{"Gwarancja do 01.05.2027 (01․05․2027, ⁰¹.⁰⁵.²⁰²⁷, 01 . 05 . 2027).", nil},
		{"Gwarancja do 31․12․2031.", []string{`"31.12.2031" (date)`}},
		{"Gwarancja do ③①.①②.②⓪③①.", []string{`"31.12.2031" (date)`}},
		{"Gwarancja do ³¹.¹².²⁰³¹.", []string{`"31.12.2031" (date)`}},
		{"Gwarancja do 31·12·2031.", []string{`"31.12.2031" (date)`}},
		{"Gwarancja do 31 . 12 . 2031.", []string{`"31 . 12 . 2031" (date)`}},
	})
}

// A reference after "nr", "Nr." or "#" is a claim however short; a domain
// without a scheme and an address spelled out are claims too.
func TestReferencesAndContacts(t *testing.T) {
	checkUnsupported(t, shopSources(), []unsupportedCase{
		{"Zgłoszenie nr 4821 (#4821), www.example.com/serwis, example.com/serwis, example.com, serwis (at) example (dot) pl.", nil},
		{"Zamówienie nr 77 przyjęliśmy.", []string{`"nr 77" (ticket number)`}},
		{"Your order #7731 has shipped.", []string{`"#7731" (ticket number)`}},
		{"Więcej na example.com/zwroty lub evil.example.pl.", []string{`"example.com/zwroty" (url)`, `"evil.example.pl" (url)`}},
		{"Pisz na reklamacje (at) example (dot) pl albo zwroty[at]example.pl.", []string{
			`"reklamacje (at) example (dot) pl" (email address)`, `"zwroty[at]example.pl" (email address)`}},
		{"Krok nr 1, m.in. raport.pdf, we meet at noon.", nil},
	})
}

// An amount is backed by an amount alone, in its currency: a product's
// name with a number ("Aroma 5000") backs none. Amounts in words, with a
// multiplier, in any ISO 4217 currency or a common sign or name are
// claims.
func TestAmountsInAnyForm(t *testing.T) {
	src := shopSources()
	src.AddText("Cennik: diagnoza 7 300 zł, wymiana grzałki 250 EUR, dojazd 500 CZK.")
	checkUnsupported(t, src, []unsupportedCase{
		{"Diagnoza kosztuje 7,3 tys. zł (7.3k PLN, siedem tysięcy trzysta złotych); grzałka 250 euro, dojazd 500 Kč.", nil},
		{"Zwrócimy Panu 5000 zł.", []string{`"5000 zł" (amount)`}},
		{"Zwrócimy 7k PLN.", []string{`"7k PLN" (amount)`}},
		{"Zwrócimy 8 tys. zł.", []string{`"8 tys. zł" (amount)`}},
		{"Zwrócimy pięć tysięcy złotych.", []string{`"pięć tysięcy złotych" (amount)`}},
		{"We will refund two hundred euros.", []string{`"two hundred euros" (amount)`}},
		{"Возврат 3000 рублей.", []string{`"3000 pyблeй" (amount)`}},
		{"Vrátíme 900 Kč.", []string{`"900 Kč" (amount)`}},
		{"Refund: 40 SEK, 15 UAH, ₹90.", []string{`"40 SEK" (amount)`, `"15 UAH" (amount)`, `"₹90" (amount)`}},
		{"Try 5 times; 5 k klientów.", nil},
		// A word after a number that is no currency hides no amount after it.
		{"Zwrot 5 XYZ 700 EUR, faktura 042 na 1 299,00 zł.", []string{`"700 EUR" (amount)`, `"1 299,00 zł" (amount)`}},
	})
}

// Dates in French, Spanish, Italian, Czech, Russian, Ukrainian and
// Estonian, and years alone after a word that makes them one, are claims:
// backed by the day's date, a year by any date of it.
func TestDatesInMoreLanguagesAndYears(t *testing.T) {
	checkUnsupported(t, shopSources(), []unsupportedCase{
		{"Garantie jusqu'au 1 mai 2027; garantía hasta el 1 de mayo de 2027; garanzia fino al 1 maggio 2027; záruka do 1. května 2027; " +
			"гарантия до 1 мая 2027 года; гарантія до 1 травня 2027 року; garantii kuni 1. maini 2027; do 2027 roku, Q2 2027, in 2027.", nil},
		{"Votre garantie est valable jusqu'au 31 décembre 2031.", []string{`"31 décembre 2031" (date)`}},
		{"Su garantía es válida hasta el 31 de diciembre de 2031.", []string{`"31 de diciembre de 2031" (date)`}},
		{"La garanzia è valida fino al 31 dicembre 2031.", []string{`"31 dicembre 2031" (date)`}},
		{"Záruka platí do 31. prosince 2031.", []string{`"31. prosince 2031" (date)`}},
		{"Гарантия действует до 31 декабря 2031 года.", []string{`"31 дeкaбpя 2031" (date)`}},
		{"Гарантія діє до 31 грудня 2031 року.", []string{`"31 rpyдня 2031" (date)`}},
		{"Garantii kehtib kuni 31. detsembrini 2031.", []string{`"31. detsembrini 2031" (date)`}},
		{"Gwarancja obowiązuje do 2031 roku.", []string{`"do 2031 roku" (date)`}},
		{"Naprawa planowana na Q4 2031.", []string{`"Q4 2031" (date)`}},
		{"Your warranty ends in 2031.", []string{`"in 2031" (date)`}},
		{"Q1 2027 is not when it ends either.", []string{`"Q1 2027" (date)`}},
	})
}

// The customer's own words back nothing a reply states as the shop's: a
// customer who claims a warranty until 2031 does not get it confirmed. A
// reply may quote them when it marks the words as theirs (a quotation
// after "you wrote", "napisała Pani", "Sie schrieben"...), and the
// quotation must be faithful; a reply's subject "Re: ..." repeats theirs.
func TestCustomerWordsBackOnlyQuotes(t *testing.T) {
	src := shopSources()
	src.AddLanguage("pl")
	src.AddCustomerText("Reklamacja nr 77 - gwarancja do 2031")
	src.AddCustomerText("Dzień dobry, kupiłem ekspres 03.03.2025 za 1 299,00 zł z gwarancją do 31.12.2031. Ekspres przestał działać po 3 miesiącach. Mój telefon: 601 234 567, zamówienie #7731.")
	checkUnsupported(t, src, []unsupportedCase{
		{"Potwierdzamy: gwarancja jest ważna do 31.12.2031.", []string{`"31.12.2031" (date)`}},
		{"Gwarancja obowiązuje do 2031 roku.", []string{`"do 2031 roku" (date)`}},
		{"Zwrócimy 1299 zł za zamówienie #7731; zadzwonimy pod 601 234 567.", []string{`"1299 zł" (amount)`, `"601 234 567" (phone number)`, `"#7731" (ticket number)`}},
		// Quoted as theirs: backed by their words, faithfully.
		{"Napisał Pan: „kupiłem ekspres 03.03.2025 za 1 299,00 zł z gwarancją do 31.12.2031”. Według naszego rejestru gwarancja jest ważna do 01.05.2027.", nil},
		{"You wrote that your warranty runs \"until 31.12.2031\"; our register says 1 May 2027. We will call you at the number you gave: \"+48 601 234 567\".", nil},
		{"Sie schrieben: „Garantie bis 31.12.2032“.", []string{`"31.12.2032" (date)`}},
		// A quotation no phrase gives to the customer is the shop's.
		{"Gwarancja „do 31.12.2031” jest ważna.", []string{`"31.12.2031" (date)`}},
		// Their subject, repeated as a reply's; a duration they tell.
		{"Re: Reklamacja nr 77 - gwarancja do 2031", nil},
		{"Re: Reklamacja nr 78", []string{`"nr 78" (ticket number)`}},
		{"Rozumiemy, że ekspres przestał działać po 3 miesiącach.", nil},
	})
}
