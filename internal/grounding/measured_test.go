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
	})
}
