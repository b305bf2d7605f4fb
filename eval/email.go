package eval

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"mime"
	netmail "net/mail"
	"net/textproto"
	"slices"
	"strings"
	"unicode/utf8"

	gomail "github.com/emersion/go-message/mail"
)

// Render turns a case's inline email into real RFC 5322 bytes: From, To
// (DefaultTo), Subject, Date (from Received, DefaultReceived when empty),
// Message-ID (<id@eval.triage.invalid>), MIME-Version and a text/plain UTF-8
// quoted-printable body. Headers are added last and replace generated fields
// of the same name; non-ASCII values are RFC 2047 encoded.
func Render(id string, e *Email) ([]byte, error) {
	from, err := netmail.ParseAddress(e.From)
	if err != nil {
		return nil, fmt.Errorf("from %q: %w", e.From, err)
	}
	rec := e.Received
	if rec == "" {
		rec = DefaultReceived
	}
	date, err := parseReceived(rec)
	if err != nil {
		return nil, fmt.Errorf("received %q: %w", rec, err)
	}
	var h gomail.Header
	h.SetAddressList("From", []*gomail.Address{{Name: from.Name, Address: from.Address}})
	h.SetAddressList("To", []*gomail.Address{{Address: DefaultTo}})
	h.SetSubject(e.Subject)
	h.SetDate(date)
	h.SetMessageID(messageIDFor(id))
	h.Set("MIME-Version", "1.0")
	h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		v := e.Headers[k]
		if !isASCII(v) {
			v = mime.QEncoding.Encode("utf-8", v)
		}
		h.Set(textproto.CanonicalMIMEHeaderKey(k), v)
	}
	if len(e.Attachments) > 0 {
		body := strings.ReplaceAll(e.Body, "\r\n", "\n")
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		return renderMultipart(id, h, strings.ReplaceAll(body, "\n", "\r\n"), e.Attachments)
	}
	var buf bytes.Buffer
	w, err := gomail.CreateSingleInlineWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	body := strings.ReplaceAll(e.Body, "\r\n", "\n")
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	if _, err := io.WriteString(w, strings.ReplaceAll(body, "\n", "\r\n")); err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	return buf.Bytes(), nil
}

// messageIDFor is the Message-ID of a rendered case email (no brackets).
func messageIDFor(id string) string {
	local := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, id)
	if local == "" {
		local = "case"
	}
	return local + "@eval.triage.invalid"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
