// Package message turns raw RFC 5322 bytes into the parsed view the rest of
// triage works on: decoded sender, subject and threading headers, the new text
// set apart from quoted history, the attachments listed but not read (only
// the first bytes of chosen types, to check what they are), and what the
// receiving server's Authentication-Results say of the sender
// (Authenticated, ReplyAddress). It also splits an mbox file into its
// messages (MboxReader) and decodes the UTF-7 charset of RFC 2152 (UTF7).
package message

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	gomessage "github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // ISO-8859-2, windows-1250 and friends
	gomail "github.com/emersion/go-message/mail"
	gotextproto "github.com/emersion/go-message/textproto"
	"golang.org/x/text/encoding/charmap"

	"triage/internal/clip"
)

// Message is one parsed inbound email. Parse never returns a nil Message
// together with a nil error.
type Message struct {
	// MessageID is the Message-ID header including angle brackets, or ""
	// (none, or a malformed one: dropped and recorded in Problems).
	MessageID string
	// From is the decoded From address; From.Address is "" when the message
	// has no usable sender (none, or a From that net/mail cannot parse: it
	// is never guessed from the header's text).
	From mail.Address
	// FromMailboxes counts the mailboxes the From fields name: 1 in a
	// well-formed message; more when it has several From fields or one
	// naming several mailboxes (From is then the first; who wrote the
	// message cannot be told).
	FromMailboxes int
	// ReplyTo is the address a reply goes to: the first Reply-To address when
	// present and valid, else From.Address (a malformed Reply-To is not
	// guessed from either).
	ReplyTo string
	// To lists the bare addresses in To and Cc.
	To []string
	// Subject is the RFC 2047-decoded subject.
	Subject string
	// Date is the Date header; zero when missing or unparseable.
	Date time.Time
	// InReplyTo and References carry the thread, message IDs with brackets.
	InReplyTo  string
	References []string
	// Header holds every top-level header, keys in canonical MIME form
	// (textproto.CanonicalMIMEHeaderKey), values decoded (RFC 2047).
	Header map[string][]string
	// Text is the new text the sender wrote, as UTF-8 plain text (HTML is
	// converted; hidden elements dropped).
	Text string
	// Quoted is the quoted history (">"-lines, "On ... wrote:" blocks,
	// forwarded/original-message sections), as UTF-8 plain text.
	Quoted string
	// FromHTML is true when Text came from a text/html part.
	FromHTML bool
	// Attachments lists attachment parts; their content is never kept.
	Attachments []Attachment
	// CalendarMethod is the iTIP method (RFC 5546: REQUEST, CANCEL,
	// REPLY, ...), upper-cased, of the first text/calendar part of the
	// message's own tree that names one in its Content-Type (RFC 6047): the
	// message is a calendar's scheduling mail. "" when none does.
	CalendarMethod string
	// Heads holds, by index into Attachments, the first SniffBytes bytes
	// of each top-level attachment of a type in Limits.SniffTypes (all of
	// a shorter one): enough to check that its content is what its type
	// says before anything is planned around it.
	Heads map[int][]byte
	// PartsNotRead counts the MIME parts past MaxParts, neither read nor
	// listed (their count is in Problems too).
	PartsNotRead int
	// Problems lists the malformations Parse worked around
	// (e.g. "multipart: missing closing boundary").
	Problems []string
	// Size is the length of the raw message in bytes.
	Size int
}

// Attachment describes one attachment part without its content.
type Attachment struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int    `json:"size"`
}

// Parse parses a raw RFC 5322 message. It degrades instead of failing on
// common malformations (missing closing boundary, lower-case header names,
// unknown charsets, no Date) and records them in Problems. It returns an
// error only when nothing usable can be read (e.g. no header block at all);
// the error starts with "message:".
//
// A header block over DefaultMaxHeaderBytes, or a field over
// DefaultMaxFieldBytes, is an error wrapping ErrHeaderTooLarge (see
// ParseLimits), found before anything is parsed.
func Parse(raw []byte) (*Message, error) {
	return ParseLimits(raw, Limits{})
}

