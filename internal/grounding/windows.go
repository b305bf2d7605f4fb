package grounding

import (
	"iter"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// digitStretches returns the stretches of text within digitReach bytes of
// a run of at least n ASCII digits (claims has written every digit in
// ASCII by then: see readable), widened to ASCII whitespace (or the
// text's ends) so no word is cut, overlapping or touching ones merged, in
// order. A stretch starts after whitespace and ends before it, as a
// match's boundary character would: "^" and "$" at its ends read as the
// whitespace there.
func digitStretches(text string, n int) [][2]int { return digitRunStretches(text, n, digitReach) }

// digitStretchesBefore is digitStretches reaching before each run alone,
// for the patterns that end with their digits (endsWithDigits): after the
// run a stretch only goes on to whitespace.
func digitStretchesBefore(text string, n int) [][2]int { return digitRunStretches(text, n, 0) }

func digitRunStretches(text string, n, after int) [][2]int {
	var out [][2]int
	for i, j := range digitRuns(text, n) {
		out = widen(out, text, i, j, after)
	}
	return out
}

// digitRuns yields where each run of at least n ASCII digits of text
// starts and ends, in order.
func digitRuns(text string, n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; i < len(text); i++ {
			if !isDigitByte(text[i]) {
				continue
			}
			j := i + 1
			for j < len(text) && isDigitByte(text[j]) {
				j++
			}
			if j-i >= n && !yield(i, j) {
				return
			}
			i = j - 1
		}
	}
}

// wordStretches is digitStretches around the words (runs of letters, ws)
// of a kind (is), and around each byte sign when it is not 0.
func wordStretches(text string, ws []word, is func(w word) bool, sign byte) [][2]int {
	var out [][2]int
	next := func(from int) int {
		if sign == 0 {
			return -1
		}
		if i := strings.IndexByte(text[from:], sign); i >= 0 {
			return from + i
		}
		return -1
	}
	p := next(0)
	for _, w := range ws {
		for ; p >= 0 && p < w.start; p = next(p + 1) {
			out = widen(out, text, p, p+1, digitReach)
		}
		if is(w) {
			out = widen(out, text, w.start, w.end, digitReach)
		}
	}
	for ; p >= 0; p = next(p + 1) {
		out = widen(out, text, p, p+1, digitReach)
	}
	return out
}

func isFullMonth(w word) bool {
	_, ok := fullMonths[w.lower]
	return ok
}

// isMonth reports whether w is a month's name or abbreviation.
func isMonth(w word) bool {
	_, ok := months[w.lower]
	return ok
}

// widen adds text[i:j] with digitReach bytes either side, widened to
// whitespace, to the stretches out, merging it with the last one when they
// overlap or touch. Each widening stops at the stretch before, so a walk
// over the whole text is linear however long a run without whitespace is.
func widen(out [][2]int, text string, i, j, after int) [][2]int {
	k, floor := len(out), 0
	if k > 0 {
		floor = out[k-1][1]
	}
	lo, hi := max(i-digitReach, floor), max(min(j+after, len(text)), floor)
	for lo > floor && !asciiSpace(text[lo-1]) {
		lo--
	}
	for hi < len(text) && !asciiSpace(text[hi]) {
		hi++
	}
	if k > 0 && lo <= floor {
		out[k-1][1] = hi
		return out
	}
	return append(out, [2]int{lo, hi})
}

func asciiSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

// inWindows are the patterns every match of which lies inside one window
// of the text that a reading of their own finds (kept in scan.windows), and
// which match inside a window as they do in the whole text: find reads
// them over the windows alone. A pattern that matches every word (an
// identifier), reads back from a number to the word before it (a ticket
// number) or reads each digit as the start of a date costs many times
// more over every stretch near a digit than over these. A window of a
// pattern that looks at the character before or after its match (a
// boundary, "^", "\b") holds that character too, which the window's
// characters never are; overlapping windows are merged, so a match that
// takes the character another's needs leaves it as it does in the whole
// text.
var inWindows = map[*regexp.Regexp]func(text string) [][2]int{
	identRe:        identWindows,
	emailRe:        emailWindows,
	domainRe:       domainWindows,
	ticketNumberRe: ticketWindows,
	isoDateRe:      isoDateWindows,
	numDateRe:      numDateWindows,
	phoneRe:        phoneWindows,
	numberRe:       numberWindows,
}

