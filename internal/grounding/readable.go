package grounding

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// readable is text as a customer reads it, in the characters the claim
// patterns know:
//   - a decimal digit of any script in ASCII ("２０２７", "٢٠٢٧"), a fullwidth
//     letter or sign in ASCII ("ＴＫＴ－");
//   - a dash of any kind (en dash, minus sign) as "-", a fraction or
//     division slash as "/";
//   - no invisible format character (zero-width space or joiner, soft
//     hyphen);
//   - any space (a tab, a thin or an em space) as a space, a narrow
//     no-break space as a no-break one, a run of them as one, and a run
//     with a line break in it as one line break (the date,
//     amount, ticket and tax patterns read across it: "31\nmaja 2027" that
//     a hard wrap cut is one date);
//   - a letter of another script that looks like a Latin one as that letter
//     (a Cyrillic "а" in "31 mаja 2027", a Greek "Τ" in "ΤKT-000123");
//   - a character with a compatibility form (Unicode NFKC) as that form: a
//     circled, superscript or subscript digit as the digit ("①", "²"), a
//     one dot leader as a dot ("31․12․2031"), a Roman numeral as its
//     letters ("Ⅻ"), a ligature as its letters; and a sign that is no
//     letter but looks like a digit or a separator (Unicode's confusables,
//     UTS #39) as that ASCII character. Vulgar fractions stay as written:
//     NFKC reads "1½" as "11⁄2".
//
// A date written with any of them looks like a date, so it is one; claims
// are shown as readable writes them. URLs and email addresses are the
// exception: one spelled with a look-alike letter leads somewhere else, so
// it is read and shown as written (readText.lookalikes).
func readable(text string) readText {
	// The text up to i is as readable writes it; a run of blanks is
	// rewritten from its start.
	i, run := 0, -1
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		w, keep, _ := readableRune(r)
		if _, ok := compatOf(r); ok || !keep || w != r {
			if run >= 0 {
				i = run
			}
			break
		}
		if isBlank(w) {
			if run >= 0 {
				i = run
				break
			}
			run = i
		} else {
			run = -1
		}
		i += size
	}
	if i == len(text) {
		return readText{text: text}
	}
	var b strings.Builder
	b.Grow(len(text))
	b.WriteString(text[:i])
	var lookalikes map[int]rune
	var blank rune // the run of blanks being read, as it is written
	put := func(r rune) {
		w, keep, lookalike := readableRune(r)
		if !keep {
			return
		}
		if isBlank(w) {
			if blank == 0 || w == '\n' {
				blank = w
			}
			return
		}
		if blank != 0 {
			b.WriteRune(blank)
			blank = 0
		}
		if lookalike {
			if lookalikes == nil {
				lookalikes = map[int]rune{}
			}
			lookalikes[b.Len()] = r
		}
		b.WriteRune(w)
	}
	for _, r := range text[i:] {
		if c, ok := compatOf(r); ok {
			for _, r := range c {
				put(r)
			}
			continue
		}
		put(r)
	}
	if blank != 0 {
		b.WriteRune(blank)
	}
	return readText{b.String(), lookalikes}
}

// isSpace: r is a space as readable writes one: a space, or the no-break
// space the patterns know (a thousands separator, "1\u00a0200 zł"), which
// a narrow no-break space is written as.
func isSpace(r rune) bool { return r == ' ' || r == '\u00a0' }

// isBlank: r is a space or a line break as readable writes them.
func isBlank(r rune) bool { return isSpace(r) || r == '\n' }

// readText is a text as readable writes it.
type readText struct {
	text string
	// lookalikes are the letters readable wrote as the Latin letters they
	// look like, as written, by their byte offset in text.
	lookalikes map[int]rune
}

// asWritten is text[start:end] with each look-alike letter in it as
// written.
func (r readText) asWritten(start, end int) string {
	if len(r.lookalikes) == 0 {
		return r.text[start:end]
	}
	var b strings.Builder
	for i := start; i < end; i++ {
		if l, ok := r.lookalikes[i]; ok {
			b.WriteRune(l)
			continue
		}
		b.WriteByte(r.text[i])
	}
	return b.String()
}

// readableRune is r as readable writes it; keep is false for a character
// it leaves out, lookalike true for a letter written as the Latin letter it
// looks like.
func readableRune(r rune) (w rune, keep, lookalike bool) {
	switch {
	case r == '\t':
		return ' ', true, false
	case r == '\r' || r == '\v' || r == '\f':
		return '\n', true, false
	case r < utf8.RuneSelf:
		return r, true, false
	case r == '\u202f':
		return '\u00a0', true, false
	case unicode.Is(unicode.Zs, r) && !isSpace(r):
		return ' ', true, false
	case r == '\u0085' || unicode.In(r, unicode.Zl, unicode.Zp):
		return '\n', true, false
	case unicode.IsDigit(r):
		return '0' + digitValue(r), true, false
	case isFullwidth(r):
		return r - 0xFEE0, true, false
	case unicode.Is(unicode.Pd, r) || r == '\u2212':
		return '-', true, false
	case r == '\u2044' || r == '\u2215':
		return '/', true, false
	case unicode.Is(unicode.Cf, r):
		return 0, false, false
	}
	if l, ok := latinLookalike(r); ok {
		return l, true, true
	}
	return r, true, false
}

