package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// noDefaultConfig points the conventional configuration path at nothing and
// clears the variables that would pick one or supply credentials.
func noDefaultConfig(t *testing.T) {
	t.Helper()
	old := defaultConfigPath
	defaultConfigPath = filepath.Join(t.TempDir(), "none", "triage.yaml")
	t.Cleanup(func() { defaultConfigPath = old })
	for _, v := range []string{"TRIAGE_CONFIG", "TRIAGE_LEDGER", "TRIAGE_IMAP_PASSWORD", "TRIAGE_IMAP_TOKEN", "TRIAGE_SMTP_PASSWORD",
		"TRIAGE_SMTP_TOKEN", "TRIAGE_WARRANTY_CSV", "TRIAGE_TICKETS_DB", "TRIAGE_OUTBOX", "TRIAGE_FROM", "TRIAGE_INSTRUCTIONS", "TRIAGE_JURISDICTION",
		"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// stateDir creates dir/state (a configuration's state directory) and
// returns the absolute path of the sample warranty registry.
func stateDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	csv, err := filepath.Abs(filepath.Join("..", "..", "examples", "warranty.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return csv
}

// watchConfig writes a watch configuration whose state lives in dir/state
// (created empty) and returns its path; extra is appended to the pipeline
// section.
func watchConfig(t *testing.T, dir, pipelineExtra string) string {
	t.Helper()
	csv := stateDir(t, dir)
	path := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, path, `imap:
  addr: 127.0.0.1:1
  tls: none
  user: serwis@example.com
  password: secret
outbox: state/outbox
ledger: state/ledger.db
pipeline:
  warranty_csv: `+csv+`
  tickets_db: state/tickets.db
`+pipelineExtra)
	return path
}

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("%s: an invalid configuration created %v", dir, names)
	}
}

// No model credentials and no explicit pipeline.offline:
// watch refuses to start, naming both ways out.
func TestWatchRefusesWithoutModelCredentials(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "")
	code, _, stderr := runArgs(t, "watch", "--config", cfg, "--once")
	if code != exitUsage || !strings.Contains(stderr, "GEMINI_API_KEY") || !strings.Contains(stderr, "pipeline.offline: true") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming GEMINI_API_KEY and pipeline.offline", code, stderr)
	}
	assertEmptyDir(t, filepath.Join(dir, "state"))

	// offline: false said explicitly is still no model.
	cfg = watchConfig(t, dir, "  offline: false\n")
	if code, _, stderr := runArgs(t, "watch", "--config", cfg, "--check"); code != exitUsage || !strings.Contains(stderr, "GEMINI_API_KEY") {
		t.Errorf("offline: false: exit %d, %q", code, stderr)
	}
	// The stand-in on purpose, or a key: valid.
	cfg = watchConfig(t, dir, "  offline: true\n")
	if code, stdout, stderr := runArgs(t, "watch", "--config", cfg, "--check"); code != 0 || !strings.Contains(stdout, "configuration valid") {
		t.Errorf("offline: true: exit %d, %q %q", code, stdout, stderr)
	}
	cfg = watchConfig(t, dir, "")
	t.Setenv("GEMINI_API_KEY", "k")
	if code, _, stderr := runArgs(t, "watch", "--config", cfg, "--check"); code != 0 {
		t.Errorf("with GEMINI_API_KEY: exit %d, %q", code, stderr)
	}
	assertEmptyDir(t, filepath.Join(dir, "state"))
}

