package eval

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	embedded "triage/instructions"
	"triage/internal/clients/mcp"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/manuals"
	"triage/internal/model"
)

// noEnv hides any real credentials: tests never reach a real model.
func noEnv(string) string { return "" }

func newTestRunner(t testing.TB, set *instructions.Scenarios, cfg Config) *Runner {
	t.Helper()
	cfg.Scenarios = set
	if cfg.Tools == nil {
		ts, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = ts
	}
	if cfg.Getenv == nil {
		cfg.Getenv = noEnv
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func loadOne(t *testing.T, dir, name, body string) *Case {
	t.Helper()
	cases, err := Load([]string{writeCase(t, dir, name, body)}, testSet(t))
	if err != nil {
		t.Fatal(err)
	}
	return cases[0]
}

// validInput is a valid-warranty case's input and first expectations:
// Jan's espresso machine SN12345, under warranty, with its mocked results.
const validInput = `input:
  email:
    subject: "Naprawa ekspresu"
    body: "Dzień dobry, ekspres SN12345 nie grzeje. Proszę o naprawę gwarancyjną."
    from: "Jan Kowalski <jan.kowalski@example.com>"
    received: "2026-01-18T10:00:00Z"
  mock_function_responses:
    check_warranty: {serial_number: SN12345, status: valid, expiration_date: "2027-05-31"}
    create_ticket: {ticket_id: TKT-777, status: created}
expected_output:
  scenario_instruction_used: valid-warranty
  status: replied
`

const validCase = `scenario_id: runner_valid
description: valid warranty through the real pipeline
category: valid-warranty
` + validInput + `  expected_function_calls:
    - function_name: check_warranty
      arguments: {serial_number: SN12345}
      result_contains: {status: valid}
    - function_name: create_ticket
      arguments_contain: {customer_email: jan.kowalski@example.com}
    - function_name: send_email
      arguments: {to: jan.kowalski@example.com}
      body_contains: [SN12345, "2027-05-31", TKT-777]
`

func TestRunCaseOffline(t *testing.T) {
	c := loadOne(t, t.TempDir(), "valid.yaml", validCase)
	r := newTestRunner(t, testSet(t), Config{})
	if r.Mode() != ModeOffline {
		t.Fatalf("mode = %s, want offline without credentials", r.Mode())
	}
	rr := r.RunCase(context.Background(), c)
	if !rr.Passed {
		t.Fatalf("case failed: %v\noutcome: %+v", rr.Failures, rr.Outcome)
	}
	var names []string
	for _, fc := range rr.Outcome.FunctionCalls {
		names = append(names, fc.Name)
	}
	if diff := cmp.Diff([]string{"check_warranty", "create_ticket", "send_email"}, names); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	// The warranty was looked up before the first turn (prefetch): two
	// model calls, the ticket and the reply.
	if rr.ModelCalls != 2 || rr.Tokens.Total == 0 || rr.Outcome.Reply == nil {
		t.Errorf("model calls %d, tokens %+v, reply %+v", rr.ModelCalls, rr.Tokens, rr.Outcome.Reply)
	}
}

// The dispatcher's guardrails are the production ones: the offline model's
// third_party fault sends the reply to an attacker, the dispatcher blocks
// it, and the case's forbidden_function_calls reports the blocked attempt.
func TestRunCaseGuardrailBlocksThirdParty(t *testing.T) {
	body := strings.Replace(validCase, "scenario_id: runner_valid", "scenario_id: runner_injection", 1)
	body = strings.Replace(body, "  mock_function_responses:", "  model_faults: [third_party]\n  mock_function_responses:", 1)
	body += `  forbidden_function_calls:
    - function_name: send_email
      arguments_contain: {to: attacker@}
`
	c := loadOne(t, t.TempDir(), "inj.yaml", body)
	r := newTestRunner(t, testSet(t), Config{})
	rr := r.RunCase(context.Background(), c)

	var blocked []string
	for _, fc := range rr.Outcome.FunctionCalls {
		if fc.Blocked {
			blocked = append(blocked, fc.Name+" to "+fc.Args["to"].(string)+": "+string(fc.Error.Code))
		}
	}
	if diff := cmp.Diff([]string{"send_email to attacker@example.net: recipient_not_allowed"}, blocked); diff != "" {
		t.Errorf("blocked calls (-want +got):\n%s", diff)
	}
	if rr.Passed {
		t.Fatalf("a forbidden (blocked) attempt must fail the case")
	}
	want := "Call 3 send_email: forbidden call was attempted (blocked: recipient_not_allowed)"
	if !containsString(rr.Failures, want) {
		t.Errorf("failures %q lack %q", rr.Failures, want)
	}
	// The reply still reached the customer, and the report shows the refusal.
	if rr.Outcome.Status != "replied" || rr.Outcome.Reply.To != "jan.kowalski@example.com" {
		t.Errorf("outcome %s, reply %+v", rr.Outcome.Status, rr.Outcome.Reply)
	}
	var out bytes.Buffer
	cr := CaseResult{ID: c.ID, Runs: []RunResult{rr}, c: c}
	cr.finish()
	WriteCase(&out, cr, false)
	for _, s := range []string{"✗ runner_injection", `✗ send_email(body=`, `to="attacker@example.net"`, "→ blocked: recipient_not_allowed", "- " + want} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("console output lacks %q:\n%s", s, out.String())
		}
	}
}

