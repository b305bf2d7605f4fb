package agent_test

import (
	"context"
	"fmt"
	"testing"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// BenchmarkHugeTurn: one model turn of 20,000 calls, through the real genai
// client, then a text answer.
func BenchmarkHugeTurn(b *testing.B) {
	parts := make([]map[string]any, 20000)
	for i := range parts {
		parts[i] = geminitest.Call(fmt.Sprintf("c%d", i), "check_warranty", map[string]any{"serial_number": "SN1"})
	}
	for range b.N {
		f := geminitest.New(b, geminitest.One(parts...), geminitest.One(geminitest.Text("done")))
		a := newAgent(b, gemini(f), &sleeps{}, nil)
		if _, err := a.Run(context.Background(), agent.Request{System: system, Prompt: prompt, Functions: functions}, &fakeTools{}); err != nil {
			b.Fatal(err)
		}
	}
}
