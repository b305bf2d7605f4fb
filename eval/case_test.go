package eval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/message"
)

var testRoutes = []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"}

func testSet(t testing.TB) *instructions.Scenarios {
	t.Helper()
	set, err := instructions.LoadScenarios(os.DirFS("testdata/instructions"), testRoutes)
	if err != nil {
		t.Fatalf("load test instructions: %v", err)
	}
	return set
}

// writeCase writes a case file into dir and returns its path.
func writeCase(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodCase = `scenario_id: ok_001
description: fine
input:
  email:
    subject: "Naprawa"
    body: "SN12345 nie działa"
    from: "jan@example.com"
expected_output:
  scenario_instruction_used: valid-warranty
  expected_function_calls:
    - function_name: check_warranty
`

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string // problems, the file shown as case.yaml
	}{
		{
			name: "unknown fields name file, line and the allowed fields",
			body: `scenario_id: x
descripton: typo
input:
  email:
    subject: s
    body: b
    from: a@example.com
    form: typo
expected_output:
  status: replied
  expected_function_calls:
    - function_name: send_email
      body_contain: ["x"]
`,
			want: []string{
				`case.yaml:2: unknown field "descripton" (in the case: scenario_id, description, category, created, input, expected_output)`,
				`case.yaml:8: unknown field "form" (in input.email: subject, body, from, received, headers)`,
				`case.yaml:13: unknown field "body_contain" (in an expected call: function_name, arguments, arguments_contain, result_contains, body_contains, body_not_contains, blocked)`,
			},
		},
		{
			name: "functions the scenario does not declare",
			body: `scenario_id: x
input:
  email:
    subject: s
    body: b
    from: a@example.com
  mock_function_responses:
    check_warranty: {status: valid}
expected_output:
  scenario_instruction_used: missing-info
  expected_function_calls:
    - function_name: send_email
    - function_name: create_tiket
`,
			want: []string{
				`case.yaml:8: input.mock_function_responses.check_warranty: function "check_warranty" is not declared by scenario "missing-info" (it declares: send_email)`,
				`case.yaml:13: expected_output.expected_function_calls[1].function_name: function "create_tiket" is not declared by scenario "missing-info" (it declares: send_email)`,
			},
		},
		{
			name: "unknown scenario, status, match and forbidden function",
			body: `scenario_id: x
input:
  email: {subject: s, body: b, from: a@example.com}
expected_output:
  scenario_instruction_used: valid-waranty
  status: answered
  match: fuzzy
  forbidden_function_calls:
    - delete_everything
    - {function_name: send_email, arguments_contain: {to: evil}}
`,
			want: []string{
				`case.yaml:5: expected_output.scenario_instruction_used: no scenario "valid-waranty" (loaded: graceful-degradation, missing-info, valid-warranty)`,
				`case.yaml:6: expected_output.status "answered": want one of replied, drafted, skipped, failed`,
				`case.yaml:7: expected_output.match "fuzzy": want one of exact, in_order, any_order, subset`,
				`case.yaml:9: expected_output.forbidden_function_calls[0]: no loaded scenario declares function "delete_everything"`,
			},
		},
		{
			name: "bad forbidden item field",
			body: `scenario_id: x
input:
  email: {subject: s, body: b, from: a@example.com}
expected_output:
  forbidden_function_calls:
    - {function_name: send_email, args: {to: evil}}
`,
			want: []string{`case.yaml:6: unknown field "args" (in a forbidden call: function_name, arguments_contain)`},
		},
		{
			name: "input problems",
			body: `scenario_id: x
input:
  email:
    subject: s
    body: b
    from: "not an address"
    received: "yesterday"
    headers:
      "Bad Header": x
  model_faults: [503, meteor]
  mock_function_responses:
    send_email: []
    create_ticket: {error: {message: no code}}
    check_warranty: [{status: valid}, 7]
expected_output:
  status: replied
`,
			want: []string{
				`case.yaml:6: input.email.from "not an address": mail: no angle-addr`,
				`case.yaml:7: input.email.received "yesterday": want RFC 3339, e.g. 2026-01-18T10:00:00Z`,
				`case.yaml:9: input.email.headers: "Bad Header" is not a valid header name`,
				`case.yaml:10: input.model_faults: offline: unknown fault "meteor" (known: 503, 429, empty, safety_first, malformed_call, third_party, hang)`,
				`case.yaml:14: input.mock_function_responses.check_warranty: [1] (line 14): each response is a mapping`,
				`case.yaml:13: input.mock_function_responses.create_ticket: error.code is required`,
				`case.yaml:12: input.mock_function_responses.send_email: an empty list; give at least one response`,
			},
		},
		{
			name: "email and eml together; missing eml file",
			body: `scenario_id: x
input:
  email: {subject: s, body: b, from: a@example.com}
  eml: nothere.eml
expected_output:
  status: replied
`,
			want: []string{`case.yaml:4: input.email and input.eml are alternatives; give one`},
		},
		{
			name: "eml path is relative to the case file",
			body: `scenario_id: x
input:
  eml: mail/nothere.eml
expected_output:
  status: replied
`,
			want: []string{`case.yaml:3: input.eml: DIR/mail/nothere.eml does not exist (paths are relative to the case file)`},
		},
		{
			name: "no expectation, no id, no input",
			body: `description: nothing
expected_output: {}
`,
			want: []string{
				`case.yaml:1: scenario_id is required`,
				`case.yaml:1: input.email or input.eml is required`,
				`case.yaml:2: expected_output states no expectation; a case must check something`,
			},
		},
		{
			name: "skipped with calls; body_contains on a non-email call",
			body: `scenario_id: x
input:
  email: {subject: s, body: b, from: a@example.com}
expected_output:
  status: skipped
  expected_function_calls:
    - function_name: check_warranty
      body_contains: [x]
`,
			want: []string{
				`case.yaml:6: expected_output: a skipped email makes no function calls, but expected_function_calls is not empty`,
				`case.yaml:8: expected_output.expected_function_calls[0]: body_contains and body_not_contains apply only to send_email`,
			},
		},
		{
			name: "YAML syntax error",
			body: "scenario_id: x\ninput: [\n",
			want: []string{`case.yaml:2: did not find expected node content`},
		},
		{
			name: "two documents",
			body: goodCase + "---\n" + goodCase,
			want: []string{`case.yaml: more than one YAML document; a case file holds one case`},
		},
	}
	set := testSet(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeCase(t, dir, "case.yaml", tt.body)
			cases, err := Load([]string{p}, set)
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load = %d cases, %v; want a *LoadError", len(cases), err)
			}
			var got []string
			for _, pr := range le.Problems {
				s := strings.ReplaceAll(pr.String(), p, "case.yaml")
				got = append(got, strings.ReplaceAll(s, dir, "DIR"))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if cases != nil {
				t.Errorf("Load returned cases along with problems")
			}
		})
	}
}