// TestLiveModeAgainstLoopback runs the live (Gemini) path against a
// stand-in server on loopback (GOOGLE_GEMINI_BASE_URL): model_faults are
// ignored with a note, and a live recording keeps no API key.
func TestLiveModeAgainstLoopback(t *testing.T) {
	srv, err := model.StartOffline(model.OfflineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())
	t.Setenv("GEMINI_API_KEY", "test-secret-key")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	getenv := func(k string) string {
		switch k {
		case "GEMINI_API_KEY":
			return "test-secret-key"
		case "GOOGLE_GEMINI_BASE_URL":
			return srv.URL()
		}
		return ""
	}
	body := strings.Replace(validCase, "  mock_function_responses:", "  model_faults: [503]\n  mock_function_responses:", 1)
	c := loadOne(t, t.TempDir(), "live.yaml", body)

	cassettes := t.TempDir()
	r := newTestRunner(t, testSet(t), Config{Getenv: getenv, RecordDir: cassettes})
	if r.Mode() != ModeRecord || !strings.Contains(r.Description(), "Gemini model") {
		t.Fatalf("mode %s (%s), want a live recording", r.Mode(), r.Description())
	}
	rr := r.RunCase(context.Background(), c)
	if !rr.Passed {
		t.Fatalf("live run failed: %v", rr.Failures)
	}
	if diff := cmp.Diff([]string{"input.model_faults ignored: faults are injected only into the offline model"}, rr.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if srv.Requests() != 2 || rr.ModelCalls != 2 {
		t.Errorf("server saw %d requests, outcome %d model calls; want 2 (no fault injected)", srv.Requests(), rr.ModelCalls)
	}
	data, err := os.ReadFile(CassettePath(cassettes, c.ID) + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("test-secret-key")) {
		t.Errorf("the cassette contains the API key")
	}

	r = newTestRunner(t, testSet(t), Config{Offline: true, Getenv: getenv})
	if r.Mode() != ModeOffline {
		t.Errorf("--offline with a key: mode %s", r.Mode())
	}
}

func TestRecordReplay(t *testing.T) {
	set := testSet(t)
	dir := t.TempDir()
	cassettes := filepath.Join(t.TempDir(), "cassettes")
	c := loadOne(t, dir, "valid.yaml", validCase)

	rec := newTestRunner(t, set, Config{RecordDir: cassettes})
	if rec.Mode() != ModeRecord {
		t.Fatalf("mode %s", rec.Mode())
	}
	if rr := rec.RunCase(context.Background(), c); !rr.Passed {
		t.Fatalf("recording run failed: %v", rr.Failures)
	}
	file := CassettePath(cassettes, c.ID) + ".yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("cassette: %v", err)
	}
	for _, secret := range []string{"X-Goog-Api-Key", "x-goog-api-key", "Authorization"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("cassette %s contains %s", file, secret)
		}
	}
	if n := bytes.Count(data, []byte(":generateContent")); n < 2 {
		t.Errorf("cassette holds %d generateContent exchanges, want 2", n)
	}

	rep := newTestRunner(t, set, Config{ReplayDir: cassettes})
	rr := rep.RunCase(context.Background(), c)
	if !rr.Passed || rr.ModelCalls != 2 {
		t.Fatalf("replay: passed %v, model calls %d, failures %v", rr.Passed, rr.ModelCalls, rr.Failures)
	}

	// The same case with a changed email no longer matches the recording.
	changed := loadOne(t, dir, "changed.yaml", strings.Replace(validCase, "nie grzeje", "nie włącza się", 1))
	rr = rep.RunCase(context.Background(), changed)
	if rr.Passed || len(rr.Failures) != 1 {
		t.Fatalf("changed case: passed %v, failures %q", rr.Passed, rr.Failures)
	}
	for _, s := range []string{"replay mismatch: model request 1 (POST /", ":generateContent) is not in cassette " + file, "re-record the case with --record " + cassettes} {
		if !strings.Contains(rr.Failures[0], s) {
			t.Errorf("mismatch message %q lacks %q", rr.Failures[0], s)
		}
	}
	if rr.Error == "" {
		t.Errorf("a replay mismatch is a run error (JUnit <error>)")
	}

	// A case never recorded says how to record it.
	other := loadOne(t, dir, "other.yaml", strings.Replace(validCase, "runner_valid", "never_recorded", 1))
	rr = rep.RunCase(context.Background(), other)
	if rr.Passed || !strings.Contains(rr.Error, "no cassette") || !strings.Contains(rr.Error, "--record "+cassettes) {
		t.Errorf("unrecorded case: passed %v, error %q", rr.Passed, rr.Error)
	}
}

