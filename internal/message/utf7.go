package message

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/emersion/go-message/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// UTF7 is the UTF-7 charset of RFC 2152, which old Outlook versions sent
// mail in; neither go-message's charset table nor golang.org/x/text has
// it (the UTF-7 variants in IMAP libraries are RFC 3501's modified one, a
// different alphabet and shift character). It only decodes: triage never
// writes UTF-7. Malformed input decodes to U+FFFD, never an error.
var UTF7 encoding.Encoding = utf7Encoding{}

func init() {
	for _, name := range []string{"utf-7", "utf7", "unicode-1-1-utf-7", "csunicode11utf7", "x-unicode-2-0-utf-7"} {
		charset.RegisterEncoding(name, UTF7)
	}
}

type utf7Encoding struct{}

func (utf7Encoding) NewDecoder() *encoding.Decoder {
	return &encoding.Decoder{Transformer: &utf7Decoder{}}
}

// NewEncoder returns an encoder that refuses every input: triage decodes
// UTF-7 and never writes it.
func (utf7Encoding) NewEncoder() *encoding.Encoder {
	return &encoding.Encoder{Transformer: refuseEncoding{}}
}

type refuseEncoding struct{ transform.NopResetter }

func (refuseEncoding) Transform(_, src []byte, _ bool) (int, int, error) {
	if len(src) == 0 {
		return 0, 0, nil
	}
	return 0, 0, errors.New("message: UTF-7 is only decoded, never written")
}

// utf7Decoder turns UTF-7 into UTF-8. Outside a shifted sequence bytes are
// copied (a byte over 0x7F, invalid in UTF-7, becomes U+FFFD); "+" starts a
// shifted sequence of modified base64 carrying UTF-16BE code units, "+-"
// is a literal "+", and the sequence ends at the first byte outside the
// base64 alphabet ("-" is absorbed, anything else is copied).
type utf7Decoder struct {
	shifted bool
	bits    uint32 // pending base64 bits, the last n of them valid
	n       uint
	high    rune // a high surrogate waiting for its low half, or 0
}

func (d *utf7Decoder) Reset() { *d = utf7Decoder{} }

// maxOut is the most one input byte can write: a dangling surrogate's
// U+FFFD and a rune.
const maxOut = 2 * utf8.UTFMax

func (d *utf7Decoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		if len(dst)-nDst < maxOut {
			return nDst, nSrc, transform.ErrShortDst
		}
		c := src[nSrc]
		if d.shifted {
			v := base64Value(c)
			if v < 0 {
				d.shifted = false
				nDst += d.flushSurrogate(dst[nDst:])
				d.bits, d.n = 0, 0
				if c == '-' {
					nSrc++
				}
				continue
			}
			d.bits = d.bits<<6 | uint32(v)
			d.n += 6
			nSrc++
			if d.n >= 16 {
				d.n -= 16
				unit := rune(d.bits >> d.n & 0xFFFF)
				d.bits &= 1<<d.n - 1
				nDst += d.unit(dst[nDst:], unit)
			}
			continue
		}
		switch {
		case c == '+':
			if nSrc+1 == len(src) && !atEOF {
				return nDst, nSrc, transform.ErrShortSrc
			}
			if nSrc+1 < len(src) && src[nSrc+1] == '-' {
				dst[nDst] = '+'
				nDst++
				nSrc += 2
				continue
			}
			d.shifted = true
			nSrc++
		case c >= utf8.RuneSelf:
			nDst += utf8.EncodeRune(dst[nDst:], utf8.RuneError)
			nSrc++
		default:
			dst[nDst] = c
			nDst++
			nSrc++
		}
	}
	if atEOF {
		if len(dst)-nDst < maxOut {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += d.flushSurrogate(dst[nDst:])
		d.Reset()
	}
	return nDst, nSrc, nil
}

// unit writes one UTF-16 code unit, pairing surrogates; a lone surrogate
// becomes U+FFFD.
func (d *utf7Decoder) unit(dst []byte, u rune) int {
	n := 0
	switch {
	case utf16.IsSurrogate(u) && u < 0xDC00: // high
		n = d.flushSurrogate(dst)
		d.high = u
		return n
	case utf16.IsSurrogate(u): // low
		if d.high == 0 {
			return utf8.EncodeRune(dst, utf8.RuneError)
		}
		r := utf16.DecodeRune(d.high, u)
		d.high = 0
		return utf8.EncodeRune(dst, r)
	default:
		n = d.flushSurrogate(dst)
		return n + utf8.EncodeRune(dst[n:], u)
	}
}

// flushSurrogate writes U+FFFD for a high surrogate left without its pair.
func (d *utf7Decoder) flushSurrogate(dst []byte) int {
	if d.high == 0 {
		return 0
	}
	d.high = 0
	return utf8.EncodeRune(dst, utf8.RuneError)
}

// base64Value is c's value in the base64 alphabet (RFC 2152 uses it
// without padding), or -1.
func base64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}
