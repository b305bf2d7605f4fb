package grounding

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// The narrowed readings (patterns skipped when the text cannot hold them,
// patterns that need digits read only near them) find exactly the claims
// reading every pattern over the whole text finds: over every text the
// project ships (instructions, sample emails, eval cases) and over texts
// built at random from claims, near-claims, the words and literals the
// narrowing looks for, and prose.
func TestNarrowReadsAsTheWholeText(t *testing.T) {
	var texts []string
	for _, glob := range []string{"../../instructions/*.md", "../../instructions/scenarios/*.md", "../../examples/inbox/*.eml",
		"../../examples/inbox/follow-ups/*.eml", "../../eval/cases/*.yaml"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	if len(texts) < 50 {
		t.Fatalf("only %d shipped texts found", len(texts))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 800 {
		texts = append(texts, randomText(r, 25, testSeps...))
	}
	for _, text := range texts {
		whole, narrowed := claims(text, true), claims(text, false)
		if diff := cmp.Diff(whole, narrowed, cmp.AllowUnexported(Claim{})); diff != "" {
			t.Fatalf("claims of %q narrowed differ from the whole text's (-whole +narrowed):\n%s", text, diff)
		}
	}
}

// A text hard-wrapped at any of its spaces states what it stated: every
// claim of the wrapped text is backed by the text as written, over texts
// built at random from testPieces. Numbers in groups (phone, bank account
// and card numbers) are the exception a line break makes on purpose (a
// number at a line's end must not join the next line's): a wrapped one
// reads as other numbers, refused, never let through.
func TestHardWrapStatesTheSame(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		text := randomText(r, 8, " | ")
		wrapped := []byte(text)
		for i, c := range wrapped {
			if c == ' ' && r.IntN(3) == 0 {
				wrapped[i] = '\n'
			}
		}
		var src Sources
		src.AddText(text)
		for _, c := range src.Unsupported(string(wrapped)) {
			if c.Kind != KindPhone && c.Kind != KindAccount {
				t.Fatalf("%q, hard-wrapped as %q, states %s, which the text as written does not", text, wrapped, c)
			}
		}
	}
}

// A reply its sources back, with one invented fact put in anywhere, as a
// sentence of its own or glued to what stands around it by a space, a
// comma, a dash or a parenthesis, is refused: the fact is read whatever
// stands around it, over texts built at random from testPieces.
// factSeps put an invented fact into a text.
var factSeps = []string{". ", " ", ", ", "\n", " - ", " (", ") ", "; "}

func TestInventedFactsAreRefused(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	invented := []string{"TKT-999999", "31 grudnia 2031", "999,99 zł", "+48 22 999 99 99", "SN-99999-XX", "https://evil.example/x",
		"evil@evil.example", "#9999999", "zgłoszenie nr 9999", "9 grudnia", "December 9", "9. Dezember", "2031-12-31", "31.12.2031",
		"EUR 999", "NIP 999-999-99-99", "9 i 10 grudnia 2031", "61 1090 1014 0000 0712 1981 2879", "PL27 1140 2004 0000 3002 0135 5387",
		"999 dni", "99 Werktage", "99%", "9-99 hours", "99-letnia",
		"dziewięćdziesiąt dni", "ninety-nine hours", "neunundneunzig Tage", "dziewięć lub dziesięć miesięcy", "31 December '31", "31.XII.31", "+45 22 123 45 67", "+45 601 234 567",
		"ninth of December", "dziewiątego grudnia 2031", "neunten Dezember", "31 grudnia2031", "December 31,2031", "31. Dezember,2031",
		"9 or ten days", "nine or 99 hours", "dziewięć i pół roku", "99 i pół dnia",
		"kilkadziesiąt tygodni", "a couple of years", "in den nächsten Jahren", "Dec 2031", "Dez. 2031", "the ninth of Dec 2031",
		"1, 2, 3 i 9 grudnia", "December 1, 2, 3 and 9"}
	for range 3000 {
		text := randomText(r, 6, " | ", " ", ", ", ". ", "\n", " - ")
		var at []int
		for i := 0; i < len(text); i++ {
			if text[i] == ' ' || text[i] == '\n' {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			continue
		}
		i, fact := at[r.IntN(len(at))], invented[r.IntN(len(invented))]
		sep := func() string { return factSeps[r.IntN(len(factSeps))] }
		reply := text[:i] + sep() + fact + sep() + text[i:]
		var src Sources
		src.AddText(text)
		if len(src.Unsupported(reply)) == 0 {
			t.Fatalf("%q passed in %q, which %q backs", fact, reply, text)
		}
	}
}

// A text written with other spaces, another script's digits, fullwidth
// forms, other dashes or in capitals states what it stated, both ways:
// each reads as the other (readable, and patterns that ignore case), over
// texts built at random from testPieces. A URL in capitals is the
// exception: its path's case is part of where it leads.
func TestWrittenVariantsStateTheSame(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	mapRunes := func(f func(c rune) string) func(string) string {
		return func(s string) string {
			var b strings.Builder
			for _, c := range s {
				b.WriteString(f(c))
			}
			return b.String()
		}
	}
	for _, v := range []struct {
		name string
		f    func(string) string
	}{
		{"other spaces", mapRunes(func(c rune) string {
			if c == ' ' {
				return []string{"\u2009", "\u00a0", "\u2003", "\t", " ", "\u202f"}[r.IntN(6)]
			}
			return string(c)
		})},
		{"Arabic-Indic digits", mapRunes(func(c rune) string {
			if c >= '0' && c <= '9' && r.IntN(2) == 0 {
				return string('\u0660' + c - '0')
			}
			return string(c)
		})},
		{"fullwidth forms", mapRunes(func(c rune) string {
			if c > ' ' && c < 0x7f && r.IntN(3) == 0 {
				return string(c + 0xFEE0)
			}
			return string(c)
		})},
		{"en dashes", func(s string) string { return strings.ReplaceAll(s, "-", "\u2013") }},
		{"capitals", strings.ToUpper},
	} {
		for range 400 {
			text := randomText(r, 8, " | ")
			varied := v.f(text)
			for _, pair := range [][2]string{{text, varied}, {varied, text}} {
				var src Sources
				src.AddText(pair[0])
				for _, c := range src.Unsupported(pair[1]) {
					if v.name != "capitals" || c.Kind != KindURL {
						t.Fatalf("%s: %q states %s, which %q does not", v.name, pair[1], c, pair[0])
					}
				}
			}
		}
	}
}

// The stretches cover every long enough run of digits with its reach, end
// at whitespace or the text's ends, do not overlap and come in order; a
// long run without whitespace is walked once, not once per digit.
func TestDigitStretches(t *testing.T) {
	for _, tt := range []struct {
		text string
		run  int
		want [][2]int
	}{
		{"", 1, nil},
		{"no digits here", 1, nil},
		{"a 1 b", 1, [][2]int{{0, 5}}},
		{"a 1 b", 2, nil},
		{strings.Repeat("word ", 30) + "7" + strings.Repeat(" word", 30), 1, [][2]int{{85, 216}}},
		{"1" + strings.Repeat(" word", 20) + " 2", 1, [][2]int{{0, 103}}},
		{"1" + strings.Repeat(" word", 60) + " 2", 1, [][2]int{{0, 66}, {237, 303}}},
		{"1" + strings.Repeat(" word", 60) + " 2027", 4, [][2]int{{237, 306}}},
		{"12 1234 12" + strings.Repeat(" word", 60) + " 123", 3, [][2]int{{0, 75}, {246, 314}}},
		{strings.Repeat("1a", 50_000) + " b", 1, [][2]int{{0, 100_002}}},
	} {
		if got := digitStretches(tt.text, tt.run); !cmp.Equal(got, tt.want) {
			t.Errorf("digitStretches(%.40q…, %d) = %v, want %v", tt.text, tt.run, got, tt.want)
		}
	}
}

// The stretches of a pattern that ends with its digits reach before them
// alone, and after them to whitespace.
func TestDigitStretchesBefore(t *testing.T) {
	for _, tt := range []struct {
		text string
		want [][2]int
	}{
		{"2027" + strings.Repeat(" word", 30), [][2]int{{0, 4}}},
		{"maja 2027r." + strings.Repeat(" word", 30), [][2]int{{0, 11}}},
		{strings.Repeat("word ", 30) + "2027 word", [][2]int{{85, 154}}},
		{"12 2027", [][2]int{{0, 7}}},
	} {
		if got := digitStretchesBefore(tt.text, 4); !cmp.Equal(got, tt.want) {
			t.Errorf("digitStretchesBefore(%.40q…, 4) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// BenchmarkClaimsWorst is the scan of a text of MaxText bytes that repeats
// one form a stranger may send: forms that look like dates and are not,
// each taking the boundary of the next ("45.13.2031 45.13.2031 ..."),
// lists, amounts, ticket numbers. Each must stay near a plain text's
// cost, not grow with the square of the text.
func BenchmarkClaimsWorst(b *testing.B) {
	for _, unit := range []string{"a 2027 ", "45.13.2031 ", "1 x 2031 ", "nr 4821 ", "1, 2, 3 i 4 maja ", "December 1 December ", "$5 EUR 9 ", "godzinach 8-16, "} {
		text := strings.Repeat(unit, MaxText/len(unit))
		b.Run(strings.TrimSpace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Claims(text)
			}
		})
	}
}

// BenchmarkClaimsOfTheInstructions is the scan of a long text with few
// numbers (the shipped instructions, about 6 KB), which every email's
// sources would read without the cache.
func BenchmarkClaimsOfTheInstructions(b *testing.B) {
	text, err := os.ReadFile("../../instructions/main.md")
	if err != nil {
		b.Fatal(err)
	}
	for _, whole := range []bool{true, false} {
		name := "narrowed"
		if whole {
			name = "whole-text"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				claims(string(text), whole)
			}
		})
	}
}

// FuzzNarrowReadsAsTheWholeText is TestNarrowReadsAsTheWholeText over
// texts the fuzzer writes (go test -fuzz FuzzNarrow ./internal/grounding);
// the pieces are its seeds.
func FuzzNarrowReadsAsTheWholeText(f *testing.F) {
	for _, p := range testPieces {
		f.Add(p)
	}
	f.Add("31 maja 2027, zgłoszenie nr 4821, 1 200,50 zł, +48 22 123 45 67, SN-48213-PL, http://x.pl/2027")
	f.Fuzz(func(t *testing.T, text string) {
		whole, narrowed := claims(text, true), claims(text, false)
		if diff := cmp.Diff(whole, narrowed, cmp.AllowUnexported(Claim{})); diff != "" {
			t.Fatalf("claims of %q narrowed differ from the whole text's (-whole +narrowed):\n%s", text, diff)
		}
	})
}

// randomText joins 1 to n of testPieces picked by r, each followed by one
// of seps.
func randomText(r *rand.Rand, n int, seps ...string) string {
	var b strings.Builder
	for range 1 + r.IntN(n) {
		b.WriteString(testPieces[r.IntN(len(testPieces))])
		b.WriteString(seps[r.IntN(len(seps))])
	}
	return b.String()
}

// testPieces are claims, near-claims, the words and literals the narrowed
// readings look for, and prose, for texts built at random.
var testPieces = []string{
	"31 maja 2027", "1. Mai 2027", "May 1st, 2027", "2026-11-24T08:00:00Z", "01.05.2027", "31.05.28", "05/31/28",
	"31 V 2028", "31.V.2028", "w maju 2028", "31-go maja 2028", "1-szego", "31ten Mai", "TKT-000123", "SN-48213-PL", "+48 22 123 45 67", "22-123-45-67",
	"1 200,50 zł", "€49.99", "49,99 EUR", "#123456", "zgłoszenie nr 4821", "Ticket-Nr. 4823", "NIP 525-000-00-00",
	"USt-IdNr. DE123456789", "Firmware 1.2.3.4", "24/7", "https://example.com/a/2027", "serwis12@example.pl",
	"500 ml", "24h", "X200", "2028", "31", "05", "zł", "maja", "May", "nr", "tel.",
	"Dzień dobry, dziękujemy za wiadomość i przepraszamy za kłopot z urządzeniem.",
	"Please quote the ticket number in any further correspondence with our service team.",
	"Bitte geben Sie diese Nummer bei weiterer Korrespondenz an, damit wir Ihren Vorgang finden.",
	strings.Repeat("bardzo ", 20), strings.Repeat("x", 90), "październikowy", "(", ")", ",", ".", "/", "-",
	"Case", "case #4825", "Numer", "sprawa", "Ticket-Nr.", "no.", "ref:", "Vorgang", "http://x.pl/2027", "WWW.Example.com",
	"ąhttp://x.pl/maja", "I", "XII", "V", "$5", "5 $", "Fr. 20", "20 Fr.", "US$ 7", "1\u00a0200 zł", "a@b.pl", "x@y",
	"12345", "123", "1.5.27", "- 2027", "/2027", "3f9a0b1c77e24d5a8b6c0f1e2d3c4b5a", "maj", "Mai", "lis", "sie", "4821",
	"PL61 1090 1014 0000 0712 1981 2874", "61 1090 1014 0000 0712 1981 2874", "GB29 NWBK 6016 1331 9268 19", "4111 1111 1111 1111", "DE89",
	"30 i 31 maja", "1. bis 5. Juni", "1-szego oraz 2-szego albo 31-szego of października., 2027", "May 30 and 31", "June 5", "5th of June", "1st", " i ", " and ", " bis ", "lub", "-",
	"czerwca", "June", "Juni", "JUNE", "june", "Dezember", "październik", "dni", "ok", "2027r.",
	"14 dni roboczych", "3-5 Tage", "2 or 3 weeks", "2-letnia", "48 godz.", "1,5 roku", "20%", "10 procent", "5 business days",
	"Tage", "roboczych", "business", "%", "14", "3", "do", "bis", "trzy dni", "twenty-four hours", "zwei bis drei Wochen", "półtora roku",
	"trzy", "twenty", "vierundzwanzig", "or", "31 May '28", "May 31, '28", "30.V.28", "1. Mai ’28", "'28", "'", "first of June 2027", "June twenty-first", "pierwszego czerwca", "ersten Juni", "of", "first",
	"kilka dni", "a few days", "a couple of weeks", "w najbliższych dniach", "kilku", "few", "couple", "2 or three days", "two or 3",
	"dwa i pół roku", "2 i pół", "zweieinhalb Jahre", "pół", "half", "31 maja2027", "May 31,2027", ",2027", "Jun 2027", "Jun.", "jun", "Mai-Woche",
	"5, 6, 23 i 24 grudnia", "December 5, 6, 23 and 24", "w godzinach 8-16", "godz.", "hours", "$5 EUR 7", "EUR", "cze 2028", "mar",
	"anna (at) example (dot) pl", "jan[at]example.com", "ola at firma dot pl", "at", "ewa ( @ ) firma.pl", "(", "(dot)", "example.com/a", "serwis.example.pl", "nr 77", "#7731", "Nr.",
	"7,3 tys. zł", "7k PLN", "€7k", "2 Mio. €", "5 тыс. руб.", "500 Kč", "100 UAH", "5 XYZ", "900 Kč.", "pięć tysięcy złotych", "two hundred and five euros", "tys.", "Kč", "SEK",
	"31 de diciembre de 2030", "1. prosince 2030", "31 декабря 2030 года", "1 грудня 2030", "kuni 31. detsembrini 2030", "de", "del", "mars", "Q4 2030", "do 2030 roku", "in 2030", "2030 r.", "IV kw. 2030",
	"1․11․2030", "③①", "²⁰³⁰", "1 . 11 . 2030", "·",
	"m\u0430ja", "\u0422\u041a\u0422-000124", "\u0420LN", "https://ex\u0430mple.pl/2027", "j@\u043f\u043e\u0447\u0442\u0430.\u0440\u0444",
}

// testSeps join testPieces.
var testSeps = []string{" ", "  ", "\n", "\n\n", "\t", ", ", ". ", "", " - ", "\u00a0",
	strings.Repeat(" ", 80), "\t\u2009", "\u3000", strings.Repeat("\u00a0", 70), "\r\n", " \n ", "\u2028", "\n" + strings.Repeat(" ", 70) + "\n"}

// readable writes what reads like a digit, a dash or a fullwidth sign in
// ASCII and drops what cannot be seen.
func TestReadable(t *testing.T) {
	for in, want := range map[string]string{
		"":                                "",
		"SN-48213-PL":                     "SN-48213-PL",
		"Dzień dobry, ekspres nie grzeje": "Dzień dobry, ekspres nie grzeje",
		"SN-٤٨٢١٣-PL":                     "SN-48213-PL",
		"２０２７-０５-３１":                      "2027-05-31",
		"۱۲۳ ߁߂߃ १२३ ১২৩ ๑๒๓ 𝟏𝟐𝟑 𝟗": "123 123 123 123 123 123 9",
		"Ⅻ ½ ² ①": "XII ½ 2 1", // NFKC: a vulgar fraction aside
		"31․12․2031 ³¹·¹²·²⁰³¹ ⑫":                                       "31.12.2031 31.12.2031 12",
		"ＴＫＴ－０００１２３ ＄５":                                                 "TKT-000123 $5",
		"2027–05–31 2027‑05‑31 −5 1⁄2 3∕4":                              "2027-05-31 2027-05-31 -5 1/2 3/4",
		"20\u200b27-0\u00ad5-\u200d31\u2060\ufeff":                      "2027-05-31",
		"\u202e13-50-7202\u202c":                                        "13-50-7202",
		"31\u00a0maja 2027":                                             "31\u00a0maja 2027",        // a no-break space is a space the patterns know
		"31 m\u0430ja 2027, \u03a4\u039a\u03a4-000123":                  "31 maja 2027, TKT-000123", // Cyrillic a, Greek T K T
		"\u0406X \u0456 \u01c0":                                         "IX i l",                   // capital I or small l, by case (a letter with none: small)
		"2\u2009maja\u20032027\t r., 1\u00a0\u00a0200 zł, a  \u200b  b": "2 maja 2027 r., 1\u00a0200 zł, a b",
		"31 \r\n  maja\u2028\n2027\n\n\u00a0r. \u2009x ":                "31\nmaja\n2027\nr. x ",
		"Łódź, ĄĘŚ, żółć, Straße, Müller, ёж":                           "Łódź, ĄĘŚ, żółć, Straße, Müller, ёж",
	} {
		if got := readable(in).text; got != want {
			t.Errorf("readable(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every decimal digit Unicode knows reads as its value: each script's
// digits come 0 to 9 in a row.
func TestDigitValue(t *testing.T) {
	n := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !unicode.IsDigit(r) {
			continue
		}
		n++
		v := digitValue(r)
		if v < 9 && (!unicode.IsDigit(r+1) || digitValue(r+1) != v+1) {
			t.Fatalf("digit %U is %d, but %U after it is not %d", r, v, r+1, v+1)
		}
		if v == 0 && unicode.IsDigit(r-1) && digitValue(r-1) != 9 {
			t.Fatalf("digit %U is 0, but %U before it is not 9", r, r-1)
		}
	}
	if n < 600 {
		t.Fatalf("only %d decimal digits beyond ASCII", n)
	}
}

// hasCurrency finds every currency's name in any case, in ASCII text and
// beside letters outside it, and nothing in a text with none.
func TestHasCurrency(t *testing.T) {
	for name := range currencies {
		for _, w := range []string{name, strings.ToUpper(name)} {
			for _, text := range []string{"Koszt 100 " + w + ".", "Zwrot: " + w + "100,00 za naprawę", w} {
				if !hasCurrency(&scan{orig: text}) {
					t.Errorf("hasCurrency(%q) = false", text)
				}
			}
		}
	}
	for _, text := range []string{"", "Koszt 100 sztuk.", "Naprawa potrwa 14 dni, zgłoszenie TKT-000123.", "Ł"} {
		if hasCurrency(&scan{orig: text}) {
			t.Errorf("hasCurrency(%q) = true", text)
		}
	}
}
