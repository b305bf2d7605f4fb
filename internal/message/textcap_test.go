package message

import (
	"strings"
	"testing"
)

// bigTextEmail builds a message of parts text/plain parts of size bytes
// each, every line naming a serial-like token.
func bigTextEmail(parts, size int, quoted bool) []byte {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja\r\n" +
		"Message-ID: <big@customer.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n")
	line := "Moj ekspres SN-48213-PL nie grzeje, prosze o naprawe.\r\n"
	if quoted {
		line = "> " + line
	}
	for p := 0; p < parts; p++ {
		b.WriteString("--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
		for n := 0; n < size; n += len(line) {
			b.WriteString(line)
		}
	}
	b.WriteString("--b1--\r\n")
	return []byte(b.String())
}

// The total text is capped once, at parse time: 3 parts of 1 MiB keep at
// most DefaultMaxTextBytes of text and half of it of quoted history, and
// say what was cut.
func TestTotalTextIsCapped(t *testing.T) {
	tests := []struct {
		name             string
		raw              []byte
		lim              Limits
		maxText, maxQuot int
	}{
		{"3 parts of 1 MiB (over the raw text read)", bigTextEmail(3, 1<<20, false), Limits{}, DefaultMaxTextBytes, DefaultMaxTextBytes / 2},
		{"3 quoted parts of 1 MiB", bigTextEmail(3, 1<<20, true), Limits{}, DefaultMaxTextBytes, DefaultMaxTextBytes / 2},
		{"configured cap", bigTextEmail(2, 100<<10, false), Limits{TextBytes: 4096}, 4096, 2048},
	}
	const mark = len("\n[... cut ...]")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseLimits(tt.raw, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Text) > tt.maxText+mark {
				t.Errorf("Text is %d bytes, want at most %d", len(m.Text), tt.maxText+mark)
			}
			if len(m.Quoted) > tt.maxQuot+mark {
				t.Errorf("Quoted is %d bytes, want at most %d", len(m.Quoted), tt.maxQuot+mark)
			}
			if !strings.Contains(m.Text+m.Quoted, "SN-48213-PL") {
				t.Errorf("the capped text lost its start")
			}
			cut := false
			for _, p := range m.Problems {
				cut = cut || strings.Contains(p, "cut to") || strings.Contains(p, "not read")
			}
			if !cut {
				t.Errorf("Problems %q do not say the text was cut", m.Problems)
			}
		})
	}
}

func BenchmarkParseWorstText(b *testing.B) {
	raw := bigTextEmail(24, 1<<20, false)
	b.SetBytes(int64(len(raw)))
	for range b.N {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
