package mail

import (
	"regexp"
	"strings"
)

// replyPrefix matches one reply or forward marker at the start of a subject
// as mail clients write them in many languages: Re, RE, Re[2], Re(3), Odp
// (Polish), AW/Antwort (German), SV (Nordic), VS (Finnish), Antw (Dutch), R
// (Italian), Ynt (Turkish), with an optional counter, each followed by a
// colon (ASCII or full-width). Forward markers are kept.
var replyPrefix = regexp.MustCompile(`(?i)^\s*(?:re|aw|sv|vs|odp|antw|antwort|ynt|atb|odg|r)\s*(?:\[\d+\]|\(\d+\)|\^\d+)?\s*[:：]\s*`)

// ReplySubject returns the subject of a reply: every leading reply marker
// ("Re:", "RE:", "Odp:", "AW:", "SV:", "Re[2]:", ... in any mix and number)
// collapsed into one "Re: " in front of the rest. An empty rest gives "Re:".
func ReplySubject(subject string) string {
	s := strings.TrimSpace(subject)
	for {
		loc := replyPrefix.FindStringIndex(s)
		if loc == nil || loc[1] == 0 {
			break
		}
		s = strings.TrimSpace(s[loc[1]:])
	}
	if s == "" {
		return "Re:"
	}
	return "Re: " + s
}
