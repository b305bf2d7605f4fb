package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/testkit/openaitest"
)

// TestProcessThroughOpenAI: `triage process --provider openai --base-url`
// drives the same pipeline through an OpenAI-compatible endpoint (a loopback
// Chat Completions fake), and the grounding check holds there too: a reply
// with the registry's date is sent, one with an invented date is refused
// twice and the email is left for a person.
func TestProcessThroughOpenAI(t *testing.T) {
	ticket := openaitest.Calls(openaitest.Call{ID: "call_2", Name: "create_ticket", Args: map[string]any{
		"serial_number": "SN-48213-PL", "customer_email": "anna.nowak@example.pl", "priority": "normal", "summary": "Ekspres nie grzeje wody."}})
	send := func(id, body string) openaitest.Step {
		return openaitest.Calls(openaitest.Call{ID: id, Name: "send_email", Args: map[string]any{
			"to": "anna.nowak@example.pl", "subject": "Re: Reklamacja – ekspres nie grzeje wody", "body": body,
			"decision": "guarantee", "commitments": []any{"ticket"}}})
	}
	type summary struct {
		Code   int
		Status triage.Status
		Reason triage.Reason
		Calls  []string
	}
	for _, tt := range []struct {
		name  string
		steps []openaitest.Step
		want  summary
	}{
		// The warranty is looked up before the first turn (prefetch):
		// the model opens the ticket at once.
		{"grounded reply", []openaitest.Step{ticket,
			send("call_3", "Dzień dobry,\n\ngwarancja ekspresu Aroma 5000 (SN-48213-PL) jest ważna do 31 maja 2027. Otworzyliśmy zgłoszenie TKT-000001.")},
			summary{0, "replied", "", []string{"check_warranty ok", "create_ticket ok", "send_email ok"}}},
		{"invented date, twice", []openaitest.Step{ticket,
			send("call_3", "Gwarancja SN-48213-PL jest ważna do 31 maja 2028."),
			send("call_4", "Gwarancja SN-48213-PL jest ważna do 2028-05-31."),
			openaitest.Text("Nie mogę wysłać odpowiedzi."), openaitest.Text("Nie mogę wysłać odpowiedzi.")},
			summary{1, "failed", "ungrounded_claim", []string{"check_warranty ok", "create_ticket ok", "send_email ungrounded_claim", "send_email ungrounded_claim"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, tt.steps...)
			t.Setenv("OPENAI_API_KEY", openaitest.APIKey)
			dir := t.TempDir()
			code, stdout, stderr := runCLI(t, "", "process", "--json", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "gpt-test",
				"--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox"),
				"../../examples/inbox/01-valid-warranty-pl.eml")
			outs := decodeOutcomes(t, stdout)
			if len(outs) != 1 {
				t.Fatalf("exit %d, %d outcomes\nstderr: %s", code, len(outs), stderr)
			}
			got := summary{Code: code, Status: outs[0].Status, Reason: outs[0].Reason}
			for _, c := range outs[0].FunctionCalls {
				mark := "ok"
				if c.Error != nil {
					mark = string(c.Error.Code)
				}
				got.Calls = append(got.Calls, c.Name+" "+mark)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nstderr: %s", diff, stderr)
			}
			if !strings.Contains(stderr, "OpenAI-compatible endpoint "+srv.BaseURL()) {
				t.Errorf("stderr does not name the endpoint: %s", stderr)
			}
			for _, r := range srv.Requests() {
				if r.Model != "gpt-test" {
					t.Errorf("request for model %q", r.Model)
				}
			}
		})
	}
}

// TestProviderFlags: a wrong provider, and openai without a model id, are
// usage errors naming the flag.
func TestProviderFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "anthropic"}, `--provider "anthropic": want gemini or openai`},
		{[]string{"--provider", "openai", "--base-url", "http://127.0.0.1:1/v1"}, "--provider openai needs --model"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"process", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(t.TempDir(), "t.db")}, tt.args...)
		code := run(context.Background(), append(args, "../../examples/inbox/01-valid-warranty-pl.eml"), strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}
