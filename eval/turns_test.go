package eval

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	embedded "triage/instructions"
	"triage/internal/instructions"
	"triage/internal/model"
	"triage/internal/testkit/geminitest"
	"triage/internal/testkit/openaitest"
)

// followUpInput is a follow-up case's conversation and email: Ewa
// writes again on TKT-000150, answering our reply.
const followUpInput = `input:
  staff: ["kierownik@example.com"]
  conversation:
    ticket_id: TKT-000150
    serial_number: SN-77120-PL
    messages:
      - message_id: "<triage-p1@example.com>"
        direction: out
        subject: "Re: Reklamacja pralki SN-77120-PL [TKT-000150]"
  email:
    subject: "Re: Reklamacja pralki SN-77120-PL [TKT-000150]"
    body: "Dzień dobry, pralka SN-77120-PL nadal przecieka. Ewa Wrona"
    from: "ewa.wrona@example.pl"
    received: "2026-11-22T08:00:00Z"
    headers:
      In-Reply-To: "<triage-p1@example.com>"
      References: "<triage-p1@example.com>"
`

const simulatedCase = `scenario_id: simulated_followup
description: the customer, played by a model, writes again after our reply
category: conversation
` + followUpInput + `  simulated_customer:
    persona: "a busy customer who writes short messages"
    goal: "learn whether to bring the washing machine in"
    max_turns: 2
expected_output:
  scenario_instruction_used: follow-up
  status: replied
  followup: true
  reply_rubric: ["acknowledges the existing request"]
`

// answer is one scripted answer to a follow-up: the follow-up scenario
// promises a person, so staff are told first (notify_staff), then the
// customer gets body.
func answer(id, to, body string) []geminitest.Step {
	return []geminitest.Step{
		geminitest.One(geminitest.Call(id+"n", "notify_staff", geminitest.Obj("subject", "Follow-up TKT-000150", "body", "The customer wrote again."))),
		geminitest.One(geminitest.Call(id, "send_email", geminitest.Obj("to", to, "subject", "Re: Reklamacja pralki SN-77120-PL [TKT-000150]", "body", body))),
	}
}