// identWindows are the runs of an identifier's characters (identRe's
// class: letters, numbers, "_", "/", "-") that hold an ASCII digit: identRe
// asserts nothing outside its match, and an identifier has a digit.
func identWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, identClass, nil, false)
}

// emailWindows are the runs of an email address's characters (emailRe's
// classes: letters, numbers, ".", "_", "%", "+", "-", "@") that hold "@".
func emailWindows(text string) [][2]int {
	return classRuns(text, &atSeeds, emailClass, nil, false)
}

// domainWindows are the runs of a domain's and its path's characters
// (domainRe's classes: letters, numbers and the ASCII signs a path is
// written with) that hold a dot a letter follows, with their boundaries.
func domainWindows(text string) [][2]int {
	return classRuns(text, &dotSeeds, domainClass, dotBeforeLetter, true)
}

// dotBeforeLetter reports whether run has a dot a letter follows, as a
// domain's last dot is (a sentence's last word and its dot are none).
func dotBeforeLetter(run string) bool {
	for i := strings.IndexByte(run, '.'); i >= 0 && i+1 < len(run); {
		if r, _ := utf8.DecodeRuneInString(run[i+1:]); unicode.IsLetter(r) {
			return true
		}
		j := strings.IndexByte(run[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// The characters of the windows classRuns finds: each pattern's classes
// (see the functions that use them), and the bytes a window grows from.
var (
	identClass   = classOf("_/-", true)
	emailClass   = classOf("._%+-@", true)
	domainClass  = classOf("-._~%!$&*+=:@/?#", true)
	isoDateClass = classOf("-/.T :Z+", false)
	numDateClass = classOf("./- \t\n\f\r\u00a0", false)
	phoneClass   = classOf("() -\u00a0+", false)
	numberClass  = classOf("#", false)

	digitSeeds = byteSet("0123456789")
	atSeeds    = byteSet("@")
	dotSeeds   = byteSet(".")
)

// runeClass is a set of runes: those in ASCII by a table, the others by a
// list and, with letters, every letter and number.
type runeClass struct {
	ascii   [utf8.RuneSelf]bool
	other   []rune
	letters bool
}

// classOf is the class of the ASCII digits and chars and, with letters,
// every letter and number (unicode.IsLetter, unicode.IsNumber).
func classOf(chars string, letters bool) *runeClass {
	c := &runeClass{letters: letters}
	for r := rune(0); r < utf8.RuneSelf; r++ {
		c.ascii[r] = r >= '0' && r <= '9' || letters && (unicode.IsLetter(r) || unicode.IsNumber(r))
	}
	for _, r := range chars {
		if r < utf8.RuneSelf {
			c.ascii[r] = true
		} else {
			c.other = append(c.other, r)
		}
	}
	return c
}

func (c *runeClass) has(r rune) bool {
	if r >= 0 && r < utf8.RuneSelf {
		return c.ascii[r]
	}
	return c.letters && (unicode.IsLetter(r) || unicode.IsNumber(r)) || slices.Contains(c.other, r)
}

func byteSet(bytes string) (set [256]bool) {
	for i := 0; i < len(bytes); i++ {
		set[bytes[i]] = true
	}
	return set
}

// classRuns returns the maximal runs of text's runes that in holds and
// that hold a byte of seeds (one in holds too: an ASCII digit, "@"), of
// those keep accepts (all when keep is nil); with pad, each with the rune
// before and the rune after it, windows that then overlap or touch merged.
// A run is found from its seed outwards, so text far from every seed costs
// one look-up a byte.
func classRuns(text string, seeds *[256]bool, in *runeClass, keep func(run string) bool, pad bool) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); i++ {
		if !seeds[text[i]] {
			continue
		}
		start, end := i, i
		for start > 0 {
			if b := text[start-1]; b < utf8.RuneSelf {
				if !in.ascii[b] {
					break
				}
				start--
				continue
			}
			r, size := utf8.DecodeLastRuneInString(text[:start])
			if !in.has(r) {
				break
			}
			start -= size
		}
		for end < len(text) {
			if b := text[end]; b < utf8.RuneSelf {
				if !in.ascii[b] {
					break
				}
				end++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[end:])
			if !in.has(r) {
				break
			}
			end += size
		}
		i = end
		if keep != nil && !keep(text[start:end]) {
			continue
		}
		if pad {
			if start > 0 {
				_, size := utf8.DecodeLastRuneInString(text[:start])
				start -= size
			}
			if end < len(text) {
				_, size := utf8.DecodeRuneInString(text[end:])
				end += size
			}
			if n := len(out); n > 0 && out[n-1][1] >= start {
				out[n-1][1] = end
				continue
			}
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

// isoDateWindows are the runs of what an ISO date and its time are written
// with (digits, "-", "/", ".", "T", " ", ":", "Z", "+") that hold four
// digits in a row, with their boundaries.
func isoDateWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, isoDateClass, func(run string) bool { return digitsThen(run, 4, "", false) }, true)
}

// numDateWindows are the runs of what 01.05.2027 is written with (digits,
// ".", "/", "-", ASCII white space, a no-break space) that hold four
// digits in a row, with their boundaries.
func numDateWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, numDateClass, func(run string) bool { return digitsThen(run, 4, "", false) }, true)
}

// phoneWindows are the runs of what a phone number is written with
// (digits, "(", ")", " ", "-", a no-break space, "+") that hold a digit,
// with their boundaries (phoneRe's \b looks at the character before).
func phoneWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, phoneClass, nil, true)
}

