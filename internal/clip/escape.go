// Text a stranger wrote made safe to print on an operator's terminal:
// control characters that a terminal would act on (escape sequences such as
// OSC 52 clipboard writes or screen clears, carriage returns that overwrite
// a line, C1 controls, bidirectional overrides) are shown as Go escapes
// instead of being written raw.

package clip

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Escape returns s for a one-line field: every control character, line
// breaks and tabs included, is escaped (`\x1b`, `\n`, `\u009b`, `\u202e`),
// and so is every byte that is not valid UTF-8 (`\xff`). A backslash is
// kept as is. Text without such characters comes back unchanged.
func Escape(s string) string { return escapeControls(s, false) }

// EscapeText is Escape for multi-line text: line feeds and tabs are kept.
func EscapeText(s string) string { return escapeControls(s, true) }

func escapeControls(s string, multiline bool) string {
	if noControls(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// noControls reports whether s needs no escaping.
func noControls(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			if multiline && (c == '\n' || c == '\t') {
				continue
			}
			return false
		}
		if c >= 0x80 {
			// Slow path from the first non-ASCII byte.
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) || (r < 0x20 && !(multiline && (r == '\n' || r == '\t'))) || r == 0x7f {
					return false
				}
			}
			return utf8.ValidString(s[i:])
		}
	}
	return true
}

// unsafeRune reports the non-ASCII runes a terminal may act on: C1
// controls (U+0080-U+009F, e.g. the one-character CSI U+009B), and the
// bidirectional embeddings, overrides and isolates that reorder what is
// shown (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// EscapeWriter escapes what is written through it as EscapeText does (line feeds and
// tabs pass). Each Write is escaped on its own: callers write whole
// strings (fmt.Fprintf, a tabwriter's cells), never a rune in two halves.
type EscapeWriter struct{ w io.Writer }

// NewEscapeWriter returns an EscapeWriter over w.
func NewEscapeWriter(w io.Writer) *EscapeWriter { return &EscapeWriter{w: w} }

// Write writes p escaped; it reports len(p) on success.
func (sw *EscapeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, EscapeText(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
