// Package clip bounds and sanitises text for display: it cuts text to a
// bound without splitting a character (the one way every part of triage
// shortens what it shows, logs or stores), and escapes the control
// characters a terminal would act on in text a stranger wrote (Escape,
// EscapeText, EscapeWriter).
package clip

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks text that Runes and Line cut.
const Ellipsis = "…"

// Bytes returns s cut to at most n bytes on a rune boundary, followed by
// mark when it was cut (mark is not counted in n).
func Bytes(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// Runes returns s cut to at most n runes, the last of them Ellipsis when
// it was cut.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i, kept := 0, 0
	for kept < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		kept++
	}
	return s[:i] + Ellipsis
}

// Line puts s on one line, every run of white space made one space, of
// at most n runes (see Runes).
func Line(s string, n int) string {
	return Runes(strings.Join(strings.Fields(s), " "), n)
}
