package offline

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"google.golang.org/genai"

	"triage/internal/prompt"
)

// Function names the offline model knows how to drive.
const (
	fnCheckWarranty = "check_warranty"
	fnCreateTicket  = "create_ticket"
	fnSendEmail     = "send_email"
)

// turn is the offline model's answer to one request, before faults.
type turn struct {
	kind    string // "detection", "call" or "text"
	content *genai.Content
}

func (t *turn) candidate(index int32) *genai.Candidate {
	return &genai.Candidate{Content: t.content, FinishReason: genai.FinishReasonStop, Index: index}
}

func (t *turn) sendsEmail() bool {
	for _, p := range t.content.Parts {
		if p.FunctionCall != nil && p.FunctionCall.Name == fnSendEmail {
			return true
		}
	}
	return false
}

func textTurn(kind, text string) *turn {
	return &turn{kind: kind, content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}}
}

// answer decides the reply to req. It reads only the facts block, the
// scenario list of a detection prompt, the declared functions and the
// function responses; the customer text is used for nothing but word counts
// in detection, so instructions inside it cannot steer the model.
func answer(req *request) *turn {
	facts, user, found := findFacts(req.Contents)
	if enum := scenarioEnum(req.GenerationConfig); len(enum) > 0 {
		return detect(enum, facts, user)
	}
	if !found {
		return textTurn("text", "offline: the prompt has no facts block, so there is nothing the offline model can do.")
	}
	return nextStep(req, facts)
}

// findFacts returns the facts of the first user text part that has a facts
// block, and that part's text.
func findFacts(contents []*genai.Content) (prompt.Facts, string, bool) {
	var first string
	for _, c := range contents {
		if c == nil || (c.Role != "" && c.Role != genai.RoleUser) {
			continue
		}
		for _, p := range c.Parts {
			if p == nil || p.Text == "" {
				continue
			}
			if first == "" {
				first = p.Text
			}
			if f, err := prompt.ParseFacts(p.Text); err == nil {
				return f, p.Text, true
			}
		}
	}
	return prompt.Facts{}, first, false
}

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
// by shared distinct words (>= 4 letters, lowercase, Polish diacritics
// folded). The highest score wins, ties go to the earlier enum value; with
// no overlap at all it picks "out-of-scope" when offered, else the first.
func detect(enum []string, f prompt.Facts, user string) *turn {
	descs := scenarioDescriptions(user)
	msg := words(f.Subject + "\n" + prompt.Message(user))
	best, bestScore := "", 0
	var bestShared []string
	for _, name := range enum {
		var shared []string
		for w := range words(descs[name]) {
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
		best = enum[0]
		for _, name := range enum {
			if name == "out-of-scope" {
				best = name
			}
		}
		reason = fmt.Sprintf("offline: chosen by word overlap; no scenario description shares a word with the message, so %s was chosen by default", best)
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

// outcome is one function response from the history, with the arguments of
// the call it answers.
type outcome struct {
	name    string
	ok      bool
	result  map[string]any
	errCode string
	errMsg  string
	args    map[string]any
}

// str reads a string field of the result, falling back to the call args.
func (o outcome) str(key string) string {
	if s, ok := o.result[key].(string); ok && s != "" {
		return s
	}
	s, _ := o.args[key].(string)
	return s
}

// history collects the function calls and responses so far.
type history struct {
	calls   int
	results []outcome
}

func (h *history) named(name string) []outcome {
	var out []outcome
	for _, o := range h.results {
		if o.name == name {
			out = append(out, o)
		}
	}
	return out
}

func readHistory(contents []*genai.Content) *history {
	h := &history{}
	byID := map[string]*genai.FunctionCall{}
	byName := map[string][]*genai.FunctionCall{}
	answered := map[string]int{}
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if fc := p.FunctionCall; fc != nil {
				h.calls++
				if fc.ID != "" {
					byID[fc.ID] = fc
				}
				byName[fc.Name] = append(byName[fc.Name], fc)
			}
			if fr := p.FunctionResponse; fr != nil {
				call := byID[fr.ID]
				if call == nil {
					if k := answered[fr.Name]; k < len(byName[fr.Name]) {
						call = byName[fr.Name][k]
					}
				}
				answered[fr.Name]++
				o := envelope(fr.Name, fr.Response)
				if call != nil {
					o.args = call.Args
				}
				h.results = append(h.results, o)
			}
		}
	}
	return h
}

// envelope reads {"ok":true,"result":{...}} or
// {"ok":false,"error":{"code":..,"message":..}}; it also accepts the SDK's
// {"output":..} / {"error":..} convention.
func envelope(name string, resp map[string]any) outcome {
	o := outcome{name: name}
	errObj := resp["error"]
	if v, ok := resp["ok"].(bool); ok {
		o.ok = v
	} else {
		o.ok = errObj == nil
	}
	if r, ok := resp["result"].(map[string]any); ok {
		o.result = r
	} else if r, ok := resp["output"].(map[string]any); ok {
		o.result = r
	}
	switch e := errObj.(type) {
	case map[string]any:
		o.errCode, _ = e["code"].(string)
		o.errMsg, _ = e["message"].(string)
	case string:
		o.errMsg = e
	}
	if !o.ok && o.errCode == "" {
		o.errCode = "error"
	}
	return o
}

// declared lists the callable function names, honouring toolConfig
// (mode NONE disables calls; allowedFunctionNames narrows them).
func declared(req *request) map[string]bool {
	out := map[string]bool{}
	for _, t := range req.Tools {
		if t == nil {
			continue
		}
		for _, fd := range t.FunctionDeclarations {
			if fd != nil && fd.Name != "" {
				out[fd.Name] = true
			}
		}
	}
	if tc := req.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
		fcc := tc.FunctionCallingConfig
		if fcc.Mode == genai.FunctionCallingConfigModeNone {
			return map[string]bool{}
		}
		if len(fcc.AllowedFunctionNames) > 0 {
			allowed := map[string]bool{}
			for _, n := range fcc.AllowedFunctionNames {
				if out[n] {
					allowed[n] = true
				}
			}
			out = allowed
		}
	}
	return out
}

