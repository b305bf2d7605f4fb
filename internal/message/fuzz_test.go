package message

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics and that what it returns keeps
// its promises: a message or an error, never both nil; text is UTF-8.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.eml")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte("From: a@b.example\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n--x\r\n"))
	f.Add([]byte("Content-Type: text/html\r\n\r\n<blockquote><blockquote>x"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Parse(raw)
		if err != nil {
			return
		}
		if m == nil {
			t.Fatal("Parse returned nil, nil")
		}
		if !utf8.ValidString(m.Text) || !utf8.ValidString(m.Quoted) {
			t.Errorf("Text/Quoted not valid UTF-8: %q / %q", m.Text, m.Quoted)
		}
		if m.Size != len(raw) {
			t.Errorf("Size = %d, want %d", m.Size, len(raw))
		}
	})
}

// BenchmarkParse parses a realistic multipart message: nested alternative
// with text and HTML, a PDF attachment and quoted history.
func BenchmarkParse(b *testing.B) { benchParse(b, "testdata/nested-multipart.eml") }

// BenchmarkParseHTML parses the HTML-only windows-1250 message.
func BenchmarkParseHTML(b *testing.B) { benchParse(b, "testdata/html-only-win1250.eml") }

// benchParse parses the message in file b.N times.
func benchParse(b *testing.B, file string) {
	b.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
