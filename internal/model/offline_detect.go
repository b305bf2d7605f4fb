// Scenario detection: the scenario whose description shares the most word
// stems with the message.

package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"google.golang.org/genai"

	"triage/internal/prompt"
)

// scenarioEnum returns the enum of the "scenario" property of a JSON
// response schema (responseSchema or responseJsonSchema), or nil.
func scenarioEnum(gc *genai.GenerationConfig) []string {
	if gc == nil || !strings.HasPrefix(strings.ToLower(gc.ResponseMIMEType), "application/json") {
		return nil
	}
	if s := gc.ResponseSchema; s != nil {
		if p := s.Properties["scenario"]; p != nil && len(p.Enum) > 0 {
			return p.Enum
		}
	}
	root, _ := gc.ResponseJsonSchema.(map[string]any)
	props, _ := root["properties"].(map[string]any)
	sc, _ := props["scenario"].(map[string]any)
	raw, _ := sc["enum"].([]any)
	var out []string
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// detect scores each scenario description against the subject and message
// by shared distinct word stems (words of >= 4 letters, their first five;
// lowercase, Polish diacritics
// folded). The highest score wins, ties go to the earlier enum value; with
// no overlap at all it names no scenario, and detection falls back.
func detect(enum []string, f prompt.Facts, user string) *turn {
	descs := scenarioDescriptions(user)
	msg := stems(words(f.Subject + "\n" + prompt.Message(user)))
	best, bestScore := "", 0
	var bestShared []string
	for _, name := range enum {
		var shared []string
		for w := range stems(words(descs[name])) {
			if msg[w] {
				shared = append(shared, w)
			}
		}
		if len(shared) > bestScore {
			best, bestScore, bestShared = name, len(shared), shared
		}
	}
	var reason string
	if bestScore == 0 {
		// Nothing to go on: say so with a choice the detector cannot
		// use, so it takes the set's fallback scenario.
		best = ""
		reason = "offline: no scenario description shares a word with the message; the offline model cannot choose"
	} else {
		sort.Strings(bestShared)
		if len(bestShared) > 8 {
			bestShared = append(bestShared[:8], "...")
		}
		reason = fmt.Sprintf("offline: chosen by word overlap with the scenario description (%d shared words: %s)", bestScore, strings.Join(bestShared, ", "))
	}
	b, _ := json.Marshal(struct {
		Scenario string `json:"scenario"`
		Reason   string `json:"reason"`
	}{best, reason})
	return textTurn("detection", string(b))
}

// scenarioDescriptions reads the "- name: description" lines of a
// detection prompt (prompt.Detection), stopping at the facts block.
func scenarioDescriptions(user string) map[string]string {
	head, _, _ := strings.Cut(user, prompt.FactsHeader)
	out := map[string]string{}
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		name, desc, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		if _, seen := out[name]; !seen {
			out[name] = strings.TrimSpace(desc)
		}
	}
	return out
}

var polishFold = strings.NewReplacer("ą", "a", "ć", "c", "ę", "e", "ł", "l", "ń", "n", "ó", "o", "ś", "s", "ź", "z", "ż", "z")

// words returns the distinct lowercase words of at least four letters in s,
// with Polish diacritics folded.
func words(s string) map[string]bool {
	s = polishFold.Replace(strings.ToLower(s))
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) >= 4 {
			out[w] = true
		}
	}
	return out
}

// stemLen is how many leading letters two words must share to count as the
// same word (Polish and English inflect the end: gwarancja/gwarancji,
// dostawa/dostawę, deliveries/delivery).
const stemLen = 5

// stems maps each word to its first stemLen letters.
func stems(ws map[string]bool) map[string]bool {
	out := make(map[string]bool, len(ws))
	for w := range ws {
		if r := []rune(w); len(r) > stemLen {
			w = string(r[:stemLen])
		}
		out[w] = true
	}
	return out
}
