package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/instructions"
)

// copyInstructions writes the shipped instructions to a directory, with
// edit applied to tools.yaml and to every scenario file.
func copyInstructions(t *testing.T, edit func(path, text string) string) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(instructions.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(instructions.FS, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(edit(p, string(b))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// triage check prints every tool with its binding and policies, from the
// same start-up loading process and watch use.
func TestCheckPrintsTools(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"tools.yaml: ",
		"check_warranty  [builtin check_warranty]\n  parallel (runs at once with the other look-ups of a turn that asks only for parallel tools)\n" +
			"  prefetch (runs before the first model turn, once per serial found in the message, at most 3; the first user turn holds its results)\n" +
			"  args.serial_number: from serials_or_attachments\n",
		"create_ticket  [builtin create_ticket]\n  effect",
		"  args.customer_email: from sender\n",
		`  requires an earlier successful check_warranty with a result matching one of {"status":"valid"} or {"decision":{"basis":"statutory"}}, same serial_number` + "\n",
		"send_email  [builtin send_email]\n",
		"  final (its success means the email is handled)\n",
		"  grounded (every fact the reply states must be backed, else ungrounded_claim)\n",
		"  args.to: from reply_to\n",
		"  requires an earlier successful notify_staff (in scenarios that declare notify_staff)\n",
		"search_manual  [mcp stdio ${TRIAGE_BIN} mcp-manuals, tool search_manual timeout 30s]",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout)
		}
	}
}

// A broken tools.yaml, or one that does not match the scenarios, stops
// start-up (check, process) with every problem named by file, tool, field.
func TestCheckRefusesBadBindings(t *testing.T) {
	tests := []struct {
		name string
		edit func(path, text string) string
		want []string
	}{
		{"a declared function without a binding", func(p, s string) string {
			if p == "tools.yaml" {
				s = strings.Replace(s, "  search_manual:", "  manual_search:", 1)
				return strings.Replace(s, "call: check_warranty", "call: verify_warranty", 1)
			}
			return s
		}, []string{
			`tools: scenarios/product-question.md: available_functions[0].name: "search_manual" has no binding in tools.yaml`,
			`tools: tools.yaml: create_ticket: requires[0].call: "verify_warranty" is not a tool of this file`, // and the rest, at once
		}},
		{"a policy naming a parameter that does not exist", func(p, s string) string {
			if p == "tools.yaml" {
				return strings.Replace(s, "serial_number: {from: serials_or_attachments}", "serial: {from: serials_or_attachments}", 1)
			}
			return s
		}, []string{`tools: tools.yaml: check_warranty: args.serial: "serial" is not a parameter of check_warranty as declared in scenarios/`}},
		{"a reply that promises a person nobody is told about", func(p, s string) string {
			if p == "scenarios/product-question.md" {
				return strings.Replace(s, "rules:\n", "promises_person: true\nrules:\n", 1)
			}
			return s
		}, []string{"scenario: scenarios/product-question.md: promises_person: the reply promises a person, so staff must be told first: declare notify_staff"}},
		{"a promise the reply does not wait for", func(p, s string) string {
			if p == "tools.yaml" {
				return strings.Replace(s, "      - {call: notify_staff, if_declared: true}\n", "", 1)
			}
			return s
		}, []string{"tools: scenarios/follow-up.md: promises_person: the final function send_email does not require notify_staff in tools.yaml",
			"tools: scenarios/graceful-degradation.md: promises_person:"}},
		{"a missing ${VAR}", func(p, s string) string {
			if p == "tools.yaml" {
				return s + "  orders:\n    http: {url: \"${TRIAGE_TEST_NO_SUCH_VAR}/orders/{id}\"}\n"
			}
			return s
		}, []string{"tools: tools.yaml: orders: http.url: environment variable TRIAGE_TEST_NO_SUCH_VAR is not set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyInstructions(t, tt.edit)
			for _, cmd := range [][]string{{"check", "--instructions", dir}, {"process", "--offline", "--instructions", dir, "-"}} {
				code, _, stderr := runCLI(t, "", cmd...)
				if code != 2 {
					t.Errorf("%s: exit %d, want 2", cmd[0], code)
				}
				for _, w := range tt.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("%s: stderr lacks %q:\n%s", cmd[0], w, stderr)
					}
				}
			}
		})
	}
}

