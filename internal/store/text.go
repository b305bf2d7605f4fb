// Text both backends store alike.

package store

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// Text is s as the store keeps it: a NUL byte and each invalid UTF-8
// sequence replaced by U+FFFD (see the package comment). s itself when it
// has neither.
func Text(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// textArgs passes every string argument (named string types too) through
// Text; args itself when none changes.
func textArgs(args []any) []any {
	var out []any
	for i, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case nil, []byte, int, int64, float64, bool:
			continue
		default:
			rv := reflect.ValueOf(a)
			if rv.Kind() != reflect.String {
				continue
			}
			s = rv.String()
		}
		t := Text(s)
		if t == s {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = t
	}
	if out == nil {
		return args
	}
	return out
}
