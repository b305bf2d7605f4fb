package message

import (
	"regexp"
	"strings"
)

var (
	// attributionEnd ends a reply attribution line: "... wrote:",
	// "W dniu ... pisze:", "Dnia ... napisał(a):".
	attributionEnd = regexp.MustCompile(`(?i)(wrote|writes|pisze|napisał\(a\)|napisał|napisała|napisal\(a\)|napisal)\s*:\s*$`)
	// attributionStart starts an attribution that may wrap over lines.
	attributionStart = regexp.MustCompile(`(?i)^\s*(on|w dniu|dnia)\s`)
	// separator lines introduce an original or forwarded message.
	separator = regexp.MustCompile(`(?i)^\s*[-=_]{2,}\s*(original message|forwarded message|wiadomość oryginalna|oryginalna wiadomość|wiadomość przekazana|przekazana wiadomość|treść oryginalna)\s*[-=_]{2,}\s*$|^\s*(begin forwarded message|początek przekazywanej wiadomości|początek przekazanej wiadomości)\s*:\s*$`)
	// outlookFrom and outlookSent form Outlook's quoted header block.
	outlookFrom = regexp.MustCompile(`(?i)^\s*\*?(from|od)\s*:\*?\s*\S`)
	outlookSent = regexp.MustCompile(`(?i)^\s*\*?(sent|wysłano|date|data)\s*:\*?\s*\S`)
	// rule is a line of underscores Outlook puts above its header block.
	rule       = regexp.MustCompile(`^\s*_{5,}\s*$`)
	quotedLine = regexp.MustCompile(`^\s*>`)
	manyBlanks = regexp.MustCompile(`\n{3,}`)
)

// splitQuoted separates the new text from quoted history: everything from the
// first attribution, original/forwarded-message separator or Outlook header
// block on is quoted, and so are ">" lines above it.
func splitQuoted(s string) (text, quoted string) {
	lines := strings.Split(s, "\n")
	cut, attribution := historyStart(lines)
	var t, q []string
	if cut >= 0 && attribution && blank(lines[:cut]) {
		// Bottom-posted reply: the attribution heads ">" lines with the
		// answer below or between them; only the attribution and ">" lines
		// are history.
		q = append(q, lines[cut])
		for _, l := range lines[cut+1:] {
			if quotedLine.MatchString(l) {
				q = append(q, l)
			} else {
				t = append(t, l)
			}
		}
		return tidy(t), tidy(q)
	}
	head := lines
	if cut >= 0 {
		head = lines[:cut]
	}
	for _, l := range head {
		if quotedLine.MatchString(l) {
			q = append(q, l)
		} else {
			t = append(t, l)
		}
	}
	if cut >= 0 {
		q = append(q, lines[cut:]...)
	}
	return tidy(t), tidy(q)
}

// historyStart returns the index of the first line that starts quoted
// history (-1 when none) and whether it is a reply attribution.
func historyStart(lines []string) (int, bool) {
	for i, l := range lines {
		if separator.MatchString(l) {
			return i, false
		}
		if outlookFrom.MatchString(l) && outlookBlock(lines[i+1:]) {
			if i > 0 && rule.MatchString(lines[i-1]) {
				return i - 1, false
			}
			return i, false
		}
		if isAttribution(lines, i) {
			return i, true
		}
	}
	return -1, false
}

// outlookBlock reports whether a Sent:/Wysłano:/Date: line follows a From:
// line closely, as in Outlook's quoted header block.
func outlookBlock(next []string) bool {
	for j, l := range next {
		if j >= 4 {
			break
		}
		if outlookSent.MatchString(l) {
			return true
		}
	}
	return false
}

// isAttribution reports whether lines[i] begins a reply attribution, which
// may wrap onto up to two more lines when it starts with On/W dniu/Dnia.
func isAttribution(lines []string, i int) bool {
	l := lines[i]
	if quotedLine.MatchString(l) || len(l) > 300 {
		return false
	}
	if attributionEnd.MatchString(l) {
		// "My colleague wrote:" in prose is not an attribution; a real one
		// carries a date, an address or the On/W dniu/Dnia opening.
		return attributionStart.MatchString(l) || strings.ContainsAny(l, "@0123456789")
	}
	if !attributionStart.MatchString(l) {
		return false
	}
	joined := l
	for j := i + 1; j < len(lines) && j <= i+2; j++ {
		if strings.TrimSpace(lines[j]) == "" || quotedLine.MatchString(lines[j]) {
			return false
		}
		joined += " " + lines[j]
		if attributionEnd.MatchString(joined) {
			return true
		}
	}
	return false
}

func blank(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// tidy joins lines, drops trailing rules and collapses runs of blank lines.
func tidy(lines []string) string {
	for len(lines) > 0 {
		last := strings.TrimSpace(lines[len(lines)-1])
		if last == "" || rule.MatchString(last) {
			lines = lines[:len(lines)-1]
			continue
		}
		break
	}
	s := strings.Join(lines, "\n")
	s = manyBlanks.ReplaceAllString(s, "\n\n")
	return strings.Trim(s, "\n")
}
