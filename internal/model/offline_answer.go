// The offline model's answer to one request: the opening turn's choice of
// scenario, the next function call, or the closing text, read from the
// declarations and the history.

package model

import (
	"fmt"
	"strings"

	"google.golang.org/genai"

	"triage/internal/instructions"
	"triage/internal/prompt"
)

// turn is the offline model's answer to one request, before faults.
type turn struct {
	kind    string // "opening", "call" or "text"
	content *genai.Content
}

func (t *turn) candidate(index int32) *genai.Candidate {
	return &genai.Candidate{Content: t.content, FinishReason: genai.FinishReasonStop, Index: index}
}

// sendsReply reports whether the turn calls a reply function (one with a
// "to" argument).
func (t *turn) sendsReply() bool {
	for _, p := range t.content.Parts {
		if p.FunctionCall != nil && p.FunctionCall.Args["to"] != nil {
			return true
		}
	}
	return false
}

func textTurn(kind, text string) *turn {
	return &turn{kind: kind, content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}}
}

// answer decides the reply to req. It reads only the facts block, the
// scenario list of an opening turn, the declared functions and the
// function responses; the customer text is used for nothing but word counts
// in the opening turn's choice, so instructions inside it cannot steer the
// model.
func answer(req *geminiRequest, set *instructions.Scenarios) *turn {
	facts, user, found := findFacts(req.Contents)
	if !found {
		return textTurn("text", "offline: the prompt has no facts block, so there is nothing the offline model can do.")
	}
	if declared(req)[prompt.ChooseScenario] {
		return opening(req, facts, user, set)
	}
	var sc *instructions.Scenario
	if set != nil {
		sc = set.Get(facts.Scenario)
	}
	return nextStep(req, facts, sc)
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

// declared lists the callable function names, honouring toolConfig
// (mode NONE disables calls; allowedFunctionNames narrows them).
func declared(req *geminiRequest) map[string]bool {
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

// nextStep follows whatever the scenario declares, in declaration order:
// every function but the reply runs once its arguments can be filled from
// the facts (a function taking serial_number runs for each serial, a later
// one only for a serial whose earlier results were positive), then the
// reply function (the one with to and body) sends what the results say.
func nextStep(req *geminiRequest, f prompt.Facts, sc *instructions.Scenario) *turn {
	decls := declarations(req)
	h := readHistory(req.Contents)
	h.addLookups(f.Lookups)
	call := func(calls ...*genai.FunctionCall) *turn {
		parts := make([]*genai.Part, len(calls))
		for i, c := range calls {
			c.ID = fmt.Sprintf("offline-call-%d", h.calls+i+1)
			parts[i] = &genai.Part{FunctionCall: c}
		}
		return &turn{kind: "call", content: &genai.Content{Role: genai.RoleModel, Parts: parts}}
	}

	reply := replyFunction(decls)
	keyword := significantWord(f.Subject, prompt.Message(firstUserText(req.Contents)))
	serialUsers := 0
	for _, d := range decls {
		if d == reply {
			continue
		}
		bySerial := takes(d, "serial_number")
		if bySerial {
			serialUsers++
		}
		// A look-up the shop ran before the first turn is not asked for
		// again; one that takes a serial is asked only for the serials
		// it has no answer for.
		done := h.named(d.Name)
		if len(done) > 0 && (!bySerial || !prefetchedOnly(done)) {
			continue
		}
		if bySerial {
			var calls []*genai.FunctionCall
			for _, sn := range f.SerialNumbers {
				if answeredFor(done, sn) {
					continue
				}
				if serialUsers > 1 && !positive(h, sn) {
					continue
				}
				if args, ok := fill(d, f, sn, keyword); ok {
					calls = append(calls, &genai.FunctionCall{Name: d.Name, Args: args})
				}
				if serialUsers > 1 {
					break // one follow-up (a ticket) per email, for the first eligible serial
				}
			}
			if len(calls) > 0 {
				return call(calls...)
			}
			continue
		}
		if args, ok := fill(d, f, "", keyword); ok {
			return call(&genai.FunctionCall{Name: d.Name, Args: args})
		}
	}

	if reply == nil {
		return textTurn("text", "offline: no declared function takes to and body, so the offline model has no way to reply.")
	}
	sends := h.named(reply.Name)
	var failed []outcome
	for _, s := range sends {
		if s.ok {
			return textTurn("text", "Reply sent.")
		}
		failed = append(failed, s)
	}
	if len(failed) >= 2 {
		last := failed[len(failed)-1]
		return textTurn("text", fmt.Sprintf("offline: the reply could not be sent: %s failed %d times (last error: %s %s). A person needs to answer this message.",
			reply.Name, len(failed), last.errCode, strings.TrimSpace(last.errMsg)))
	}
	// After a failure (e.g. recipient_not_allowed) the fix is always the
	// same: the trusted reply_to from the facts block.
	args, _ := fill(reply, f, "", keyword)
	args["body"] = composeBody(f, h, decls, reply, sc)
	declareCommitments(args, reply, h)
	return call(&genai.FunctionCall{Name: reply.Name, Args: args})
}