// compatOf is what readable writes for r before reading it as any other
// rune: its NFKC form when that differs from r (a vulgar fraction aside),
// else, for a sign that is no letter, the ASCII digit or separator its
// skeleton is. Runes below compatTableEnd are worked out once, on first use.
func compatOf(r rune) (string, bool) {
	if r < utf8.RuneSelf {
		return "", false
	}
	if r < compatTableEnd {
		c := compatTable()[r-utf8.RuneSelf]
		return c, c != ""
	}
	c := compatRune(r)
	return c, c != ""
}

// compatTableEnd ends the runes compatTable holds: Latin, Greek, Cyrillic,
// the general punctuation, the number forms, the enclosed alphanumerics
// and the symbols mail writes.
const compatTableEnd = 0x3000

var compatTable = sync.OnceValue(func() []string {
	t := make([]string, compatTableEnd-utf8.RuneSelf)
	for r := rune(utf8.RuneSelf); r < compatTableEnd; r++ {
		t[r-utf8.RuneSelf] = compatRune(r)
	}
	return t
})

// compatRune is compatOf worked out; "" for none. What readableRune
// already writes otherwise (spaces, digits, dashes, fullwidth forms,
// invisible characters) it leaves to readableRune.
func compatRune(r rune) string {
	if w, keep, _ := readableRune(r); !keep || w != r || isBlank(r) || unicode.IsLetter(r) && !unicode.Is(unicode.Nl, r) && norm.NFKC.String(string(r)) == string(r) {
		return ""
	}
	if c := norm.NFKC.String(string(r)); c != string(r) {
		if strings.ContainsRune(c, '\u2044') {
			return "" // a vulgar fraction: "1½" is not "11/2"
		}
		return c
	}
	if unicode.IsLetter(r) || unicode.IsSpace(r) {
		return ""
	}
	if dotLike[r] {
		return "."
	}
	if k := confusables.Skeleton(string(r)); len(k) == 1 && strings.IndexByte(lookalikeSigns, k[0]) >= 0 {
		return k
	}
	return ""
}

// dotLike are the dots written at mid height that UTS #39 does not list
// as a full stop's look-alikes ("31·12·2031").
var dotLike = map[rune]bool{'\u00b7': true, '\u2027': true, '\u2219': true, '\u22c5': true, '\u30fb': true, '\uff65': true}

// lookalikeSigns are the ASCII characters a sign that looks like one is
// read as: digits and what separates a date's or an amount's parts.
const lookalikeSigns = "0123456789.,:/-"

// isFullwidth: r is the fullwidth form of an ASCII character.
func isFullwidth(r rune) bool { return r >= 0xFF01 && r <= 0xFF5E }

// latinLookalike is the ASCII letter the letter r is confusable with, by
// Unicode's confusables data (UTS #39): the one letter whose skeleton is
// r's, or of two (capital I and small l share one) the one of r's case.
// A letter with no case counts as small. Letters with a diacritic ("ą",
// "ł", "ö") look like none.
func latinLookalike(r rune) (rune, bool) {
	if r < utf8.RuneSelf || !unicode.IsLetter(r) {
		return 0, false
	}
	if r < twoByteEnd {
		l := twoByteLookalikes()[r-utf8.RuneSelf]
		return l, l != 0
	}
	l := skeletonLookalike(r)
	return l, l != 0
}

// twoByteEnd ends the letters whose look-alikes are worked out once, on
// first use, rather than for each: those UTF-8 writes in two bytes (Latin
// with diacritics, Greek, Cyrillic, Armenian), which most mail uses.
const twoByteEnd = 0x800

var twoByteLookalikes = sync.OnceValue(func() []rune {
	t := make([]rune, twoByteEnd-utf8.RuneSelf)
	for r := rune(utf8.RuneSelf); r < twoByteEnd; r++ {
		if unicode.IsLetter(r) {
			t[r-utf8.RuneSelf] = skeletonLookalike(r)
		}
	}
	return t
})

// skeletonLookalike is latinLookalike worked out; 0 for none.
func skeletonLookalike(r rune) rune {
	var found rune
	for _, a := range asciiSkeletons()[confusables.Skeleton(string(r))] {
		if found == 0 || unicode.IsUpper(a) == unicode.IsUpper(r) {
			found = a
		}
	}
	return found
}

// asciiSkeletons are the ASCII letters by their skeleton.
var asciiSkeletons = sync.OnceValue(func() map[string][]rune {
	m := map[string][]rune{}
	for a := 'A'; a <= 'z'; a++ {
		if unicode.IsLetter(a) {
			k := confusables.Skeleton(string(a))
			m[k] = append(m[k], a)
		}
	}
	return m
})

// digitValue is the value of the decimal digit r: Unicode encodes each
// script's digits 0 to 9 in a row, and its table of decimal digits lists
// them in runs that start at a zero.
func digitValue(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return (r - lo) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return (r - lo) % 10
		}
	}
	return 0
}
