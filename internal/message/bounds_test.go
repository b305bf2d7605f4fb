package message

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// partsEmail builds a message of one text part and n image/png parts; with
// nested, the image parts sit in a multipart/related inside the top-level
// multipart/mixed.
func partsEmail(n int, nested bool) []byte {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nSubject: Zdjecia\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nZdjecia w zalaczniku.\r\n")
	bnd := "b1"
	if nested {
		b.WriteString("--b1\r\nContent-Type: multipart/related; boundary=\"b2\"\r\n\r\n")
		bnd = "b2"
	}
	for i := range n {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: image/png; name=p%d.png\r\n\r\nnot a png\r\n", bnd, i)
	}
	if nested {
		b.WriteString("--b2--\r\n")
	}
	b.WriteString("--b1--\r\n")
	return []byte(b.String())
}

// attachedEmail builds a message of one text part and n attached messages.
func attachedEmail(n int) []byte {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nSubject: Historia\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nPrzesylam historie.\r\n")
	for i := range n {
		fmt.Fprintf(&b, "--b1\r\nContent-Type: message/rfc822\r\n\r\nFrom: k%d@customer.example\r\nSubject: Wiadomosc %d\r\n\r\nTresc %d.\r\n", i, i, i)
	}
	b.WriteString("--b1--\r\n")
	return []byte(b.String())
}

func hasProblem(m *Message, want string) bool {
	for _, p := range m.Problems {
		if p == want {
			return true
		}
	}
	return false
}

// However many parts a message has, Parse walks MaxParts of them and
// counts the rest without reading them.
func TestPartsWalkedAreCapped(t *testing.T) {
	tests := []struct {
		name    string
		raw     []byte
		atts    int // attachments listed
		notRead int
	}{
		{"under the cap", partsEmail(500, false), 500, 0},
		{"5,000 parts", partsEmail(5000, false), MaxParts - 1, 5001 - MaxParts},
		// The nested multipart is a walked part itself.
		{"5,000 parts in a nested multipart", partsEmail(5000, true), MaxParts - 2, 5000 - (MaxParts - 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Attachments) != tt.atts {
				t.Errorf("%d attachments listed, want %d", len(m.Attachments), tt.atts)
			}
			want := fmt.Sprintf("multipart: %d MIME part(s) past the first %d not read", tt.notRead, MaxParts)
			if got := hasProblem(m, want); got != (tt.notRead > 0) {
				t.Errorf("problem %q reported: %v, want %v; problems: %q", want, got, tt.notRead > 0, m.Problems)
			}
			if !strings.Contains(m.Text, "Zdjecia w zalaczniku.") {
				t.Errorf("Text = %q, want the text part", m.Text)
			}
		})
	}
}

