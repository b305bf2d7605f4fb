package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		mark string
		want string
	}{
		{"short", 10, "…", "short"},
		{"exactly", 7, "…", "exactly"},
		{"abcdef", 3, "…", "abc…"},
		{"abcdef", 3, "", "abc"},
		{"zażółć", 3, "", "za"},       // ż is two bytes: not split
		{"zażółć", 4, "", "zaż"},      // ends on its boundary
		{"日本語", 2, "|", "|"},          // nothing fits but the mark
		{"abc", -1, "", ""},           // a negative bound keeps nothing
		{"\xff\xfeab", 1, "", "\xff"}, // invalid bytes are not runes to keep whole
	} {
		got := Bytes(tc.s, tc.n, tc.mark)
		if got != tc.want {
			t.Errorf("Bytes(%q, %d, %q) = %q, want %q", tc.s, tc.n, tc.mark, got, tc.want)
		}
		if len(got) > max(tc.n, 0)+len(tc.mark) {
			t.Errorf("Bytes(%q, %d, %q) = %d bytes, over the bound", tc.s, tc.n, tc.mark, len(got))
		}
	}
}

func TestRunesAndLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"fits", Runes("zażółć", 6), "zażółć"},
		{"cut", Runes("zażółć gęślą", 5), "zażó…"},
		{"one", Runes("abc", 1), "…"},
		{"none", Runes("abc", 0), ""},
		{"keeps newlines", Runes("a\nb", 3), "a\nb"},
		{"line", Line("  Dzień\n\tdobry,   panie ", 40), "Dzień dobry, panie"},
		{"line cut", Line("Dzień\ndobry, panie", 8), "Dzień d…"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	long := strings.Repeat("ąb ", 1000)
	if got := utf8.RuneCountInString(Line(long, 100)); got != 100 {
		t.Errorf("Line of a long text has %d runes, want 100", got)
	}
}
