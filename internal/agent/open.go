// The opening turn: one model turn taken alone, before the loop, whose
// calls the caller answers (the turn that chooses an email's scenario).

package agent

import (
	"context"
	"fmt"

	"google.golang.org/genai"
)

// Opened is the model turn Open took.
type Opened struct {
	// Content is the chosen candidate's content, its calls capped at
	// Config.MaxCallsPerTurn (the excess dropped unrun, counted in
	// RefusedCalls).
	Content      *genai.Content
	ModelCalls   int // attempts, retries included
	Usage        Usage
	RefusedCalls int
}

// Calls returns the function calls of the turn, in order (never nil Args).
func (o Opened) Calls() []ToolCall {
	fcalls := functionCalls(o.Content)
	out := make([]ToolCall, len(fcalls))
	for i, fc := range fcalls {
		out[i] = ToolCall{Name: fc.Name, Args: fc.Args}
		if out[i].Args == nil {
			out[i].Args = map[string]any{}
		}
	}
	return out
}

// Open makes the first turn of req alone: one model call (retried like the
// loop's) under req's system instruction and declarations, which must call
// a function (function calling mode ANY). The usable candidate is chosen
// as Run chooses it; a response with none, or a model error, is an error
// (the Opened still counts the calls and the usage spent). The caller
// answers the calls and continues with Run, passing Opened.Turns as
// Request.Earlier.
func (a *Agent) Open(ctx context.Context, req Request) (Opened, error) {
	var o Opened
	first := genai.NewContentFromText(req.Prompt, genai.RoleUser)
	first.Parts = append(first.Parts, req.Parts...)
	resp, calls, err := a.generate(ctx, []*genai.Content{first}, func() *genai.GenerateContentConfig {
		cfg := a.turnConfig(req)
		if cfg.ToolConfig != nil {
			cfg.ToolConfig.FunctionCallingConfig.Mode = genai.FunctionCallingConfigModeAny
		}
		return cfg
	})
	o.ModelCalls, o.Usage = calls, UsageOf(resp)
	if err != nil {
		return o, err
	}
	cand, reason := choose(resp)
	if cand == nil {
		return o, fmt.Errorf("%w: %s", ErrInvalidResponse, reason)
	}
	content := cand.Content
	if content.Role == "" {
		content.Role = genai.RoleModel
	}
	o.Content, o.RefusedCalls = capCalls(content, a.cfg.MaxCallsPerTurn)
	return o, nil
}

// Turns is the opening turn and the user turn of its responses, for
// Request.Earlier: resps answers Calls in order (each echoing its call's
// ID); a failed call's arguments are cut as the loop cuts them.
func (o Opened) Turns(resps []Response) []*genai.Content {
	content := o.Content
	fcalls := functionCalls(content)
	parts := make([]*genai.Part, 0, len(fcalls)+1)
	failed := map[*genai.FunctionCall]bool{}
	for i, fc := range fcalls {
		r := Response{Err: &ToolError{Code: CodeNoResponse, Message: "no response for this call"}}
		if i < len(resps) {
			r = resps[i]
		}
		if !r.OK {
			failed[fc] = true
		}
		parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: r.Envelope()}})
	}
	if o.RefusedCalls > 0 {
		parts = append(parts, genai.NewPartFromText(fmt.Sprintf(refusedNote, o.RefusedCalls, len(fcalls))))
	}
	if len(failed) > 0 {
		c := *content
		c.Parts = append([]*genai.Part(nil), content.Parts...)
		content = &c
		keepRefused(content, failed)
	}
	return []*genai.Content{content, {Role: genai.RoleUser, Parts: parts}}
}

// earlier counts the model turns of turns and marks in called the
// functions whose responses there say ok.
func earlier(turns []*genai.Content, called map[string]bool) int {
	n := 0
	for _, c := range turns {
		if c == nil {
			continue
		}
		if c.Role == genai.RoleModel {
			n++
		}
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				if ok, _ := fr.Response["ok"].(bool); ok {
					called[fr.Name] = true
				}
			}
		}
	}
	return n
}
