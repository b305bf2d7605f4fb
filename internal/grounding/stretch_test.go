package grounding

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Reading the patterns that need a digit only near digits finds exactly
// the claims reading the whole text finds: over every text the project
// ships (instructions, sample emails, eval cases) and over texts built at
// random from claims, near-claims and prose.
func TestNearDigitsReadsAsTheWholeText(t *testing.T) {
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
	pieces := []string{
		"31 maja 2027", "1. Mai 2027", "May 1st, 2027", "2026-11-24T08:00:00Z", "01.05.2027", "31.05.28", "05/31/28",
		"31 V 2028", "31.V.2028", "w maju 2028", "TKT-000123", "SN-48213-PL", "+48 22 123 45 67", "22-123-45-67",
		"1 200,50 zł", "€49.99", "49,99 EUR", "#123456", "zgłoszenie nr 4821", "Ticket-Nr. 4823", "NIP 525-000-00-00",
		"USt-IdNr. DE123456789", "Firmware 1.2.3.4", "24/7", "https://example.com/a/2027", "serwis12@example.pl",
		"500 ml", "24h", "X200", "2028", "31", "05", "zł", "maja", "May", "nr", "tel.",
		"Dzień dobry, dziękujemy za wiadomość i przepraszamy za kłopot z urządzeniem.",
		"Please quote the ticket number in any further correspondence with our service team.",
		"Bitte geben Sie diese Nummer bei weiterer Korrespondenz an, damit wir Ihren Vorgang finden.",
		strings.Repeat("bardzo ", 20), strings.Repeat("x", 90), "październikowy", "(", ")", ",", ".", "/", "-",
	}
	seps := []string{" ", "  ", "\n", "\n\n", "\t", ", ", ". ", "", " - ", "\u00a0"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 800 {
		var b strings.Builder
		for range 1 + r.IntN(25) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			b.WriteString(seps[r.IntN(len(seps))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		whole, near := claims(text, true), claims(text, false)
		if diff := cmp.Diff(whole, near, cmp.AllowUnexported(Claim{})); diff != "" {
			t.Fatalf("claims of %q read near digits differ from the whole text's (-whole +near):\n%s", text, diff)
		}
	}
}

// The stretches cover every digit with its reach, end at whitespace or the
// text's ends, do not overlap and come in order; a long run without
// whitespace is walked once, not once per digit.
func TestDigitStretches(t *testing.T) {
	for _, tt := range []struct {
		text string
		want [][2]int
	}{
		{"", nil},
		{"no digits here", nil},
		{"a 1 b", [][2]int{{0, 5}}},
		{strings.Repeat("word ", 30) + "7" + strings.Repeat(" word", 30), [][2]int{{85, 216}}},
		{"1" + strings.Repeat(" word", 20) + " 2", [][2]int{{0, 103}}},
		{"1" + strings.Repeat(" word", 60) + " 2", [][2]int{{0, 66}, {237, 303}}},
		{strings.Repeat("1a", 50_000) + " b", [][2]int{{0, 100_002}}},
	} {
		if got := digitStretches(tt.text); !cmp.Equal(got, tt.want) {
			t.Errorf("digitStretches(%.40q…) = %v, want %v", tt.text, got, tt.want)
		}
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
		name := "near-digits"
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