// TestSimulatedCustomerLoop drives the simulated_customer loop end to end in a
// live run: the pipeline's model, the judge and the customer are each a
// scripted Gemini server on loopback. The customer writes once more after
// our reply, the pipeline answers it as a follow-up of the same ticket,
// then the customer says the goal is reached; the judge grades the first
// reply.
func TestSimulatedCustomerLoop(t *testing.T) {
	const (
		reply1  = "Dzień dobry, dziękujemy za informację. Dopisaliśmy ją do zgłoszenia TKT-000150 (pralka SN-77120-PL)."
		asks    = "Czy mam przywieźć pralkę do serwisu?"
		reply2  = "Dzień dobry, prosimy nie przywozić pralki: konsultant prowadzący zgłoszenie TKT-000150 skontaktuje się z Panią."
		persona = "a busy customer who writes short messages"
	)
	set, err := instructions.LoadScenarios(embedded.FS, testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	pipeline, getenv := scriptedPipeline(t, append(answer("s1", "ewa.wrona@example.pl", reply1), answer("s2", "ewa.wrona@example.pl", reply2)...)...)
	// The judge is another provider: an OpenAI-compatible endpoint.
	judge := openaitest.New(t,
		openaitest.Text(geminitest.JSON(map[string]any{"verdicts": []any{map[string]any{"criterion": 1, "pass": true, "quote": "zgłoszenia TKT-000150", "reason": "the ticket is named"}}})),
		openaitest.Text(geminitest.JSON(map[string]any{"achieved": true, "quote": "prosimy nie przywozić pralki", "reason": "told not to bring it in"})))
	jm, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: judge.BaseURL(), APIKey: openaitest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	customer := geminitest.New(t,
		judgeStep(map[string]any{"done": false, "message": asks}),
		judgeStep(map[string]any{"done": true, "message": ""}))
	c := loadShipped(t, set, simulatedCase)
	r := newTestRunner(t, set, Config{Getenv: getenv,
		Judge:    &Judge{Model: jm, ModelName: openaitest.Model},
		Customer: &Customer{Model: customer.Client().Models, ModelName: "gemini-customer"}})
	if r.Mode() != ModeLive {
		t.Fatalf("mode %s, want live", r.Mode())
	}
	rr := r.RunCase(context.Background(), c)
	if !rr.Passed {
		t.Fatalf("failures %q", rr.Failures)
	}
	if diff := cmp.Diff([]RubricVerdict{{Criterion: "acknowledges the existing request", Verdict: VerdictPass, Quote: "zgłoszenia TKT-000150", Reason: "the ticket is named"}}, rr.Rubric); diff != "" {
		t.Errorf("rubric (-want +got):\n%s", diff)
	}
	if len(rr.Turns) != 1 {
		t.Fatalf("%d turns, want 1 (the customer was done after one)", len(rr.Turns))
	}
	turn := rr.Turns[0]
	if turn.Body != asks || turn.Outcome.Scenario != "follow-up" || turn.Outcome.Status != "replied" || !turn.Outcome.Followup || turn.Outcome.TicketID != "TKT-000150" {
		t.Errorf("turn 2: body %q, %s/%s, followup %v of %q", turn.Body, turn.Outcome.Scenario, turn.Outcome.Status, turn.Outcome.Followup, turn.Outcome.TicketID)
	}
	if diff := cmp.Diff(Grounding{Replies: 2, Claims: 7}, rr.Grounding); diff != "" {
		t.Errorf("grounding of both turns (-want +got):\n%s", diff)
	}
	// The judge graded the goal from the whole conversation; its quote
	// stands in our second reply.
	if diff := cmp.Diff(&RubricVerdict{Criterion: "learn whether to bring the washing machine in", Verdict: VerdictPass, Quote: "prosimy nie przywozić pralki", Reason: "told not to bring it in"}, rr.Goal); diff != "" {
		t.Errorf("goal (-want +got):\n%s", diff)
	}
	if reqs := judge.Requests(); len(reqs) != 2 {
		t.Fatalf("judge asked %d times, want 2 (rubric, goal)", len(reqs))
	} else if goalReq := fmt.Sprint(reqs[1].Messages); !strings.Contains(goalReq, "learn whether to bring the washing machine in") || !strings.Contains(goalReq, asks) || reqs[1].ResponseFormat == nil {
		t.Errorf("the goal request lacks the goal, the conversation or its JSON schema:\n%s", goalReq)
	}
	for name, srv := range map[string]*geminitest.Server{"pipeline": pipeline, "customer": customer} {
		if n := srv.Left(); n != 0 {
			t.Errorf("%s: %d scripted answers unused", name, n)
		}
	}
	if n := judge.Left(); n != 0 {
		t.Errorf("judge: %d scripted answers unused", n)
	}
	// The customer saw the whole conversation: the persona, its own
	// message and both of our replies.
	bodies := customer.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("customer asked %d times, want 2", len(bodies))
	}
	for _, want := range []string{persona, "pralka SN-77120-PL nadal przecieka", asks, "Dopisali\u015bmy j\u0105", "prosimy nie przywozi\u0107 pralki"} {
		if !strings.Contains(string(bodies[1]), want) && !strings.Contains(string(bodies[1]), jsonEscaped(want)) {
			t.Errorf("the customer's second request lacks %q", want)
		}
	}
}

// TestSimulatedCustomerOffline: offline, no model plays the customer and no
// judge grades: the case says the simulated customer was skipped and every
// rubric criterion is skipped, never passed.
func TestSimulatedCustomerOffline(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	c := loadShipped(t, set, simulatedCase)
	r := newTestRunner(t, set, Config{})
	rr := r.RunCase(context.Background(), c)
	if !rr.Passed {
		t.Fatalf("failures %q", rr.Failures)
	}
	if len(rr.Turns) != 0 || !containsString(rr.Notes, "input.simulated_customer skipped: a model plays the customer only in live runs") {
		t.Errorf("turns %d, notes %q", len(rr.Turns), rr.Notes)
	}
	if len(rr.Rubric) != 1 || rr.Rubric[0].Verdict != VerdictSkipped {
		t.Errorf("rubric %+v, want skipped", rr.Rubric)
	}
	if rr.Goal == nil || rr.Goal.Verdict != VerdictSkipped || rr.Goal.Criterion != "learn whether to bring the washing machine in" {
		t.Errorf("goal %+v, want skipped, never passed", rr.Goal)
	}
	var out strings.Builder
	WriteCaseMarks(&out, CaseResult{ID: c.ID, Passed: true, PassedRuns: 1, Runs: []RunResult{rr}}, false, ASCII)
	if !strings.Contains(out.String(), "  Goal: - learn whether to bring the washing machine in: skipped - offline") {
		t.Errorf("report lacks the skipped goal:\n%s", out.String())
	}
}

