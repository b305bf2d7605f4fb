package processor_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"triage/internal/agent"
	"triage/internal/prompt"
	"triage/internal/testkit/geminitest"
)

// TestStablePrefix: what every email of a scenario shares, the system
// instruction, the declarations and the tool configuration, is the same
// bytes on the wire for two emails from other senders in other languages,
// on every turn, and nothing of an email is in it: a context cache (or
// Gemini's implicit caching) can serve it.
func TestStablePrefix(t *testing.T) {
	text := geminitest.One(geminitest.Text("Sprawdzam."))
	f := geminitest.New(t, text, text, text, text)
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	e.run(t, eml("Anna <anna@example.pl>", "Reklamacja", "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."))
	e.run(t, eml("John <john@example.com>", "Warranty claim", "Hello, my coffee machine SN-48213-PL stopped heating water. Please repair it under warranty."))
	type prefix struct {
		SystemInstruction json.RawMessage `json:"systemInstruction"`
		Tools             json.RawMessage `json:"tools"`
		ToolConfig        json.RawMessage `json:"toolConfig"`
		Contents          []json.RawMessage
	}
	bodies := f.Bodies()
	if len(bodies) != 4 {
		t.Fatalf("%d model calls, want 2 per email", len(bodies))
	}
	var first prefix
	for i, b := range bodies {
		var p prefix
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if len(p.SystemInstruction) == 0 || len(p.Tools) == 0 {
			t.Fatalf("request %d has no system instruction or tools", i)
		}
		if i == 0 {
			first = p
		}
		if !bytes.Equal(p.SystemInstruction, first.SystemInstruction) || !bytes.Equal(p.Tools, first.Tools) || !bytes.Equal(p.ToolConfig, first.ToolConfig) {
			t.Errorf("request %d: the prefix differs from the first email's", i)
		}
		// The look-ups the pipeline ran for this email (its serial's
		// warranty) are per email: in the first user turn, after the
		// prefix, on every turn.
		if len(p.Contents) == 0 || !bytes.Contains(p.Contents[0], []byte(jsonText(prompt.LookupsHeader))) {
			t.Errorf("request %d: the first user turn has no look-ups block", i)
		}
		for _, own := range []string{"anna", "john", "SN-48213-PL", "Reklamacja", "Warranty claim", jsonText(prompt.LookupsHeader), "2027-05-31"} {
			if bytes.Contains(p.SystemInstruction, []byte(own)) || bytes.Contains(p.Tools, []byte(own)) {
				t.Errorf("request %d: the prefix holds the email's %q", i, own)
			}
		}
	}
	var a, b prefix
	_ = json.Unmarshal(bodies[0], &a)
	_ = json.Unmarshal(bodies[2], &b)
	if bytes.Equal(a.Contents[0], b.Contents[0]) {
		t.Error("the two emails sent the same first turn")
	}
}

// jsonText is s as it appears inside a JSON string on the wire.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
