// Scenario detection: the scenario whose description shares the most word
// stems with the message, chosen in an email's opening turn.

package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"google.golang.org/genai"

	"triage/internal/instructions"
	"triage/internal/prompt"
)

// pick scores each scenario of enum by its description in descs against
// the subject and message, by shared distinct word stems (words of >= 4
// letters, their first five; lowercase, Polish diacritics folded). The
// highest score wins, ties go to the earlier enum value; with no overlap
// at all it names no scenario ("", and the reason says so), and detection
// falls back.
func pick(enum []string, descs map[string]string, f prompt.Facts, user string) (string, string) {
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
	if bestScore == 0 {
		// Nothing to go on: say so with a choice the detector cannot
		// use, so it takes the set's fallback scenario.
		return "", "offline: no scenario description shares a word with the message; the offline model cannot choose"
	}
	sort.Strings(bestShared)
	if len(bestShared) > 8 {
		bestShared = append(bestShared[:8], "...")
	}
	return best, fmt.Sprintf("offline: chosen by word overlap with the scenario description (%d shared words: %s)", bestScore, strings.Join(bestShared, ", "))
}

// opening answers the first turn of an email whose scenario the rules left
// open (prompt.Opening, a declared choose_scenario): pick's choice among
// the declaration's enum, by the descriptions of the system instruction;
// and beside it, when the chosen scenario (from set) starts with calls to
// functions declared in this turn, those calls, as its first turn would
// make them.
func opening(req *geminiRequest, f prompt.Facts, user string, set *instructions.Scenarios) *turn {
	var chooser *genai.FunctionDeclaration
	decls := declarations(req)
	for _, d := range decls {
		if d.Name == prompt.ChooseScenario {
			chooser = d
		}
	}
	props, _ := schema(chooser)
	var enum []string
	if p, ok := props["scenario"].(map[string]any); ok {
		raw, _ := p["enum"].([]any)
		for _, v := range raw {
			if s, ok := v.(string); ok {
				enum = append(enum, s)
			}
		}
	}
	var system string
	if si := req.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			if p != nil {
				system += p.Text
			}
		}
	}
	name, reason := pick(enum, scenarioDescriptions(system), f, user)
	parts := []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "offline-choose-1", Name: prompt.ChooseScenario,
		Args: map[string]any{"scenario": name, "reason": reason}}}}
	var sc *instructions.Scenario
	if set != nil && name != "" {
		sc = set.Get(name)
	}
	if sc != nil {
		// The scenario's own first turn, from its declarations: kept when
		// every call it makes is declared here (a look-up).
		own := &genai.Tool{}
		for _, fn := range sc.Functions {
			own.FunctionDeclarations = append(own.FunctionDeclarations, &genai.FunctionDeclaration{Name: fn.Name, Description: fn.Description, ParametersJsonSchema: fn.Parameters})
		}
		first := *req
		first.Tools, first.ToolConfig = []*genai.Tool{own}, nil
		f.Scenario = name
		here := declared(req)
		if t := nextStep(&first, f, sc); t.kind == "call" && !slices.ContainsFunc(t.content.Parts, func(p *genai.Part) bool {
			return p.FunctionCall == nil || !here[p.FunctionCall.Name]
		}) {
			parts = append(parts, t.content.Parts...)
		}
	}
	return &turn{kind: "opening", content: &genai.Content{Role: genai.RoleModel, Parts: parts}}
}

// scenarioDescriptions reads the "- name: description" lines of an
// opening turn's system instruction (prompt.Opening), stopping at a facts
// block.
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