// A tools.yaml URL that is wrong only once its ${VAR}s are expanded is
// reported by check (and at start) as written: the secret in its query
// string is printed nowhere.
func TestCheckNeverPrintsExpandedSecrets(t *testing.T) {
	t.Setenv("TRIAGE_TEST_ORDERS_BASE", "orders.example")
	t.Setenv("TRIAGE_TEST_ORDERS_KEY", "s3cr3t-query-key")
	dir := copyInstructions(t, func(p, s string) string {
		if p == "tools.yaml" {
			return s + "  orders:\n    http: {url: \"${TRIAGE_TEST_ORDERS_BASE}/orders/{id}?key=${TRIAGE_TEST_ORDERS_KEY}\"}\n" +
				"  kb:\n    mcp: {url: \"${TRIAGE_TEST_ORDERS_BASE}/mcp?key=${TRIAGE_TEST_ORDERS_KEY}\"}\n"
		}
		return s
	})
	code, stdout, stderr := runCLI(t, "", "check", "--instructions", dir)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	if !strings.Contains(stderr, `orders: http.url: "${TRIAGE_TEST_ORDERS_BASE}/orders/{id}?key=${TRIAGE_TEST_ORDERS_KEY}" is not an absolute http(s) URL`) {
		t.Errorf("stderr lacks the URL as written:\n%s", stderr)
	}
	if strings.Contains(stdout+stderr, "s3cr3t-query-key") {
		t.Errorf("check printed an expanded secret:\n%s%s", stdout, stderr)
	}
}

// A service URL given with a key in its query string or a password, but
// without a scheme (or unparsable), is reported without the secret.
func TestServiceURLErrorsDoNotShowSecrets(t *testing.T) {
	for _, u := range []string{"warranty.example/api?key=s3cr3t-key", "//bot:s3cr3t-pw@/api", "http://[::1\x00?key=s3cr3t"} {
		code, stdout, stderr := runCLI(t, "", "process", "--offline", "--warranty-url", u, "--tickets-url", u, "-")
		if code != 2 {
			t.Errorf("%q: exit %d, want 2", u, code)
		}
		if !strings.Contains(stderr, "--warranty-url") || !strings.Contains(stderr, "--tickets-url") {
			t.Errorf("%q: stderr does not name the flags:\n%s", u, stderr)
		}
		if strings.Contains(stdout+stderr, "s3cr3t") {
			t.Errorf("%q: a secret was printed:\n%s%s", u, stdout, stderr)
		}
	}
}

// The call caps are flags (and watch settings): a tight --max-calls leaves
// the reply over the cap unsent, recorded blocked, and the email failed; a
// cap below 1 is a usage error.
func TestCallCapFlags(t *testing.T) {
	dir := t.TempDir()
	args := []string{"process", "--json", "--offline", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "out"), "--max-calls", "2",
		"../../examples/inbox/01-valid-warranty-pl.eml"}
	code, stdout, stderr := runCLI(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 1 || outs[0].Status != "failed" || outs[0].Reason != "email_not_sent" {
		t.Fatalf("outcomes %+v", outs)
	}
	var got []string
	for _, c := range outs[0].FunctionCalls {
		s := c.Name
		if c.Blocked {
			s += " blocked:" + string(c.Error.Code)
		}
		got = append(got, s)
	}
	// The model tries the reply twice; neither has any effect.
	want := []string{"check_warranty", "create_ticket", "send_email blocked:too_many_calls", "send_email blocked:too_many_calls"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("calls %v, want %v", got, want)
	}

	for _, flag := range []string{"--max-calls", "--max-calls-per-turn"} {
		code, _, stderr := runCLI(t, "", "process", "--offline", "--warranty-csv", "../../examples/warranty.csv", "--outbox", t.TempDir(), flag, "0", "x.eml")
		if code != 2 || !strings.Contains(stderr, flag+" must be at least 1") {
			t.Errorf("%s 0: exit %d, stderr %s", flag, code, stderr)
		}
	}
}