// nextStep is the fixed plan: check every serial, open a ticket for a
// valid warranty, send the reply, then stop.
func nextStep(req *request, f prompt.Facts) *turn {
	fns := declared(req)
	h := readHistory(req.Contents)
	call := func(calls ...*genai.FunctionCall) *turn {
		parts := make([]*genai.Part, len(calls))
		for i, c := range calls {
			c.ID = fmt.Sprintf("offline-call-%d", h.calls+i+1)
			parts[i] = &genai.Part{FunctionCall: c}
		}
		return &turn{kind: "call", content: &genai.Content{Role: genai.RoleModel, Parts: parts}}
	}

	checks := h.named(fnCheckWarranty)
	if fns[fnCheckWarranty] && len(checks) == 0 && len(f.SerialNumbers) > 0 {
		calls := make([]*genai.FunctionCall, len(f.SerialNumbers))
		for i, sn := range f.SerialNumbers {
			calls[i] = &genai.FunctionCall{Name: fnCheckWarranty, Args: map[string]any{"serial_number": sn}}
		}
		return call(calls...)
	}

	if fns[fnCreateTicket] && len(h.named(fnCreateTicket)) == 0 {
		for _, c := range checks {
			if c.ok && c.str("status") == "valid" && c.str("serial_number") != "" {
				return call(&genai.FunctionCall{Name: fnCreateTicket, Args: map[string]any{
					"serial_number":  c.str("serial_number"),
					"customer_email": f.From,
					"priority":       "normal",
				}})
			}
		}
	}

	if !fns[fnSendEmail] {
		return textTurn("text", "offline: send_email is not among the declared functions, so there is nothing more to do.")
	}
	sends := h.named(fnSendEmail)
	var failed []outcome
	for _, s := range sends {
		if s.ok {
			return textTurn("text", "Reply sent.")
		}
		failed = append(failed, s)
	}
	if len(failed) >= 2 {
		last := failed[len(failed)-1]
		return textTurn("text", fmt.Sprintf("offline: the reply could not be sent: send_email failed %d times (last error: %s %s). A person needs to answer this message.",
			len(failed), last.errCode, strings.TrimSpace(last.errMsg)))
	}
	// After a failure (e.g. recipient_not_allowed) the fix is always the
	// same: the trusted reply_to from the facts block.
	return call(&genai.FunctionCall{Name: fnSendEmail, Args: map[string]any{
		"to":      f.ReplyTo,
		"subject": replySubject(f.Subject),
		"body":    composeBody(f, h, fns),
	}})
}

// replySubject prefixes "Re: " once; an empty subject becomes "Re: zapytanie".
func replySubject(s string) string {
	s = strings.TrimSpace(s)
	for {
		lower := strings.ToLower(s)
		if strings.HasPrefix(lower, "re:") {
			s = strings.TrimSpace(s[3:])
			continue
		}
		break
	}
	if s == "" {
		return "Re: zapytanie"
	}
	return "Re: " + s
}
