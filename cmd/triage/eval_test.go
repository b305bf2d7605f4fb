package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/eval"
)

const evalTestInstructions = "../../eval/testdata/instructions"

const evalPassing = `scenario_id: cli_pass
description: missing serial, asks for it
category: missing-info
input:
  email:
    subject: "Naprawa gwarancyjna"
    body: "Dzień dobry, mój czajnik nie działa, proszę o naprawę w ramach gwarancji."
    from: "ala@example.com"
expected_output:
  scenario_instruction_used: missing-info
  status: replied
  expected_function_calls:
    - function_name: send_email
      arguments: {to: ala@example.com}
`

func writeEvalCase(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runEvalCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	all := append([]string{"eval", "--offline", "--instructions", evalTestInstructions}, args...)
	code := run(context.Background(), all, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestEvalExitCodes(t *testing.T) {
	dir := t.TempDir()
	writeEvalCase(t, dir, "pass.yaml", evalPassing)
	failing := strings.NewReplacer("cli_pass", "cli_fail", "category: missing-info", "category: other",
		"to: ala@example.com", "to: somebody@example.com").Replace(evalPassing)
	mixed := t.TempDir()
	writeEvalCase(t, mixed, "pass.yaml", evalPassing)
	writeEvalCase(t, mixed, "fail.yaml", failing)
	broken := t.TempDir()
	writeEvalCase(t, broken, "pass.yaml", evalPassing)
	writeEvalCase(t, broken, "broken.yaml", strings.NewReplacer("cli_pass", "cli_broken", "function_name: send_email", "function_name: check_warranty").Replace(evalPassing))

	// A case whose only check is a rubric: offline, nothing grades it.
	rubricOnly := `scenario_id: cli_rubric
description: only a rubric
category: missing-info
input:
  email:
    subject: "Naprawa gwarancyjna"
    body: "Dzień dobry, mój czajnik nie działa, proszę o naprawę w ramach gwarancji."
    from: "ala@example.com"
expected_output:
  reply_rubric:
    - asks for the serial number politely
`
	onlyRubric := t.TempDir()
	writeEvalCase(t, onlyRubric, "rubric.yaml", rubricOnly)
	withRubric := t.TempDir()
	writeEvalCase(t, withRubric, "pass.yaml", evalPassing)
	writeEvalCase(t, withRubric, "rubric.yaml", rubricOnly)

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{name: "a rubric-only case is skipped, not counted", args: []string{"--min-pass-rate", "100", withRubric}, code: exitOK,
			stdout: []string{"SKIP cli_rubric: only a rubric - SKIPPED", "ok cli_pass", "Pass rate: 1/1 (100.0%); 1 skipped (not counted)", "Skipped: cli_rubric"}},
		{name: "every case skipped", args: []string{"--min-pass-rate", "0", onlyRubric}, code: exitBelowGate,
			stdout: []string{"Pass rate: 0/0 (0.0%); 1 skipped (not counted)", "Nothing was checked: every case was skipped"},
			stderr: []string{"every case (1) was skipped, nothing was checked"}},
		{name: "all pass", args: []string{dir}, code: exitOK,
			stdout: []string{"ok cli_pass: missing serial, asks for it", "1. ok send_email(", "Pass rate: 1/1 (100.0%)"}},
		{name: "below the default gate", args: []string{mixed}, code: exitBelowGate,
			stdout: []string{"FAIL cli_fail", `Argument 'to' expected "somebody@example.com", got "ala@example.com"`, "Pass rate: 1/2 (50.0%)"},
			stderr: []string{"pass rate 50.0% is below --min-pass-rate 99%"}},
		{name: "at the gate", args: []string{"--min-pass-rate", "50", mixed}, code: exitOK},
		{name: "filter by category glob", args: []string{"--filter", "missing-*", mixed}, code: exitOK,
			stdout: []string{"(1 cases;"}},
		{name: "filter by id", args: []string{"--filter", "cli_fail", mixed}, code: exitBelowGate},
		{name: "filter matching nothing", args: []string{"--filter", "nope", mixed}, code: exitUsage,
			stderr: []string{"no case matches --filter nope"}},
		{name: "invalid case file", args: []string{broken}, code: exitUsage,
			stderr: []string{`broken.yaml:13: expected_output.expected_function_calls[0].function_name: function "check_warranty" is not declared by scenario "missing-info" (it declares: send_email)`}},
		{name: "missing directory", args: []string{filepath.Join(dir, "nope")}, code: exitUsage},
		{name: "bad -j", args: []string{"-j", "0", dir}, code: exitUsage},
		{name: "record and replay", args: []string{"--record", dir, "--replay", dir, dir}, code: exitUsage},
		{name: "replay dir missing", args: []string{"--replay", filepath.Join(dir, "none"), dir}, code: exitUsage,
			stderr: []string{"not a directory of cassettes"}},
		{name: "bad gate", args: []string{"--min-pass-rate", "101", dir}, code: exitUsage},
		{name: "repeat", args: []string{"--repeat", "2", "-j", "2", dir}, code: exitOK,
			stdout: []string{"2 runs each", "pass^2: 1/1 cases passed every run; runs: 2/2 (100.0%)", "Flaky: none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runEvalCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

func TestEvalReportFiles(t *testing.T) {
	dir := t.TempDir()
	writeEvalCase(t, dir, "pass.yaml", evalPassing)
	out := t.TempDir()
	junit, js := filepath.Join(out, "reports", "eval.xml"), filepath.Join(out, "json", "deep", "eval.json") // directories created
	if code, stdout, stderr := runEvalCLI(t, "--junit", junit, "--json-out", js, dir); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var doc struct {
		Tests int `xml:"tests,attr"`
		Suite struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &doc); err != nil || doc.Tests != 1 || len(doc.Suite.Cases) != 1 || doc.Suite.Cases[0].Name != "cli_pass" {
		t.Errorf("junit: %v %+v", err, doc)
	}
	var rep struct {
		Mode     string  `json:"mode"`
		PassRate float64 `json:"pass_rate"`
		Cases    []struct {
			Runs []struct {
				Outcome struct {
					Status string `json:"status"`
				} `json:"outcome"`
			} `json:"runs"`
		} `json:"cases"`
	}
	data, err = os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Mode != "offline" || rep.PassRate != 100 || rep.Cases[0].Runs[0].Outcome.Status != "replied" {
		t.Errorf("json: %v %+v", err, rep)
	}

	// Invalid case files still reach CI: the JUnit report lists them as errors.
	writeEvalCase(t, dir, "bad.yaml", "scenario_id: bad\nbogus: 1\n")
	code, _, _ := runEvalCLI(t, "--junit", junit, dir)
	data, _ = os.ReadFile(junit)
	if code != exitUsage || !strings.Contains(string(data), `bad.yaml:2: unknown field &#34;bogus&#34;`) {
		t.Errorf("exit %d, junit:\n%s", code, data)
	}
}

func TestEvalOutputModes(t *testing.T) {
	dir := t.TempDir()
	writeEvalCase(t, dir, "pass.yaml", evalPassing)
	writeEvalCase(t, dir, "pass2.yaml", strings.ReplaceAll(evalPassing, "cli_pass", "cli_pass2"))

	// -q: one line per passing case.
	code, stdout, stderr := runEvalCLI(t, "-q", dir)
	if code != exitOK {
		t.Fatalf("-q: exit %d: %s", code, stderr)
	}
	var caseLines []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, "cli_pass") && !strings.HasPrefix(l, "Time:") {
			caseLines = append(caseLines, l)
		}
	}
	if len(caseLines) != 2 || !strings.HasPrefix(caseLines[0], "ok cli_pass") || strings.Contains(stdout, "Function calls") {
		t.Errorf("-q printed %q, want one line per passing case:\n%s", caseLines, stdout)
	}

	// --json: JSON lines on stdout, one per case, nothing else.
	code, stdout, stderr = runEvalCLI(t, "--json", dir)
	if code != exitOK || !strings.Contains(stderr, "Pass rate: 2/2") {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for _, l := range lines {
		var v struct {
			ID     string `json:"scenario_id"`
			Passed bool   `json:"passed"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.ID == "" || !v.Passed {
			t.Errorf("--json line %q: %v %+v", l, err, v)
		}
	}
	if len(lines) != 2 {
		t.Errorf("--json printed %d lines, want 2", len(lines))
	}

	// A report path that cannot be written fails before the run.
	file := filepath.Join(t.TempDir(), "file")
	writeTestFile(t, file, "x")
	code, stdout, stderr = runEvalCLI(t, "--junit", filepath.Join(file, "eval.xml"), dir)
	if code != exitUsage || !strings.Contains(stderr, "--junit") || strings.Contains(stdout, "cli_pass") {
		t.Errorf("unwritable --junit: exit %d, ran cases: %v; %s", code, strings.Contains(stdout, "cli_pass"), stderr)
	}
}

// Instructions the pipeline cannot start with: exit 2, not a failed
// "Setup" per case that --min-pass-rate 0 would let through.
func TestEvalCannotStart(t *testing.T) {
	dir := t.TempDir()
	writeEvalCase(t, dir, "pass.yaml", evalPassing)
	code, _, stderr := runEvalCLI(t, "--min-pass-rate", "0", "--max-calls", "-5", dir)
	if code != exitUsage || !strings.Contains(stderr, "cannot start") {
		t.Errorf("exit %d, want 2 'cannot start': %s", code, stderr)
	}
}

func TestMarks(t *testing.T) {
	var buf bytes.Buffer
	if m := marksFor(&buf); m != eval.ASCII {
		t.Errorf("a buffer gets %+v, want ASCII", m)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m := marksFor(f); m != eval.ASCII {
		t.Errorf("a file gets %+v, want ASCII", m)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if m := pickMarks(true, getenv); !strings.Contains(m.Pass, "\x1b[32m✓") || !strings.Contains(m.Fail, "✗") {
		t.Errorf("terminal: %+v, want coloured glyphs", m)
	}
	env["NO_COLOR"] = "1"
	if m := pickMarks(true, getenv); m != eval.Glyphs {
		t.Errorf("terminal with NO_COLOR: %+v, want glyphs without colour", m)
	}
}