// parse parses raw at a nesting depth (> 0 for attached messages); wk is
// what is left of the caps the whole message shares (see work), and k
// names the top-level attachments whose content is read (nil: none).
func parse(raw []byte, depth int, lim Limits, wk *work, k *keeper) (*Message, error) {
	m := &Message{Size: len(raw), Header: map[string][]string{}}

	data := raw
	// An mbox "From " separator line is not a header; skip it.
	if bytes.HasPrefix(data, []byte("From ")) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
			m.problem("header: mbox From_ line skipped")
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("message: empty input")
	}
	if err := checkHeader(data, lim); err != nil {
		return nil, err
	}
	if cleaned, dropped := dropBadHeaderLines(data); dropped > 0 {
		data = cleaned
		m.problem(fmt.Sprintf("header: %d malformed header line(s) dropped", dropped))
	}

	br := bufio.NewReader(bytes.NewReader(data))
	h, err := gotextproto.ReadHeader(br)
	if h.Len() == 0 {
		if err == nil {
			return nil, errors.New("message: read header: no header fields")
		}
		// The first line is no field (nor is any other, or they would have
		// been kept): name it, shortened and escaped, rather than quote
		// what may be kilobytes of binary.
		line, _, _ := bytes.Cut(data, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return nil, fmt.Errorf("message: read header: no header fields; the first line (%d bytes) is not one: %q",
			len(line), clip.Bytes(string(line), maxShownLine, "…"))
	}
	if err != nil {
		// Keep the fields read so far; whatever follows is treated as body.
		m.problem("header: " + err.Error())
	}
	hdr := gomessage.Header{Header: h}
	m.readHeader(hdr)

	e, err := gomessage.New(hdr, br)
	if err != nil {
		m.problem("body: " + err.Error())
	}
	w := walker{m: m, lim: lim, work: wk, keep: k}
	w.walk(e, depth)
	if depth == 0 {
		wk.report(m)
	}

	var text string
	switch {
	case nonBlank(w.plain):
		text = strings.Join(w.plain, "\n\n")
	case len(w.html) > 0:
		var parts []string
		for _, h := range w.html {
			t, err := htmlToText(h)
			if err != nil {
				m.problem("html: " + err.Error())
				continue
			}
			parts = append(parts, t)
		}
		text = strings.Join(parts, "\n\n")
		m.FromHTML = true
	}
	m.Text, m.Quoted = splitQuoted(normalizeText(text))
	m.Quoted = m.forwarded(m.Quoted, w.attached, lim.TextBytes/2)
	m.Text = m.capText(m.Text, lim.TextBytes, "text")
	m.Quoted = m.capText(m.Quoted, lim.TextBytes/2, "quoted text")
	return m, nil
}

// forwarded returns quoted with the text of the attached messages after
// it, each under a forwarded-message separator (attached messages are
// history), built once and no further than just past limit bytes (capText
// cuts the rest and records it).
func (m *Message) forwarded(quoted string, attached []*Message, limit int) string {
	if len(attached) == 0 {
		return quoted
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(quoted))
	for _, f := range attached {
		for _, p := range f.Problems {
			m.problem("attached message: " + p)
		}
		if b.Len() > limit {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("---------- Forwarded message ---------\n")
		switch {
		case f.From.Name != "":
			fmt.Fprintf(&b, "From: %s <%s>\n", f.From.Name, f.From.Address)
		case f.From.Address != "":
			fmt.Fprintf(&b, "From: %s\n", f.From.Address)
		}
		if f.Subject != "" {
			fmt.Fprintf(&b, "Subject: %s\n", f.Subject)
		}
		b.WriteString("\n")
		b.WriteString(strings.TrimSpace(f.Text + "\n\n" + f.Quoted))
	}
	return strings.TrimSpace(b.String())
}

func nonBlank(parts []string) bool {
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			return true
		}
	}
	return false
}

