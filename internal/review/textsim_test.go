package review

import (
	"math"
	"strings"
	"testing"
)

const draft = `Dzień dobry,

gwarancja ekspresu SN-48213-PL jest ważna do 2027-05-31. Otworzyliśmy
zgłoszenie TKT-000123; kurier odbierze urządzenie w ciągu dwóch dni
roboczych. Prosimy o zapakowanie ekspresu w oryginalne pudełko.

Pozdrawiamy,
Zespół serwisu gwarancyjnego
`

func TestSimilarity(t *testing.T) {
	tests := []struct {
		name     string
		a, b     string
		min, max float64
	}{
		{"identical", draft, draft, 1, 1},
		{"rewrapped, other case and punctuation, signature added", draft,
			strings.ToUpper(strings.ReplaceAll(draft, "\n", " ")) + "\n-- \nAnna Nowak\nSerwis\n", 1, 1},
		{"CRLF and decomposed diacritics (NFD)", draft, strings.ReplaceAll(strings.ReplaceAll(draft, "\n", "\r\n"), "ó", "o\u0301"), 1, 1},
		{"one word changed of 35", draft, strings.Replace(draft, "dwóch", "trzech", 1), 0.97, 0.98},
		{"a sentence added", draft, strings.Replace(draft, "Pozdrawiamy", "W razie pytań prosimy dzwonić pod numer 123 456 789.\n\nPozdrawiamy", 1), 0.7, 0.9},
		{"negated", "gwarancja jest ważna", "gwarancja nie jest ważna", 0.74, 0.76},
		{"rewritten", draft, "Dzień dobry, proszę zadzwonić do nas jutro rano, wszystko wyjaśnimy. Anna", 0, 0.3},
		{"empty vs text", "", draft, 0, 0},
		{"both empty", "", "-- \nsig", 1, 1},
	}
	for _, tc := range tests {
		got := Similarity(tc.a, tc.b)
		if got < tc.min || got > tc.max || math.IsNaN(got) {
			t.Errorf("%s: Similarity = %.3f, want in [%.2f, %.2f]", tc.name, got, tc.min, tc.max)
		}
		if rev := Similarity(tc.b, tc.a); rev != got {
			t.Errorf("%s: not symmetric: %.3f vs %.3f", tc.name, got, rev)
		}
	}
}

func TestWordsBounded(t *testing.T) {
	if n := len(Words(strings.Repeat("słowo ", 2*MaxWords))); n != MaxWords {
		t.Errorf("Words kept %d words, want %d", n, MaxWords)
	}
}

func BenchmarkSimilarityMax(b *testing.B) {
	a := strings.Repeat("alfa beta gamma ", MaxWords/3)
	c := strings.Repeat("alfa delta gamma ", MaxWords/3)
	for b.Loop() {
		Similarity(a, c)
	}
}