// An invalid configuration is reported whole, before the ledger, its lock,
// tickets.db or the outbox exist.
func TestInvalidWatchConfigCreatesNothing(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n  warranty_url: ftp://registry\n  from: not an address\n  serial_patterns: ['(']\n  instructions: nowhere\n")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("metrics_addr: localhost\nlog: {format: xml}\nsmtp: {addr: smtp.example.com:587, tls: none, user: relay}\n")
	f.Close()
	code, _, stderr := runArgs(t, "watch", "--config", cfg, "--once")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	for _, want := range []string{"invalid configuration", "--warranty-url \"ftp://registry\"", "--from \"not an address\"", "--serial-pattern",
		"nowhere: no such file or directory", "metrics_addr \"localhost\": want host:port", "--log-format \"xml\"", "smtp: TLS \"none\" is allowed only for loopback", "no SMTP password or token for smtp.user relay"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	assertEmptyDir(t, filepath.Join(dir, "state"))
	assertEmptyDir(t, dir+"/state") // and no lock beside the ledger
}

func TestWatchCheck(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n")
	for _, args := range [][]string{{"watch", "--check", "--config", cfg}, {"check", "--config", cfg}} {
		code, stdout, stderr := runArgs(t, args...)
		if code != 0 || !strings.Contains(stdout, "valid") {
			t.Errorf("%v: exit %d, %q %q", args, code, stdout, stderr)
		}
	}
	writeTestFile(t, filepath.Join(dir, "bad.yaml"), "imap: {addr: 127.0.0.1:1, user: u, password: p}\npipeline:\n  warranty_cvs: x.csv\n")
	for _, args := range [][]string{{"watch", "--check", "--config", filepath.Join(dir, "bad.yaml")}, {"check", "--config", filepath.Join(dir, "bad.yaml")}} {
		code, _, stderr := runArgs(t, args...)
		if code != exitUsage || !strings.Contains(stderr, `line 3: unknown field "warranty_cvs" in pipeline; valid: `) || strings.Contains(stderr, "struct {") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	assertEmptyDir(t, filepath.Join(dir, "state"))
}

// Precedence: flag > environment > configuration file.
func TestWatchPrecedence(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n  from: File <file@example.com>\n")
	load := func(args ...string) *watchOptions {
		t.Helper()
		cmd, wo := watchCommand()
		if err := cmd.ParseFlags(append([]string{"--config", cfg}, args...)); err != nil {
			t.Fatal(err)
		}
		if _, err := loadWatch(cmd.Flags(), wo); err != nil {
			t.Fatal(err)
		}
		return wo
	}
	got := func(o *watchOptions) []string { return []string{o.Ledger, o.From} }
	fileLedger := filepath.Join(dir, "state", "ledger.db")
	if diff := cmp.Diff([]string{fileLedger, "File <file@example.com>"}, got(load())); diff != "" {
		t.Errorf("file only (-want +got):\n%s", diff)
	}
	t.Setenv("TRIAGE_LEDGER", filepath.Join(dir, "env.db"))
	t.Setenv("TRIAGE_FROM", "Env <env@example.com>")
	if diff := cmp.Diff([]string{filepath.Join(dir, "env.db"), "Env <env@example.com>"}, got(load())); diff != "" {
		t.Errorf("environment over file (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "flag.db"), "Flag <flag@example.com>"},
		got(load("--ledger", filepath.Join(dir, "flag.db"), "--from", "Flag <flag@example.com>"))); diff != "" {
		t.Errorf("flag over environment (-want +got):\n%s", diff)
	}
}

// A configuration found by convention ($TRIAGE_CONFIG, then the default
// location) is used and reported at start.
func TestWatchConfigByConvention(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n")
	t.Setenv("TRIAGE_CONFIG", cfg)
	if code, stdout, stderr := runArgs(t, "check"); code != 0 || !strings.Contains(stdout, cfg) {
		t.Errorf("$TRIAGE_CONFIG: exit %d, %q %q", code, stdout, stderr)
	}
	os.Unsetenv("TRIAGE_CONFIG")
	defaultConfigPath = cfg
	code, stdout, stderr := runArgs(t, "watch", "--check")
	if code != 0 || !strings.Contains(stdout, cfg) || !strings.Contains(stdout, "found at the default location") {
		t.Errorf("default location: exit %d, %q %q", code, stdout, stderr)
	}
}

// No default that only works inside the repository: process run elsewhere
// without a registry says what to set and creates nothing.
func TestProcessWithoutRegistryElsewhere(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	eml, err := filepath.Abs(filepath.Join("..", "..", "examples", "inbox", "01-valid-warranty-pl.eml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, _, stderr := runArgs(t, "process", eml)
	if code != exitUsage || !strings.Contains(stderr, "--warranty-csv FILE") || !strings.Contains(stderr, "TRIAGE_WARRANTY_CSV") || strings.Contains(stderr, "examples/warranty.csv") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --warranty-csv and TRIAGE_WARRANTY_CSV", code, stderr)
	}
	assertEmptyDir(t, dir)
	// An invalid flag elsewhere: no outbox, no tickets.db either.
	code, _, stderr = runArgs(t, "process", "--warranty-csv", filepath.Join(dir, "missing.csv"), eml)
	if code != exitUsage || !strings.Contains(stderr, "missing.csv") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	assertEmptyDir(t, dir)
}

// Every TRIAGE_* variable a command reads appears in its --help.
func TestHelpNamesEnvironment(t *testing.T) {
	want := map[string][]string{
		"process": {"TRIAGE_WARRANTY_CSV", "TRIAGE_WARRANTY_URL", "TRIAGE_WARRANTY_TOKEN", "TRIAGE_TICKETS_DB", "TRIAGE_TICKETS_URL", "TRIAGE_TICKETS_TOKEN",
			"TRIAGE_OUTBOX", "TRIAGE_INSTRUCTIONS", "TRIAGE_MODEL", "TRIAGE_FROM", "GEMINI_API_KEY"},
		"watch": {"TRIAGE_CONFIG", "TRIAGE_LEDGER", "TRIAGE_IMAP_PASSWORD", "TRIAGE_IMAP_TOKEN", "TRIAGE_SMTP_PASSWORD", "TRIAGE_SMTP_TOKEN",
			"TRIAGE_WARRANTY_CSV", "TRIAGE_WARRANTY_URL", "TRIAGE_WARRANTY_TOKEN", "TRIAGE_TICKETS_DB", "TRIAGE_TICKETS_URL", "TRIAGE_TICKETS_TOKEN",
			"TRIAGE_INSTRUCTIONS", "TRIAGE_MODEL", "TRIAGE_FROM", "GEMINI_API_KEY", "flag > environment > configuration file"},
		"ledger": {"TRIAGE_CONFIG", "TRIAGE_LEDGER"},
		"check":  {"TRIAGE_CONFIG", "TRIAGE_INSTRUCTIONS"},
		"eval":   {"TRIAGE_INSTRUCTIONS", "TRIAGE_MODEL", "GEMINI_API_KEY"},
	}
	for cmd, vars := range want {
		_, stdout, _ := runArgs(t, cmd, "--help")
		for _, v := range vars {
			if !strings.Contains(stdout, v) {
				t.Errorf("%s --help does not name %s", cmd, v)
			}
		}
	}
}

func TestLedgerRejectsUnknownState(t *testing.T) {
	noDefaultConfig(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	code, _, stderr := runArgs(t, "ledger", "--ledger", path, "--state", "needs-human")
	if code != exitUsage || !strings.Contains(stderr, `--state "needs-human" is not a message state; valid: replied, drafted, skipped, failed, needs_human`) {
		t.Errorf("exit %d, %q", code, stderr)
	}
	code, _, stderr = runArgs(t, "ledger", "--ledger", path, "--replies", "--state", "replied")
	if code != exitUsage || !strings.Contains(stderr, "not a reply state; valid: reply_pending, sent") {
		t.Errorf("--replies: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("a rejected --state created the ledger")
	}
}

// triage check runs the start-up validation (the same loader) and reports
// every problem of every file in one run: a broken scenario file, a scenario
// start-up refuses (no send_email: no final function), a tools.yaml mistake.
func TestCheckReportsEveryProblem(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	for _, d := range []string{"scenarios"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, filepath.Join(dir, "main.md"), "Shared rules.\n")
	writeTestFile(t, filepath.Join(dir, "scenarios", "broken.md"), "---\nname: broken\ndescription: [unclosed\n---\nBody.\n")
	writeTestFile(t, filepath.Join(dir, "scenarios", "no-reply.md"), "---\nname: no-reply\ndescription: d\navailable_functions:\n  - name: check_warranty\n    description: d\n    parameters: {type: object, properties: {serial_number: {type: string}}}\n---\nBody.\n")
	writeTestFile(t, filepath.Join(dir, "tools.yaml"), "tools:\n  check_warranty: {builtin: check_warranty}\n  send_email: {builtin: send_email, final: true, effect: true}\n  oops: {builtin: check_warranty, efect: true}\n")
	code, _, stderr := runArgs(t, "check", "--instructions", dir)
	if code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s", code, stderr)
	}
	for _, want := range []string{"scenarios/broken.md", "scenarios/no-reply.md: available_functions: declares no final function", `"efect"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("check output lacks %q:\n%s", want, stderr)
		}
	}
	// The basic-format example files load through the very same start-up loader.
	basic, _ := filepath.Abs("../../internal/instructions/testdata/basic")
	tmp := t.TempDir()
	copyDir(t, basic, tmp)
	b, _ := os.ReadFile("../../instructions/tools.yaml")
	writeTestFile(t, filepath.Join(tmp, "tools.yaml"), string(b))
	if code, _, stderr := runArgs(t, "check", "--instructions", tmp); code != 0 {
		t.Errorf("the basic-format example scenarios (trigger: and all) fail start-up validation: exit %d\n%s", code, stderr)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ledger and ledger stats find the ledger the same way: a configuration
// named by $TRIAGE_CONFIG is read (and reported), --ledger still wins.
func TestLedgerCommandsFindTheConfigurationAlike(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	fromConfig := filepath.Join(dir, "from-config.db")
	cfg := filepath.Join(dir, "triage.yaml")
	if err := os.WriteFile(cfg, []byte("ledger: "+fromConfig+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TRIAGE_CONFIG", cfg)
	for _, args := range [][]string{{"ledger"}, {"ledger", "stats"}} {
		_, _, stderr := runArgs(t, args...)
		if !strings.Contains(stderr, "from-config.db") || !strings.Contains(stderr, "ledger of the configuration "+cfg) {
			t.Errorf("%v: stderr %q does not read and report the configuration's ledger", args, stderr)
		}
		_, _, stderr = runArgs(t, append(args, "--ledger", filepath.Join(dir, "flag.db"))...)
		if !strings.Contains(stderr, "flag.db") {
			t.Errorf("%v --ledger: stderr %q, want the flag's ledger", args, stderr)
		}
	}
}

// TestLedgerStatsTakesTheBarOfTheConfiguration: ledger stats judges by the
// autonomy thresholds of the configuration, whether the ledger is the
// configuration's or --ledger's, and a flag wins over the file.
func TestLedgerStatsTakesTheBarOfTheConfiguration(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "ledger: "+filepath.Join(dir, "ledger.db")+"\nautonomy: {min_reviewed: 0}\n")
	for _, args := range [][]string{
		{"ledger", "stats", "--config", cfg},
		{"ledger", "stats", "--config", cfg, "--ledger", filepath.Join(dir, "other.db")},
	} {
		code, _, stderr := runArgs(t, args...)
		if code != exitUsage || !strings.Contains(stderr, cfg) || !strings.Contains(stderr, "autonomy.min_reviewed must be at least 1, got 0") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming the configuration's bar", args, code, stderr)
		}
	}
	code, _, stderr := runArgs(t, "ledger", "stats", "--config", cfg, "--autonomy-min-reviewed", "5")
	if code != exitUsage || !strings.Contains(stderr, "ledger.db") || strings.Contains(stderr, "min_reviewed") {
		t.Errorf("--autonomy-min-reviewed 5: exit %d, stderr %q; want the flag's bar, and no ledger there", code, stderr)
	}
}
