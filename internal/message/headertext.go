package message

import (
	"fmt"
	"io"
	"mime"
	"regexp"
	"strings"
	"unicode/utf8"

	gomessage "github.com/emersion/go-message"
)

// encodedWord finds RFC 2047 encoded words, raw 8-bit bytes inside
// included (which the standard forbids and mailers write anyway); the
// charset, encoding and text are submatches 1 to 3.
var encodedWord = regexp.MustCompile(`=\?([^?\s]{1,75})\?([bBqQ])\?([^?]*)\?=`)

// headerDecoder decodes encoded words in the charsets go-message knows.
var headerDecoder = mime.WordDecoder{CharsetReader: gomessage.CharsetReader}

// headerText decodes a header field's raw value to UTF-8 text: RFC 2047
// encoded words in their own charset, and raw 8-bit bytes that are not
// UTF-8 in partCharset (the message's own Content-Type charset), else as
// windows-1250 like a body without one (toUTF8). A raw 8-bit byte inside a
// Q-encoded word is read as the byte it is, in the word's charset: "Fr\xf6sche"
// in an ISO-8859-1 word is "Frösche", never "Frsche". On a word it cannot
// decode (an unknown charset) it returns the value as written, with the
// error.
func headerText(raw, partCharset string) (string, error) {
	if !hasHighBytes(raw) {
		if !strings.Contains(raw, "=?") {
			return raw, nil
		}
		dec, err := headerDecoder.DecodeHeader(raw)
		if err != nil {
			return raw, err
		}
		return dec, nil
	}
	var b strings.Builder
	last := 0
	for _, loc := range encodedWord.FindAllStringSubmatchIndex(raw, -1) {
		b.WriteString(legacyText(raw[last:loc[0]], partCharset))
		word := raw[loc[0]:loc[1]]
		if enc := raw[loc[4]:loc[5]]; strings.EqualFold(enc, "q") && hasHighBytes(word) {
			word = escapeHighBytes(word)
		}
		b.WriteString(word)
		last = loc[1]
	}
	b.WriteString(legacyText(raw[last:], partCharset))
	out := b.String()
	dec, err := headerDecoder.DecodeHeader(out)
	if err != nil {
		return out, err
	}
	return dec, nil
}

func hasHighBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// escapeHighBytes writes the bytes over 0x7F of a Q-encoded word as =XX.
func escapeHighBytes(word string) string {
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		if c := word[i]; c >= 0x80 {
			fmt.Fprintf(&b, "=%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// legacyText is raw header text as UTF-8: unchanged when it is UTF-8,
// else decoded in charset, else as windows-1250 (toUTF8).
func legacyText(s, charset string) string {
	if utf8.ValidString(s) {
		return s
	}
	if charset != "" {
		if r, err := gomessage.CharsetReader(charset, strings.NewReader(s)); err == nil {
			if b, err := io.ReadAll(io.LimitReader(r, int64(4*len(s)+4))); err == nil && utf8.Valid(b) {
				return string(b)
			}
		}
	}
	return toUTF8([]byte(s), "")
}

// partCharset is the charset parameter of a Content-Type value, lower-cased
// ("" when none or unparseable).
func partCharset(contentType string) string {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(params["charset"]))
}
