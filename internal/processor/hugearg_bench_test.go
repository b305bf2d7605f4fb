package processor_test

import (
	"strings"
	"testing"

	"triage"
	"triage/internal/agent"
	"triage/internal/processor"
	"triage/internal/testkit/geminitest"
)

// BenchmarkHugeArgument: a model that sends a 7 MB argument on every turn
// (a serial number no schema allows), through the real genai client, for
// all of the email's turns: the cost of one such email.
func BenchmarkHugeArgument(b *testing.B) {
	huge := strings.Repeat("SN", 7<<20/2)
	step := geminitest.One(geminitest.Call("c", "check_warranty", map[string]any{"serial_number": huge}))
	script := make([]geminitest.Step, agent.DefaultMaxTurns)
	for i := range script {
		script[i] = step
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		f := geminitest.New(b, script...)
		e := newEnv(b, &agent.Gemini{Client: f.Client()})
		b.StartTimer()
		out := e.proc.Process(b.Context(), processorInput(convEmail(anna, "Reklamacja", first, firstTx)))
		if out.ModelCalls != agent.DefaultMaxTurns {
			b.Fatalf("%d model calls (%s/%s: %s), want %d", out.ModelCalls, out.Status, out.Reason, out.Detail, agent.DefaultMaxTurns)
		}
	}
}

func processorInput(raw []byte) processor.Input { return processor.Input{Name: "in.eml", Raw: raw} }

// TestHugeArgumentBounded: what an email keeps of a model's megabyte
// arguments is bounded: the outcome's records hold them cut, and so does
// every request after the first refusal.
func TestHugeArgumentBounded(t *testing.T) {
	huge := strings.Repeat("SN", 1<<20/2)
	step := geminitest.One(geminitest.Call("c", "check_warranty", map[string]any{"serial_number": huge}))
	f := geminitest.New(t, step, step, step, step, step, step, step, step, step, step)
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	out := e.proc.Process(t.Context(), processorInput(convEmail(anna, "Reklamacja", first, firstTx)))
	// The first record is the warranty look-up the pipeline ran before
	// the first turn (the message's own serial); the model's follow.
	if out.Status != triage.StatusFailed || len(out.FunctionCalls) != 1+agent.DefaultMaxTurns || !out.FunctionCalls[0].Prefetched {
		t.Fatalf("%s/%s (%s), %d calls", out.Status, out.Reason, out.Detail, len(out.FunctionCalls))
	}
	for i, c := range out.FunctionCalls[1:] {
		if s, _ := c.Args["serial_number"].(string); len(s) > agent.MaxRefusedArgBytes || c.Error == nil || len(c.Error.Message) > 1000 {
			t.Errorf("record %d: serial_number of %d bytes, error %d bytes", i, len(s), len(c.Error.Message))
		}
	}
	for i, b := range f.Bodies()[1:] {
		// The first request holds no call; later ones every earlier call,
		// each cut, and the one from the turn before.
		if len(b) > 1<<20/4+agent.DefaultMaxTurns*agent.MaxRefusedArgBytes {
			t.Errorf("request %d is %d bytes", i+2, len(b))
		}
	}
}
