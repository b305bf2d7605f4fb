package eval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/dispatcher"
	"triage/internal/processor"
	"triage/internal/testkit/geminitest"
)

var rubric = []string{"states the expiry date", "gives the ticket number"}

const gradedReply = "Gwarancja jest ważna do 2027-05-31. Zgłoszenie: TKT-12345."

func judgeOn(t *testing.T, steps ...geminitest.Step) (*Judge, *geminitest.Server) {
	t.Helper()
	srv := geminitest.New(t, steps...)
	return &Judge{Model: srv.Client().Models, ModelName: "gemini-judge"}, srv
}

func judgeStep(v any) geminitest.Step {
	return geminitest.One(geminitest.Text(geminitest.JSON(v)))
}

func TestJudgeGrade(t *testing.T) {
	tests := []struct {
		name    string
		step    geminitest.Step
		want    []RubricVerdict
		wantErr string
	}{
		{
			name: "per criterion pass and fail with quotes",
			step: judgeStep(map[string]any{"verdicts": []any{
				map[string]any{"criterion": 2, "pass": false, "quote": "", "reason": "no ticket number is given"},
				map[string]any{"criterion": 1, "pass": true, "quote": "ważna do 2027-05-31", "reason": "the date is stated"},
			}}),
			want: []RubricVerdict{
				{Criterion: rubric[0], Verdict: VerdictPass, Quote: "ważna do 2027-05-31", Reason: "the date is stated"},
				{Criterion: rubric[1], Verdict: VerdictFail, Reason: "no ticket number is given"},
			},
		},
		{
			name:    "an answer that is not JSON grades nothing",
			step:    geminitest.One(geminitest.Text("Both criteria pass.")),
			want:    []RubricVerdict{{Criterion: rubric[0], Verdict: VerdictError}, {Criterion: rubric[1], Verdict: VerdictError}},
			wantErr: "not the requested JSON",
		},
		{
			name: "a criterion left ungraded is an error, never a pass",
			step: judgeStep(map[string]any{"verdicts": []any{map[string]any{"criterion": 1, "pass": true, "quote": "2027-05-31", "reason": "ok"}}}),
			want: []RubricVerdict{
				{Criterion: rubric[0], Verdict: VerdictPass, Quote: "2027-05-31", Reason: "ok"},
				{Criterion: rubric[1], Verdict: VerdictError, Reason: "the judge did not grade this criterion"},
			},
			wantErr: "criterion 2 was not graded",
		},
		{
			name:    "a criterion that was not asked",
			step:    judgeStep(map[string]any{"verdicts": []any{map[string]any{"criterion": 7, "pass": true, "quote": "", "reason": ""}}}),
			want:    []RubricVerdict{{Criterion: rubric[0], Verdict: VerdictError}, {Criterion: rubric[1], Verdict: VerdictError}},
			wantErr: "criterion 7",
		},
		{
			name:    "the API fails",
			step:    geminitest.Step{Status: 400, Body: `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`},
			want:    []RubricVerdict{{Criterion: rubric[0], Verdict: VerdictError}, {Criterion: rubric[1], Verdict: VerdictError}},
			wantErr: "eval: judge",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, srv := judgeOn(t, tt.step)
			got, err := j.Grade(context.Background(), "Proszę o naprawę SN12345", gradedReply, rubric)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" { // every error verdict says why; compare the rest
				for i := range got {
					if got[i].Verdict == VerdictError && got[i].Reason == "" {
						t.Errorf("verdict %d: an error without a reason", i)
					}
					if tt.want[i].Reason == "" {
						got[i].Reason = ""
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			body := string(srv.Bodies()[0])
			for _, want := range []string{`"responseMimeType":"application/json"`, "1. states the expiry date", "2. gives the ticket number", "TKT-12345"} {
				if !strings.Contains(body, want) && !strings.Contains(body, jsonEscaped(want)) {
					t.Errorf("judge request lacks %q:\n%s", want, body)
				}
			}
		})
	}
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// repliedOutcome is an outcome whose reply states body.
func repliedOutcome(body string) processor.Outcome {
	return processor.Outcome{Status: "replied", FunctionCalls: []dispatcher.Record{
		{Name: "check_warranty", OK: true, Result: map[string]any{"expiration_date": "2027-05-31", "status": "valid"}},
		{Name: "create_ticket", OK: true, Result: map[string]any{"ticket_id": "TKT-12345"}},
		{Name: "send_email", OK: true, Args: map[string]any{"to": "a@example.com", "body": body}},
	}}
}

// TestRubricOnlyLive: a live runner asks the judge and fails the run on a
// failed criterion; an offline runner never asks and reports every
// criterion skipped, not passed.
func TestRubricOnlyLive(t *testing.T) {
	c := &Case{ID: "rubric", Input: Input{Email: &Email{Subject: "Naprawa", Body: "SN12345 nie działa", From: "a@example.com"}},
		Expected: Expected{ReplyRubric: rubric}}

	j, srv := judgeOn(t, judgeStep(map[string]any{"verdicts": []any{
		map[string]any{"criterion": 1, "pass": true, "quote": "2027-05-31", "reason": "stated"},
		map[string]any{"criterion": 2, "pass": false, "quote": "", "reason": "missing"},
	}}))
	live := newTestRunner(t, testSet(t), Config{Judge: j, Getenv: func(k string) string {
		if k == "GEMINI_API_KEY" {
			return "test"
		}
		return ""
	}})
	if live.Mode() != ModeLive {
		t.Fatalf("mode %s, want live", live.Mode())
	}
	rr := RunResult{Outcome: repliedOutcome(gradedReply)}
	live.gradeRubric(context.Background(), c, &rr)
	wantFail := []string{`Rubric: "gives the ticket number" failed: missing (quote "")`}
	if diff := cmp.Diff(wantFail, rr.Failures); diff != "" {
		t.Errorf("live failures (-want +got):\n%s", diff)
	}
	if len(rr.Rubric) != 2 || rr.Rubric[0].Verdict != VerdictPass || rr.Rubric[1].Verdict != VerdictFail {
		t.Errorf("live rubric %+v", rr.Rubric)
	}
	if srv.Left() != 0 {
		t.Errorf("judge not asked")
	}

	offline := newTestRunner(t, testSet(t), Config{Judge: j, Offline: true})
	rr = RunResult{Outcome: repliedOutcome(gradedReply)}
	offline.gradeRubric(context.Background(), c, &rr)
	if len(rr.Failures) != 0 {
		t.Errorf("offline failures %v", rr.Failures)
	}
	for _, v := range rr.Rubric {
		if v.Verdict != VerdictSkipped {
			t.Errorf("offline verdict %+v, want skipped", v)
		}
	}
	var out strings.Builder
	WriteCaseMarks(&out, CaseResult{ID: "rubric", Passed: true, PassedRuns: 1, Runs: []RunResult{{Passed: true, Rubric: rr.Rubric}}}, false, ASCII)
	if !strings.Contains(out.String(), "- states the expiry date: skipped - offline") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestSimulatedCustomer(t *testing.T) {
	sc := SimulatedCustomer{Persona: "an impatient retiree", Goal: "get the kettle repaired", MaxTurns: 2}
	conv := []CustomerTurn{{Customer: true, Text: "Czajnik SN12345 nie działa"}, {Text: "Utworzyliśmy zgłoszenie TKT-12345."}}
	tests := []struct {
		name     string
		step     geminitest.Step
		wantMsg  string
		wantDone bool
		wantErr  string
	}{
		{name: "next message", step: judgeStep(map[string]any{"done": false, "message": "Kiedy odbierzecie czajnik?"}), wantMsg: "Kiedy odbierzecie czajnik?"},
		{name: "goal reached", step: judgeStep(map[string]any{"done": true, "message": ""}), wantDone: true},
		{name: "malformed", step: geminitest.One(geminitest.Text("sure, here it is")), wantErr: "not the requested JSON"},
		{name: "empty message without done", step: judgeStep(map[string]any{"done": false, "message": "  "}), wantErr: "empty message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.New(t, tt.step)
			cu := &Customer{Model: srv.Client().Models, ModelName: "gemini-customer"}
			msg, done, err := cu.Next(context.Background(), sc, conv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || msg != tt.wantMsg || done != tt.wantDone {
				t.Fatalf("Next = %q, %v, %v; want %q, %v", msg, done, err, tt.wantMsg, tt.wantDone)
			}
			body := string(srv.Bodies()[0])
			for _, want := range []string{"an impatient retiree", "get the kettle repaired", "TKT-12345"} {
				if !strings.Contains(body, want) {
					t.Errorf("request lacks %q", want)
				}
			}
		})
	}
}

// TestJudgeQuoteNotInReply: a judge that quotes words the reply does not
// hold is not trusted: its pass (or fail) becomes an error verdict that
// fails the case, never a pass. Whitespace, case and compatibility forms
// (NFKC) aside, the quote must stand in the reply; "..." may join parts.
func TestJudgeQuoteNotInReply(t *testing.T) {
	j, _ := judgeOn(t, judgeStep(map[string]any{"verdicts": []any{
		map[string]any{"criterion": 1, "pass": true, "quote": "ważna  do\n２０２７-05-31", "reason": "the date is stated"},
		map[string]any{"criterion": 2, "pass": true, "quote": "Numer zgłoszenia: TKT-99999", "reason": "the ticket is given"},
	}}))
	c := &Case{ID: "lying", Input: Input{Email: &Email{Subject: "Naprawa", Body: "SN12345 nie działa", From: "a@example.com"}},
		Expected: Expected{ReplyRubric: rubric}}
	r := newTestRunner(t, testSet(t), Config{Judge: j, Getenv: func(k string) string { return map[string]string{"GEMINI_API_KEY": "test"}[k] }})
	rr := RunResult{Outcome: repliedOutcome(gradedReply)}
	r.gradeRubric(context.Background(), c, &rr)
	if len(rr.Rubric) != 2 || rr.Rubric[0].Verdict != VerdictPass || rr.Rubric[1].Verdict != VerdictError {
		t.Fatalf("verdicts %+v: want the true quote's pass kept and the invented quote's pass an error", rr.Rubric)
	}
	if !strings.Contains(rr.Rubric[1].Reason, "not in the reply") || rr.Rubric[1].Quote != "Numer zgłoszenia: TKT-99999" {
		t.Errorf("error verdict %+v", rr.Rubric[1])
	}
	want := []string{`Rubric: "gives the ticket number": error, not graded: the judge's quote is not in the reply (it graded pass: the ticket is given)`}
	if diff := cmp.Diff(want, rr.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	var out strings.Builder
	WriteCaseMarks(&out, CaseResult{ID: "lying", Runs: []RunResult{rr}}, false, ASCII)
	if !strings.Contains(out.String(), "! gives the ticket number: error") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestQuoted(t *testing.T) {
	const reply = "Dzień dobry,\n\ngwarancja jest „ważna” do 2027-05-31.\nZgłoszenie: TKT-12345."
	for _, tt := range []struct {
		quote string
		want  bool
	}{
		{"", true},
		{"gwarancja jest \"ważna\" do 2027-05-31", true},
		{"GWARANCJA JEST „WAŻNA”   DO ２０２７-05-31", true},
		{"Dzień dobry, ... Zgłoszenie: TKT-12345", true},
		{"Zgłoszenie: TKT-12345 … Dzień dobry", false}, // parts out of order
		{"Zgłoszenie: TKT-12346", false},
		{"gwarancja jest ważna do 2028-05-31", false},
	} {
		if got := Quoted(reply, tt.quote); got != tt.want {
			t.Errorf("Quoted(%q) = %v, want %v", tt.quote, got, tt.want)
		}
	}
}

// TestJudgeGradeGoal: the goal's verdict from the judge's structured
// answer, its quote checked against the support team's replies only (a
// quote of the customer's own words proves nothing).
func TestJudgeGradeGoal(t *testing.T) {
	conv := []CustomerTurn{{Customer: true, Text: "Czy mam przywieźć czajnik SN12345?"}, {Text: "Prosimy nie przywozić czajnika: kurier odbierze go jutro."}}
	const goal = "learn whether to bring the kettle in"
	for _, tt := range []struct {
		name string
		step geminitest.Step
		want RubricVerdict
	}{
		{"reached", judgeStep(map[string]any{"achieved": true, "quote": "prosimy nie przywozić czajnika", "reason": "told"}),
			RubricVerdict{Criterion: goal, Verdict: VerdictPass, Quote: "prosimy nie przywozić czajnika", Reason: "told"}},
		{"not reached", judgeStep(map[string]any{"achieved": false, "quote": "", "reason": "no answer"}),
			RubricVerdict{Criterion: goal, Verdict: VerdictFail, Reason: "no answer"}},
		{"quoting the customer", judgeStep(map[string]any{"achieved": true, "quote": "Czy mam przywieźć czajnik", "reason": "asked"}),
			RubricVerdict{Criterion: goal, Verdict: VerdictError, Quote: "Czy mam przywieźć czajnik", Reason: "the judge's quote is not in any reply (it graded pass: asked)"}},
		{"not JSON", geminitest.One(geminitest.Text("yes")),
			RubricVerdict{Criterion: goal, Verdict: VerdictError}},
		{"no verdict", judgeStep(map[string]any{"quote": "", "reason": "?"}),
			RubricVerdict{Criterion: goal, Verdict: VerdictError, Reason: "eval: judge: the answer does not say whether the goal was reached"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, srv := judgeOn(t, tt.step)
			got, err := j.GradeGoal(context.Background(), goal, conv)
			if (err != nil) != (tt.want.Verdict == VerdictError) {
				t.Errorf("err = %v for verdict %s", err, got.Verdict)
			}
			if tt.want.Verdict == VerdictError && tt.want.Reason == "" && got.Reason != "" {
				got.Reason = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if body := string(srv.Bodies()[0]); !strings.Contains(body, jsonEscaped(goal)) || !strings.Contains(body, jsonEscaped("kurier odbierze go jutro")) {
				t.Errorf("request lacks the goal or the conversation:\n%s", body)
			}
		})
	}
}
