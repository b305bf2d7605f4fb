// Package message turns raw RFC 5322 bytes into the parsed view the rest of
// triage works on: decoded sender, subject and threading headers, the new text
// set apart from quoted history, and the attachments listed but not read.
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

// maxDepth bounds multipart nesting; deeper parts are ignored.
const maxDepth = 20

// What one part may keep in memory: a text part beyond maxPartText is cut
// (the model sees 16 KiB anyway), and an attached message beyond
// maxAttachedMessage is listed, not parsed. Everything else is streamed.
const (
	maxPartText        = 1 << 20
	maxAttachedMessage = 4 << 20
)

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

// parse parses raw at a nesting depth (> 0 for attached messages); budget
// is what is left of the raw text all text parts may read (maxTextRead).
func parse(raw []byte, depth int, lim Limits, budget *int) (*Message, error) {
	return parseKeeping(raw, depth, lim, budget, nil)
}

// parseKeeping is parse that also reads the content of the top-level
// attachments k names (nil: none).
func parseKeeping(raw []byte, depth int, lim Limits, budget *int, k *keeper) (*Message, error) {
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
			err = errors.New("no header fields")
		}
		return nil, fmt.Errorf("message: read header: %w", err)
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
	w := walker{m: m, lim: lim, budget: budget, keep: k}
	w.walk(e, depth)

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
	// Attached messages (message/rfc822) are history: they go after the
	// quoted text, each under a forwarded-message separator.
	for _, f := range w.attached {
		var b strings.Builder
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
		m.Quoted = strings.TrimSpace(m.Quoted + "\n\n" + b.String())
		for _, p := range f.Problems {
			m.problem("attached message: " + p)
		}
	}
	m.Text = m.capText(m.Text, lim.TextBytes, "text")
	m.Quoted = m.capText(m.Quoted, lim.TextBytes/2, "quoted text")
	return m, nil
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
	fields := hdr.Fields()
	for fields.Next() {
		k := textproto.CanonicalMIMEHeaderKey(fields.Key())
		v, err := fields.Text()
		if err != nil {
			v = fields.Value()
			m.problem(fmt.Sprintf("header: %s: %v", k, err))
		}
		m.Header[k] = append(m.Header[k], strings.TrimSpace(v))
	}
	mh := gomail.Header{Header: hdr}

	subj, err := mh.Subject()
	if err != nil {
		m.problem("header: Subject: " + err.Error())
	}
	m.Subject = cleanSubject(subj)

	from := m.addresses(mh, "From")
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

// walker collects the text parts and attachments of an entity tree.
type walker struct {
	m        *Message
	lim      Limits
	budget   *int    // raw text bytes left to read, shared with attached messages
	keep     *keeper // attachments whose content is read (top level only)
	plain    []string
	html     []string
	attached []*Message
}

func (w *walker) walk(e *gomessage.Entity, depth int) {
	if depth > maxDepth {
		w.m.problem("multipart: nesting too deep")
		return
	}
	mediaType, params, err := e.Header.ContentType()
	if err != nil {
		w.m.problem("content-type: " + err.Error())
		mediaType = fallbackMediaType(e.Header.Get("Content-Type"))
	}
	mediaType = strings.ToLower(mediaType)

	if strings.HasPrefix(mediaType, "multipart/") {
		if params["boundary"] == "" {
			w.m.problem("multipart: no boundary")
			w.leaf(e, "text/plain", params, depth)
			return
		}
		w.multipart(e, depth)
		return
	}
	w.leaf(e, mediaType, params, depth)
}

func (w *walker) multipart(e *gomessage.Entity, depth int) {
	mr := e.MultipartReader()
	if mr == nil {
		return
	}
	defer mr.Close()
	parts := 0
	for {
		p, err := mr.NextPart()
		if p == nil && err != nil {
			if err == io.EOF {
				break
			}
			switch {
			case errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "EOF"):
				w.m.problem("multipart: missing closing boundary")
			default:
				w.m.problem("multipart: " + err.Error())
			}
			break
		}
		if err != nil {
			w.m.problem("part: " + err.Error())
		}
		parts++
		w.walk(p, depth+1)
	}
	if parts == 0 {
		w.m.problem("multipart: no parts")
	}
}

