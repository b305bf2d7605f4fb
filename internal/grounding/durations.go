package grounding

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Durations and percentages: "naprawa potrwa 14 dni roboczych", "within 2
// business days", "innerhalb von 48 Stunden", "2-letnia gwarancja", "3-5
// Tage", "rabat 20%", "10-prozentiger Nachlass". A promise of a repair
// time or a discount is a fact like a date: the model may state only what
// its sources state.
//
// A duration is compared by its length, so "2 tygodnie" is backed by "14
// days" and "2 lata" by "24 Monate": minutes, hours, days and weeks as
// minutes; months and years as months; working days apart (14 working days
// are not 14 days). A range or a pair ("3-5 dni", "2 or 3 days", "2 or
// three days") states each of its numbers, and each must be backed; a
// number and a half ("dwa i pół roku", "two and a half years",
// "zweieinhalb Jahre") is one length. A number a function
// returned backs the same number with any unit ("days_left": 14 backs "14
// dni"): the function said it of this email. A number has one to three
// digits (durationRe) or is written in words (wordDurations).
const durNum = `\d{1,3}(?:[.,]\d{1,2})?`

var durationRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}.,\-/:])(` + durNum + `)` +
	`(?:(?:[ \x{00A0}\n]?-[ \x{00A0}\n]?|[ \x{00A0}\n](?i:do|to|bis|lub|or|oder|albo|i|and|und)[ \x{00A0}\n])(` + durNum + `))?` +
	`[ \x{00A0}\n]?-?(%|\p{L}+\.?)(?:[ \x{00A0}\n](\p{L}+))?`)

// unit is what a duration's word measures and how many of the measure's
// base units one of it is.
type unit struct {
	measure string // "time" (in minutes), "months", "workdays", "percent"
	size    float64
}

var (
	minute  = unit{"time", 1}
	hour    = unit{"time", 60}
	day     = unit{"time", 24 * 60}
	week    = unit{"time", 7 * 24 * 60}
	month   = unit{"months", 1}
	year    = unit{"months", 12}
	workday = unit{"workdays", 1}
	percent = unit{"percent", 1}
)

// units are the words of a unit in Polish, English and German, lower-cased,
// as they follow a number ("14 dni", "2 Jahre", "24h", "5 min.").
var units = map[string]unit{
	"min": minute, "min.": minute, "mins": minute, "minut": minute, "minuta": minute, "minuty": minute, "minutę": minute,
	"minucie": minute, "minutach": minute, "minutami": minute, "minute": minute, "minutes": minute, "minuten": minute,
	"h": hour, "godz.": hour, "godz": hour, "godzina": hour, "godziny": hour, "godzin": hour, "godzinę": hour,
	"godzinie": hour, "godzinach": hour, "godzinami": hour,
	"hour": hour, "hours": hour, "hr": hour, "hrs": hour, "std.": hour, "stunde": hour, "stunden": hour,
	"dzień": day, "dni": day, "dnia": day, "dniu": day, "dniach": day, "dniami": day, "doba": day, "doby": day, "dobę": day, "dób": day,
	"day": day, "days": day, "tag": day, "tage": day, "tagen": day, "tages": day,
	"tydzień": week, "tygodnie": week, "tygodni": week, "tygodnia": week, "tygodniu": week, "tygodniach": week, "tygodniami": week,
	"week": week, "weeks": week, "woche": week, "wochen": week,
	"miesiąc": month, "miesiące": month, "miesięcy": month, "miesiąca": month, "miesiącu": month, "miesiącach": month,
	"miesiącami": month, "mies.": month, "month": month, "months": month, "monat": month, "monate": month, "monaten": month, "monats": month,
	"rok": year, "roku": year, "rokiem": year, "lata": year, "lat": year, "latach": year, "latami": year, "year": year, "years": year,
	"jahr": year, "jahre": year, "jahren": year, "jahres": year,
	"werktag": workday, "werktage": workday, "werktagen": workday, "arbeitstag": workday, "arbeitstage": workday, "arbeitstagen": workday,
	"%": percent, "procent": percent, "proc.": percent, "procentów": percent, "procenta": percent, "procentach": percent,
	"prozent": percent, "percent": percent,
}

// unitStems are the adjectives a unit makes after a number ("14-dniowy",
// "2-letnia", "24-miesięczna", "3-tägige", "2-jährige", "20-procentowy",
// "10-prozentiger"), by the start they share.
var unitStems = []struct {
	stem string
	u    unit
}{
	{"minutow", minute}, {"godzinn", hour}, {"stündig", hour}, {"dniow", day}, {"tägig", day},
	{"tygodniow", week}, {"wöchig", week}, {"miesięczn", month}, {"monatig", month},
	{"letni", year}, {"roczn", year}, {"jährig", year}, {"procentow", percent}, {"prozentig", percent},
}

// workdayWords make a day a working day: after it ("dni roboczych") or
// before it ("business days").
var (
	workdayAfter  = map[string]bool{"roboczych": true, "robocze": true, "roboczy": true, "roboczego": true, "roboczym": true, "roboczymi": true}
	workdayBefore = map[string]bool{"business": true, "working": true, "work": true}
)

// unitOf reads the unit of a duration from the word after its number and
// the word after that; n is how many of the two words it took.
func unitOf(w1, w2 string) (u unit, n int, ok bool) {
	w1, w2 = strings.ToLower(w1), strings.ToLower(w2)
	if workdayBefore[w1] {
		if u, ok := units[w2]; ok && u == day {
			return workday, 2, true
		}
		return unit{}, 0, false
	}
	u, ok = units[w1]
	if !ok && strings.HasSuffix(w1, ".") {
		// "5 dni." ends a sentence: the dot is not the word's.
		u, ok = units[strings.TrimSuffix(w1, ".")]
	}
	if !ok {
		for _, s := range unitStems {
			if strings.HasPrefix(w1, s.stem) {
				u, ok = s.u, true
				break
			}
		}
	}
	if !ok {
		return unit{}, 0, false
	}
	if u == day && workdayAfter[w2] {
		return workday, 2, true
	}
	return u, 1, true
}

// durations reads durations and percentages. As in eachGroups, the text is
// read again until a reading finds nothing new (a match's boundary
// character may be the end of the claim before it).
func (s *scan) durations() {
	for found := true; found; {
		found = false
		for _, m := range s.find(durationRe) {
			u, words, ok := unitOf(s.group(m, 3), s.group(m, 4))
			if !ok {
				continue
			}
			nums := []string{s.group(m, 1)}
			if m[4] >= 0 {
				nums = append(nums, s.group(m, 2))
			}
			var values []float64
			for _, n := range nums {
				if v, err := strconv.ParseFloat(strings.Replace(n, ",", ".", 1), 64); err == nil {
					values = append(values, v)
				}
			}
			if len(values) != len(nums) {
				continue
			}
			start := m[2]
			if len(values) == 1 {
				// A pair whose first number is a word: "two or 3 days".
				if v0, at, ok := s.numberBefore(start); ok {
					values, start = []float64{v0, values[0]}, at
				}
			}
			end := m[7]
			if words == 2 {
				end = m[9]
			}
			word := s.group(m, 3)
			if words == 1 && strings.HasSuffix(word, ".") {
				if _, ok := units[strings.ToLower(word)]; !ok {
					end-- // the sentence's dot
				}
			}
			s.claim(durationClaim(u, values), start, end)
			found = true
		}
	}
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// plainNumber reads a number written with digits and at most one decimal
// dot or comma ("14", "1,5", "-2"), as formatNumber writes it.
func plainNumber(n string) (string, bool) {
	digits := strings.TrimPrefix(n, "-")
	if digits == "" || strings.Trim(digits, "0123456789.,") != "" || strings.Count(digits, ".")+strings.Count(digits, ",") > 1 {
		return "", false
	}
	v, err := strconv.ParseFloat(strings.Replace(n, ",", ".", 1), 64)
	if err != nil {
		return "", false
	}
	return formatNumber(v), true
}

// hasUnit: a word that can be a duration's unit, or a percent sign.
func hasUnit(s *scan) bool {
	return strings.IndexByte(s.orig, '%') >= 0 || s.hasWord(isUnitWord)
}

// isUnitWord reports whether a word can be a duration's unit or stand
// before one ("business"), its dot aside ("godz.").
func isUnitWord(w word) bool {
	_, _, ok := unitOf(w.lower, "")
	return ok || dottedUnits[w.lower] || workdayBefore[w.lower]
}

// dottedUnits are the units written with a dot, without it ("mies").
var dottedUnits = func() map[string]bool {
	m := map[string]bool{}
	for w := range units {
		if stem, ok := strings.CutSuffix(w, "."); ok {
			m[stem] = true
		}
	}
	return m
}()

// Durations with their numbers written as words: "trzy dni robocze",
// "two weeks", "zwei bis drei Tage", "twenty-four hours", "dwadzieścia
// cztery godziny", "vierundzwanzig Stunden", "półtora roku". Spelled-out
// numbers are how prose writes small ones, so a promise reads this way as
// often as with digits. English "a" is one after a word that makes it a
// length ("within a week", "in an hour"), not in "24 hours a day".
var (
	numberWords = map[string]float64{
		"jeden": 1, "jedna": 1, "jedno": 1, "jednego": 1, "jednej": 1, "jedną": 1, "jednym": 1,
		"dwa": 2, "dwie": 2, "dwóch": 2, "dwu": 2, "dwoma": 2, "trzy": 3, "trzech": 3, "trzema": 3,
		"cztery": 4, "czterech": 4, "czterema": 4, "pięć": 5, "pięciu": 5, "sześć": 6, "sześciu": 6,
		"siedem": 7, "siedmiu": 7, "osiem": 8, "ośmiu": 8, "dziewięć": 9, "dziewięciu": 9,
		"dziesięć": 10, "dziesięciu": 10, "jedenaście": 11, "jedenastu": 11, "dwanaście": 12, "dwunastu": 12,
		"trzynaście": 13, "trzynastu": 13, "czternaście": 14, "czternastu": 14, "piętnaście": 15, "piętnastu": 15,
		"szesnaście": 16, "szesnastu": 16, "siedemnaście": 17, "siedemnastu": 17, "osiemnaście": 18, "osiemnastu": 18,
		"dziewiętnaście": 19, "dziewiętnastu": 19, "pół": 0.5, "półtora": 1.5, "półtorej": 1.5, "half": 0.5,
		"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
		"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
		"eighteen": 18, "nineteen": 19,
		"ein": 1, "eine": 1, "einen": 1, "einem": 1, "einer": 1, "eines": 1, "zwei": 2, "drei": 3, "vier": 4,
		"fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
		"dreizehn": 13, "vierzehn": 14, "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17, "achtzehn": 18, "neunzehn": 19,
		"anderthalb": 1.5,
	}
	tensWords = map[string]float64{
		"dwadzieścia": 20, "dwudziestu": 20, "trzydzieści": 30, "trzydziestu": 30, "czterdzieści": 40, "czterdziestu": 40,
		"pięćdziesiąt": 50, "pięćdziesięciu": 50, "sześćdziesiąt": 60, "sześćdziesięciu": 60,
		"dziewięćdziesiąt": 90, "dziewięćdziesięciu": 90,
		"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90,
		"zwanzig": 20, "dreißig": 30, "vierzig": 40, "fünfzig": 50, "sechzig": 60, "neunzig": 90,
	}
	// afterArticle are the words after which "a" or "an" before a unit
	// is one of it.
	afterArticle = map[string]bool{"within": true, "in": true, "for": true, "after": true, "about": true, "around": true,
		"under": true, "over": true, "than": true, "take": true, "takes": true, "last": true, "lasts": true}
	// rangeWords join the two numbers of a range or a pair.
	rangeWords = map[string]bool{"do": true, "to": true, "bis": true, "lub": true, "or": true, "oder": true, "albo": true, "i": true, "and": true, "und": true}
)

// joined reports whether words a and b (a before b) stand one space, one
// no-break space, one line break or one hyphen apart.
func joined(text string, a, b word) bool {
	gap := text[a.end:b.start]
	return oneGap(gap) || gap == "-"
}

// wordNumber reads the number ws[k] and, when it is a tens' unit, the tens
// word before it ("twenty-four", "dwadzieścia cztery") state, and where
// that number starts.
func wordNumber(text string, ws []word, k int) (v float64, first int, ok bool) {
	w := ws[k].lower
	if v, ok := numberWords[w]; ok {
		if v >= 1 && v <= 9 && v == float64(int(v)) && k > 0 && joined(text, ws[k-1], ws[k]) {
			if t, ok := tensWords[ws[k-1].lower]; ok {
				return t + v, k - 1, true
			}
		}
		return v, k, true
	}
	if t, ok := tensWords[w]; ok {
		return t, k, true
	}
	// German writes a half after its number in one word: zweieinhalb.
	if n, ok := strings.CutSuffix(w, "einhalb"); ok {
		if u, ok := numberWords[n]; ok && u >= 1 && u <= 9 {
			return u + 0.5, k, true
		}
	}
	// German writes the unit before its tens in one word: vierundzwanzig.
	if i := strings.Index(w, "und"); i > 0 {
		u, uok := numberWords[w[:i]]
		t, tok := tensWords[w[i+len("und"):]]
		if uok && tok && u >= 1 && u <= 9 {
			return t + u, k, true
		}
	}
	return 0, 0, false
}

// wordDurations reads the durations whose numbers are words (see
// numberWords), after durations has read those with digits.
func (s *scan) wordDurations() {
	if !s.whole && !s.mayHold(durationRe) {
		return
	}
	ws := s.allWords()
	for k := 1; k < len(ws); k++ {
		u, ok := units[ws[k].lower]
		if !ok {
			continue
		}
		end, n := ws[k].end, k-1
		if u == day && k+1 < len(ws) && workdayAfter[ws[k+1].lower] && joined(s.orig, ws[k], ws[k+1]) {
			u, end = workday, ws[k+1].end
		}
		if u == day && workdayBefore[ws[n].lower] && n > 0 && joined(s.orig, ws[n], ws[k]) {
			u, n = workday, n-1
		}
		if !joined(s.orig, ws[n], ws[n+1]) {
			continue
		}
		v, first, ok := wordNumber(s.orig, ws, n)
		if !ok && (ws[n].lower == "a" || ws[n].lower == "an") && n > 0 && afterArticle[ws[n-1].lower] && joined(s.orig, ws[n-1], ws[n]) {
			v, first, ok = 1, n, true
		}
		if !ok {
			if c, start, ok := s.vagueDuration(ws, n, u); ok && bytes.IndexByte(s.masked[start:end], 0) < 0 {
				s.claim(c, start, end)
			}
			continue
		}
		start := ws[first].start
		if v == 0.5 {
			// "dwa i pół roku", "two and a half years", "2 i pół dnia".
			v, start = s.andAHalf(ws, first)
		}
		values := []float64{v}
		// A range or a pair: "dwa lub trzy dni", "zwei bis drei Tage", and
		// with its first number in digits, "2 or three days".
		if v0, at, ok := s.numberBefore(start); ok {
			values, start = []float64{v0, v}, at
		}
		if bytes.IndexByte(s.masked[start:end], 0) >= 0 {
			continue
		}
		s.claim(durationClaim(u, values), start, end)
	}
}

// durationClaim is the claim that values (one, or a range's two) of unit u
// state: a duration, or a percentage.
func durationClaim(u unit, values []float64) Claim {
	c := Claim{Kind: KindDuration}
	if u == percent {
		c.Kind = KindPercent
	}
	for _, v := range values {
		c.numbers = append(c.numbers, formatNumber(v))
		c.lengths = append(c.lengths, u.measure+" "+formatNumber(v*u.size))
	}
	return c
}

// numberBefore reads a number, in words or in digits, and a word of
// rangeWords that stand before text[i], each one space apart ("two or "
// and "2 or " before "3 days"): the number, and where it starts.
func (s *scan) numberBefore(i int) (v float64, start int, ok bool) {
	ws := s.allWords()
	k, ok := s.wordBefore(i)
	if !ok || !rangeWords[ws[k].lower] {
		return 0, 0, false
	}
	if k >= 1 && joined(s.orig, ws[k-1], ws[k]) {
		if v, first, ok := wordNumber(s.orig, ws, k-1); ok {
			start = ws[first].start
			return v, start, bytes.IndexByte(s.masked[start:i], 0) < 0
		}
	}
	if v, start, ok = digitNumberBefore(s.orig, ws[k].start); ok {
		return v, start, bytes.IndexByte(s.masked[start:i], 0) < 0
	}
	return 0, 0, false
}

// wordBefore returns the word that ends one space, no-break space or line
// break before text[i].
func (s *scan) wordBefore(i int) (int, bool) {
	ws := s.allWords()
	k := sort.Search(len(ws), func(k int) bool { return ws[k].end >= i }) - 1
	if k < 0 || !oneGap(s.orig[ws[k].end:i]) {
		return 0, false
	}
	return k, true
}

// digitNumberBefore reads a number as durationRe does (durNum: one to
// three digits, maybe a decimal dot or comma and one or two more, after a
// character that is no letter, digit, ".", ",", "-", "/" or ":") that ends
// one space before text[i] ("2 " before "or three days"): the number, and
// where it starts.
func digitNumberBefore(text string, i int) (v float64, start int, ok bool) {
	j := i
	switch {
	case strings.HasSuffix(text[:j], "\u00a0"):
		j -= len("\u00a0")
	case j > 0 && (text[j-1] == ' ' || text[j-1] == '\n'):
		j--
	default:
		return 0, 0, false
	}
	digitsFrom := func(k int) int {
		for k > 0 && isDigitByte(text[k-1]) {
			k--
		}
		return k
	}
	k := digitsFrom(j)
	whole := j - k
	if whole >= 1 && whole <= 2 && k >= 2 && (text[k-1] == '.' || text[k-1] == ',') && isDigitByte(text[k-2]) {
		// Decimals: the number's whole part is before the dot.
		end := k - 1
		k = digitsFrom(end)
		whole = end - k
	}
	if whole < 1 || whole > 3 {
		return 0, 0, false
	}
	if r, _ := utf8.DecodeLastRuneInString(text[:k]); k > 0 && !numberBoundary(r) {
		return 0, 0, false
	}
	v, err := strconv.ParseFloat(strings.Replace(text[k:j], ",", ".", 1), 64)
	return v, k, err == nil
}

// numberBoundary reports whether r may stand before a duration's number
// (durationRe's class before its number).
func numberBoundary(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !strings.ContainsRune(".,-/:", r)
}

// oneGap reports whether gap is one space, no-break space or line break.
func oneGap(gap string) bool { return gap == " " || gap == "\u00a0" || gap == "\n" }

// andAHalf reads the number a half at ws[half] is added to ("dwa i pół",
// "two and a half", "2 i pół"): the sum and where it starts, else the half
// alone.
func (s *scan) andAHalf(ws []word, half int) (float64, int) {
	at := ws[half].start
	if k, ok := s.wordBefore(at); ok && ws[k].lower == "a" {
		at = ws[k].start
	}
	k, ok := s.wordBefore(at)
	if !ok || !halfJoins[ws[k].lower] {
		return 0.5, ws[half].start
	}
	if k >= 1 && joined(s.orig, ws[k-1], ws[k]) {
		if v, first, ok := wordNumber(s.orig, ws, k-1); ok && v >= 1 {
			return v + 0.5, ws[first].start
		}
	}
	if v, start, ok := digitNumberBefore(s.orig, ws[k].start); ok && v >= 1 && v == float64(int(v)) {
		return v + 0.5, start
	}
	return 0.5, ws[half].start
}

// halfJoins join a number and its half.
var halfJoins = map[string]bool{"i": true, "and": true, "und": true}

// Vague durations: "kilka dni", "w ciągu kilku dni roboczych", "a few
// days", "a couple of weeks", "in ein paar Tagen", "kilkanaście dni", "w
// najbliższych dniach", "in the coming days". A vague promise of a repair
// or reply time is still a promise: it is backed only by a vague duration
// of the same degree and unit in the sources (the customer's "kilka dni
// temu" backs "kilka dni"), never by a number. Minutes are left out: "wait
// a few minutes" is how a troubleshooting step reads, not a promise.
var vagueWords = map[string]string{
	"kilka": "few", "kilku": "few", "kilkoma": "few", "parę": "few", "paru": "few",
	"few": "few", "several": "few", "couple": "few", "paar": "few", "einige": "few", "einigen": "few",
	"mehrere": "few", "mehreren": "few", "wenige": "few", "wenigen": "few",
	"kilkanaście": "teens", "kilkunastu": "teens", "kilkunastoma": "teens",
	"kilkadziesiąt": "tens", "kilkudziesięciu": "tens",
	"najbliższych": "coming", "najbliższe": "coming", "nadchodzących": "coming", "coming": "coming", "nächsten": "coming",
}

// vagueDuration reads a vague duration whose unit u follows ws[n] ("kilka"
// before "dni"): the claim and where it starts (with its article: "a few",
// "a couple of", "ein paar").
func (s *scan) vagueDuration(ws []word, n int, u unit) (Claim, int, bool) {
	if u == minute {
		return Claim{}, 0, false
	}
	degree, ok := vagueWords[ws[n].lower]
	j := n
	if !ok && ws[n].lower == "of" && n > 0 && ws[n-1].lower == "couple" && joined(s.orig, ws[n-1], ws[n]) {
		degree, j, ok = "few", n-1, true
	}
	if !ok {
		return Claim{}, 0, false
	}
	if j > 0 && joined(s.orig, ws[j-1], ws[j]) && (ws[j-1].lower == "a" || ws[j-1].lower == "ein" && ws[j].lower == "paar") {
		j--
	}
	c := Claim{Kind: KindDuration, lengths: []string{degree + " " + u.measure + " " + formatNumber(u.size)}}
	if u == percent {
		c.Kind = KindPercent
	}
	return c, ws[j].start, true
}
