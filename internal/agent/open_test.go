package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// TestOpenThenRun: Open takes one turn that must call a function (mode
// ANY), its calls answered by the caller; Run goes on from it (Earlier),
// sends it after the first user turn, and counts it against MaxTurns.
func TestOpenThenRun(t *testing.T) {
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("o1", "choose", map[string]any{"x": "a"}), geminitest.Call("o2", "check_warranty", map[string]any{"serial_number": "SN-1"})),
		geminitest.One(geminitest.Text("thinking")),
	)
	a := newAgent(t, &agent.Gemini{Client: f.Client()}, &sleeps{}, func(c *agent.Config) { c.MaxTurns = 2 })
	o, err := a.Open(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range o.Calls() {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"choose", "check_warranty"}, names); diff != "" || o.ModelCalls != 1 || o.Usage.Prompt == 0 {
		t.Errorf("opened calls (-want +got):\n%s; %d model calls, usage %+v", diff, o.ModelCalls, o.Usage)
	}
	earlier := o.Turns([]agent.Response{agent.Succeeded(map[string]any{"x": "a"}), agent.Failed("invalid_args", "no")})
	res, err := a.Run(context.Background(), agent.Request{System: system, Prompt: prompt, Functions: functions, FinalFunction: "send_email", Earlier: earlier}, &fakeTools{})
	if err != nil {
		t.Fatal(err)
	}
	// The opening counts as a turn: one more (the nudge is never reached).
	if !errors.Is(res.Stop, agent.ErrMaxTurns) || res.Turns != 2 || res.ModelCalls != 1 {
		t.Errorf("run: stop %v, %d turns, %d model calls; want max turns after 2 turns and 1 call", res.Stop, res.Turns, res.ModelCalls)
	}
	reqs := f.Requests()
	if m := reqs[0].ToolConfig.FunctionCallingConfig.Mode; m != "ANY" {
		t.Errorf("opening mode %q, want ANY", m)
	}
	if m := reqs[1].ToolConfig.FunctionCallingConfig.Mode; m != "AUTO" {
		t.Errorf("loop mode %q, want AUTO", m)
	}
	tr := geminitest.Transcript(reqs[1].Contents)
	if len(tr) != 3 || !strings.HasPrefix(tr[1], "model: call o1 choose") ||
		!strings.Contains(tr[2], "response o1 choose ok") || !strings.Contains(tr[2], "response o2 check_warranty error invalid_args") {
		t.Errorf("the loop's history:\n%s", strings.Join(tr, "\n"))
	}
}

// TestOpenUnusable: an opening answer with no usable candidate is an
// error, with the calls and usage it spent.
func TestOpenUnusable(t *testing.T) {
	f := geminitest.New(t, geminitest.Reply(geminitest.Cand("SAFETY")))
	a := newAgent(t, &agent.Gemini{Client: f.Client()}, &sleeps{}, nil)
	o, err := a.Open(context.Background(), request())
	if !errors.Is(err, agent.ErrInvalidResponse) || o.ModelCalls != 1 {
		t.Errorf("Open: %v, %d model calls; want ErrInvalidResponse after 1", err, o.ModelCalls)
	}
}