// leaf handles one non-multipart entity: a text body or an attachment.
func (w *walker) leaf(e *gomessage.Entity, mediaType string, params map[string]string, depth int) {
	disp, dparams, _ := e.Header.ContentDisposition()
	disp = strings.ToLower(disp)
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if mediaType == "message/rfc822" || mediaType == "message/global" {
		w.attachedMessage(e, name, mediaType, depth)
		return
	}
	isText := mediaType == "text/plain" || mediaType == "text/html" || mediaType == ""
	if disp == "attachment" || !isText || (disp == "inline" && name != "" && mediaType != "text/plain" && mediaType != "text/html") {
		n, err := w.keep.read(len(w.m.Attachments), e.Body)
		if err != nil {
			w.m.problem(fmt.Sprintf("attachment %q: %v", name, err))
		}
		if mediaType == "" {
			mediaType = "application/octet-stream"
		}
		w.m.Attachments = append(w.m.Attachments, Attachment{Name: name, Type: mediaType, Size: int(n)})
		return
	}
	limit := min(maxPartText, *w.budget)
	if limit <= 0 {
		n, _ := io.Copy(io.Discard, e.Body)
		w.m.problem(fmt.Sprintf("%s part of %d bytes not read: the message's text is over %d bytes", mediaType, n, maxTextRead))
		return
	}
	body, err := io.ReadAll(io.LimitReader(e.Body, int64(limit)+1))
	if err == nil && len(body) > limit {
		rest, _ := io.Copy(io.Discard, e.Body)
		body = cutRunes(body[:limit])
		w.m.problem(fmt.Sprintf("%s part of %d bytes cut to %d", mediaType, int64(limit+1)+rest, len(body)))
	}
	*w.budget -= len(body)
	switch {
	case err == nil:
	case depth > 0 && errors.Is(err, io.ErrUnexpectedEOF):
		// The part ran into the end of input: no closing boundary.
		w.m.problem("multipart: missing closing boundary")
	default:
		w.m.problem(fmt.Sprintf("%s: %v", bodyLabel(e), err))
	}
	if !utf8.Valid(body) {
		w.m.problem("charset: bytes not valid in the declared charset, read with a fallback")
	}
	text := toUTF8(body, mediaType)
	if mediaType == "text/html" {
		w.html = append(w.html, text)
	} else {
		w.plain = append(w.plain, text)
	}
}

// attachedMessage lists an attached message and keeps its parsed text as
// forwarded history.
func (w *walker) attachedMessage(e *gomessage.Entity, name, mediaType string, depth int) {
	raw, err := io.ReadAll(io.LimitReader(e.Body, maxAttachedMessage+1))
	if err != nil {
		w.m.problem(fmt.Sprintf("attached message: %v", err))
	}
	if len(raw) > maxAttachedMessage {
		rest, _ := io.Copy(io.Discard, e.Body)
		size := int64(len(raw)) + rest
		w.m.Attachments = append(w.m.Attachments, Attachment{Name: name, Type: mediaType, Size: int(size)})
		w.m.problem(fmt.Sprintf("attached message of %d bytes listed, not read (over %d)", size, maxAttachedMessage))
		return
	}
	w.m.Attachments = append(w.m.Attachments, Attachment{Name: name, Type: mediaType, Size: len(raw)})
	if depth >= maxDepth {
		w.m.problem("attached message: nesting too deep")
		return
	}
	inner, err := parse(raw, depth+1, w.lim, w.budget)
	if err != nil {
		w.m.problem("attached message: " + err.Error())
		return
	}
	w.attached = append(w.attached, inner)
}

// cutRunes drops the incomplete rune a cut left at the end of b.
func cutRunes(b []byte) []byte {
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return b[:len(b)-k]
			}
			break
		}
	}
	return b
}

func bodyLabel(e *gomessage.Entity) string {
	if enc := strings.ToLower(strings.TrimSpace(e.Header.Get("Content-Transfer-Encoding"))); enc != "" {
		return enc
	}
	return "body"
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
