package grounding

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A year alone is a claim when a word makes it one: a word before it that
// places something in it ("do 2031 roku", "in 2031", "bis 2031", "until
// 2031", "jusqu'en 2031", "hasta 2031", "до 2031 года", "kuni 2031"), a
// word after it that names it a year ("2031 r.", "2031 roku"), or a
// quarter or a half of it ("Q4 2031", "H2 2031", "IV kw. 2031"). It states
// the year ("2031"), a quarter or a half its months, any of which backs
// it. Read after amounts and durations ("do 2031 zł" is an amount), and
// only a year from 1900 to 2200 (four digits no digit touches), from each
// run of four digits to the words either side (years reads no pattern
// over the text).
// yearBefore are the words, as readableForms writes them, after which a
// number of four digits is a year; yearAfter those that name the number
// before them a year.
var (
	yearBefore = wordSet("in", "until", "till", "by", "through", "since", "before", "after", "from", "during",
		"do", "od", "w", "we", "z", "po", "przed", "roku",
		"bis", "im", "ab", "seit", "vor", "nach", "jahr",
		"en", "jusqu'en", "depuis", "avant", "après", "hasta", "desde", "antes", "entro", "fino", "nel", "dal", "al",
		"до", "в", "во", "с", "по", "после", "від", "у", "kuni", "alates", "enne")
	yearWords = wordSet("r.", "roku", "rok", "year", "jahr", "jahres", "année", "año", "anno", "року", "рік", "году", "года", "год", "г.",
		"aasta", "aastal", "aastani")
)

func wordSet(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		for _, f := range readableForms(w) {
			m[f] = true
		}
	}
	return m
}

func (s *scan) years() {
	if !digitsThen(s.orig, 4, "", false) {
		return
	}
	ws := s.allWords()
	for i, j := range digitRuns(s.orig, 4) {
		y, _ := strconv.Atoi(s.orig[i:j])
		if j-i != 4 || y < 1900 || y > 2200 || bytes.IndexByte(s.masked[i:j], 0) >= 0 {
			continue
		}
		start, end := i, j
		var dates []string
		// Before it: a quarter or a half ("Q4 ", "IV kw. "), or a word
		// that places something in it, a space or more apart.
		b := skipSpaceBack(s.orig, i)
		if b < i {
			if part, at := yearPartBefore(s.orig, b); part != "" {
				dates, start = yearPart(y, part), at
			} else if k := wordEndingAt(ws, b); k >= 0 && yearBefore[ws[k].lower] && !glued(s.orig, ws[k].start) {
				dates, start = []string{strconv.Itoa(y)}, ws[k].start
			}
		}
		// After it: a word that names it a year ("2031 r.", "2031 roku").
		if a := skipDateSpace(s.orig, j); a > j && a-j <= len("\u00a0") {
			if k := wordStartingAt(ws, a); k >= 0 {
				w, e := ws[k].lower, ws[k].end
				if e < len(s.orig) && s.orig[e] == '.' && yearWords[w+"."] {
					w, e = w+".", e+1
				}
				if yearWords[w] {
					if dates == nil {
						dates = []string{strconv.Itoa(y)}
					}
					end = e
				}
			}
		}
		if len(dates) == 0 || bytes.IndexByte(s.masked[start:end], 0) >= 0 {
			continue
		}
		s.claim(Claim{Kind: KindDate, dates: dates}, start, end)
	}
}

// glued reports whether the word at text[i:] follows a digit with
// nothing between ("5w").
func glued(text string, i int) bool {
	return i > 0 && isDigitByte(text[i-1])
}

// wordEndingAt is the index of the word of ws that ends at i, or -1.
func wordEndingAt(ws []word, i int) int {
	k := sort.Search(len(ws), func(k int) bool { return ws[k].end >= i })
	if k < len(ws) && ws[k].end == i {
		return k
	}
	return -1
}

// wordStartingAt is the index of the word of ws that starts at i, or -1.
func wordStartingAt(ws []word, i int) int {
	k := sort.Search(len(ws), func(k int) bool { return ws[k].start >= i })
	if k < len(ws) && ws[k].start == i {
		return k
	}
	return -1
}

// yearPartRe reads a quarter or a half that ends a text: "Q4", "h2",
// "IV kw.".
var yearPartRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])(q[1-4]|h[12]|(?:i{1,3}|iv)[ \x{00A0}]?kw\.)$`)

// yearPartBefore reads a quarter or a half that ends text[:i]: the part,
// lower-cased, and where it starts.
func yearPartBefore(text string, i int) (string, int) {
	from := max(0, i-8)
	m := yearPartRe.FindStringSubmatchIndex(text[from:i])
	if m == nil || m[0] == 0 && from > 0 && !numberBoundary(lastRune(text[:from])) {
		return "", 0
	}
	return strings.ToLower(text[from+m[2] : from+m[3]]), from + m[2]
}

// yearPart is the months of a quarter or a half of year y: "q4", "h2",
// "iv kw." (Polish: the fourth quarter).
func yearPart(y int, part string) []string {
	first, n := 0, 3
	switch {
	case part[0] == 'q':
		first = 3*int(part[1]-'1') + 1
	case part[0] == 'h':
		first, n = 6*int(part[1]-'1')+1, 6
	default:
		roman := strings.TrimRight(strings.TrimSuffix(part, "kw."), " \u00a0")
		q := map[string]int{"i": 1, "ii": 2, "iii": 3, "iv": 4}[roman]
		if q == 0 {
			return nil
		}
		first = 3*(q-1) + 1
	}
	var out []string
	for mo := first; mo < first+n; mo++ {
		out = append(out, fmt.Sprintf("%04d-%02d", y, mo))
	}
	return out
}
