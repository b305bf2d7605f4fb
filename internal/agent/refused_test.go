package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// TestFinalRefusedThrice: the third failure of the final function with one
// code ends the loop with ErrFinalRefused, naming the code: the model is
// not asked a fourth time.
func TestFinalRefusedThrice(t *testing.T) {
	wrong := geminitest.One(geminitest.Call("s", "send_email", map[string]any{"to": "stranger@example.net", "body": "hi"}))
	f := geminitest.New(t, wrong, wrong, wrong, wrong, wrong)
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	res, err := a.Run(context.Background(), agent.Request{System: system, Prompt: prompt, Functions: functions, FinalFunction: "send_email"}, &fakeTools{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Stop, agent.ErrFinalRefused) || !strings.Contains(res.Stop.Error(), "recipient_not_allowed") || res.ModelCalls != agent.MaxFinalRefusals || f.Left() != 2 {
		t.Errorf("stop %v after %d model calls (%d steps left); want ErrFinalRefused after %d", res.Stop, res.ModelCalls, f.Left(), agent.MaxFinalRefusals)
	}
}

// TestRefusedArgumentsCut: a refused call's megabyte argument goes back to
// the model on the next turn cut to its beginning and marked, the call
// otherwise as the model made it; a call that succeeded keeps its
// arguments whole.
func TestRefusedArgumentsCut(t *testing.T) {
	huge := strings.Repeat("ab", 1<<20)
	f := geminitest.New(t,
		geminitest.One(
			geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN1"}),
			geminitest.Call("s1", "send_email", map[string]any{"to": "stranger@example.net", "body": huge})),
		geminitest.One(geminitest.Call("s2", "send_email", map[string]any{"to": customer, "body": "ok"})),
	)
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	res, err := a.Run(context.Background(), agent.Request{System: system, Prompt: prompt, Functions: functions, FinalFunction: "send_email"}, &fakeTools{})
	if err != nil || !res.FinalCalled {
		t.Fatalf("Run: %+v, %v", res, err)
	}
	bodies := f.Bodies()
	if n := len(bodies[1]); n > agent.MaxRefusedArgBytes+16<<10 {
		t.Errorf("the second request is %d bytes: the refused argument went back whole", n)
	}
	turn := f.Requests()[1].Contents[1]
	got, _ := turn.Parts[1].FunctionCall.Args["body"].(string)
	if turn.Parts[1].FunctionCall.ID != "s1" || !strings.HasPrefix(got, "abab") || !strings.Contains(got, "[... cut: ") {
		t.Errorf("refused call in the history: %s %.60q...%q", turn.Parts[1].FunctionCall.ID, got, got[max(0, len(got)-40):])
	}
	if s := turn.Parts[0].FunctionCall.Args["serial_number"]; s != "SN1" {
		t.Errorf("the call that succeeded: serial_number %v", s)
	}
}