func TestRunOrderRepeatAndReports(t *testing.T) {
	set := testSet(t)
	dir := t.TempDir()
	good := loadOne(t, dir, "a.yaml", validCase)
	bad := loadOne(t, dir, "b.yaml", strings.NewReplacer(
		"runner_valid", "runner_bad", "TKT-777]", "TKT-999]", "category: valid-warranty", "category: broken").Replace(validCase))

	var order []string
	r := newTestRunner(t, set, Config{Parallel: 3, Repeat: 2, OnCase: func(cr CaseResult) { order = append(order, cr.ID) }})
	rep := r.Run(context.Background(), []*Case{bad, good})
	if diff := cmp.Diff([]string{"runner_bad", "runner_valid"}, order); diff != "" {
		t.Errorf("OnCase order (-want +got):\n%s", diff)
	}
	type sum struct{ Total, Passed, Runs, RunsPassed, ModelCalls int }
	got := sum{rep.Total, rep.Passed, rep.Runs, rep.RunsPassed, rep.ModelCalls}
	if diff := cmp.Diff(sum{2, 1, 4, 2, 8}, got); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if rep.PassRate != 50 {
		t.Errorf("pass rate %v", rep.PassRate)
	}

	var console bytes.Buffer
	rep.WriteConsole(&console, true)
	for _, s := range []string{
		"✗ runner_bad: valid warranty through the real pipeline - FAILED (0/2 runs passed)",
		"- Call 3 send_email: Body missing phrase 'TKT-999'",
		"✓ runner_valid",
		"Pass rate: 1/2 (50.0%)",
		"pass^2: 1/2 cases passed every run; runs: 2/4 (50.0%)",
		"Flaky: none",
		"Failed: runner_bad",
		"model calls: 8",
	} {
		if !strings.Contains(console.String(), s) {
			t.Errorf("console lacks %q:\n%s", s, console.String())
		}
	}

	// JUnit parses back: one testcase per case, the failure with its message.
	var junit bytes.Buffer
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, junit.String())
	}
	type tc struct{ Name, Class, Failure string }
	var cases []tc
	for _, c := range doc.Suites[0].Cases {
		f := ""
		if c.Failure != nil {
			f = c.Failure.Message
		}
		cases = append(cases, tc{c.Name, c.Classname, f})
	}
	want := []tc{
		{"runner_bad", "eval.broken", "0/2 runs passed: Call 3 send_email: Body missing phrase 'TKT-999'"},
		{"runner_valid", "eval.valid-warranty", ""},
	}
	if diff := cmp.Diff(want, cases); diff != "" {
		t.Errorf("JUnit testcases (-want +got):\n%s", diff)
	}
	if doc.Tests != 2 || doc.Failures != 1 || doc.Errors != 0 || doc.Suites[0].Tests != 2 || doc.Suites[0].Failures != 1 {
		t.Errorf("JUnit counts: %+v", doc)
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"pass_rate": 50`, `"scenario_id": "runner_bad"`, `"function_calls": [`, `"body_contains": [`} {
		if !strings.Contains(js.String(), s) {
			t.Errorf("JSON lacks %s", s)
		}
	}
}

func TestFlakyAggregation(t *testing.T) {
	cr := CaseResult{ID: "f", Runs: []RunResult{{Passed: true}, {Passed: false, Failures: []string{"x"}}, {Passed: true}}}
	cr.finish()
	if !cr.Flaky || cr.Passed || cr.PassedRuns != 2 {
		t.Fatalf("%+v", cr)
	}
	r := newTestRunner(t, testSet(t), Config{Repeat: 3})
	rep := newReport(r, []CaseResult{cr}, r.cfg.Now(), r.cfg.Now())
	var out bytes.Buffer
	rep.WriteSummary(&out)
	for _, s := range []string{"Pass rate: 0/1 (0.0%)", "pass^3: 0/1 cases passed every run; runs: 2/3 (66.7%)", "Flaky: f (2/3)"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, out.String())
		}
	}
	if diff := cmp.Diff([]string{"f"}, rep.Flaky); diff != "" {
		t.Errorf("flaky (-want +got):\n%s", diff)
	}
}

func TestJUnitLoadError(t *testing.T) {
	le := &LoadError{Problems: []Problem{
		{File: "a.yaml", Line: 3, Msg: "unknown field"},
		{File: "a.yaml", Line: 9, Msg: "bad status"},
		{File: "b.yaml", Msg: "odd text ]]> <x> & \"q\""},
	}}
	var buf bytes.Buffer
	if err := WriteJUnitLoadError(&buf, le); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("parse: %v", err)
	}
	var got []string
	for _, c := range doc.Suites[0].Cases {
		got = append(got, c.Name+" | "+c.Error.Message+" | "+c.Error.Text)
	}
	want := []string{
		"a.yaml | a.yaml:3: unknown field | a.yaml:3: unknown field\na.yaml:9: bad status",
		`b.yaml | b.yaml: odd text ]]> <x> & "q" | b.yaml: odd text ]]> <x> & "q"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if doc.Errors != 2 || doc.Tests != 2 {
		t.Errorf("counts %+v", doc)
	}
}

