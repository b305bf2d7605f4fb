package agent_test

import (
	"context"
	"fmt"
	"testing"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// A hostile model asks for 20,000 calls in one turn: only the first
// MaxCallsPerTurn reach the tools, and the next request carries only those
// calls and their responses, plus one note of how many were refused unrun.
func TestCallsPerTurnCapped(t *testing.T) {
	const n = 20000
	parts := make([]map[string]any, n)
	for i := range parts {
		parts[i] = geminitest.Call(fmt.Sprintf("c%d", i), "check_warranty", map[string]any{"serial_number": "SN1"})
	}
	f := geminitest.New(t, geminitest.One(parts...), geminitest.One(geminitest.Text("done")))
	tools := &fakeTools{}
	a := newAgent(t, gemini(f), &sleeps{}, func(c *agent.Config) { c.MaxCallsPerTurn = 16 })
	res, err := a.Run(context.Background(), agent.Request{System: system, Prompt: prompt, Functions: functions}, tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.calls) != 16 {
		t.Errorf("tools ran %d calls, want 16", len(tools.calls))
	}
	if res.RefusedCalls != n-16 {
		t.Errorf("RefusedCalls = %d, want %d", res.RefusedCalls, n-16)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	calls, responses, note := 0, 0, false
	for _, c := range reqs[1].Contents {
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				calls++
			case p.FunctionResponse != nil:
				responses++
			case c.Role == "user" && p.Text != "":
				note = true
			}
		}
	}
	if calls != 16 || responses != 16 || !note {
		t.Errorf("second request: %d calls, %d responses, note %v; want 16, 16, true", calls, responses, note)
	}
}
