package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/geminitest"
	"triage/internal/testkit/openaitest"
)

// judgeCase is a follow-up whose customer a model plays for one more
// message; its reply has a rubric and the customer a goal.
const judgeCase = `scenario_id: judged_followup
description: the customer asks whether to bring the machine in; a judge grades the reply and the goal
category: conversation
input:
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
  simulated_customer:
    persona: "a busy customer who writes short messages"
    goal: "learn whether to bring the washing machine in"
    max_turns: 1
expected_output:
  scenario_instruction_used: follow-up
  status: replied
  followup: true
  reply_rubric: ["acknowledges the existing request"]
`

const (
	judgedReply1 = "Dzień dobry, dziękujemy za informację. Dopisaliśmy ją do zgłoszenia TKT-000150 (pralka SN-77120-PL)."
	judgedAsks   = "Czy mam przywieźć pralkę do serwisu?"
	judgedReply2 = "Dzień dobry, prosimy nie przywozić pralki: konsultant prowadzący zgłoszenie TKT-000150 skontaktuje się z Panią."
)

// judgedPipeline scripts the model under test (Gemini): it answers the
// email, plays the customer once, answers again.
func judgedPipeline(t *testing.T) *geminitest.Server {
	t.Helper()
	send := func(id, body string) []geminitest.Step {
		return []geminitest.Step{
			geminitest.One(geminitest.Call(id+"n", "notify_staff", geminitest.Obj("subject", "Follow-up TKT-000150", "body", "The customer wrote again."))),
			geminitest.One(geminitest.Call(id, "send_email", geminitest.Obj("to", "ewa.wrona@example.pl", "subject", "Re: Reklamacja pralki SN-77120-PL [TKT-000150]", "body", body))),
		}
	}
	steps := send("s1", judgedReply1)
	steps = append(steps, geminitest.One(geminitest.Text(geminitest.JSON(map[string]any{"done": false, "message": judgedAsks}))))
	steps = append(steps, send("s2", judgedReply2)...)
	return geminitest.New(t, steps...)
}

func rubricAnswer(quote string) openaitest.Step {
	return openaitest.Text(geminitest.JSON(map[string]any{"verdicts": []any{map[string]any{"criterion": 1, "pass": true, "quote": quote, "reason": "the ticket is named"}}}))
}

func goalAnswer(achieved bool, quote string) openaitest.Step {
	return openaitest.Text(geminitest.JSON(map[string]any{"achieved": achieved, "quote": quote, "reason": "the answer to the question"}))
}

// TestEvalJudgeOnAnotherProvider runs `triage eval` live with the model
// under test on Gemini and the judge on an OpenAI-compatible endpoint
// (--judge-provider openai, its key in its own variable): the judge grades
// the rubric and the simulated customer's goal, each quote checked against
// the replies. A judge that quotes words no reply holds is an error that
// fails the case, never a pass; a goal not reached fails it.
func TestEvalJudgeOnAnotherProvider(t *testing.T) {
	for _, tt := range []struct {
		name     string
		judge    []openaitest.Step
		wantCode int
		want     []string
	}{
		{"honest judge", []openaitest.Step{rubricAnswer("zgłoszenia TKT-000150"), goalAnswer(true, "prosimy nie przywozić pralki")}, 0,
			[]string{"judge OpenAI-compatible endpoint", "model gpt-test", `ok acknowledges the existing request: pass ("zgłoszenia TKT-000150")`,
				`Goal: ok learn whether to bring the washing machine in: pass ("prosimy nie przywozić pralki")`, "Pass rate: 1/1"}},
		{"lying judge", []openaitest.Step{rubricAnswer("Zgłoszenie TKT-000150 zostało zamknięte"), goalAnswer(true, "pralkę odbierze kurier jutro")}, 4,
			[]string{`! acknowledges the existing request: error ("Zgłoszenie TKT-000150 zostało zamknięte") - the judge's quote is not in the reply`,
				`Goal: ! learn whether to bring the washing machine in: error`, "not in any reply", "Pass rate: 0/1"}},
		{"goal not reached", []openaitest.Step{rubricAnswer("zgłoszenia TKT-000150"), goalAnswer(false, "")}, 4,
			[]string{`Goal: "learn whether to bring the washing machine in" not reached: the answer to the question`, "Pass rate: 0/1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noDefaultConfig(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "judged.yaml")
			if err := os.WriteFile(file, []byte(judgeCase), 0o644); err != nil {
				t.Fatal(err)
			}
			pipeline := judgedPipeline(t)
			judge := openaitest.New(t, tt.judge...)
			t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
			t.Setenv("GOOGLE_GEMINI_BASE_URL", pipeline.URL())
			t.Setenv("OPENAI_API_KEY", "")
			t.Setenv("JUDGE_KEY", openaitest.APIKey)
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"eval", "--min-pass-rate", "100", "--judge-provider", "openai", "--judge-model", openaitest.Model,
				"--judge-base-url", judge.BaseURL(), "--judge-api-key-env", "JUDGE_KEY", file}, strings.NewReader(""), &out, &errb)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out.String(), errb.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if pipeline.Left() != 0 || judge.Left() != 0 {
				t.Errorf("unused answers: model %d, judge %d", pipeline.Left(), judge.Left())
			}
			for _, r := range judge.Requests() {
				if r.Model != openaitest.Model || r.ResponseFormat == nil {
					t.Errorf("judge request for model %q, response format %v", r.Model, r.ResponseFormat)
				}
			}
		})
	}
}

// TestEvalJudgeOffline: offline, the judge settings are accepted but no
// judge is asked (its endpoint has no answer to give): the rubric and the
// goal are reported skipped, never passed.
func TestEvalJudgeOffline(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "judged.yaml")
	if err := os.WriteFile(file, []byte(judgeCase), 0o644); err != nil {
		t.Fatal(err)
	}
	judge := openaitest.New(t)
	t.Setenv("JUDGE_KEY", openaitest.APIKey)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"eval", "--offline", "--judge-provider", "openai", "--judge-model", openaitest.Model,
		"--judge-base-url", judge.BaseURL(), "--judge-api-key-env", "JUDGE_KEY", file}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, w := range []string{"- acknowledges the existing request: skipped", "Goal: - learn whether to bring the washing machine in: skipped - offline"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if n := len(judge.Requests()); n != 0 {
		t.Errorf("the judge was asked %d times offline", n)
	}
}

// TestEvalJudgeSettings: a judge setting that cannot work is a usage error
// naming it, before any case runs.
func TestEvalJudgeSettings(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--judge-provider", "openai"}, "--judge-provider openai needs --judge-model"},
		{[]string{"--judge-provider", "claude"}, `"claude": want gemini or openai`},
		{[]string{"--judge-model", "gemini-2.5-pro", "--judge-base-url", "http://127.0.0.1:1/v1"}, "are for --judge-provider openai"},
		{[]string{"--judge-provider", "openai", "--judge-model", "gpt-test", "--judge-api-key-env", "NO_SUCH_KEY"}, "the judge (openai, model gpt-test) has no credentials"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			noDefaultConfig(t)
			t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
			t.Setenv("OPENAI_API_KEY", "")
			t.Setenv("OPENAI_BASE_URL", "")
			var out, errb bytes.Buffer
			code := run(context.Background(), append(append([]string{"eval"}, tt.args...), "../../eval/cases/valid_warranty_001.yaml"), strings.NewReader(""), &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), tt.want)
			}
		})
	}
}