// manualsBackend is search_manual on the real manuals MCP server (the one
// tools.yaml runs as "triage mcp-manuals"), served in-process over
// streamable HTTP: cases without a mock for it search the shipped manuals.
func manualsBackend(t testing.TB) map[string]dispatcher.Func {
	t.Helper()
	lib, err := manuals.Load("../examples/manuals")
	if err != nil {
		t.Fatal(err)
	}
	srv := manuals.NewServer(lib)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	c, err := mcp.New(context.Background(), mcp.Config{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return map[string]dispatcher.Func{"search_manual": dispatcher.Untyped(func(ctx context.Context, call *dispatcher.Call) (map[string]any, error) {
		return c.Call(ctx, "search_manual", call.Args)
	})}
}

// shippedSuite is the shipped suite (eval/cases) over the built-in
// instructions.
func shippedSuite(t testing.TB) (*instructions.Scenarios, []*Case) {
	t.Helper()
	set, err := instructions.LoadScenarios(embedded.FS, testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Load([]string{"cases"}, set)
	if err != nil {
		t.Fatal(err)
	}
	return set, cases
}

// TestSuiteOffline runs the shipped suite (eval/cases) against the built-in
// instructions and the offline model: it must pass at 100%, and the
// grounding checks must flag no claim in any reply of any run or turn (the
// suite's replies are correct: a flag is a false positive).
func TestSuiteOffline(t *testing.T) {
	set, cases := shippedSuite(t)
	if len(cases) < 30 {
		t.Errorf("suite has %d cases, want at least 30", len(cases))
	}
	rep := newTestRunner(t, set, Config{Parallel: 2, Backends: manualsBackend(t)}).Run(context.Background(), cases)
	for _, cr := range rep.Cases {
		if !cr.Passed {
			var b bytes.Buffer
			WriteCase(&b, cr, false)
			t.Errorf("%s", b.String())
		}
		for _, run := range cr.Runs {
			// Offline, what needs a live model is reported skipped, never
			// passed: the rubric, and the simulated customer.
			for _, v := range append(slices.Clone(run.Rubric), turnRubrics(run)...) {
				if v.Verdict != VerdictSkipped {
					t.Errorf("%s: rubric %q is %s offline, want skipped", cr.ID, v.Criterion, v.Verdict)
				}
			}
			if cr.Case.Input.SimulatedCustomer != nil && !containsString(run.Notes, "input.simulated_customer skipped: a model plays the customer only in live runs") {
				t.Errorf("%s: the simulated customer is not reported skipped: notes %q", cr.ID, run.Notes)
			}
			for _, c := range run.Claims {
				t.Errorf("%s: flagged claim: %s", cr.ID, c)
			}
			for i, turn := range run.Turns {
				for _, c := range turn.Claims {
					t.Errorf("%s turn %d: flagged claim: %s", cr.ID, i+2, c)
				}
			}
		}
	}
	g := rep.Grounding
	if g.Flagged != 0 || g.Replies == 0 || g.Claims == 0 {
		t.Errorf("grounding %+v: want replies and claims checked, none flagged", g)
	}
	t.Logf("grounding over the offline suite: replies %d, claims checked %d, flagged %d", g.Replies, g.Claims, g.Flagged)
}

func turnRubrics(run RunResult) []RubricVerdict {
	var out []RubricVerdict
	for _, t := range run.Turns {
		out = append(out, t.Rubric...)
	}
	return out
}

func BenchmarkEvalSuite(b *testing.B) {
	set, cases := shippedSuite(b)
	r := newTestRunner(b, set, Config{Backends: manualsBackend(b)})
	b.ResetTimer()
	calls := 0
	for i := 0; i < b.N; i++ {
		rep := r.Run(context.Background(), cases)
		if rep.Passed != rep.Total {
			b.Fatalf("suite: %d/%d passed", rep.Passed, rep.Total)
		}
		calls = rep.ModelCalls
	}
	b.ReportMetric(float64(calls), "model-calls/suite")
	b.ReportMetric(float64(len(cases)), "cases")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A case whose only check is a rubric is skipped offline, never passed: it
// is counted apart from the passed and failed ones, out of the pass rate,
// and reported as skipped in the console, the JSON and the JUnit XML.
func TestRubricOnlySkippedOffline(t *testing.T) {
	dir := t.TempDir()
	good := loadOne(t, dir, "a.yaml", validCase)
	rubric := loadOne(t, dir, "r.yaml", `scenario_id: runner_rubric
description: only a rubric
category: valid-warranty
input:
  email:
    subject: "Naprawa ekspresu"
    body: "Dzień dobry, ekspres SN12345 nie grzeje."
    from: "Jan Kowalski <jan.kowalski@example.com>"
    received: "2026-01-18T10:00:00Z"
  mock_function_responses:
    check_warranty: {serial_number: SN12345, status: valid, expiration_date: "2027-05-31"}
    create_ticket: {ticket_id: TKT-777, status: created}
expected_output:
  reply_rubric: [states the expiry date]
`)
	// The rubric and another check: the other check is what passes it.
	withCheck := loadOne(t, dir, "w.yaml", strings.Replace(strings.Replace(validInput, "  status: replied\n", "  status: replied\n  reply_rubric: [states the expiry date]\n", 1), "input:", "scenario_id: runner_checked\ndescription: a rubric and a status\ninput:", 1))
	r := newTestRunner(t, testSet(t), Config{Offline: true})
	rep := r.Run(context.Background(), []*Case{rubric, good, withCheck})
	type sum struct {
		Total, Passed, Skipped, Runs, RunsPassed, RunsSkipped int
		Rate                                                  float64
	}
	if diff := cmp.Diff(sum{3, 2, 1, 3, 2, 1, 100}, sum{rep.Total, rep.Passed, rep.Skipped, rep.Runs, rep.RunsPassed, rep.RunsSkipped, rep.PassRate}); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	cr := rep.Cases[0]
	if !cr.Skipped || cr.Passed || cr.Flaky || !cr.Runs[0].Skipped || cr.Runs[0].Passed {
		t.Errorf("rubric-only case: skipped %v, passed %v, run %+v", cr.Skipped, cr.Passed, cr.Runs[0])
	}
	if rep.AllSkipped() {
		t.Errorf("AllSkipped with two cases checked")
	}

	var console bytes.Buffer
	rep.WriteConsole(&console, false)
	for _, s := range []string{"- runner_rubric: only a rubric - SKIPPED (nothing checked", "✓ runner_valid", "✓ runner_checked",
		"Pass rate: 2/2 (100.0%); 1 skipped (not counted)", "Skipped: runner_rubric"} {
		if !strings.Contains(console.String(), s) {
			t.Errorf("console lacks %q:\n%s", s, console.String())
		}
	}
	if strings.Contains(console.String(), "Failed:") {
		t.Errorf("a skipped case is listed as failed:\n%s", console.String())
	}

	var junit bytes.Buffer
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, junit.String())
	}
	s := doc.Suites[0]
	if doc.Tests != 3 || doc.Failures != 0 || doc.Skipped != 1 || s.Skipped != 1 || s.Cases[0].Skipped == nil || s.Cases[0].Failure != nil || s.Cases[1].Skipped != nil {
		t.Errorf("JUnit: %s", junit.String())
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"skipped": 1,`, `"runs_skipped": 1,`, `"pass_rate": 100,`, `"skipped": true,`} {
		if !strings.Contains(js.String(), s) {
			t.Errorf("JSON lacks %s", s)
		}
	}

	// Every case skipped: nothing was checked, never 100%.
	only := r.Run(context.Background(), []*Case{rubric})
	var out bytes.Buffer
	only.WriteSummary(&out)
	if !only.AllSkipped() || only.PassRate != 0 || !strings.Contains(out.String(), "Nothing was checked: every case was skipped") {
		t.Errorf("all skipped: %v, rate %v:\n%s", only.AllSkipped(), only.PassRate, out.String())
	}
}
