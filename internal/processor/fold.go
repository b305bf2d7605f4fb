package processor

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// fold maps text to the form keywords are matched in: lower case, without
// diacritics (ą->a, ł->l, é->e, ...), every run of characters that are not
// letters or digits turned into one space. "Gwarancja  WYGASŁA!" and
// "gwarancja wygasla" fold to the same string; so do "post-warranty" and
// "post warranty".
func fold(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	space := true // drop leading separators
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // combining mark left by NFD: the diacritic itself
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if f, ok := special[r]; ok {
				sb.WriteString(f)
			} else {
				sb.WriteRune(unicode.ToLower(r))
			}
			space = false
		default:
			if !space {
				sb.WriteByte(' ')
				space = true
			}
		}
	}
	return strings.TrimRight(sb.String(), " ")
}

// special covers letters NFD does not decompose into a base letter and a
// combining mark.
var special = map[rune]string{
	'ł': "l", 'Ł': "l",
	'đ': "d", 'Đ': "d",
	'ø': "o", 'Ø': "o",
	'ß': "ss",
	'æ': "ae", 'Æ': "ae",
	'œ': "oe", 'Œ': "oe",
	'ı': "i",
}
