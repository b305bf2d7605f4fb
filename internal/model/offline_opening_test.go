package model_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	embedded "triage/instructions"
	"triage/internal/instructions"
	"triage/internal/model"
	"triage/internal/prompt"
)

// TestOfflineOpening: the offline model answers an opening turn (a
// declared choose_scenario) with its word-overlap choice, by the
// descriptions of the system instruction, and beside it the
// calls the chosen scenario's first turn makes when they are declared in
// the opening (its look-ups); a scenario whose first call is the reply,
// or no choice at all, gets the choice alone.
func TestOfflineOpening(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := model.StartOffline(model.OfflineOptions{Scenarios: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "offline", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL()},
	})
	if err != nil {
		t.Fatal(err)
	}
	var cands []prompt.Candidate
	var enum []any
	for _, sc := range set.Scenarios {
		if sc.FollowUp {
			continue
		}
		c := prompt.Candidate{Choice: prompt.Choice{Name: sc.Name, Description: sc.Description}}
		if f := sc.Function("check_warranty"); f != nil {
			c.LookUps = []string{"check_warranty"}
		}
		cands = append(cands, c)
		enum = append(enum, sc.Name)
	}
	check := set.Get("valid-warranty").Function("check_warranty")
	decls := []*genai.FunctionDeclaration{
		{Name: prompt.ChooseScenario, ParametersJsonSchema: map[string]any{"type": "object",
			"properties": map[string]any{"scenario": map[string]any{"type": "string", "enum": enum}, "reason": map[string]any{"type": "string"}}}},
		{Name: check.Name, Description: check.Description, ParametersJsonSchema: check.Parameters},
	}
	tests := []struct {
		name, subject, text string
		serials             []string
		want                []string
	}{
		{"a claim with a serial: the check beside the choice", "Awaria pralki", "Dzień dobry, moja pralka ma awarię, numer seryjny SN-12345. Proszę o naprawę gwarancyjną.", []string{"SN-12345"},
			[]string{"choose_scenario invalid-warranty", "check_warranty SN-12345"}},
		{"a scenario that starts with the reply: the choice alone", "Faktura za zamówienie", "Proszę o przesłanie faktury za zamówienie nr 55.", nil,
			[]string{"choose_scenario out-of-scope"}},
		{"nothing to go on: no scenario named", "Hej", "ok 123", nil,
			[]string{"choose_scenario "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			facts := prompt.Facts{Subject: tc.subject, From: "jan@example.com", ReplyTo: "jan@example.com", Language: "pl", SerialNumbers: tc.serials}
			resp, err := client.Models.GenerateContent(context.Background(), model.DefaultModel,
				userTurn(prompt.User(facts, tc.text, "")), &genai.GenerateContentConfig{
					SystemInstruction: genai.NewContentFromText(prompt.Opening(cands), genai.RoleUser),
					Tools:             []*genai.Tool{{FunctionDeclarations: decls}},
				})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fc := range resp.FunctionCalls() {
				switch fc.Name {
				case prompt.ChooseScenario:
					s, _ := fc.Args["scenario"].(string)
					got = append(got, fc.Name+" "+s)
				default:
					s, _ := fc.Args["serial_number"].(string)
					got = append(got, fc.Name+" "+s)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
