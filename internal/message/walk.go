package message

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	gomessage "github.com/emersion/go-message"

	"triage/internal/clip"
)

// maxDepth bounds multipart nesting; deeper parts are ignored.
const maxDepth = 20

// maxCalendarMethod bounds Message.CalendarMethod (iTIP's longest method
// name is 14 bytes).
const maxCalendarMethod = 32

// What one part may keep in memory: a text part beyond maxPartText is cut
// (the model sees 16 KiB anyway), and an attached message beyond
// maxAttachedMessage is listed, not parsed. Everything else is streamed.
const (
	maxPartText        = 1 << 20
	maxAttachedMessage = 4 << 20
)

// Caps on the work one message (attached messages included) makes a parse
// do, whatever its size: MaxParts MIME parts are walked, the rest counted
// and not read; MaxAttachedParsed attached messages are parsed for their
// text, the rest listed as attachments only, and so is one that would take
// the raw bytes of all attached messages read over maxAttachedRead (nested
// ones are held at once, each level its own copy).
const (
	MaxParts          = 1000
	MaxAttachedParsed = 20
	maxAttachedRead   = 16 << 20
)

// SniffBytes is how much of an attachment of a type in Limits.SniffTypes
// Parse keeps in Message.Heads: enough to tell the type from the content.
const SniffBytes = 512

// work is what is left of one parse's caps, shared by a message and the
// messages attached to it, with what was left out for want of it.
type work struct {
	text            int // raw text bytes left to read (maxTextRead)
	attachedRead    int // raw bytes of attached messages left to read (maxAttachedRead)
	parts           int // MIME parts walked
	partsNotRead    int // parts past MaxParts, counted only
	attached        int // attached messages parsed
	attachedNotRead int // attached messages past MaxAttachedParsed, listed only
}

func newWork() *work { return &work{text: maxTextRead, attachedRead: maxAttachedRead} }

// report records what the caps left out, once, on the top-level message.
func (wk *work) report(m *Message) {
	m.PartsNotRead = wk.partsNotRead
	if wk.partsNotRead > 0 {
		m.problem(fmt.Sprintf("multipart: %d MIME part(s) past the first %d not read", wk.partsNotRead, MaxParts))
	}
	if wk.attachedNotRead > 0 {
		m.problem(fmt.Sprintf("attached message: %d attached message(s) past the first %d listed, not read", wk.attachedNotRead, MaxAttachedParsed))
	}
}

// walker collects the text parts and attachments of an entity tree.
type walker struct {
	m        *Message
	lim      Limits
	work     *work   // shared with attached messages
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
		w.multipart(e, params["boundary"], depth)
		return
	}
	w.leaf(e, mediaType, params, depth)
}

