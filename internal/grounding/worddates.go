package grounding

import (
	"bytes"
	"strconv"
	"strings"
)

// Dates whose day is an ordinal written as a word: "the first of June
// 2027", "June twenty-first", "pierwszego czerwca 2027", "dwudziestego
// pierwszego maja", "am ersten Juni", "einunddreißigsten Mai 2027". The
// digit patterns cannot read them, and "first of June 2027" would otherwise
// state only its month (any day of June 2027 backed it). An English ordinal
// stands before its month only with "of" ("my first June" is no date).

// ordinal is a day written as a word; en marks the English ones.
type ordinal struct {
	day int
	en  bool
}

var ordinals = func() map[string]ordinal {
	m := map[string]ordinal{}
	for i, w := range []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
		"eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth"} {
		m[w] = ordinal{i + 1, true}
	}
	m["twentieth"], m["thirtieth"] = ordinal{20, true}, ordinal{30, true}
	// Polish, as a date writes them: nominative and genitive.
	for i, w := range []string{"pierwsz", "drugi", "trzeci", "czwart", "piąt", "szóst", "siódm", "ósm", "dziewiąt", "dziesiąt",
		"jedenast", "dwunast", "trzynast", "czternast", "piętnast", "szesnast", "siedemnast", "osiemnast", "dziewiętnast"} {
		switch {
		case strings.HasSuffix(w, "i"): // drugi, trzeci: drugiego, trzeciego
			m[w], m[w+"ego"] = ordinal{day: i + 1}, ordinal{day: i + 1}
		default:
			m[w+"y"], m[w+"ego"] = ordinal{day: i + 1}, ordinal{day: i + 1}
		}
	}
	for w, d := range map[string]int{"dwudziest": 20, "trzydziest": 30} {
		m[w+"y"], m[w+"ego"] = ordinal{day: d}, ordinal{day: d}
	}
	return m
}()

// germanOrdinals are the stems of the German ordinals, before their ending
// (erste, ersten, erster).
var germanOrdinals = map[string]int{
	"erst": 1, "zweit": 2, "dritt": 3, "viert": 4, "fünft": 5, "sechst": 6, "siebt": 7, "siebent": 7, "acht": 8, "neunt": 9,
	"zehnt": 10, "elft": 11, "zwölft": 12, "dreizehnt": 13, "vierzehnt": 14, "fünfzehnt": 15, "sechzehnt": 16,
	"siebzehnt": 17, "achtzehnt": 18, "neunzehnt": 19, "zwanzigst": 20, "dreißigst": 30,
}

// ordinalOf reads one word as a day: English, Polish or German (with its
// tens in one word: einundzwanzigsten).
func ordinalOf(w string) (ordinal, bool) {
	if o, ok := ordinals[w]; ok {
		return o, true
	}
	for _, end := range []string{"en", "er", "es", "em", "e"} {
		stem, ok := strings.CutSuffix(w, end)
		if !ok {
			continue
		}
		if d, ok := germanOrdinals[stem]; ok {
			return ordinal{day: d}, true
		}
		if unit, tens, ok := strings.Cut(strings.TrimSuffix(stem, "st"), "und"); ok && strings.HasSuffix(stem, "st") {
			u, uok := numberWords[unit]
			t, tok := tensWords[tens]
			if uok && tok && u >= 1 && u <= 9 && u == float64(int(u)) {
				return ordinal{day: int(t + u)}, true
			}
		}
	}
	return ordinal{}, false
}

// dayWords reads the day ending at word k: one ordinal, or the tens and an
// ordinal of one to nine ("twenty-first", "dwudziestego pierwszego").
func dayWords(text string, ws []word, k int) (o ordinal, first int, ok bool) {
	o, ok = ordinalOf(ws[k].lower)
	if !ok {
		return ordinal{}, 0, false
	}
	if o.day <= 9 && k > 0 && joined(text, ws[k-1], ws[k]) {
		if t, ok := tensWords[ws[k-1].lower]; ok && o.en && (t == 20 || t == 30) {
			return ordinal{int(t) + o.day, true}, k - 1, true
		}
		if p, ok := ordinals[ws[k-1].lower]; ok && !p.en && (p.day == 20 || p.day == 30) {
			return ordinal{day: p.day + o.day}, k - 1, true
		}
	}
	return o, k, true
}