// HeaderValue returns the first value of the named header ("" if absent).
func (m *Message) HeaderValue(name string) string {
	if m == nil {
		return ""
	}
	if v := m.Header[textproto.CanonicalMIMEHeaderKey(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (m *Message) problem(p string) {
	for _, q := range m.Problems {
		if q == p {
			return
		}
	}
	m.Problems = append(m.Problems, p)
}

// readHeader fills the header-derived fields.
func (m *Message) readHeader(hdr gomessage.Header) {
	charset := partCharset(hdr.Get("Content-Type"))
	fields := hdr.Fields()
	for fields.Next() {
		k := textproto.CanonicalMIMEHeaderKey(fields.Key())
		v, err := headerText(fields.Value(), charset)
		if err != nil {
			m.problem(fmt.Sprintf("header: %s: %v", k, err))
		}
		m.Header[k] = append(m.Header[k], strings.TrimSpace(v))
	}
	mh := gomail.Header{Header: hdr}

	subj, err := headerText(hdr.Get("Subject"), charset)
	if err != nil {
		m.problem("header: Subject: " + err.Error())
	}
	m.Subject = cleanSubject(subj)

	from := m.addresses(mh, "From")
	m.FromMailboxes = len(from)
	if n := len(m.Header["From"]); n > 1 {
		m.FromMailboxes += n - 1 // the fields after the first, one mailbox at least each
		m.problem(fmt.Sprintf("header: %d From fields", n))
	}
	if len(from) > 0 {
		m.From = *from[0]
	} else {
		m.problem("header: no usable From address")
	}
	if rt := m.addresses(mh, "Reply-To"); len(rt) > 0 {
		m.ReplyTo = rt[0].Address
	} else {
		m.ReplyTo = m.From.Address
	}
	for _, k := range []string{"To", "Cc"} {
		for _, a := range m.addresses(mh, k) {
			m.To = append(m.To, a.Address)
		}
	}

	if hdr.Get("Date") == "" {
		m.problem("header: no Date")
	} else if d, err := mh.Date(); err != nil {
		m.problem("header: Date: " + err.Error())
	} else {
		m.Date = d
	}

	if v := strings.TrimSpace(hdr.Get("Message-Id")); v != "" {
		if id, err := mh.MessageID(); err == nil && id != "" {
			m.MessageID = "<" + id + ">"
		} else {
			// Not kept as written: a malformed value may carry a bare CR or
			// other text that would forge lines wherever it is quoted (a
			// staff notice, a log). The message has no Message-ID then.
			m.problem(fmt.Sprintf("header: Message-ID: malformed (%d bytes), dropped", len(v)))
		}
	}
	if ids := m.msgIDs(mh, "In-Reply-To"); len(ids) > 0 {
		m.InReplyTo = ids[0]
	}
	m.References = m.msgIDs(mh, "References")
}

// maxShownLine bounds the part of a bad header line an error shows.
const maxShownLine = 80

// dropBadHeaderLines removes lines of the header block that are neither a
// "Name: value" field nor a continuation, so that one stray line does not
// end the header early. It returns data unchanged when nothing is dropped.
func dropBadHeaderLines(data []byte) ([]byte, int) {
	var out []byte
	dropped := 0
	rest := data
	first := true
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		body := bytes.TrimRight(line, "\r\n")
		if len(body) == 0 {
			break // end of the header block
		}
		ok := false
		switch {
		case body[0] == ' ' || body[0] == '\t':
			ok = !first
		default:
			if i := bytes.IndexByte(body, ':'); i > 0 {
				ok = validHeaderKey(bytes.TrimRight(body[:i], " \t"))
			}
		}
		if ok {
			out = append(out, line...)
		} else {
			dropped++
		}
		first = false
		rest = rest[len(line):]
	}
	if dropped == 0 || len(out) == 0 {
		return data, 0
	}
	return append(out, rest...), dropped
}

func validHeaderKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if c <= ' ' || c >= 127 || c == ':' {
			return false
		}
	}
	return true
}