func (w *walker) multipart(e *gomessage.Entity, boundary string, depth int) {
	// Every byte of the body passes the counter, so the parts past
	// MaxParts are counted without being parsed.
	dc := newDelimCounter(e.Body, boundary)
	e.Body = dc
	mr := e.MultipartReader()
	if mr == nil {
		return
	}
	defer mr.Close()
	parts := 0
	for {
		if w.work.parts >= MaxParts {
			if _, err := io.Copy(io.Discard, dc); err != nil {
				w.m.problem("multipart: " + err.Error())
			}
			w.work.partsNotRead += max(dc.parts()-parts, 0)
			break
		}
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
		w.work.parts++
		w.walk(p, depth+1)
	}
	if parts == 0 && w.work.parts < MaxParts {
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
	if method := strings.TrimSpace(params["method"]); mediaType == "text/calendar" && method != "" && w.m.CalendarMethod == "" {
		w.m.CalendarMethod = strings.ToUpper(clip.Bytes(method, maxCalendarMethod, ""))
	}
	isText := mediaType == "text/plain" || mediaType == "text/html" || mediaType == ""
	if disp == "attachment" || !isText || (disp == "inline" && name != "" && mediaType != "text/plain" && mediaType != "text/html") {
		n, err := w.attachment(len(w.m.Attachments), mediaType, e.Body)
		if err != nil {
			w.m.problem(fmt.Sprintf("attachment %q: %v", name, err))
		}
		if mediaType == "" {
			mediaType = "application/octet-stream"
		}
		w.m.Attachments = append(w.m.Attachments, Attachment{Name: name, Type: mediaType, Size: int(n)})
		return
	}
	limit := min(maxPartText, w.work.text)
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
	w.work.text -= len(body)
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

// attachment consumes body, the attachment at index i of Message.Attachments,
// and returns its size: its content is kept when the keeper wants it, its
// first SniffBytes when its type is one of Limits.SniffTypes.
func (w *walker) attachment(i int, mediaType string, body io.Reader) (int64, error) {
	if w.keep != nil || !slices.Contains(w.lim.SniffTypes, mediaType) {
		return w.keep.read(i, body)
	}
	head := make([]byte, SniffBytes)
	n, err := io.ReadFull(body, head)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	if err != nil {
		return int64(n), err
	}
	rest, err := io.Copy(io.Discard, body)
	if err != nil {
		return int64(n) + rest, err
	}
	if w.m.Heads == nil {
		w.m.Heads = map[int][]byte{}
	}
	w.m.Heads[i] = head[:n:n]
	return int64(n) + rest, nil
}

// attachedMessage lists an attached message and keeps its parsed text as
// forwarded history (the first MaxAttachedParsed of them).
func (w *walker) attachedMessage(e *gomessage.Entity, name, mediaType string, depth int) {
	if w.work.attached >= MaxAttachedParsed {
		size, err := io.Copy(io.Discard, e.Body)
		if err != nil {
			w.m.problem(fmt.Sprintf("attached message: %v", err))
		}
		w.m.Attachments = append(w.m.Attachments, Attachment{Name: name, Type: mediaType, Size: int(size)})
		w.work.attachedNotRead++
		return
	}
	limit := min(maxAttachedMessage, w.work.attachedRead)
	raw, err := io.ReadAll(io.LimitReader(e.Body, int64(limit)+1))
	if err != nil {
		w.m.problem(fmt.Sprintf("attached message: %v", err))
	}
	if len(raw) > limit {
		rest, _ := io.Copy(io.Discard, e.Body)
		size := int64(len(raw)) + rest
		w.m.Attachments = append(w.m.Attachments, Attachment{Name: name, Type: mediaType, Size: int(size)})
		if limit < maxAttachedMessage {
			w.m.problem(fmt.Sprintf("attached message of %d bytes listed, not read (attached messages over %d bytes in all)", size, maxAttachedRead))
		} else {
			w.m.problem(fmt.Sprintf("attached message of %d bytes listed, not read (over %d)", size, maxAttachedMessage))
		}
		return
	}
	w.work.attachedRead -= len(raw)
	w.m.Attachments = append(w.m.Attachments, Attachment{Name: name, Type: mediaType, Size: len(raw)})
	if depth >= maxDepth {
		w.m.problem("attached message: nesting too deep")
		return
	}
	w.work.attached++
	lim := w.lim
	lim.SniffTypes = nil // only the top level's attachments go to the model
	inner, err := parse(raw, depth+1, lim, w.work, nil)
	if err != nil {
		w.m.problem("attached message: " + err.Error())
		return
	}
	w.attached = append(w.attached, inner)
}

// delimCounter passes a multipart body through, counting the lines that
// start with its delimiter ("--" boundary) and how many of them close it
// ("--" boundary "--").
type delimCounter struct {
	r       io.Reader
	open    []byte // "\n--" + boundary
	close   []byte // "\n--" + boundary + "--"
	started bool
	tail    []byte // the last len(close)-1 bytes seen, for matches across reads
	buf     []byte
	n, c    int
}

func newDelimCounter(r io.Reader, boundary string) *delimCounter {
	open := []byte("\n--" + boundary)
	return &delimCounter{r: r, open: open, close: append(slices.Clip(open), '-', '-')}
}

func (d *delimCounter) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		if !d.started {
			// The body's first line has no "\n" before it.
			d.started = true
			d.tail = append(d.tail, '\n')
		}
		d.buf = append(append(d.buf[:0], d.tail...), p[:n]...)
		// Each pattern is looked for in the new bytes and at most its
		// length-1 bytes before them: never a match counted twice.
		count := func(pat []byte) int {
			from := len(d.tail) - min(len(d.tail), len(pat)-1)
			return bytes.Count(d.buf[from:], pat)
		}
		d.n += count(d.open)
		d.c += count(d.close)
		keep := min(len(d.close)-1, len(d.buf))
		d.tail = append(d.tail[:0], d.buf[len(d.buf)-keep:]...)
	}
	return n, err
}

// parts is the number of parts the delimiters seen so far open.
func (d *delimCounter) parts() int { return d.n - d.c }

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
