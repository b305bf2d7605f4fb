package tokentest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/testkit/geminitest"
)

// TestMeasure: a detection call is counted with the email whose loop
// follows it; each loop request is split into the shared instructions,
// the scenario's, the declarations, the email, the history and the
// results; a new first user turn starts a new email.
func TestMeasure(t *testing.T) {
	const main = "MAIN-RULES" // 10 runes: 3 tokens
	systems := map[string]string{"vw": main + "\n\nSCENARIO\n"}
	det := `{"contents":[{"role":"user","parts":[{"text":"pick one"}]}],"systemInstruction":{"role":"user","parts":[{"text":"route"}]},"generationConfig":{"responseSchema":{}}}`
	first := `{"contents":[{"role":"user","parts":[{"text":"email one"}]}],"systemInstruction":{"role":"user","parts":[{"text":"MAIN-RULES\n\nSCENARIO\n"}]},"tools":[{"functionDeclarations":[]}]}`
	second := `{"contents":[{"role":"user","parts":[{"text":"email one"},{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"ok":true}}}]}],` +
		`"systemInstruction":{"role":"user","parts":[{"text":"MAIN-RULES\n\nSCENARIO\n"}]},"tools":[{"functionDeclarations":[]}]}`
	other := `{"contents":[{"role":"user","parts":[{"text":"email two"}]}],"systemInstruction":{"role":"user","parts":[{"text":"MAIN-RULES\n\nSCENARIO\n"}]}}`
	m, err := Measure(context.Background(), Estimate{}, main, systems, [][]byte{[]byte(det), []byte(first), []byte(second), []byte(other)}, []int{5, 7, 11, 13})
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) int { n, _ := Estimate{}.Count(context.Background(), s); return n }
	tools := count(`[{"functionDeclarations":[]}]`)
	loop := Parts{System: count(main), Scenario: count("\n\nSCENARIO\n"), Tools: tools, Email: count("email one")}
	want := &Scenario{Name: "vw", Emails: 2, Calls: 4,
		Parts: Parts{
			System: count("route") + 3*count(main), Scenario: 3 * count("\n\nSCENARIO\n"), Tools: 2 * tools,
			Email:   count("pick one") + 2*count("email one") + ImageTokens + count("email two"),
			History: count(`{"name":"f","args":{}}`), Results: count(`{"name":"f","response":{"ok":true}}`),
		},
		Turns: []int{count("route") + count("pick one") + count(main) + count("\n\nSCENARIO\n") + count("email two"),
			loop.Prompt(), loop.Prompt() + ImageTokens + count(`{"name":"f","args":{}}`) + count(`{"name":"f","response":{"ok":true}}`)},
		TurnEmails: []int{2, 1, 1},
		Output:     5 + 7 + 11 + 13,
	}
	if diff := cmp.Diff(map[string]*Scenario{"vw": want}, m); diff != "" {
		t.Errorf("Measure (-want +got):\n%s", diff)
	}
	if got := want.Parts.Prefix(); got != want.Parts.System+want.Parts.Scenario+want.Parts.Tools {
		t.Errorf("Prefix = %d", got)
	}
}

// TestLiveCounter: Live counts through the model's countTokens endpoint
// (the stand-in's answer), each distinct text once.
func TestLiveCounter(t *testing.T) {
	f := geminitest.New(t)
	l := &Live{Client: f.Client(), Model: "gemini-test"}
	for range 2 {
		n, err := l.Count(context.Background(), "Dzień dobry, ekspres nie grzeje wody")
		if err != nil || n != geminitest.CountWords("Dzień dobry, ekspres nie grzeje wody") {
			t.Fatalf("Count = %d, %v", n, err)
		}
	}
	if n, _ := l.Count(context.Background(), ""); n != 0 {
		t.Errorf("Count(\"\") = %d", n)
	}
	if f.Counts() != 1 {
		t.Errorf("%d countTokens requests, want 1 (the text once)", f.Counts())
	}
}
