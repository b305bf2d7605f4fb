package grounding_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/grounding"
)

func claimStrings(cs []grounding.Claim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestClaims(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"ważna do 1 maja 2027 r., tj. 01.05.2027", []string{`"1 maja 2027" (date)`, `"01.05.2027" (date)`}},
		{"valid until May 1st, 2027 or 1 May 2027; gültig bis 1. Mai 2027", []string{`"1 May 2027" (date)`, `"1. Mai 2027" (date)`, `"May 1st, 2027" (date)`}},
		{"received 2026-11-24T08:00:00Z", []string{`"2026-11-24T08:00:00Z" (date)`}},
		{"ticket TKT-000123 for SN-48213-PL", []string{`"TKT-000123" (ticket number)`, `"SN-48213-PL" (serial or reference number)`}},
		{"zadzwoń: +48 22 123 45 67 lub 22-123-45-67", []string{`"+48 22 123 45 67" (phone number)`, `"22-123-45-67" (phone number)`}},
		{"koszt 1 200,50 zł, €49.99 albo 49,99 EUR", []string{`"1 200,50 zł" (amount)`, `"49,99 EUR" (amount)`, `"€49.99" (amount)`}},
		{"100 USD, USD 7, 5 CHF, Fr. 6, 8 GBP, £9, 10 złotych", []string{`"100 USD" (amount)`, `"5 CHF" (amount)`, `"8 GBP" (amount)`, `"10 złotych" (amount)`,
			`"USD 7" (amount)`, `"Fr. 6" (amount)`, `"£9" (amount)`}},
		// Each currency alone is one: a text's other names do not read it.
		{"koszt 100 USD albo usd 7", []string{`"100 USD" (amount)`, `"usd 7" (amount)`}},
		{"see https://example.com/a/. or mail serwis@example.pl", []string{`"https://example.com/a/" (url)`, `"serwis@example.pl" (email address)`}},
		{"order #123456", []string{`"#123456" (number)`}},
		// Units other than of time, ordinals, short words with digits and
		// small numbers are not claims.
		{"the 3rd step, 500 ml, USB-C, Wi-Fi 6, 90°C, 2FA, mp3, utf-8, am 3. Tag, 2 razy, 24/7", nil},
		// A year after a word that places something in it is a date.
		{"w 2027 roku, Q4 2031", []string{`"w 2027 roku" (date)`, `"Q4 2031" (date)`}},
		// Durations and percentages, a range or a pair stating each number.
		{"within 24h, 2 dni roboczych, 5 business days, 48 Stunden, 1,5 roku", []string{`"24h" (duration)`, `"2 dni roboczych" (duration)`,
			`"5 business days" (duration)`, `"48 Stunden" (duration)`, `"1,5 roku" (duration)`}},
		{"3-5 Tage, od 3 do 5 dni, 2 or 3 weeks, 14-dniowy termin, 2-year warranty", []string{`"3-5 Tage" (duration)`, `"3 do 5 dni" (duration)`,
			`"2 or 3 weeks" (duration)`, `"14-dniowy" (duration)`, `"2-year" (duration)`}},
		{"rabat 20%, 12,5 % VAT, 10-prozentiger Nachlass, 5 percent", []string{`"20%" (percentage)`, `"12,5 %" (percentage)`,
			`"10-prozentiger" (percentage)`, `"5 percent" (percentage)`}},
		// A year's two last digits after an apostrophe, or after a Roman
		// month.
		{"valid until 31 May '28 (May 31, '28; 1. Mai ’28; 30.V.28, 30. V. 28)", []string{`"30.V.28" (date)`, `"30. V. 28" (date)`,
			`"31 May '28" (date)`, `"1. Mai ’28" (date)`, `"May 31, '28" (date)`}},
		{"30 I 31 MAJA", []string{`"30 I 31 MAJA" (date)`}},
		{"It's 10 o'clock, rock'n'roll 12, '28 alone", nil},
		// A day written as an ordinal word; an English one before its month
		// only with "of".
		{"the first of June 2027, June twenty-first, 2027, pierwszego czerwca 2027 r., am ersten Juni, einunddreißigsten Mai 2027",
			[]string{`"first of June 2027" (date)`, `"June twenty-first, 2027" (date)`, `"pierwszego czerwca 2027" (date)`,
				`"ersten Juni" (date)`, `"einunddreißigsten Mai 2027" (date)`}},
		{"dwudziestego pierwszego maja, June the first; my first June, first of all", []string{`"dwudziestego pierwszego maja" (date)`, `"June the first" (date)`}},
		// Numbers written as words, as prose writes small ones; "a" only
		// after a word that makes it a length.
		{"trzy dni robocze, within two business days, zwei bis drei Tagen, twenty-four hours", []string{`"trzy dni robocze" (duration)`,
			`"two business days" (duration)`, `"zwei bis drei Tagen" (duration)`, `"twenty-four hours" (duration)`}},
		{"dwadzieścia cztery godziny, vierundzwanzig Stunden, półtora roku, in einer Woche, twenty percent, a week, Guten Tag", []string{
			`"dwadzieścia cztery godziny" (duration)`, `"vierundzwanzig Stunden" (duration)`, `"półtora roku" (duration)`, `"einer Woche" (duration)`,
			`"twenty percent" (percentage)`}},
		{"We will reply within a week, in an hour or less than a day; we are here 24 hours a day, twice a day.", []string{
			`"24 hours" (duration)`, `"a week" (duration)`, `"an hour" (duration)`, `"a day" (duration)`}},
		// A phone number followed by a duration stays the phone number.
		{"+48 601 234 567 24 h", []string{`"24 h" (duration)`, `"+48 601 234 567" (phone number)`}},
		// Not a calendar day.
		{"31.04.2027", nil},
		// A claim right after another, one space apart.
		{"01.05.2027 02.05.2027; 1 maja 2027 2 maja 2027; May 1, 2027 May 2, 2027; 5 zł 6 zł", []string{
			`"1 maja 2027" (date)`, `"2 maja 2027" (date)`, `"May 1, 2027" (date)`, `"May 2, 2027" (date)`,
			`"01.05.2027" (date)`, `"02.05.2027" (date)`, `"5 zł" (amount)`, `"6 zł" (amount)`}},
		// A two-digit year, a month with its year, a Roman-numeral month.
		{"ważna do 31.05.28, tj. 05/31/28", []string{`"31.05.28" (date)`, `"05/31/28" (date)`}},
		{"do maja 2028, until May 2028, bis Mai 2028, w maju 2028 r.", []string{`"maja 2028" (date)`, `"May 2028" (date)`, `"Mai 2028" (date)`, `"maju 2028" (date)`}},
		{"ważna do 31 V 2028 r., czyli 31.V.2028", []string{`"31 V 2028" (date)`, `"31.V.2028" (date)`}},
		// A day with its month and no year; a list or a range of days, one
		// claim stating each of them. A month's English name is one only
		// capitalized there ("1 may help"), its abbreviation only beside a
		// year.
		{"do 31 maja, bis zum 1. Juni, until June 5th, by the 5th of June, option 1 may help, 3 gru, December 9 /2027, June 123", []string{
			`"31 maja" (date)`, `"1. Juni" (date)`, `"5th of June" (date)`, `"June 5th" (date)`, `"December 9" (date)`}},
		{"w dniach 30 i 31 maja 2027, vom 1. bis 5. Juni 2027, May 30-31, 2027, 1, 2 lub 3 lipca", []string{
			`"30 i 31 maja 2027" (date)`, `"1. bis 5. Juni 2027" (date)`, `"May 30-31, 2027" (date)`, `"1, 2 lub 3 lipca" (date)`}},
		// A ticket number written as digits after the word that names it.
		{"zgłoszenie nr 4821, ticket 4822, Ticket-Nr. 4823, Ticketnummer: 4824, case #4825", []string{
			`"4821" (ticket number)`, `"4822" (ticket number)`, `"4823" (ticket number)`, `"4824" (ticket number)`, `"4825" (ticket number)`}},
		// Bank account and card numbers, in groups or as an IBAN, are one
		// claim each, not phone numbers or a country's letters.
		{"konto 61 1090 1014 0000 0712 1981 2874, IBAN PL61 1090 1014 0000 0712 1981 2874, GB29 NWBK 6016 1331 9268 19, karta 4111 1111 1111 1111", []string{
			`"PL61 1090 1014 0000 0712 1981 2874" (bank account or card number)`, `"GB29 NWBK 6016 1331 9268 19" (bank account or card number)`,
			`"61 1090 1014 0000 0712 1981 2874" (bank account or card number)`, `"4111 1111 1111 1111" (bank account or card number)`}},
		// A tax number is not a phone number, however it is grouped.
		{"NIP 525-000-00-00, USt-IdNr. DE123456789, tel. 22 123 45 67", []string{
			`"525-000-00-00" (tax number)`, `"DE123456789" (tax number)`, `"22 123 45 67" (phone number)`}},
		// Not dates, not tickets: a version, 24/7, a month abbreviation
		// that is also a word, a phone after "nr".
		{"Firmware 1.2.3.4, Hotline 24/7; erhalten Sie 2028 Ersatz; nr tel. 601 234 567", []string{`"601 234 567" (phone number)`}},
	} {
		if diff := cmp.Diff(tt.want, claimStrings(grounding.Claims(tt.text))); diff != "" {
			t.Errorf("Claims(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// unsupportedCase is a reply and the claims of it the sources do not back.
type unsupportedCase struct {
	reply string
	want  []string
}

// checkUnsupported holds src.Unsupported of each case's reply to its want.
func checkUnsupported(t *testing.T, src *grounding.Sources, cases []unsupportedCase) {
	t.Helper()
	for _, tt := range cases {
		if diff := cmp.Diff(tt.want, claimStrings(src.Unsupported(tt.reply))); diff != "" {
			t.Errorf("Unsupported(%q) (-want +got):\n%s", tt.reply, diff)
		}
	}
}

func TestUnsupported(t *testing.T) {
	var src grounding.Sources
	src.AddText("Case facts: {\"from\":\"anna@example.pl\",\"serial_numbers\":[\"SN-48213-PL\"],\"received\":\"2026-11-16T10:00:00+01:00\"}")
	src.AddText("Infolinia serwisu: +48 22 123 45 67, https://www.example.com/serwis")
	src.AddText("Пишите: jan@почта.рф")
	src.AddText("Wpłaty na rachunek PL61 1090 1014 0000 0712 1981 2874.")
	src.AddValue(map[string]any{"serial_number": "SN-48213-PL", "status": "valid", "expiration_date": "2027-05-01",
		"ticket": map[string]any{"ticket_id": "TKT-000123"}, "price": 349.5, "items": []any{"FV/2026/11/042"}})
	checkUnsupported(t, &src, []unsupportedCase{
		{"Ważna do 2027-05-01, 1 maja 2027, May 1, 2027, 1. Mai 2027, 01.05.2027, 05/01/2027.", nil},
		{"Zgłoszenie TKT-000123, faktura FV/2026/11/042, SN-48213-PL, sn48213pl? no: SN48213PL.", nil},
		{"Prosimy dzwonić: 22 123 45 67 albo +48 (22) 123-45-67, www.example.com/serwis/, anna@EXAMPLE.pl.", nil},
		{"Koszt: 349,50 zł (PLN 349.50).", nil},
		{"Wiadomość z 16 listopada 2026.", nil},

		{"Ważna do 2 maja 2027.", []string{`"2 maja 2027" (date)`}},
		{"Gültig bis 1. Mai 2028.", []string{`"1. Mai 2028" (date)`}},
		{"Valid until 13/01/2027.", []string{`"13/01/2027" (date)`}},
		{"Zgłoszenie TKT-000124 i SN-48213.", []string{`"TKT-000124" (ticket number)`, `"SN-48213" (serial or reference number)`}},
		{"Infolinia: +48 22 123 45 68.", []string{`"+48 22 123 45 68" (phone number)`}},
		{"Infolinia: 9999 22 123 45 67.", []string{`"9999 22 123 45 67" (phone number)`}},
		{"Koszt 350 zł.", []string{`"350 zł" (amount)`}},
		{"Zob. https://www.example.com/serwis/cennik, pisz: biuro@example.pl.", []string{`"https://www.example.com/serwis/cennik" (url)`, `"biuro@example.pl" (email address)`}},
		{"Numer sprawy 7788990.", []string{`"7788990" (ticket number)`}},
		// An account is backed written as an IBAN, the national way or in
		// one run; another one is not.
		{"Konto: 61 1090 1014 0000 0712 1981 2874 (PL61109010140000071219812874).", nil},
		{"Prosimy o wpłatę na konto 61 1090 1014 0000 0712 1981 2875 lub PL27 1140 2004 0000 3002 0135 5387.", []string{
			`"PL27 1140 2004 0000 3002 0135 5387" (bank account or card number)`, `"61 1090 1014 0000 0712 1981 2875" (bank account or card number)`}},
		// Each distinct claim once.
		{"TKT-999999 ... TKT-999999", []string{`"TKT-999999" (ticket number)`}},
		// Claims in another script's digits (which read like any other to
		// a customer) are claims too, shown in ASCII, and backed as those.
		{"Proszę podać numer SN-٩٩٩٠١-PL przy odbiorze urządzenia.", []string{`"SN-99901-PL" (serial or reference number)`}},
		{"Gwarancja do ２０２８-０１-１５, infolinia +48 22 123 45 99.", []string{`"2028-01-15" (date)`, `"+48 22 123 45 99" (phone number)`}},
		{"Ważna do ２０２７-０５-０１ (SN-٤٨٢١٣-PL), koszt ３４９,５０ zł.", nil},
		// So are claims cut by invisible characters or written with other
		// dashes: they read like any date or ticket.
		{"Gwarancja do 2028\u200b-01\u200b-15, zgłoszenie ＴＫＴ-０００１２４.", []string{`"2028-01-15" (date)`, `"TKT-000124" (ticket number)`}},
		{"Gwarancja do 2028–01–15 (2027\u00ad-05-01).", []string{`"2028-01-15" (date)`}},
		// So are claims written with other spaces, or with a run of
		// them: a thin space, an em space, a tab, eighty spaces.
		{"Ważna do 2\u2009maja\u20032027, koszt 1\u2009349,50\tzł.", []string{`"2 maja 2027" (date)`, `"1 349,50 zł" (amount)`}},
		{"Ważna do 2" + strings.Repeat(" ", 80) + "maja 2027.", []string{`"2 maja 2027" (date)`}},
		// A hard wrap does not hide a day, an amount or a ticket: a
		// wrong day before a line break was read as its month alone.
		{"Gwarancja jest ważna do 1\nmaja 2027, zgłoszenie\nTKT-000123, koszt 349,50\r\nzł.", nil},
		// A line break in an amount's thousands reads as the space it
		// stands for: "1\n349,50 zł" is 1 349,50 zł, not 349,50 zł.
		{"Do zapłaty: 1\n349,50 zł.", []string{"\"1\\n349,50 zł\" (amount)"}},
		// A currency in any case is one; a URL ends at a no-break space.
		{"Koszt: 349,50 PLN (349,50 pln, 349,50 ZŁ); www.example.com/serwis\u00a0(+48 22 123 45 67).", nil},
		{"Koszt naprawy: 999 ZŁ.", []string{`"999 ZŁ" (amount)`}},
		// A narrow no-break space is a space like any other.
		{"Ważna do 2\u202fmaja\u202f2027, infolinia +48\u202f22\u202f555\u202f01\u202f99.", []string{
			`"2\u00a0maja\u00a02027" (date)`, `"+48\u00a022\u00a0555\u00a001\u00a099" (phone number)`}},
		{"Gwarancja jest ważna do 2\nmaja 2027, zgłoszenie nr\n7788, koszt 350\r\nzł.", []string{
			"\"2\\nmaja 2027\" (date)", "\"350\\nzł\" (amount)", "\"7788\" (ticket number)"}},
		// A letter of another script that looks like a Latin one reads as
		// that letter: a month, a currency or a ticket so written is a
		// claim like any other, backed by what it looks like.
		{"Ważna do 1 m\u0430ja 2027, \u03a4\u039a\u03a4-000123, 349,50 \u0420LN.", nil},
		{"Ważna do 2 m\u0430ja 2027, zgłoszenie \u0422\u041a\u0422-000124, 350 \u0420LN.", []string{
			`"2 maja 2027" (date)`, `"350 PLN" (amount)`, `"TKT-000124" (ticket number)`}},
		// But an address or URL so spelled leads elsewhere: it is read as
		// written, backed only by itself.
		{"Zob. https://www.ex\u0430mple.com/serwis, pisz: anna@ex\u0430mple.pl.", []string{
			`"https://www.exаmple.com/serwis" (url)`, `"anna@exаmple.pl" (email address)`}}, // a Cyrillic "а"
		{"Kontakt: jan@\u043f\u043e\u0447\u0442\u0430.\u0440\u0444, dziękujemy.", nil},
	})
}

// TestPhoneCountryCode: a country code a reply adds to a national number of
// the sources must be one the sources write with a number, or one of the
// customer's language.
func TestPhoneCountryCode(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sources []string
		lang    string
		reply   string
		want    []string
	}{
		{"the number as written", []string{"Mój numer: 601 234 567."}, "", "Zadzwonimy pod 601 234 567, czyli 601-234-567.", nil},
		{"a code no source writes", []string{"Mój numer: 601 234 567."}, "", "We will call +48 601 234 567.", []string{`"+48 601 234 567" (phone number)`}},
		{"the code of the shop's own number", []string{"Mój numer: 601 234 567.", "Infolinia: +48 22 123 45 67."}, "", "We will call +48 601 234 567.", nil},
		{"another code than the shop's", []string{"Mój numer: 601 234 567.", "Infolinia: +48 22 123 45 67."}, "", "We will call +45 601 234 567.", []string{`"+45 601 234 567" (phone number)`}},
		{"the code of the customer's language", []string{"Mój numer: 601 234 567."}, "pl", "We will call +48 601 234 567, or 0048 601 234 567.", nil},
		{"another code than the language's", []string{"Mój numer: 601 234 567."}, "pl", "We will call +45 601 234 567.", []string{`"+45 601 234 567" (phone number)`}},
		{"English tells no country", []string{"My number: 601 234 567."}, "en", "We will call +44 601 234 567.", []string{`"+44 601 234 567" (phone number)`}},
		{"the code dropped", []string{"Numer: +48 601 234 567."}, "", "Zadzwonimy pod 601 234 567.", nil},
		{"only the code the shop's number is written with", []string{"Mój numer: 601 234 567.", "Infolinia: +48 22 123 45 67."}, "",
			"We will call +4 601 234 567 or +482 601 234 567.", []string{`"+4 601 234 567" (phone number)`, `"+482 601 234 567" (phone number)`}},
		{"a code in one run with its number", []string{"Mój numer: 601 234 567.", "Infolinia: +48221234567."}, "", "We will call 0048 601 234 567.", nil},
		{"the number twice, the second in parentheses", []string{"Mój numer: 601 234 567."}, "pl", "Zadzwonimy pod 601 234 567 (601-234-567), infolinia +48 (601) 234 567.", nil},
		{"another number in parentheses", []string{"Mój numer: 601 234 567."}, "", "Zadzwonimy pod 601 234 567 (602-234-567).", []string{`"602-234-567)" (phone number)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var src grounding.Sources
			for _, s := range tt.sources {
				src.AddText(s)
			}
			src.AddLanguage(tt.lang)
			if diff := cmp.Diff(tt.want, claimStrings(src.Unsupported(tt.reply))); diff != "" {
				t.Errorf("Unsupported(%q) (-want +got):\n%s", tt.reply, diff)
			}
		})
	}
}

// TestUnsupportedForms: dates with a two-digit year, a month and its year
// alone, Roman-numeral months, ticket numbers written as digits, tax
// numbers, durations and percentages are claims like the others: refused
// when nothing backs them, accepted when something does.
func TestUnsupportedForms(t *testing.T) {
	var src grounding.Sources
	src.AddValue(map[string]any{"serial_number": "SN-48213-PL", "status": "valid", "expiration_date": "2028-05-31"})
	src.AddValue(map[string]any{"ticket_id": "TKT-004821", "status": "created"})
	src.AddText("Faktury wystawia Ekspres sp. z o.o., NIP 525-000-00-00.")
	src.AddText("Naprawa trwa do 14 dni roboczych, odbiór kurierem w 2-3 dni. Gwarancja: 24 miesiące. Rabat 10 %.")
	src.AddValue(map[string]any{"days_left": 167, "discount": "15"})
	checkUnsupported(t, &src, []unsupportedCase{
		// A duration is backed by the same length in any unit of its
		// measure, a range by each of its numbers, a function's number in
		// any unit.
		{"Naprawa potrwa do 14 dni roboczych (14 Werktage, 14 business days); kurier przyjedzie w 2 lub 3 dni (48 godzin, 2-3 Tage).", nil},
		{"Gwarancja: 2 lata (2-letnia, 2 Jahre, 24 months, 104 weeks). Rabat 10%, 10 procent, 10-prozentig.", []string{`"104 weeks" (duration)`}},
		{"Gwarancja wygasa za 167 dni; rabat 15%.", nil},
		{"Naprawa potrwa 14 dni.", []string{`"14 dni" (duration)`}},
		{"Naprawa potrwa czternaście dni roboczych, kurier przyjedzie za dwa albo trzy dni (two or three days).", nil},
		{"Naprawa potrwa trzy dni robocze, two weeks at most.", []string{`"trzy dni robocze" (duration)`, `"two weeks" (duration)`}},
		{"Naprawa potrwa 3 dni robocze.", []string{`"3 dni robocze" (duration)`}},
		{"Kurier przyjedzie w 2 lub trzy dni (two or 3 days).", nil},
		{"Kurier przyjedzie w 1 or two days (one or 3 days).", []string{`"one or 3 days" (duration)`, `"1 or two days" (duration)`}},
		{"Kurier przyjedzie w 1-3 dni, gwarancja 3 lata, rabat 20%.", []string{`"1-3 dni" (duration)`, `"3 lata" (duration)`, `"20%" (percentage)`}},

		{"Gwarancja jest ważna do 31.05.28 (31 V 2028 r., 31.V.2028).", nil},
		{"Gwarancja obowiązuje do maja 2028; valid until May 2028; gültig bis Mai 2028; kończy się w maju 2028.", nil},
		{"Zgłoszenie nr 4821 (TKT-004821); ticket 4821; Ticket-Nr. 4821; zgłoszenie 004821.", nil},
		{"Sprzedawca: NIP 525-000-00-00 (NIP 5250000000).", nil},

		// A day with no year is backed by that day of any year; a list
		// only when every day of it is backed.
		{"Gwarancja jest ważna do 31 maja (bis 31. Mai, until May 31st).", nil},
		{"Gwarancja jest ważna do 30 maja.", []string{`"30 maja" (date)`}},
		{"Gwarancja jest ważna do 31 maja 2028, czyli 31 i 31 maja 2028.", nil},
		{"Naprawa w dniach 30 i 31 maja 2028.", []string{`"30 i 31 maja 2028" (date)`}},
		{"Repair on May 31 and June 1, 2028.", []string{`"June 1, 2028" (date)`}},

		// A day with its ordinal ending is that day.
		{"Gwarancja jest ważna do 31-go maja 2028 (31-ego maja 2028 r.), bis zum 31ten Mai 2028.", nil},
		{"Gwarancja jest ważna do 30-go maja 2028.", []string{`"30-go maja 2028" (date)`}},
		{"Gwarancja jest ważna do 30.05.28.", []string{`"30.05.28" (date)`}},
		{"Gwarancja jest ważna do 31.V.28 (31 maja '28), nie do 30.V.28 ani May 30, '28.", []string{`"30.V.28" (date)`, `"May 30, '28" (date)`}},
		{"Gwarancja jest ważna do trzydziestego pierwszego maja 2028 (the thirty-first of May 2028, einunddreißigsten Mai).", nil},
		{"Gwarancja jest ważna do trzydziestego maja 2028 (May the thirtieth), nie do pierwszego czerwca.", []string{`"trzydziestego maja 2028" (date)`,
			`"May the thirtieth" (date)`, `"pierwszego czerwca" (date)`}},
		{"Gwarancja: 31.05.2028 30.05.2028 (2028-05-31 2028-05-30).", []string{`"2028-05-30" (date)`, `"30.05.2028" (date)`}},
		// A year glued to its month, or after a comma with no space, is
		// the date's year.
		{"Gwarancja jest ważna do 31 maja2028 (31. Mai,2028; May 31,2028; May 31 ,2028; trzydziestego pierwszego maja2028).", nil},
		{"Gwarancja jest ważna do 31 maja2029.", []string{`"31 maja2029" (date)`}},
		{"Valid until May 31,2029 (31 maja,2029; 31. Mai2029).", []string{`"31 maja,2029" (date)`, `"31. Mai2029" (date)`, `"May 31,2029" (date)`}},
		{"Gwarancja jest ważna do trzydziestego pierwszego maja2029.", []string{`"trzydziestego pierwszego maja2029" (date)`}},
		{"Gwarancja obowiązuje do czerwca 2028.", []string{`"czerwca 2028" (date)`}},
		{"Valid until June 2028.", []string{`"June 2028" (date)`}},
		{"Gültig bis Juni 2028.", []string{`"Juni 2028" (date)`}},
		{"Ważna do 30 VI 2028 r.", []string{`"30 VI 2028" (date)`}},
		{"Zgłoszenie nr 4822.", []string{`"4822" (ticket number)`}},
		{"Zgłoszenie nr 4822 1 szt.", []string{`"4822" (ticket number)`}},
		{"Ihr Ticket-Nr. 4822 ist offen.", []string{`"4822" (ticket number)`}},
		{"Your ticket 9931 is open.", []string{`"9931" (ticket number)`}},
		{"Sprzedawca: NIP 525-000-00-01.", []string{`"525-000-00-01" (tax number)`}},
	})
}

// An amount a text writes with its currency backs that currency alone;
// a function's number backs any. A currency between two numbers is read
// with each of them.
func TestAmountsKeepTheirCurrency(t *testing.T) {
	var src grounding.Sources
	src.AddText("Naprawa pogwarancyjna: 150 zł, wysyłka €5.")
	src.AddValue(map[string]any{"price": 349.5})
	checkUnsupported(t, &src, []unsupportedCase{
		{"Koszt: 150 PLN (150,00 zł), wysyłka 5 EUR; albo 349,50 EUR, $349.50.", nil},
		{"Zapłacą Państwo 150 zł 2 razy.", nil},
		{"Koszt: 150 EUR, wysyłka $5.", []string{`"150 EUR" (amount)`, `"$5" (amount)`}},
		{"Wysyłka €5 EUR 999, 5€ 998.", []string{`"EUR 999" (amount)`, `"€ 998" (amount)`}},
	})
}

// Numbers before a date that do not ascend to it are not its days: a
// list of days is written in their order. Nor is the end of another
// number ("2.5, 5 maja").
func TestListOfDaysAscends(t *testing.T) {
	var src grounding.Sources
	src.AddText("Serwis nieczynny 5 maja 2027.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Serwis czynny w godzinach 8-16, 5 maja 2027 nieczynny; pokój 12, 5 maja.", nil},
		{"Wersja 2.5, 5 maja 2027; zgłoszenia do 30.04, 5 maja nieczynny.", nil},
		{"Serwis czynny w godzinach 8-16, 6 maja 2027 nieczynny.", []string{`"6 maja 2027" (date)`}},
		{"Serwis nieczynny 1, 2 lub 5 maja 2027.", []string{`"1, 2 lub 5 maja 2027" (date)`}},
		{"Serwis nieczynny 4-5 maja.", []string{`"4-5 maja" (date)`}},
	})
}

// A list of more than three days, or one whose separator is a word, is
// read whole: every day must be backed.
func TestLongListsOfDays(t *testing.T) {
	var src grounding.Sources
	src.AddText("Serwis nieczynny 23 i 24 grudnia 2026.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Nieczynny 23 i 24 grudnia (December 23 and 24); pokój 25, 23 i 24 grudnia; godz. 8-16, 23 i 24 grudnia.", nil},
		{"Nieczynny 5, 6, 23 i 24 grudnia.", []string{`"5, 6, 23 i 24 grudnia" (date)`}},
		{"Closed December 5, 6, 23 and 24.", []string{`"December 5, 6, 23 and 24" (date)`}},
		{"Closed 5, 6, 7, 23 December 2026.", []string{`"5, 6, 7, 23 December 2026" (date)`}},
	})
}

// An English month's name between two days is read with each: a reader
// sees "December 9" in "24. December 9." as well as "24. December"; a time
// after it is no day.
func TestMonthBetweenTwoDays(t *testing.T) {
	var src grounding.Sources
	src.AddText("Serwis nieczynny 23 i 24 grudnia 2026.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Closed 24. December 23. On 24 December 10:00-14:00 only.", nil},
		{"On 24 December 2 engineers come.", []string{`"December 2" (date)`}},
		{"Closed 24. December 9.", []string{`"December 9" (date)`}},
		{"Closed 23rd December 9th and on 24. Dezember; 23 December 9 and 24.", []string{`"December 9th" (date)`, `"December 9 and 24" (date)`}},
	})
}

// A form that is no date does not hide the date after it, and a list of
// days after its month ends before a number that is no day of the month.
func TestNoDateHidesNothing(t *testing.T) {
	var src grounding.Sources
	src.AddText("Zgłoszenie nr 4821: serwis nieczynny 24 grudnia 2026, gwarancja do 1 maja 2027.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Valid until May 1st, 2027; closed 24. December, nr 4821.", nil},
		{"Zgłoszenie nr 4821 Dez. 2031.", []string{`"Dez. 2031" (date)`}},
		{"Daty: 45.13.2031 31.12.2031.", []string{`"31.12.2031" (date)`}},
		{"Valid until May 1st, 99% off.", []string{`"99%" (percentage)`}},
	})
}

// A range of hours before a date is no day of it: "w godzinach 8-16, 24
// grudnia" states 24 December; without a word of hours the numbers are
// days of the list.
func TestHoursBeforeADate(t *testing.T) {
	var src grounding.Sources
	src.AddText("Serwis nieczynny 24 grudnia 2026.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Serwis czynny w godzinach 8-16, 24 grudnia nieczynny (godz. 8 do 16, 24 grudnia 2026; hours 8-16, 24 December).", nil},
		{"Serwis czynny w godzinach 8-16, 23 i 24 grudnia nieczynny.", []string{`"23 i 24 grudnia" (date)`}},
		{"Serwis czynny w godzinach 8-16, 25 grudnia 2026 nieczynny.", []string{`"25 grudnia 2026" (date)`}},
		{"Serwis nieczynny 8-16, 24 grudnia.", []string{`"8-16, 24 grudnia" (date)`}},
	})
}

// A month's abbreviation names a month beside its year (one that is a
// word too only capitalized or with its dot); a month's name that begins a
// compound names no day.
func TestAbbreviatedMonths(t *testing.T) {
	var src grounding.Sources
	src.AddText("Gwarancja do 30 czerwca 2028.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Valid until Jun 2028 (Jun. 2028, the thirtieth of Jun 2028, cze. 2028, jun 2028, cze 2028).", nil},
		{"Valid until jul 2028, lip 2028; zakończy sie 2028, mar 2028, lis 2028.", []string{`"jul 2028" (date)`, `"lip 2028" (date)`}},
		{"Valid until Jul 2028, the first of Jun. 2029.", []string{`"first of Jun. 2029" (date)`, `"Jul 2028" (date)`}},
		{"Wenn Sie 2028 kommen, in der ersten Juni-Woche; ważna do maja. 2028 roku.", nil},
		{"Ważna do Sie. 2028.", []string{`"Sie. 2028" (date)`}},
	})
}

// A half added to its number is one length: "dwa i pół roku" is 30
// months, not a pair of 2 years and half a year.
func TestAndAHalf(t *testing.T) {
	var src grounding.Sources
	src.AddText("Przedłużona gwarancja: 30 miesięcy.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Gwarancja: dwa i pół roku (2 i pół roku, two and a half years, zweieinhalb Jahre).", nil},
		{"Gwarancja: trzy i pół roku.", []string{`"trzy i pół roku" (duration)`}},
		{"Gwarancja: 3 i pół roku, pół roku.", []string{`"3 i pół roku" (duration)`, `"pół roku" (duration)`}},
		{"Gwarancja: two and a half months.", []string{`"two and a half months" (duration)`}},
	})
}

// A vague duration is a promise too: backed only by a vague duration of
// its degree and unit, never by a number; a few minutes is no claim.
func TestVagueDurations(t *testing.T) {
	var src grounding.Sources
	src.AddText("Kupiłem ekspres kilka dni temu, naprawa trwa do 14 dni, odpowiemy w najbliższych dniach.")
	checkUnsupported(t, &src, []unsupportedCase{
		{"Naprawa potrwa kilka dni (a few days, ein paar Tage, einige Tage, parę dni, several days).", nil},
		{"Odpowiemy w najbliższych dniach (in the coming days, in den nächsten Tagen).", nil},
		{"Proszę odczekać kilka minut i spróbować ponownie.", nil},
		{"Naprawa potrwa kilka tygodni.", []string{`"kilka tygodni" (duration)`}},
		{"Naprawa potrwa kilkanaście dni.", []string{`"kilkanaście dni" (duration)`}},
		{"Naprawa potrwa kilka dni roboczych.", []string{`"kilka dni roboczych" (duration)`}},
		{"Repair takes a couple of weeks (a couple weeks), a reply comes within several hours.", []string{`"a couple of weeks" (duration)`,
			`"a couple weeks" (duration)`, `"several hours" (duration)`}},
		{"Sie erhalten einige Prozent Rabatt.", []string{`"einige Prozent" (percentage)`}},
	})
	var numbered grounding.Sources
	numbered.AddText("Naprawa trwa 3 dni.")
	numbered.AddValue(map[string]any{"days_left": 3})
	if got := claimStrings(numbered.Unsupported("Naprawa potrwa kilka dni.")); len(got) != 1 {
		t.Errorf("a vague duration where the sources state a number: unsupported %v, want the claim", got)
	}
}

func TestMentionsDate(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"ważna do 2027-05-31", true},
		{"ważna do 31 maja 2027 r.", true},
		{"gültig bis zum 31. Mai 2027", true},
		{"valid until May 31, 2027", true},
		{"ważna do 31.05.2027", true},
		{"ważna do 31.05.27", true},
		{"ważna do 31 V 2027", true},
		{"ważna do maja 2027", false}, // the month, not the day
		{"ważna do 31 maja", false},   // the day of any year
		{"w dniach 30 i 31 maja 2027", true},
		{"ważna do 30 maja 2027", false},
		{"bez daty", false},
	} {
		if got := grounding.MentionsDate(tt.text, "2027-05-31"); got != tt.want {
			t.Errorf("MentionsDate(%q, 2027-05-31) = %v, want %v", tt.text, got, tt.want)
		}
	}
	if grounding.MentionsDate("2027-05-31", "31.05.2027") {
		t.Errorf("MentionsDate with a date that is not YYYY-MM-DD must be false")
	}
}

// TestBounded: a text of any size is read up to MaxText.
func TestBounded(t *testing.T) {
	huge := strings.Repeat("TKT-000001 ", grounding.MaxText/11+1000)
	if n := len(grounding.Claims(huge)); n > grounding.MaxText/11+1 {
		t.Errorf("%d claims from a text cut to %d bytes", n, grounding.MaxText)
	}
}

func BenchmarkUnsupported(b *testing.B) {
	var src grounding.Sources
	for _, c := range corpus {
		src.AddText(c.text)
		for _, r := range c.results {
			src.AddValue(r)
		}
	}
	body := corpus[0].replies[0].body
	b.ReportAllocs()
	for b.Loop() {
		src.Unsupported(body)
	}
}