func TestLoadDirectoryAndDuplicates(t *testing.T) {
	set := testSet(t)
	dir := t.TempDir()
	writeCase(t, dir, "b.yaml", goodCase)
	writeCase(t, dir, "a.yml", strings.Replace(goodCase, "ok_001", "ok_000", 1))
	writeCase(t, dir, "notes.txt", "not a case")
	if err := os.Mkdir(filepath.Join(dir, "cassettes"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeCase(t, filepath.Join(dir, "cassettes"), "ok_001.yaml", "interactions: []\n")

	cases, err := Load([]string{dir}, set)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var ids []string
	for _, c := range cases {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"ok_000", "ok_001"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}

	writeCase(t, dir, "c.yaml", goodCase)
	_, err = Load([]string{dir}, set)
	if err == nil || !strings.Contains(err.Error(), `c.yaml:1: scenario_id "ok_001" is also used by `+filepath.Join(dir, "b.yaml")) {
		t.Errorf("duplicate id: err = %v", err)
	}

	empty := t.TempDir()
	if _, err := Load([]string{empty}, set); err == nil || !strings.Contains(err.Error(), "no case files") {
		t.Errorf("empty dir: err = %v", err)
	}
}

// TestLoadBasicFormat loads a case in the basic format unchanged.
func TestLoadBasicFormat(t *testing.T) {
	cases, err := Load([]string{"testdata/basic_case.yaml"}, testSet(t))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	c := cases[0]
	if c.ID != "valid_warranty_002" || c.Expected.Match != MatchExact || len(c.Expected.ExpectedFunctionCalls) != 3 {
		t.Fatalf("case = %+v", c)
	}
	want := map[string][]MockResponse{
		"check_warranty": {{Result: map[string]any{"serial_number": "SN12345", "status": "valid", "expiration_date": "2025-12-31"}}},
		"create_ticket":  {{Result: map[string]any{"ticket_id": "TKT-12345", "status": "created"}}},
		"send_email":     {{Result: map[string]any{"message_id": "msg-abc123", "status": "sent"}}},
	}
	if diff := cmp.Diff(want, c.Mocks); diff != "" {
		t.Errorf("mocks (-want +got):\n%s", diff)
	}
	// And it passes through the real pipeline with the offline model, in
	// the inbox it was written for: one that answers in Polish only (it
	// expects "gwarancja" in the reply to "I need RMA for serial number
	// SN12345", which the default languages tell as English).
	polishOnly, err := language.New(language.Config{Languages: []string{"pl"}, Default: "pl"})
	if err != nil {
		t.Fatal(err)
	}
	rr := newTestRunner(t, testSet(t), Config{Language: polishOnly}).RunCase(context.Background(), c)
	if !rr.Passed {
		t.Errorf("basic case failed: %q", rr.Failures)
	}
}

func TestRender(t *testing.T) {
	raw, err := Render("case/ą 1", &Email{
		Subject:  "Zgłoszenie naprawy",
		Body:     "Dzień dobry,\nnumer SN12345.",
		From:     "Jan Kowalski <jan@example.com>",
		Received: "2026-01-18T10:00:00Z",
		Headers:  map[string]string{"auto-submitted": "auto-replied", "Reply-To": "Jan Prywatny <jan@example.org>", "X-Note": "zażółć"},
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := message.Parse(raw)
	if err != nil {
		t.Fatalf("parse rendered message: %v\n%s", err, raw)
	}
	got := map[string]any{
		"message_id": m.MessageID, "from": m.From.Address, "name": m.From.Name, "reply_to": m.ReplyTo,
		"to": m.To, "subject": m.Subject, "date": m.Date.UTC().Format("2006-01-02T15:04:05Z"),
		"text": strings.TrimSpace(m.Text), "auto": m.HeaderValue("Auto-Submitted"), "note": m.HeaderValue("X-Note"),
		"problems": len(m.Problems),
	}
	want := map[string]any{
		"message_id": "<case---1@eval.triage.invalid>", "from": "jan@example.com", "name": "Jan Kowalski", "reply_to": "jan@example.org",
		"to": []string{"serwis@example.com"}, "subject": "Zgłoszenie naprawy", "date": "2026-01-18T10:00:00Z",
		"text": "Dzień dobry,\nnumer SN12345.", "auto": "auto-replied", "note": "zażółć",
		"problems": 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered message (-want +got):\n%s\n%s", diff, raw)
	}
	if !strings.Contains(string(raw), "\r\n\r\n") || strings.Contains(strings.ReplaceAll(string(raw), "\r\n", ""), "\n") {
		t.Errorf("rendered message must use CRLF line endings:\n%q", raw)
	}
}
