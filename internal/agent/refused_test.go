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
