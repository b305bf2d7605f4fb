package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	embedded "triage/instructions"
	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
)

func TestPlaceholders(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{"Dzień dobry, Pani [imię], zgłoszenie TKT-1.", []string{"[imię]"}},
		{"Hello {{customer_name}}, ticket {{ticket_id}}.", []string{"{{customer_name}}", "{{ticket_id}}"}},
		{"Your serial <serial> is valid until XXX.", []string{"<serial>", "XXX"}},
		{"TODO: add the date", []string{"TODO"}},
		{"Write to <serwis@example.com> or see [1] and https://x.example/a[b].", nil},
		{"Gwarancja jest ważna do 2027-05-31.", nil},
		{"[PL] Odpowiedź w sprawie [TKT-000123]", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Placeholders(tt.body)); diff != "" {
			t.Errorf("Placeholders(%q) (-want +got):\n%s", tt.body, diff)
		}
	}
}

func TestReplyChecks(t *testing.T) {
	mentions := []string{"check_warranty.expiration_date", "create_ticket.ticket_id"}
	tests := []struct {
		name string
		x    Expected
		body string
		want []string
	}{
		{name: "everything stated, in Polish", x: Expected{ReplyLanguage: "pl", ReplyMentionsResults: mentions},
			body: "Dzień dobry, gwarancja urządzenia jest ważna do 2027-05-31. Utworzyliśmy zgłoszenie TKT-12345, prosimy podawać ten numer."},
		{name: "a date in day-first form counts", x: Expected{ReplyMentionsResults: mentions[:1]},
			body: "Gwarancja jest ważna do 31.05.2027."},
		{name: "a date written out in Polish counts", x: Expected{ReplyMentionsResults: mentions[:1]},
			body: "Gwarancja jest ważna do 31 maja 2027 r."},
		{name: "a date written out in German counts", x: Expected{ReplyMentionsResults: mentions[:1]},
			body: "Die Garantie gilt bis zum 31. Mai 2027."},
		{name: "a month without its day does not state the date", x: Expected{ReplyMentionsResults: mentions[:1]},
			body: "Gwarancja jest ważna do maja 2027.",
			want: []string{`Reply mentions check_warranty.expiration_date: the reply does not state "2027-05-31"`}},
		{name: "another day in Polish does not state the date", x: Expected{ReplyMentionsResults: mentions[:1]},
			body: "Gwarancja jest ważna do 30 maja 2027 r.",
			want: []string{`Reply mentions check_warranty.expiration_date: the reply does not state "2027-05-31"`}},
		{name: "a missing ticket number", x: Expected{ReplyMentionsResults: mentions},
			body: "Gwarancja jest ważna do 2027-05-31.",
			want: []string{`Reply mentions create_ticket.ticket_id: the reply does not state "TKT-12345"`}},
		{name: "the wrong language", x: Expected{ReplyLanguage: "pl"},
			body: "Hello, the warranty for your coffee machine is valid until the end of May next year, and we opened a ticket for the repair.",
			want: []string{`Reply language: expected "pl", the reply reads as "en"`}},
		{name: "a placeholder fails without any expectation", x: Expected{},
			body: "Dear [name], your ticket is {{ticket_id}}.",
			want: []string{`Call 3 send_email: Body contains placeholder text "[name]", "{{ticket_id}}"`}},
		{name: "a result no call returned", x: Expected{ReplyMentionsResults: []string{"check_warranty.product"}},
			body: "Gwarancja jest ważna.",
			want: []string{`Reply mentions check_warranty.product: no successful check_warranty call returned "product"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ReplyChecks(tt.x, repliedOutcome(tt.body), nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no reply to check", func(t *testing.T) {
		o := repliedOutcome("x")
		o.FunctionCalls = o.FunctionCalls[:2]
		got := ReplyChecks(Expected{ReplyLanguage: "pl"}, o, nil)
		if len(got) != 1 || !strings.Contains(got[0], "no send_email ran") {
			t.Errorf("got %v", got)
		}
	})
}

func TestLoadReplyExpectations(t *testing.T) {
	body := `scenario_id: bad_reply_expectations
description: invalid reply expectations
input:
  email: {subject: s, body: b, from: "a@example.com"}
  follow_ups:
    - body: ""
  simulated_customer: {persona: "", goal: g, max_turns: 9}
expected_output:
  status: replied
  reply_language: Polish
  reply_mentions_results: [expiration_date, no_such_fn.x]
  reply_rubric: ["   "]
`
	_, err := Load([]string{writeCase(t, t.TempDir(), "bad.yaml", body)}, testSet(t))
	if err == nil {
		t.Fatal("Load: no error")
	}
	for _, want := range []string{
		`reply_language "Polish": want an ISO 639-1 code`,
		`reply_mentions_results[0] "expiration_date": want FUNCTION.RESULT_KEY`,
		`reply_mentions_results[1]: no loaded scenario declares function "no_such_fn"`,
		`reply_rubric[0] is empty`,
		`input.follow_ups[0].body is required`,
		`input.simulated_customer needs persona and goal`,
		`input.simulated_customer.max_turns: between 1 and 5`,
		`bad.yaml:10:`, // problems name their line
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestFollowUpTurns runs the shipped three-turn case, then the same case
// with a wrong expectation on its follow-up: the failure names its turn.
func TestFollowUpTurns(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Load([]string{"cases/conversation_three_turns.yaml"}, set)
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, set, Config{})
	rr := r.RunCase(context.Background(), cases[0])
	if !rr.Passed || len(rr.Turns) != 1 {
		t.Fatalf("passed %v, %d turns; failures %v", rr.Passed, len(rr.Turns), rr.Failures)
	}
	got := rr.Turns[0].Outcome
	if !got.Followup || !got.Escalated || got.TicketID != "TKT-000150" || got.Scenario != "escalation" {
		t.Errorf("turn 2: followup %v escalated %v ticket %s scenario %s", got.Followup, got.Escalated, got.TicketID, got.Scenario)
	}
	if rr.ModelCalls <= rr.Outcome.ModelCalls {
		t.Errorf("model calls %d do not count the follow-up (first message %d)", rr.ModelCalls, rr.Outcome.ModelCalls)
	}

	raw, err := os.ReadFile("cases/conversation_three_turns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(raw), "        escalated: true", "        escalated: false", 1)
	cases, err = Load([]string{writeCase(t, t.TempDir(), filepath.Base("three.yaml"), broken)}, set)
	if err != nil {
		t.Fatal(err)
	}
	rr = r.RunCase(context.Background(), cases[0])
	want := []string{"Turn 2: Escalated: expected false, got true"}
	if diff := cmp.Diff(want, rr.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

func TestFlaggedClaims(t *testing.T) {
	o := repliedOutcome("Gwarancja jest ważna do 2027-05-31.")
	o.FunctionCalls = append([]dispatcher.Record{{Name: "send_email", Blocked: true,
		Error: &agent.ToolError{Code: dispatcher.CodeUngroundedClaim, Message: `the reply states "2031-01-01" (date), which ...`}}}, o.FunctionCalls...)
	want := []string{`call 1 send_email: the reply states "2031-01-01" (date), which ...`}
	if diff := cmp.Diff(want, FlaggedClaims(o)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var out strings.Builder
	WriteCaseMarks(&out, CaseResult{ID: "c", Passed: true, PassedRuns: 1, Runs: []RunResult{{Passed: true, Outcome: o, Claims: want}}}, false, ASCII)
	if !strings.Contains(out.String(), "Flagged claim: call 1 send_email") {
		t.Errorf("report:\n%s", out.String())
	}
}
