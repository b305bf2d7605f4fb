package dispatcher

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"triage/internal/agent"
	"triage/internal/instructions"
)

// CodeWrongLanguage refuses a reply that is not in one language: its body
// is clearly in another language than the reply's (Options.Language) or
// the inbox's default, or a line of it is clearly in a third language, or
// it pastes a function result's words written in a third language (the
// manuals server's English "No manual section matches" in a German reply
// of a Polish inbox). Words in the inbox's default language (a product's
// name, a manual's heading with its translation) are let through: they are
// the shop's own.
const CodeWrongLanguage agent.ErrorCode = "wrong_language"

// pastedRun is how many consecutive words of a function result in another
// language make a reply a paste of it; lineWords how many words with a
// letter a line the model wrote needs before its own language counts (a
// sentence, not a product name).
const (
	pastedRun = 4
	lineWords = 10
)

// oneLanguage checks the body of a call of the builtin send_email when
// Config.Language is set: one reply, one language, and that language the
// reply's or the inbox's default (CodeWrongLanguage). The pipeline signs
// the reply in the language its body is in.
func (s *Session) oneLanguage(t *instructions.Tool, args map[string]any) error {
	det := s.d.lang
	body, _ := args["body"].(string)
	if det == nil || t.Builtin != FuncSendEmail || strings.TrimSpace(body) == "" {
		return nil
	}
	want, def := cmp.Or(s.opts.Language, det.Default()), det.Default()
	allowed := want
	if def != want {
		allowed += " (the customer's) or " + def + " (the inbox's default)"
	}
	refuse := func(format string, a ...any) error {
		return &Error{Code: CodeWrongLanguage, Refused: true, Message: fmt.Sprintf(format, a...) +
			"; write the whole reply in " + allowed + ", translating what a function returned, and call send_email again"}
	}
	// A neighbour (a language told apart only to be declined) counts for a
	// whole body of a paragraph or more; a line or a function result counts
	// only in a configured language: a line of Spanish can read as
	// Portuguese.
	whole := det.Judge(body)
	whole.Clear = whole.Clear && (whole.Sure || letterWords(body) >= 2*lineWords)
	if whole.Clear && whole.Guess != want && whole.Guess != def {
		return refuse("the reply is written in %s", whole.Guess)
	}
	lang := want
	if whole.Clear {
		lang = whole.Guess
	}
	var results []string
	for _, c := range s.done {
		results = append(results, stringsOf(c.result.Value)...)
	}
	for _, line := range strings.Split(body, "\n") {
		if letterWords(line) < lineWords || quoted(line, results) {
			continue
		}
		if r := det.Judge(line); r.Sure && r.Code != lang && r.Code != def {
			return refuse("the reply is in %s, but the line %q is in %s", lang, clipQuote(line), r.Code)
		}
	}
	words := " " + strings.Join(wordsOf(body), " ") + " "
	for _, c := range s.done {
		for _, text := range stringsOf(c.result.Value) {
			if letterWords(text) < lineWords {
				continue // a status too short to tell its language
			}
			run := sharedRun(words, wordsOf(text))
			if run == "" {
				continue // nothing of it pasted: not judged
			}
			if r := det.Judge(text); r.Sure && r.Code != lang && r.Code != def {
				return refuse("the reply pastes %s's words in %s (%q) into a reply in %s", c.name, r.Code, run, lang)
			}
		}
	}
	return nil
}

// sharedRun is the first pastedRun words in a row of w that words (a
// text's words, space-separated and -enclosed) holds, "" when none.
func sharedRun(words string, w []string) string {
	for i := 0; i+pastedRun <= len(w); i++ {
		if run := strings.Join(w[i:i+pastedRun], " "); strings.Contains(words, " "+run+" ") {
			return run
		}
	}
	return ""
}

// wordsOf is text's words, lower-cased: runs of letters and digits.
func wordsOf(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// letterWords counts the words of line that have a letter.
func letterWords(line string) int {
	n := 0
	for _, w := range wordsOf(line) {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			n++
		}
	}
	return n
}

// quoted reports whether line is a line of one of the function results
// (a manual's heading, say): those are judged by their result's language.
func quoted(line string, results []string) bool {
	line = strings.TrimSpace(line)
	for _, r := range results {
		if strings.Contains(r, line) {
			return true
		}
	}
	return false
}

// stringsOf is every string of a function result, nested ones included.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, stringsOf(v[k])...)
		}
		return out
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, stringsOf(e)...)
		}
		return out
	}
	return nil
}

// clipQuote is line trimmed and cut to 80 bytes for an error message.
func clipQuote(line string) string {
	line = strings.TrimSpace(line)
	if len(line) > 80 {
		line = strings.ToValidUTF8(line[:80], "") + "..."
	}
	return line
}
