package review

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Similarity measures how alike two short texts are (a draft and the
// reply a person sent), on words, ignoring case, line wrapping, punctuation
// and a trailing signature.
//
// The measure: both texts lose their signature (from a "-- " line on), are
// brought to Unicode NFKC and lower case and split into words (maximal runs
// of letters and digits); the similarity is 1 - d/max(n, m), where d is the
// word-level Levenshtein distance (insert, delete or replace one word) and n,
// m the word counts. 1 means the same words in the same order; a person who
// changes one word in twenty gets 0.95; a rewritten answer lands near 0.
// Unlike a bag-of-words measure it notices reordered sentences and a
// deleted "not". Each text is cut at MaxWords words, so the cost is bounded
// (MaxWords² steps, with two rows of memory).

// MaxWords bounds the words compared from each text.
const MaxWords = 1500

// Similarity returns how alike a and b are, from 0 (nothing in common) to 1
// (the same words in the same order). Two texts without words are alike.
func Similarity(a, b string) float64 {
	x, y := Words(a), Words(b)
	n := max(len(x), len(y))
	if n == 0 {
		return 1
	}
	return 1 - float64(distance(x, y))/float64(n)
}

// Words returns the normalized words of s, signature removed, at most
// MaxWords.
func Words(s string) []string {
	s = stripSignature(s)
	s = strings.ToLower(norm.NFKC.String(s))
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) > MaxWords {
		words = words[:MaxWords]
	}
	return words
}

// stripSignature cuts s at its signature separator: a line "-- " (RFC 3676)
// or "--".
func stripSignature(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		if l == "-- " || l == "--" {
			return strings.Join(lines[:i], "\n")
		}
	}
	return s
}

// distance is the word-level Levenshtein distance.
func distance(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
