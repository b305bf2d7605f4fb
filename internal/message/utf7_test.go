package message

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"golang.org/x/text/transform"
)

func TestUTF7Decode(t *testing.T) {
	tests := []struct{ in, want string }{
		// RFC 2152's examples.
		{"Hi Mom -+Jjo--!", "Hi Mom -☺-!"},
		{"A+ImIDkQ.", "A≢Α."},
		{"+ZeVnLIqe-", "日本語"},
		{"Item 3 is +AKM-1.", "Item 3 is £1."},
		// Polish and German as Outlook wrote them.
		{"Za+AXwA8wFCAQc g+ARkBWw-l+AQU ja+AXoBRA-", "Zażółć gęślą jaźń"},
		{"Reklamacja ekspresu +IBM nie dzia+AUI-a!", "Reklamacja ekspresu – nie działa!"},
		{"Gr+APwA3w-e aus M+APw-nchen", "Grüße aus München"},
		// A literal plus, a surrogate pair, an empty shift.
		{"a+-b=c", "a+b=c"},
		{"+2D3eAA ok", "😀 ok"},
		{"x+-", "x+"},
		{"+-", "+"},
		{"a+-", "a+"},
		// Malformed: a lone surrogate, a byte outside ASCII, a "+" at the end.
		{"+2D0-x", "\uFFFDx"},
		{"+3gA-x", "\uFFFDx"},
		{"caf\xe9", "caf\uFFFD"},
		{"end+", "end"},
		{"", ""},
	}
	for _, tt := range tests {
		got, _, err := transform.String(UTF7.NewDecoder(), tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
		// Fed one byte at a time, the state carries across the cuts.
		b, err := io.ReadAll(UTF7.NewDecoder().Reader(iotest.OneByteReader(strings.NewReader(tt.in))))
		if err != nil || string(b) != tt.want {
			t.Errorf("%q one byte at a time: got %q (%v), want %q", tt.in, b, err, tt.want)
		}
	}
	if _, _, err := transform.String(UTF7.NewEncoder(), "x"); err == nil {
		t.Error("the encoder must refuse: triage never writes UTF-7")
	}
}

// FuzzUTF7 checks that any input decodes, without error, to valid UTF-8,
// whole or one byte at a time alike.
func FuzzUTF7(f *testing.F) {
	for _, s := range []string{"Hi Mom -+Jjo--!", "+2D3eAA", "+2D0-", "a+-", "+", "caf\xe9", "+ZeVnLIqe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, _, err := transform.String(UTF7.NewDecoder(), in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("%q: invalid UTF-8 %q", in, got)
		}
		b, err := io.ReadAll(UTF7.NewDecoder().Reader(iotest.OneByteReader(strings.NewReader(in))))
		if err != nil || string(b) != got {
			t.Fatalf("%q: one byte at a time %q (%v), whole %q", in, b, err, got)
		}
	})
}
