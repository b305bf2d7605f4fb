package guard

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"triage"
	"triage/internal/message"
)

// SpamScore is a spam score header the receiving server writes and the
// score at which its message is spam (settings pipeline.spam.header and
// pipeline.spam.threshold): with Header "X-Spam-Score" and Threshold 5, a
// message carrying "X-Spam-Score: 7.3" is spam. The score is the number
// after "score=" when the value has one (SpamAssassin's X-Spam-Status),
// else the first number of the value (rspamd's "default: False [7.30 /
// 15.00]" scores 7.3). A zero SpamScore (no Header) adds nothing to the
// built-in verdicts.
type SpamScore struct {
	Header    string
	Threshold float64
}

// DefaultSpamThreshold is SpamAssassin's required score, the threshold of
// a configured spam header when none is set.
const DefaultSpamThreshold = 5.0

// CheckSpamHeader accepts "" or a header field name (RFC 5322 ftext).
func CheckSpamHeader(name string) error {
	if name == "" {
		return nil
	}
	for _, r := range name {
		if r <= ' ' || r > '~' || r == ':' {
			return fmt.Errorf("%q is not a header name (printable ASCII without spaces or ':')", name)
		}
	}
	return nil
}

// rspamdSpamActions are rspamd's actions (X-Rspamd-Action) that say spam;
// "no action", "greylist" and "soft reject" do not.
var rspamdSpamActions = map[string]bool{"reject": true, "add header": true, "add_header": true, "rewrite subject": true, "rewrite_subject": true}

// spam skips what the receiving mail server judged spam: X-Spam-Flag: YES
// and X-Spam-Status: Yes (SpamAssassin), X-Spam: Yes, X-Rspamd-Action of
// a spam action and X-Spamd-Result: default: True (rspamd), and the
// configured score header at or over its threshold (Config.Spam). Only a
// spam verdict counts: anyone can write these headers into a message, and
// one that marks itself spam only keeps itself from an answer, while a
// "No" verdict is never trusted to clear a message (a server's "Yes" wins
// over any number of them).
func spam(cfg Config, m *message.Message) (Verdict, bool) {
	for _, k := range []string{"X-Spam-Flag", "X-Spam"} {
		for _, v := range m.Header[k] {
			if t := token(v); t == "yes" || t == "true" {
				return skip(triage.ReasonSpam, k, v)
			}
		}
	}
	for _, v := range m.Header["X-Spam-Status"] {
		first, _, _ := strings.Cut(strings.TrimSpace(v), ",")
		if f := strings.Fields(first); len(f) > 0 && strings.EqualFold(f[0], "yes") {
			return skip(triage.ReasonSpam, "X-Spam-Status", firstLine(v))
		}
	}
	for _, v := range m.Header["X-Rspamd-Action"] {
		if rspamdSpamActions[strings.Join(strings.Fields(strings.ToLower(v)), " ")] {
			return skip(triage.ReasonSpam, "X-Rspamd-Action", v)
		}
	}
	for _, v := range m.Header["X-Spamd-Result"] {
		verdict, _, _ := strings.Cut(v, "[")
		if _, b, ok := strings.Cut(verdict, ":"); ok && strings.EqualFold(strings.TrimSpace(b), "true") {
			return skip(triage.ReasonSpam, "X-Spamd-Result", firstLine(v))
		}
	}
	if cfg.Spam.Header == "" {
		return Verdict{}, false
	}
	k := canonicalKey(cfg.Spam.Header)
	for _, v := range m.Header[k] {
		if score, ok := spamScore(v); ok && score >= cfg.Spam.Threshold {
			return skip(triage.ReasonSpam, k, firstLine(v)+fmt.Sprintf(" (score %g, threshold %g)", score, cfg.Spam.Threshold))
		}
	}
	return Verdict{}, false
}

var (
	scoreParam  = regexp.MustCompile(`(?i)\bscore=([-+]?[0-9]+(?:\.[0-9]+)?)`)
	firstNumber = regexp.MustCompile(`[-+]?[0-9]+(?:\.[0-9]+)?`)
)

// spamScore reads a score header's value: the number after "score=", else
// its first number.
func spamScore(v string) (float64, bool) {
	s := ""
	if mm := scoreParam.FindStringSubmatch(v); mm != nil {
		s = mm[1]
	} else {
		s = firstNumber.FindString(v)
	}
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// firstLine is a header value up to its first ";" or line break, where
// SpamAssassin and rspamd start listing their tests.
func firstLine(v string) string {
	if i := strings.IndexAny(v, "\r\n"); i >= 0 {
		v = v[:i]
	}
	if i := strings.Index(v, ";"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}