// looseAddr finds an addr-spec inside a header value that the strict parser
// rejected.
var looseAddr = regexp.MustCompile(`[A-Za-z0-9!#$%&'*+/=?^_{|}~.-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+`)

// addresses parses an address-list header. When To or Cc is malformed it
// falls back to a loose scan for bare addresses; a malformed From or
// Reply-To yields nothing.
func (m *Message) addresses(mh gomail.Header, key string) []*mail.Address {
	v := mh.Get(key)
	if strings.TrimSpace(v) == "" {
		return nil
	}
	list, err := mh.AddressList(key)
	if err == nil {
		var out []*mail.Address
		for _, a := range list {
			if a != nil && strings.Contains(a.Address, "@") {
				out = append(out, a)
			}
		}
		return out
	}
	m.problem(fmt.Sprintf("header: %s: %v", key, err))
	if key == "From" || key == "Reply-To" {
		// Never guess an address we would answer (or count a limit
		// against): "victim@bank.example <attacker@evil.example>" must not
		// become either of them. No From means no_sender, left for a
		// person; a Reply-To that does not parse falls back to From.
		return nil
	}
	decoded := strings.Join(m.Header[key], ", ")
	if decoded == "" {
		decoded = v
	}
	var out []*mail.Address
	for _, loc := range looseAddr.FindAllStringIndex(decoded, -1) {
		a := &mail.Address{Address: strings.Trim(decoded[loc[0]:loc[1]], ".")}
		if len(out) == 0 {
			name := strings.TrimSpace(decoded[:loc[0]])
			name = strings.TrimSpace(strings.TrimSuffix(name, "<"))
			if !strings.ContainsAny(name, "@,<>") {
				a.Name = strings.Trim(name, `"' `)
			}
		}
		out = append(out, a)
	}
	return out
}

// msgIDs parses a message-ID list header and returns the IDs with brackets.
func (m *Message) msgIDs(mh gomail.Header, key string) []string {
	v := strings.TrimSpace(mh.Get(key))
	if v == "" {
		return nil
	}
	ids, err := mh.MsgIDList(key)
	if err != nil {
		m.problem(fmt.Sprintf("header: %s: %v", key, err))
		ids = ids[:0]
		for _, f := range strings.Fields(v) {
			f = strings.Trim(f, "<>,")
			if f != "" {
				ids = append(ids, f)
			}
		}
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, "<"+id+">")
	}
	return out
}

// toUTF8 returns body as valid UTF-8. go-message has already converted known
// charsets; bytes that are still not UTF-8 (unknown or missing charset) are
// read as windows-1250, the usual legacy charset of Polish mail.
func toUTF8(body []byte, mediaType string) string {
	if utf8.Valid(body) {
		return string(body)
	}
	if mediaType == "text/html" {
		if enc := metaCharset(body); enc != "" {
			if r, err := gomessage.CharsetReader(enc, bytes.NewReader(body)); err == nil {
				if b, err := io.ReadAll(r); err == nil && utf8.Valid(b) {
					return string(b)
				}
			}
		}
	}
	b, err := charmap.Windows1250.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return string(b)
}

var metaCharsetRE = regexp.MustCompile(`(?i)<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)`)

func metaCharset(body []byte) string {
	head := body
	if len(head) > 4096 {
		head = head[:4096]
	}
	if mm := metaCharsetRE.FindSubmatch(head); mm != nil {
		return strings.ToLower(string(mm[1]))
	}
	return ""
}

// fallbackMediaType salvages the media type from a Content-Type header that
// mime.ParseMediaType rejected (e.g. a bad parameter).
func fallbackMediaType(v string) string {
	t, _, _ := strings.Cut(v, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	if _, _, err := mime.ParseMediaType(t); err != nil || !strings.Contains(t, "/") {
		return "text/plain"
	}
	return t
}

// normalizeText unifies line endings and trims trailing spaces.
func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.ReplaceAll(s, "\u00a0", " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		// "-- " is the signature delimiter; keep its trailing space.
		if l == "-- " {
			continue
		}
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
