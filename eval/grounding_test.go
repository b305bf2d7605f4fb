package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	embedded "triage/instructions"
	"triage/internal/instructions"
	"triage/internal/testkit/geminitest"
)

// scriptedPipeline points the runner's live model at a scripted Gemini
// server on loopback: the pipeline's model says exactly what steps say.
func scriptedPipeline(t *testing.T, steps ...geminitest.Step) (*geminitest.Server, func(string) string) {
	t.Helper()
	srv := geminitest.New(t, steps...)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())
	t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	return srv, func(k string) string {
		switch k {
		case "GEMINI_API_KEY":
			return geminitest.APIKey
		case "GOOGLE_GEMINI_BASE_URL":
			return srv.URL()
		}
		return ""
	}
}

// shippedTools are the shipped bindings; with ungrounded, send_email's
// grounded: true is removed, as a team that turns the check off would.
func shippedTools(t *testing.T, ungrounded bool) *instructions.Tools {
	t.Helper()
	if !ungrounded {
		ts, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, embedded.FS); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, instructions.ToolsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	off := strings.Replace(string(b), "    grounded: true\n", "", 1)
	if off == string(b) {
		t.Fatal("tools.yaml: no grounded: true to remove")
	}
	if err := os.WriteFile(p, []byte(off), 0o644); err != nil {
		t.Fatal(err)
	}
	ts, err := instructions.LoadTools(os.DirFS(dir), instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if ts.Tools["send_email"].Grounded {
		t.Fatal("send_email is still grounded")
	}
	return ts
}

const groundingCase = `scenario_id: grounding_live
description: a valid warranty answered by a scripted model
category: valid-warranty
` + validInput

// workSteps open the ticket (the pipeline looked the warranty up before
// the first turn), then send each body in turn.
func workSteps(bodies ...string) []geminitest.Step {
	steps := []geminitest.Step{
		geminitest.One(geminitest.Call("c2", "create_ticket", geminitest.Obj("serial_number", "SN12345", "customer_email", "jan.kowalski@example.com", "priority", "normal"))),
	}
	for _, b := range bodies {
		steps = append(steps, geminitest.One(geminitest.Call("s", "send_email", geminitest.Obj("to", "jan.kowalski@example.com", "subject", "Re: Naprawa ekspresu", "body", b, "decision", "guarantee"))))
	}
	return steps
}

// TestReplyGroundingOffline: the eval's own grounding check reads the reply
// that went out, whatever tools.yaml says. With grounded: true removed, a
// model's invented expiry date reaches the customer, and the case fails
// naming it; with the shipped file the dispatcher refuses it first and the
// refusal is the flagged claim.
func TestReplyGroundingOffline(t *testing.T) {
	const (
		invented = "Dzień dobry, gwarancja SN12345 jest ważna do 31 maja 2029. Zgłoszenie: TKT-777."
		correct  = "Dzień dobry, gwarancja SN12345 jest ważna do 31 maja 2027. Zgłoszenie: TKT-777."
	)
	set, err := instructions.LoadScenarios(embedded.FS, testRoutes)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("grounded off in tools.yaml", func(t *testing.T) {
		_, getenv := scriptedPipeline(t, workSteps(invented)...)
		c := loadOne(t, t.TempDir(), "g.yaml", groundingCase)
		r := newTestRunner(t, set, Config{Getenv: getenv, Tools: shippedTools(t, true)})
		rr := r.RunCase(context.Background(), c)
		if rr.Outcome.Status != "replied" {
			t.Fatalf("status %s (%s), want replied: the dispatcher does not check", rr.Outcome.Status, rr.Outcome.Detail)
		}
		want := `Call 3 send_email: the body states "31 maja 2029" (date), which nothing this email gave the model backs (grounding)`
		if rr.Passed || !containsString(rr.Failures, want) {
			t.Errorf("passed %v, failures %q; want the failure %q", rr.Passed, rr.Failures, want)
		}
		if diff := cmp.Diff(Grounding{Replies: 1, Claims: 3, Flagged: 1}, rr.Grounding); diff != "" {
			t.Errorf("grounding (-want +got):\n%s", diff)
		}
		if len(rr.Claims) != 1 || !strings.Contains(rr.Claims[0], `"31 maja 2029" (date)`) {
			t.Errorf("flagged claims %q", rr.Claims)
		}
	})

	t.Run("grounded on: the dispatcher refuses, the model corrects", func(t *testing.T) {
		_, getenv := scriptedPipeline(t, workSteps(invented, correct)...)
		c := loadOne(t, t.TempDir(), "g.yaml", groundingCase)
		r := newTestRunner(t, set, Config{Getenv: getenv, Tools: shippedTools(t, false)})
		rr := r.RunCase(context.Background(), c)
		if !rr.Passed {
			t.Fatalf("failures %q", rr.Failures)
		}
		if diff := cmp.Diff(Grounding{Replies: 1, Claims: 3, Flagged: 1}, rr.Grounding); diff != "" {
			t.Errorf("grounding (-want +got):\n%s", diff)
		}
		if len(rr.Claims) != 1 || !strings.Contains(rr.Claims[0], "call 3 send_email") || !strings.Contains(rr.Claims[0], `"31 maja 2029" (date)`) {
			t.Errorf("flagged claims %q", rr.Claims)
		}
	})

	t.Run("a correct reply flags nothing", func(t *testing.T) {
		_, getenv := scriptedPipeline(t, workSteps(correct)...)
		c := loadOne(t, t.TempDir(), "g.yaml", groundingCase)
		r := newTestRunner(t, set, Config{Getenv: getenv, Tools: shippedTools(t, true)})
		rr := r.RunCase(context.Background(), c)
		if !rr.Passed || len(rr.Claims) != 0 {
			t.Fatalf("passed %v, failures %q, claims %q", rr.Passed, rr.Failures, rr.Claims)
		}
	})
}
