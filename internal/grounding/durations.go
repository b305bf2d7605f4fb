package grounding

import (
	"regexp"
	"strconv"
	"strings"
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
// are not 14 days). A range or a pair ("3-5 dni", "2 or 3 days") states
// each of its numbers, and each must be backed. A number a function
// returned backs the same number with any unit ("days_left": 14 backs "14
// dni"): the function said it of this email. Numbers are written with
// digits, one to three of them ("dwa tygodnie" is not read).
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
			c := Claim{Kind: KindDuration}
			if u == percent {
				c.Kind = KindPercent
			}
			for _, n := range nums {
				v, err := strconv.ParseFloat(strings.Replace(n, ",", ".", 1), 64)
				if err != nil {
					continue
				}
				c.numbers = append(c.numbers, formatNumber(v))
				c.lengths = append(c.lengths, u.measure+" "+formatNumber(v*u.size))
			}
			if len(c.lengths) != len(nums) {
				continue
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
			s.claim(c, m[2], end)
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

// isUnitWord reports whether a run of letters can be a duration's unit or
// stand before one ("business"), its dot aside ("godz.").
func isUnitWord(w string) bool {
	_, _, ok := unitOf(w, "")
	_, dotted := units[strings.ToLower(w)+"."]
	return ok || dotted || workdayBefore[strings.ToLower(w)]
}