// loadShipped loads one case against the shipped instructions.
func loadShipped(t *testing.T, set *instructions.Scenarios, body string) *Case {
	t.Helper()
	cases, err := Load([]string{writeCase(t, t.TempDir(), "case.yaml", body)}, set)
	if err != nil {
		t.Fatal(err)
	}
	return cases[0]
}

const followUpRubricCase = `scenario_id: followup_rubric
description: a scripted follow-up whose reply has its own rubric
category: conversation
` + followUpInput + `  follow_ups:
    - body: "Czy mam przywieźć pralkę do serwisu?"
      expected_output:
        scenario_instruction_used: follow-up
        status: replied
        reply_rubric: ["answers whether to bring the machine in"]
expected_output:
  scenario_instruction_used: follow-up
  status: replied
`

// TestFollowUpRubricAndClaims: a scripted follow-up's reply is graded
// against its own reply_rubric (the judge's verdict fails the case, naming
// the turn) and its claims are checked like the first reply's, here with
// the dispatcher's check turned off so the invented ticket goes out.
func TestFollowUpRubricAndClaims(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	_, getenv := scriptedPipeline(t, append(
		answer("s1", "ewa.wrona@example.pl", "Dzień dobry, dopisaliśmy to do zgłoszenia TKT-000150."),
		answer("s2", "ewa.wrona@example.pl", "Dzień dobry, w sprawie zgłoszenia TKT-000999 skontaktuje się konsultant.")...)...)
	judge := geminitest.New(t, judgeStep(map[string]any{"verdicts": []any{map[string]any{"criterion": 1, "pass": false, "quote": "", "reason": "the question is not answered"}}}))
	c := loadShipped(t, set, followUpRubricCase)
	r := newTestRunner(t, set, Config{Getenv: getenv, Tools: shippedTools(t, true), Judge: &Judge{Model: judge.Client().Models, ModelName: "gemini-judge"}})
	rr := r.RunCase(context.Background(), c)
	if len(rr.Rubric) != 0 {
		t.Errorf("the first email has no rubric, got %+v", rr.Rubric)
	}
	if len(rr.Turns) != 1 {
		t.Fatalf("%d turns, want 1", len(rr.Turns))
	}
	turn := rr.Turns[0]
	if diff := cmp.Diff([]RubricVerdict{{Criterion: "answers whether to bring the machine in", Verdict: VerdictFail, Reason: "the question is not answered"}}, turn.Rubric); diff != "" {
		t.Errorf("turn 2 rubric (-want +got):\n%s", diff)
	}
	if len(turn.Claims) != 1 || !strings.Contains(turn.Claims[0], `"TKT-000999" (ticket number)`) {
		t.Errorf("turn 2 flagged claims %q", turn.Claims)
	}
	want := []string{
		`Turn 2: Call 2 send_email: the body states "TKT-000999" (ticket number), which nothing this email gave the model backs (grounding)`,
		`Turn 2: Rubric: "answers whether to bring the machine in" failed: the question is not answered (quote "")`,
	}
	if diff := cmp.Diff(want, rr.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Grounding{Replies: 2, Claims: 6, Flagged: 1}, rr.Grounding); diff != "" {
		t.Errorf("grounding (-want +got):\n%s", diff)
	}
	var out strings.Builder
	cr := CaseResult{ID: c.ID, Runs: []RunResult{rr}, c: c}
	cr.finish()
	WriteCase(&out, cr, false)
	for _, s := range []string{"  Turn 2 ✗ \"Czy mam przywieźć pralkę do serwisu?\"", "    Rubric:\n      ✗ answers whether to bring the machine in: fail",
		`    Flagged claim: call 2 send_email: the sent body states "TKT-000999" (ticket number)`} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("console lacks %q:\n%s", s, out.String())
		}
	}
}
