package grounding

import (
	"fmt"
	"regexp"
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
// only a year from 1900 to 2200.
var yearRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}'])(?:(?:(q[1-4]|h[12]|i{1,3}[ \x{00A0}]?kw\.|iv[ \x{00A0}]?kw\.)|(\p{L}+(?:'\p{L}+)?))` +
	dateSpace + `+)?(\d{4})(?:` + dateSpace + `(\p{L}+\.?))?(?:[^\p{N}]|$)`)

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
	for found := true; found; {
		found = false
		for _, m := range s.find(yearRe) {
			y, _ := strconv.Atoi(s.group(m, 3))
			if y < 1900 || y > 2200 {
				continue
			}
			start, end := m[6], m[7]
			var dates []string
			after := strings.ToLower(s.group(m, 4))
			named := yearWords[after] || yearWords[strings.TrimSuffix(after, ".")]
			switch part := strings.ToLower(s.group(m, 1)); {
			case part != "":
				dates, start = yearPart(y, part), m[2]
			case yearBefore[strings.ToLower(s.group(m, 2))]:
				dates, start = []string{strconv.Itoa(y)}, m[4]
			case named:
				dates = []string{strconv.Itoa(y)}
			}
			if named {
				end = m[9]
				if !yearWords[after] {
					end-- // the dot ends the sentence
				}
			}
			if len(dates) == 0 {
				continue
			}
			s.claim(Claim{Kind: KindDate, dates: dates}, start, end)
			found = true
		}
	}
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
