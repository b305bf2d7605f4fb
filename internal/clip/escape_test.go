package clip

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct {
		in, line, text string
	}{
		{"Reklamacja żółw", "Reklamacja żółw", "Reklamacja żółw"},
		{"clip \x1b]52;c;ZXZpbA==\x07 end", `clip \x1b]52;c;ZXZpbA==\x07 end`, `clip \x1b]52;c;ZXZpbA==\x07 end`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"a\r\nb\tc", `a\r\nb\tc`, "a\\r\nb\tc"},
		{"csi \u009b31m", `csi \u009b31m`, `csi \u009b31m`},
		{"rlo \u202etxt.exe", `rlo \u202etxt.exe`, `rlo \u202etxt.exe`},
		{"bad \xff\xfe", `bad \xff\xfe`, `bad \xff\xfe`},
		{"del \x7f", `del \x7f`, `del \x7f`},
		{`back\slash`, `back\slash`, `back\slash`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.line {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if got := EscapeText(tt.in); got != tt.text {
			t.Errorf("EscapeText(%q) = %q, want %q", tt.in, got, tt.text)
		}
	}
}