// wordDates reads the dates whose day is an ordinal word, with their year
// when one follows the month (", 2027", " 2027 r."), else as a day with no
// year (see yearless).
func (s *scan) wordDates() {
	if !s.whole && !s.hasWord(isMonth) {
		return
	}
	ws := s.allWords()
	for k, w := range ws {
		mo, ok := months[w.lower]
		if !ok {
			continue
		}
		// A month's name that begins a compound ("die erste Mai-Woche")
		// names no day of it.
		if rest := s.orig[w.end:]; len(rest) > 1 && rest[0] == '-' && !isDigitByte(rest[1]) {
			continue
		}
		start, end, day := -1, w.end, 0
		// The day before its month: "pierwszego czerwca", "ersten Juni",
		// "the first of June".
		j := k - 1
		of := j >= 0 && ws[j].lower == "of" && joined(s.orig, ws[j], w)
		if of {
			j--
		}
		if j >= 0 && joined(s.orig, ws[j], ws[j+1]) {
			if o, first, ok := dayWords(s.orig, ws, j); ok && o.en == of {
				start, day = ws[first].start, o.day
			}
		}
		// English writes it after too: "June first", "June the twenty-first".
		if start < 0 {
			j := k + 1
			if j < len(ws) && ws[j].lower == "the" && joined(s.orig, ws[j-1], ws[j]) {
				j++
			}
			for n := j; n < len(ws) && n <= j+1 && joined(s.orig, ws[n-1], ws[n]); n++ {
				if o, first, ok := dayWords(s.orig, ws, n); ok && o.en && first == j {
					start, end, day = w.start, ws[n].end, o.day
				}
			}
		}
		if start < 0 {
			continue
		}
		if bytes.IndexByte(s.masked[start:end], 0) >= 0 {
			continue
		}
		// With the year that follows, if it is one and not claimed; else
		// with no year. An abbreviation names a month beside its year
		// alone ("the first of Jun 2027"), as monthBesideYear reads it.
		d := yearless(w.text, strconv.Itoa(day))
		if y, yEnd := yearAfter(s.orig, end); y != "" && bytes.IndexByte(s.masked[end:yEnd], 0) < 0 {
			_, besideYear := monthBesideYear(w.text, strings.HasPrefix(s.orig[end:], "."))
			if besideYear || isFullMonth(w) {
				if dy := listDates(y, mo, strconv.Itoa(day)); len(dy.dates) > 0 {
					d, end = dy, yEnd
				}
			}
		}
		if len(d.dates) > 0 {
			s.claim(Claim{Kind: KindDate, dates: d.dates}, start, end)
		}
	}
}

// yearAfter reads a year of four digits right after text[:i] (after a
// dot, spaces, no-break spaces or line breaks, a comma, or nothing, as
// beforeYear), and where it ends.
func yearAfter(text string, i int) (string, int) {
	if i < len(text) && text[i] == '.' {
		i++
	}
	i = skipDateSpace(text, i)
	if i < len(text) && text[i] == ',' {
		i = skipDateSpace(text, i+1)
	}
	if i+4 > len(text) || (i+4 < len(text) && isDigitByte(text[i+4])) {
		return "", 0
	}
	for _, c := range []byte(text[i : i+4]) {
		if !isDigitByte(c) {
			return "", 0
		}
	}
	return text[i : i+4], i + 4
}

// skipDateSpace returns where the spaces, no-break spaces and line breaks
// from text[i] end.
func skipDateSpace(text string, i int) int {
	for i < len(text) {
		switch {
		case text[i] == ' ' || text[i] == '\n':
			i++
		case strings.HasPrefix(text[i:], "\u00a0"):
			i += len("\u00a0")
		default:
			return i
		}
	}
	return i
}