// numberWindows are the runs of digits and "#" that hold five digits in a
// row.
func numberWindows(text string) [][2]int {
	return classRuns(text, &digitSeeds, numberClass, func(run string) bool { return digitsThen(run, 5, "", false) }, false)
}

// ticketWindows are, for each run of three ASCII digits or more, what
// ticketNumberRe can read before it: the separators ("[ \x{00A0}\n]*[:#]?
// [ \x{00A0}\n]*"), a dot, the run of letters and hyphens before them, and
// the character before that (the boundary the pattern takes, which is no
// letter: "^" cannot match at the window's start where the text has none).
func ticketWindows(text string) [][2]int {
	var out [][2]int
	for i, j := range digitRuns(text, 3) {
		b := skipSpaceBack(text, i)
		if b > 0 && (text[b-1] == ':' || text[b-1] == '#') {
			b = skipSpaceBack(text, b-1)
		}
		if b > 0 && text[b-1] == '.' {
			b--
		}
		for b > 0 {
			r, size := utf8.DecodeLastRuneInString(text[:b])
			if !unicode.IsLetter(r) && r != '-' {
				break
			}
			b -= size
		}
		if b > 0 {
			_, size := utf8.DecodeLastRuneInString(text[:b])
			b -= size
		}
		if n := len(out); n > 0 && out[n-1][1] >= b {
			out[n-1][1] = j
		} else {
			out = append(out, [2]int{b, j})
		}
	}
	return out
}

// skipSpaceBack returns where the spaces, no-break spaces and line breaks
// that end text[:i] start.
func skipSpaceBack(text string, i int) int {
	for i > 0 {
		switch {
		case text[i-1] == ' ' || text[i-1] == '\n':
			i--
		case strings.HasSuffix(text[:i], "\u00a0"):
			i -= len("\u00a0")
		default:
			return i
		}
	}
	return i
}
