package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	embedded "triage/instructions"
	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/model"
	"triage/internal/prompt"
	"triage/internal/testkit/geminitest"
	"triage/internal/testkit/openaitest"
)

const customer = "customer@example.com"

var functions = []*genai.FunctionDeclaration{
	{Name: "check_warranty", Description: "Look up a serial number's warranty.", ParametersJsonSchema: map[string]any{
		"type": "object", "properties": map[string]any{"serial_number": map[string]any{"type": "string"}}, "required": []any{"serial_number"}}},
	{Name: "create_ticket", Description: "Open a ticket.", ParametersJsonSchema: map[string]any{
		"type": "object", "properties": map[string]any{"summary": map[string]any{"type": "string"}}, "required": []any{"summary"}}},
	{Name: "send_email", Description: "Send the reply.", ParametersJsonSchema: map[string]any{
		"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}}, "required": []any{"to", "body"}}},
}

// desk answers calls like the dispatcher (envelopes, refusals) and records
// them.
type desk struct {
	mu    sync.Mutex
	calls []string
}

func (d *desk) StartTurn()  {}
func (d *desk) Halt() error { return nil }

func (d *desk) Call(ctx context.Context, name string, args map[string]any) agent.Response {
	b, _ := json.Marshal(args)
	d.mu.Lock()
	d.calls = append(d.calls, name+" "+string(b))
	d.mu.Unlock()
	fail := func(code agent.ErrorCode) agent.Response { return agent.Failed(code, string(code)) }
	switch name {
	case "check_warranty":
		if s, _ := args["serial_number"].(string); s == "" {
			return fail("invalid_args")
		}
		return agent.Succeeded(map[string]any{"status": "valid", "expiration_date": "2027-05-01"})
	case "create_ticket":
		return agent.Succeeded(map[string]any{"ticket_id": "TKT-000001"})
	case "send_email":
		if args["to"] != customer {
			return fail("recipient_not_allowed")
		}
		return agent.Succeeded(map[string]any{"status": "sent"})
	}
	return fail("unknown_function")
}

// A turn is one scripted model answer, written once and played by both
// fakes in their own wire format.
type turn struct {
	calls   []scriptedCall
	text    string
	status  int  // an HTTP error with this status (429: retry in 2 s)
	refusal bool // the model declines by policy
}

// scriptedCall is one function call of a scripted turn.
type scriptedCall struct {
	id, name string
	args     map[string]any
}

func geminiSteps(turns []turn) []geminitest.Step {
	var steps []geminitest.Step
	for _, t := range turns {
		switch {
		case t.status != 0:
			steps = append(steps, geminitest.Step{Status: t.status, Body: fmt.Sprintf(
				`{"error":{"code":%d,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}`, t.status)})
		case t.refusal:
			steps = append(steps, geminitest.Reply(geminitest.Cand("SAFETY")))
		default:
			var parts []map[string]any
			if t.text != "" {
				parts = append(parts, geminitest.Text(t.text))
			}
			for _, c := range t.calls {
				parts = append(parts, geminitest.Call(c.id, c.name, c.args))
			}
			steps = append(steps, geminitest.One(parts...))
		}
	}
	return steps
}

func openaiSteps(turns []turn) []openaitest.Step {
	var steps []openaitest.Step
	for _, t := range turns {
		switch {
		case t.status != 0:
			s := openaitest.Error(t.status, "Rate limit reached", "rate_limit_exceeded")
			s.Header = map[string]string{"Retry-After": "2"}
			steps = append(steps, s)
		case t.refusal:
			steps = append(steps, openaitest.Refusal("I can't help with that."))
		case len(t.calls) > 0:
			var cs []openaitest.Call
			for _, c := range t.calls {
				cs = append(cs, openaitest.Call{ID: c.id, Name: c.name, Args: c.args})
			}
			steps = append(steps, openaitest.Calls(cs...))
		default:
			steps = append(steps, openaitest.Text(t.text))
		}
	}
	return steps
}

var (
	check = scriptedCall{"c1", "check_warranty", map[string]any{"serial_number": "SN1"}}
	send  = scriptedCall{"s1", "send_email", map[string]any{"to": customer, "body": "Valid until 2027-05-01."}}
)

// outcome is what both providers must agree on.
type outcome struct {
	Turns, ModelCalls     int
	FinalCalled, Degraded bool
	Stop                  string
	Calls                 []string
	Sleeps                []time.Duration
}

// TestAgentScenariosBothProviders: the same agent scenarios end the same
// way through Gemini (the real genai SDK against a loopback Gemini) and
// through Chat Completions (this package against a loopback OpenAI-style
// server).
func TestAgentScenariosBothProviders(t *testing.T) {
	const sendCall = `send_email {"body":"Valid until 2027-05-01.","to":"customer@example.com"}`
	tests := []struct {
		name  string
		turns []turn
		want  outcome
	}{
		{"tool call then reply", []turn{{calls: []scriptedCall{check}}, {calls: []scriptedCall{send}}},
			outcome{Turns: 2, ModelCalls: 2, FinalCalled: true, Calls: []string{`check_warranty {"serial_number":"SN1"}`, sendCall}}},
		{"several calls in a turn", []turn{
			{text: "Checking both.", calls: []scriptedCall{check, {"c2", "check_warranty", map[string]any{"serial_number": "SN2"}}, {"t1", "create_ticket", map[string]any{"summary": "two devices"}}}},
			{calls: []scriptedCall{send}}},
			outcome{Turns: 2, ModelCalls: 2, FinalCalled: true, Calls: []string{
				`check_warranty {"serial_number":"SN1"}`, `check_warranty {"serial_number":"SN2"}`, `create_ticket {"summary":"two devices"}`, sendCall}}},
		{"bad arguments are refused and corrected", []turn{
			{calls: []scriptedCall{{"c0", "check_warranty", map[string]any{"serial_number": ""}}}},
			{calls: []scriptedCall{{"s0", "send_email", map[string]any{"to": "attacker@evil.example", "body": "x"}}}},
			{calls: []scriptedCall{check}}, {calls: []scriptedCall{send}}},
			outcome{Turns: 4, ModelCalls: 4, FinalCalled: true, Calls: []string{
				`check_warranty {"serial_number":""}`, `send_email {"body":"x","to":"attacker@evil.example"}`, `check_warranty {"serial_number":"SN1"}`, sendCall}}},
		{"a 429 is retried after the server's delay", []turn{{status: 429}, {calls: []scriptedCall{check}}, {calls: []scriptedCall{send}}},
			outcome{Turns: 2, ModelCalls: 3, FinalCalled: true, Calls: []string{`check_warranty {"serial_number":"SN1"}`, sendCall}, Sleeps: []time.Duration{2 * time.Second}}},
		{"a refusal by policy is retried once, then the loop stops", []turn{{refusal: true}, {refusal: true}},
			outcome{ModelCalls: 2, Degraded: true, Stop: agent.ErrInvalidResponse.Error()}},
	}
	providers := []struct {
		name  string
		model func(t *testing.T, turns []turn) (agent.Model, func() int)
	}{
		{"gemini", func(t *testing.T, turns []turn) (agent.Model, func() int) {
			srv := geminitest.New(t, geminiSteps(turns)...)
			return &agent.Gemini{Client: srv.Client()}, srv.Left
		}},
		{"openai", func(t *testing.T, turns []turn) (agent.Model, func() int) {
			srv := openaitest.New(t, openaiSteps(turns)...)
			c, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.BaseURL(), APIKey: openaitest.APIKey})
			if err != nil {
				t.Fatal(err)
			}
			return c, srv.Left
		}},
	}
	for _, tt := range tests {
		for _, p := range providers {
			t.Run(tt.name+"/"+p.name, func(t *testing.T) {
				m, left := p.model(t, tt.turns)
				var mu sync.Mutex
				var sleeps []time.Duration
				a, err := agent.New(agent.Config{Model: m, ModelName: "test-model", RetryBase: 100 * time.Millisecond, RetryMax: 5 * time.Second,
					Sleep: func(ctx context.Context, d time.Duration) error {
						mu.Lock()
						sleeps = append(sleeps, d)
						mu.Unlock()
						return nil
					}})
				if err != nil {
					t.Fatal(err)
				}
				d := &desk{}
				res, err := a.Run(context.Background(), agent.Request{System: "You are the warranty desk.", Prompt: "My device SN1 broke.",
					Functions: functions, FinalFunction: "send_email"}, d)
				if err != nil {
					t.Fatal(err)
				}
				got := outcome{Turns: res.Turns, ModelCalls: res.ModelCalls, FinalCalled: res.FinalCalled, Degraded: res.Degraded, Calls: d.calls, Sleeps: sleeps}
				if res.Stop != nil {
					got.Stop = agent.ErrInvalidResponse.Error()
					if !errors.Is(res.Stop, agent.ErrInvalidResponse) {
						got.Stop = res.Stop.Error()
					}
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if n := left(); n != 0 {
					t.Errorf("%d scripted answers not used", n)
				}
			})
		}
	}
}

// TestOpeningThroughOpenAI: the opening turn of an email the rules cannot
// place runs through Chat Completions: choose_scenario goes out as a tool
// with the scenarios' enum, a call is required (tool_choice required), and
// the model's choice comes back as the turn's call.
func TestOpeningThroughOpenAI(t *testing.T) {
	srv := openaitest.New(t, openaitest.Calls(openaitest.Call{ID: "c0", Name: prompt.ChooseScenario, Args: map[string]any{"scenario": "out-of-scope", "reason": "A marketing offer."}}))
	c, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.BaseURL(), APIKey: openaitest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: c, ModelName: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	set, err := instructions.LoadScenarios(embedded.FS, []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"})
	if err != nil {
		t.Fatal(err)
	}
	var cands []prompt.Candidate
	var enum []any
	for _, sc := range set.Scenarios {
		if !sc.FollowUp {
			cands = append(cands, prompt.Candidate{Choice: prompt.Choice{Name: sc.Name, Description: sc.Description}})
			enum = append(enum, sc.Name)
		}
	}
	facts := prompt.Facts{From: "a@example.com", ReplyTo: "a@example.com", Subject: "Oferta", Language: "pl"}
	o, err := a.Open(context.Background(), agent.Request{
		System: prompt.Opening(cands),
		Prompt: prompt.User(facts, "Dzień dobry, oferujemy pozycjonowanie stron.", ""),
		Functions: []*genai.FunctionDeclaration{{Name: prompt.ChooseScenario, Description: "Choose the scenario.",
			ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{
				"scenario": map[string]any{"type": "string", "enum": enum}}, "required": []any{"scenario"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls := o.Calls(); len(calls) != 1 || calls[0].Name != prompt.ChooseScenario || calls[0].Args["scenario"] != "out-of-scope" {
		t.Fatalf("opening calls %+v", calls)
	}
	req := srv.Requests()[0]
	fn, _ := req.Tools[0]["function"].(map[string]any)
	params, _ := fn["parameters"].(map[string]any)
	props, _ := params["properties"].(map[string]any)
	sc, _ := props["scenario"].(map[string]any)
	if req.ToolChoice != "required" || fn["name"] != prompt.ChooseScenario || len(sc["enum"].([]any)) != len(enum) || req.ResponseFormat != nil {
		t.Errorf("request: tool_choice %q, tool %v", req.ToolChoice, fn)
	}
}
