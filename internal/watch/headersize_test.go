package watch

import (
	"strings"
	"testing"

	"triage/internal/mailtest"
	"triage/internal/message"
)

// A header-only message far over every limit is never read whole: the
// header fetch is bounded (one byte over message.DefaultMaxHeaderBytes, so
// the parser still sees that it is too large) and RFC822.SIZE comes with it.
func TestHeaderFetchIsBounded(t *testing.T) {
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nMessage-ID: <huge-header@customer.example>\r\nSubject: x\r\n")
	for b.Len() < 3<<20 {
		b.WriteString("X-Filler: " + strings.Repeat("a", 990) + "\r\n")
	}
	b.WriteString("\r\nbody\r\n")
	raw := b.String()
	uid := srv.Append(t, "INBOX", []byte(raw))
	c := srv.Client(t)
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	hdr, size, ok, err := fetchHeader(c, uid)
	if err != nil || !ok {
		t.Fatalf("fetchHeader: ok %v, %v", ok, err)
	}
	if size != int64(len(raw)) {
		t.Errorf("size %d, want %d", size, len(raw))
	}
	if len(hdr) > message.DefaultMaxHeaderBytes+1 {
		t.Errorf("fetched %d bytes of header, want at most %d", len(hdr), message.DefaultMaxHeaderBytes+1)
	}
	if id := identify(hdr); id.MessageID != "<huge-header@customer.example>" || id.From != "anna@customer.example" {
		t.Errorf("identity from the bounded header: %+v", id)
	}
}
