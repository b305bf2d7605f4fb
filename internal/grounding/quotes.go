package grounding

import (
	"strings"
	"unicode/utf8"
)

// A reply may repeat what the customer wrote when it marks the words as
// theirs: a quotation ("…", „…”, “…”, «…», »…«) whose opening mark follows,
// in the same sentence, a phrase that gives the words to the customer
// (attributions: "you wrote", "napisał Pan", "Sie schrieben", ...). A claim
// inside such a quotation is backed when the customer's own words state
// it; outside one, the customer's words back nothing. A quotation ends at
// its closing mark, at a blank line, or quoteReach bytes on. A text that
// starts with a reply's or a forward's prefix ("Re:", "Odp:", "AW:",
// "Fwd:"; a reply's subject) quotes the customer's subject on that line.
var replyPrefixes = []string{"re:", "odp:", "aw:", "antw:", "fwd:", "fw:", "wg:", "tr:", "rv:", "sv:", "vs:", "ynt:", "r:"}

// replyPrefix reports whether text starts with one of replyPrefixes, in
// any case.
func replyPrefix(text string) bool {
	for _, p := range replyPrefixes {
		if len(text) >= len(p) && strings.EqualFold(text[:len(p)], p) {
			return true
		}
	}
	return false
}

// attributions are the phrases, lower-cased, that give a quotation after
// them to the customer.
var attributions = readableList(
	// Polish
	"napisał", "napisała", "napisali", "napisało", "pisze pan", "pisze pani", "piszą państwo", "podał pan", "podała pani",
	"podali państwo", "pan podał", "pani podała", "państwo podali", "pan napisał", "pani napisała", "według pana", "według pani", "według państwa",
	"pana słowami", "pani słowami", "w pana wiadomości", "w pani wiadomości", "w państwa wiadomości", "cytując",
	// English
	"you wrote", "you write", "you said", "you say", "you mentioned", "you gave", "you stated", "you state",
	"your message", "your email", "your words", "according to you", "in your words", "you quoted",
	// German
	"sie schrieben", "sie schreiben", "sie haben geschrieben", "sie haben angegeben", "sie angegeben", "sie geschrieben", "sie gaben", "ihren worten",
	"laut ihnen", "ihrer nachricht", "ihrer e-mail", "ihrer angabe",
	// French, Spanish, Italian, Czech, Russian, Ukrainian, Estonian
	"vous avez écrit", "vous écrivez", "selon vous", "usted escribió", "escribió usted", "según usted",
	"ha scritto", "lei scrive", "secondo lei", "napsal jste", "napsala jste", "jste napsal", "jste napsala",
	"вы написали", "вы пишете", "ви написали", "ви пишете", "kirjutasite", "te kirjutate",
)

// readableList is each phrase in every form readableForms gives it.
func readableList(phrases ...string) []string {
	var out []string
	for _, p := range phrases {
		out = append(out, readableForms(p)...)
	}
	return out
}

// quoteMarks are the opening quotation marks and the closing marks of
// each (German closes „ with “, Polish with ”).
var quoteMarks = map[rune]string{'"': `"`, '„': "”“", '“': "”", '«': "»", '»': "«", '‚': "’‘"}

// quoteReach bounds a quotation; attributionReach how far before its
// opening mark the attribution may stand.
const (
	quoteReach       = 400
	attributionReach = 80
)

// quotedSpans are the quotations of text (as readable writes it) that
// give the words to the customer, each from its opening to its closing
// mark.
func quotedSpans(text string) [][2]int {
	var out [][2]int
	i := 0
	// A reply's subject "Re: ..." repeats the customer's: the line after
	// the prefix is their words.
	if rest := strings.TrimLeft(text, " "); replyPrefix(rest) {
		i = len(text) - len(rest)
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text) - i
		}
		out = append(out, [2]int{i, i + end})
		i += end
	}
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		closing, ok := quoteMarks[r]
		if !ok || !attributed(text[max(0, i-attributionReach):i]) {
			i += size
			continue
		}
		start := i
		i += size
		end := min(len(text), i+quoteReach)
		if j := strings.IndexAny(text[i:end], closing); j >= 0 {
			_, size := utf8.DecodeRuneInString(text[i+j:])
			end = i + j + size
		}
		if j := strings.Index(text[i:end], "\n\n"); j >= 0 {
			end = i + j
		}
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

// attributed reports whether the text before a quotation's opening mark
// ends in a sentence that gives the words to the customer.
func attributed(before string) bool {
	if k := strings.LastIndexAny(before, ".!?\n"); k >= 0 && k < len(before)-1 {
		before = before[k+1:]
	}
	low := strings.ToLower(before)
	for _, a := range attributions {
		if strings.Contains(low, a) {
			return true
		}
	}
	return false
}

// inSpans reports whether i lies in one of spans.
func inSpans(spans [][2]int, i int) bool {
	for _, sp := range spans {
		if i >= sp[0] && i < sp[1] {
			return true
		}
	}
	return false
}
