package message

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"triage/internal/clip"
)

// Default caps on what a stranger can make Parse hold.
const (
	DefaultMaxHeaderBytes = 256 << 10 // the whole header block of a message
	DefaultMaxFieldBytes  = 64 << 10  // one header field, continuation lines included
	// MaxSubjectBytes caps the decoded subject (RFC 5322's line limit).
	MaxSubjectBytes = 998
	// DefaultMaxTextBytes caps Message.Text (Message.Quoted gets half of
	// it): every later step (serial extraction, language detection,
	// detection rules, the dispatcher's argument checks) reads the capped
	// text, so its cost does not grow with the size of the message.
	DefaultMaxTextBytes = 64 << 10
	// maxTextRead caps the raw bytes of all text parts of one message
	// (attached messages included) that are read at all; text parts past
	// it are streamed to nowhere. HTML markup needs room beyond the text
	// it yields, hence more than DefaultMaxTextBytes.
	maxTextRead = 1 << 20
)

// ErrHeaderTooLarge is returned (wrapped) by Parse when the header block or
// one of its fields is over its cap: such a message is left for a person.
var ErrHeaderTooLarge = errors.New("header too large")

// Limits caps the header and the text of a message; zero fields get the
// defaults.
type Limits struct {
	HeaderBytes int // default DefaultMaxHeaderBytes
	FieldBytes  int // default DefaultMaxFieldBytes
	// TextBytes caps Message.Text; Message.Quoted gets half of it
	// (default DefaultMaxTextBytes). Cuts are recorded in Problems.
	TextBytes int
	// SniffTypes lists the media types (lower case) whose top-level
	// attachments keep their first SniffBytes in Message.Heads.
	SniffTypes []string
}

func (l Limits) withDefaults() Limits {
	if l.HeaderBytes <= 0 {
		l.HeaderBytes = DefaultMaxHeaderBytes
	}
	if l.FieldBytes <= 0 {
		l.FieldBytes = DefaultMaxFieldBytes
	}
	if l.TextBytes <= 0 {
		l.TextBytes = DefaultMaxTextBytes
	}
	return l
}

// ParseLimits is Parse with explicit caps (attached messages get the same
// caps, and share the message's text budget and its MaxParts and
// MaxAttachedParsed).
func ParseLimits(raw []byte, lim Limits) (*Message, error) {
	return parse(raw, 0, lim.withDefaults(), newWork(), nil)
}

// capText cuts s to at most n bytes on a rune boundary, marking the cut and
// recording it as a problem of m.
func (m *Message) capText(s string, n int, what string) string {
	if len(s) <= n {
		return s
	}
	cut := clip.Bytes(s, n, "")
	m.problem(fmt.Sprintf("%s of %d bytes cut to %d", what, len(s), len(cut)))
	return cut + "\n[... cut ...]"
}

// checkHeader walks the header block of data line by line, without
// allocating, and refuses it when the block (up to the first empty line, or
// the end of data) or one field (with its continuation lines) is over its
// cap. It reads at most lim.HeaderBytes+1 bytes of a header that never ends:
// go-message, which keeps every field, only ever sees a bounded block.
func checkHeader(data []byte, lim Limits) error {
	lim = lim.withDefaults()
	total, field := 0, 0
	var key []byte // the current field's name, a view of data
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		} else if len(line) > lim.HeaderBytes {
			line = line[:lim.HeaderBytes+1]
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil // end of the header block
		}
		total += len(line)
		if total > lim.HeaderBytes {
			return fmt.Errorf("message: header block exceeds %d bytes (limit %s); left for a person: %w", lim.HeaderBytes, kib(lim.HeaderBytes), ErrHeaderTooLarge)
		}
		if line[0] == ' ' || line[0] == '\t' {
			field += len(line)
		} else {
			field = len(line)
			key = nil
			if i := bytes.IndexByte(line, ':'); i > 0 {
				key = bytes.TrimSpace(line[:min(i, 100)])
			}
		}
		if field > lim.FieldBytes {
			return fmt.Errorf("message: header field %q exceeds %d bytes (limit %s); left for a person: %w", key, lim.FieldBytes, kib(lim.FieldBytes), ErrHeaderTooLarge)
		}
		rest = rest[len(line):]
	}
	return nil
}

func kib(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}

// cleanSubject makes a decoded subject safe to show and to reply to: CR, LF
// and tabs become spaces, other control characters (C0, DEL, C1) and invalid
// UTF-8 are dropped, and the result is capped at MaxSubjectBytes on a rune
// boundary.
func cleanSubject(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n' || r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError, unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
		if b.Len() > MaxSubjectBytes+utf8.UTFMax {
			break
		}
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if len(out) <= MaxSubjectBytes {
		return out
	}
	return strings.TrimSpace(clip.Bytes(out, MaxSubjectBytes, ""))
}