// Parse reads the text of MaxAttachedParsed attached messages (attached
// ones inside them included) and lists the rest.
func TestAttachedMessagesAreCapped(t *testing.T) {
	m, err := Parse(attachedEmail(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Attachments) != 100 {
		t.Errorf("%d attachments listed, want all 100", len(m.Attachments))
	}
	if n := strings.Count(m.Quoted, "---------- Forwarded message"); n != MaxAttachedParsed {
		t.Errorf("%d attached messages in the quoted text, want %d", n, MaxAttachedParsed)
	}
	if !strings.Contains(m.Quoted, "Tresc 19.") || strings.Contains(m.Quoted, "Tresc 20.") {
		t.Errorf("Quoted does not hold exactly the first %d attached messages:\n%s", MaxAttachedParsed, m.Quoted)
	}
	want := fmt.Sprintf("attached message: %d attached message(s) past the first %d listed, not read", 100-MaxAttachedParsed, MaxAttachedParsed)
	if !hasProblem(m, want) {
		t.Errorf("no problem %q; problems: %q", want, m.Problems)
	}

	// The cap is shared with the messages attached inside attached ones.
	inner := attachedEmail(30)
	outer := "From: Anna <anna@customer.example>\r\nSubject: Fwd\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"o1\"\r\n\r\n--o1\r\nContent-Type: text/plain\r\n\r\nFwd.\r\n" +
		"--o1\r\nContent-Type: message/rfc822\r\n\r\n" + string(inner) + "--o1--\r\n"
	m, err = Parse([]byte(outer))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(m.Quoted, "---------- Forwarded message"); n != MaxAttachedParsed {
		t.Errorf("nested: %d attached messages in the quoted text, want %d", n, MaxAttachedParsed)
	}
}

// The quoted text of attached messages is built once, not past its cap.
func TestAttachedMessagesQuotedCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nSubject: Historia\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nHistoria.\r\n")
	for i := range 10 {
		fmt.Fprintf(&b, "--b1\r\nContent-Type: message/rfc822\r\n\r\nFrom: k%d@customer.example\r\nSubject: W %d\r\n\r\n%s\r\n",
			i, i, strings.Repeat("Tresc wiadomosci. ", 1000))
	}
	b.WriteString("--b1--\r\n")
	m, err := ParseLimits([]byte(b.String()), Limits{TextBytes: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Quoted) > 4096+len("\n[... cut ...]") {
		t.Errorf("Quoted is %d bytes, want at most 4096 and the cut mark", len(m.Quoted))
	}
	if !strings.HasPrefix(m.Quoted, "---------- Forwarded message") || !strings.HasSuffix(m.Quoted, "[... cut ...]") {
		t.Errorf("Quoted = %.80q...%q", m.Quoted, m.Quoted[max(len(m.Quoted)-40, 0):])
	}
}

// The delimiter counter finds every delimiter line, wherever the reads
// split it, and tells closing delimiters apart.
func TestDelimCounter(t *testing.T) {
	body := "--xy\r\nContent-Type: text/plain\r\n\r\na\r\n--xy\r\n\r\n--xyz is text\r\n--xy \r\n\r\nb\r\n--xy--\r\nepilogue\r\n"
	for _, r := range []struct {
		name string
		r    io.Reader
	}{{"one read", strings.NewReader(body)}, {"one byte at a time", iotest.OneByteReader(strings.NewReader(body))}} {
		d := newDelimCounter(r.r, "xy")
		got, err := io.ReadAll(d)
		if err != nil || !bytes.Equal(got, []byte(body)) {
			t.Fatalf("%s: read %q, %v", r.name, got, err)
		}
		// "--xyz is text" is counted too: the counter is a bound, not a
		// parser.
		if d.parts() != 4 {
			t.Errorf("%s: parts() = %d, want 4", r.name, d.parts())
		}
	}
}

// Parse keeps the first SniffBytes of each top-level attachment of a type
// in Limits.SniffTypes, and nothing of any other.
func TestHeads(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("p", 2000)
	raw := "From: Anna <anna@customer.example>\r\nSubject: Zdjecia\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nZdjecia.\r\n" +
		"--b1\r\nContent-Type: image/png; name=a.png\r\n\r\n" + png + "\r\n" +
		"--b1\r\nContent-Type: application/zip; name=a.zip\r\n\r\nPK\x03\x04zip\r\n" +
		"--b1\r\nContent-Type: image/png; name=b.png\r\n\r\nshort\r\n" +
		"--b1\r\nContent-Type: message/rfc822\r\n\r\nFrom: x@customer.example\r\nContent-Type: multipart/mixed; boundary=\"i1\"\r\n\r\n" +
		"--i1\r\nContent-Type: image/png; name=inner.png\r\n\r\n" + png + "\r\n--i1--\r\n" +
		"--b1--\r\n"
	m, err := ParseLimits([]byte(raw), Limits{SniffTypes: []string{"image/png"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Attachments) != 4 {
		t.Fatalf("attachments = %+v, want 4", m.Attachments)
	}
	if got := string(m.Heads[0]); got != png[:SniffBytes] {
		t.Errorf("Heads[0] = %.20q (%d bytes), want the first %d bytes of a.png", got, len(got), SniffBytes)
	}
	if got := string(m.Heads[2]); got != "short" {
		t.Errorf("Heads[2] = %q, want all of b.png", got)
	}
	if len(m.Heads) != 2 {
		t.Errorf("Heads has %d entries, want 2 (a.zip and the attached message's own attachment have none)", len(m.Heads))
	}
	if m.Attachments[0].Size != len(png) {
		t.Errorf("a.png size = %d, want %d", m.Attachments[0].Size, len(png))
	}
	plain, err := Parse([]byte(raw))
	if err != nil || plain.Heads != nil {
		t.Errorf("without SniffTypes: Heads = %v, %v; want none", plain.Heads, err)
	}
}

// Nested attached messages are each a copy of the next: past
// maxAttachedRead bytes read in all, the next one is listed, not read.
func TestAttachedMessagesReadCapped(t *testing.T) {
	var chain func(depth int) string
	chain = func(depth int) string {
		if depth == 0 {
			return "From: x@customer.example\r\nSubject: dno\r\n\r\n" + strings.Repeat("x", 3<<20) + "\r\n"
		}
		return fmt.Sprintf("From: x%d@customer.example\r\nSubject: poziom %d\r\nContent-Type: multipart/mixed; boundary=\"c%d\"\r\n\r\n"+
			"--c%d\r\nContent-Type: message/rfc822\r\n\r\n", depth, depth, depth, depth) + chain(depth-1) + fmt.Sprintf("\r\n--c%d--\r\n", depth)
	}
	raw := "From: Anna <anna@customer.example>\r\nSubject: Fwd\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"t\"\r\n\r\n" +
		"--t\r\nContent-Type: message/rfc822\r\n\r\n" + chain(8) + "\r\n--t--\r\n"
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	// Levels of about 3 MiB each: five fit in 16 MiB, the sixth does not.
	if n := strings.Count(m.Quoted, "---------- Forwarded message"); n != 5 {
		t.Errorf("%d attached messages parsed, want 5", n)
	}
	found := false
	for _, p := range m.Problems {
		found = found || strings.Contains(p, fmt.Sprintf("listed, not read (attached messages over %d bytes in all)", maxAttachedRead))
	}
	if !found {
		t.Errorf("no problem names the cap; problems: %q", m.Problems)
	}
}
