package settings_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"triage/internal/settings"
)

type config struct {
	Model    string
	Calls    int
	Timeout  time.Duration
	Staff    []string
	NoIdle   bool
	Mode     string
	Ledger   string
	MaxBytes int64
}

func table(c *config) settings.Table {
	return settings.Table{
		{Flag: "model", Env: "T_MODEL", Key: "pipeline.model", Usage: "model", Var: settings.String(&c.Model, "flash")},
		{Flag: "max-calls", Key: "pipeline.max_calls", Usage: "calls", Var: settings.Int(&c.Calls, 24, settings.AtLeast(1))},
		{Flag: "timeout", Key: "pipeline.timeout", Usage: "timeout", Var: settings.Duration(&c.Timeout, time.Second, settings.Positive)},
		{Flag: "staff", Key: "pipeline.staff", Usage: "staff", Var: settings.Strings(&c.Staff)},
		{Flag: "no-idle", Key: "idle", Negated: true, Usage: "poll", Var: settings.Bool(&c.NoIdle, false)},
		{Flag: "mode", Key: "mode", Aliases: []string{"pipeline.mode"}, Usage: "mode", Var: settings.String(&c.Mode, "send", settings.OneOf("send", "draft"))},
		{Key: "ledger", Path: true, Usage: "ledger", Var: settings.String(&c.Ledger, "ledger.db")},
		{Key: "max_bytes", Usage: "bytes", Var: settings.Int64(&c.MaxBytes, 100, settings.NotNegative)},
	}
}

const fileText = `pipeline:
  model: file-model
  max_calls: 5
  timeout: 3s
  staff: [a@x, b@x]
  mode: draft
mode: send
idle: false
ledger: state/l.db
`

func TestPrecedence(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want config
	}{
		{"defaults", "", nil, nil,
			config{Model: "flash", Calls: 24, Timeout: time.Second, Mode: "send", Ledger: "ledger.db", MaxBytes: 100}},
		{"file over defaults; key over alias; relative to the file", fileText, nil, nil,
			config{Model: "file-model", Calls: 5, Timeout: 3 * time.Second, Staff: []string{"a@x", "b@x"}, NoIdle: true, Mode: "send",
				Ledger: filepath.Join("/etc/t", "state/l.db"), MaxBytes: 100}},
		{"environment over file", fileText, map[string]string{"T_MODEL": "env-model"}, nil,
			config{Model: "env-model", Calls: 5, Timeout: 3 * time.Second, Staff: []string{"a@x", "b@x"}, NoIdle: true, Mode: "send",
				Ledger: filepath.Join("/etc/t", "state/l.db"), MaxBytes: 100}},
		{"flag over environment", fileText, map[string]string{"T_MODEL": "env-model"},
			[]string{"--model", "flag-model", "--max-calls", "7", "--staff", "c@x", "--no-idle=false"},
			config{Model: "flag-model", Calls: 7, Timeout: 3 * time.Second, Staff: []string{"c@x"}, Mode: "send",
				Ledger: filepath.Join("/etc/t", "state/l.db"), MaxBytes: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c config
			tab := table(&c)
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			tab.Register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			var file *settings.File
			if tt.file != "" {
				var err error
				if file, err = settings.ParseFile("/etc/t/triage.yaml", []byte(tt.file), tab); err != nil {
					t.Fatal(err)
				}
			}
			if err := tab.Resolve(fs, file, func(k string) string { return tt.env[k] }); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err := tab.Check(); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

// Every problem of a file is reported at once, with its line.
func TestParseFileProblems(t *testing.T) {
	var c config
	text := "pipeline:\n  modle: x\n  max_calls: many\n  timeout: soon\nbogus: 1\nidle: [1]\n"
	_, err := settings.ParseFile("t.yaml", []byte(text), table(&c))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`line 2: unknown field "modle" in pipeline; valid: max_calls, mode, model, staff, timeout`,
		`line 3: pipeline.max_calls: "many" is not a whole number`,
		`line 4: pipeline.timeout: "soon" is not a duration (e.g. 30s, 5m)`,
		`line 5: unknown field "bogus"; valid: idle, ledger, max_bytes, mode, pipeline`,
		`line 6: idle: a list is not true or false`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Check reports every invalid value, named where it came from.
func TestCheckReportsAll(t *testing.T) {
	var c config
	tab := table(&c)
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	tab.Register(fs)
	if err := fs.Parse([]string{"--max-calls", "0", "--mode", "later"}); err != nil {
		t.Fatal(err)
	}
	file, err := settings.ParseFile("t.yaml", []byte("pipeline:\n  timeout: 0s\nmax_bytes: -1\n"), tab)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Resolve(fs, file, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	err = tab.Check()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		got = append(got, e.Error())
	}
	want := []string{
		"--max-calls must be at least 1, got 0",
		"pipeline.timeout must be positive, got 0s",
		`--mode "later": want send or draft`,
		"max_bytes must not be negative, got -1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBadEnvironment(t *testing.T) {
	var n int
	tab := settings.Table{{Flag: "n", Env: "T_N", Usage: "n", Var: settings.Int(&n, 1)}}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	tab.Register(fs)
	err := tab.Resolve(fs, nil, func(string) string { return "lots" })
	if err == nil || !strings.Contains(err.Error(), `$T_N "lots": want a whole number`) {
		t.Errorf("err = %v", err)
	}
}

// A part of a file (one entry of a list) is read against its own table,
// its problems naming the file's lines, and Apply sets only what it has
// over values already resolved.
func TestParseNodeApply(t *testing.T) {
	text := "pipeline:\n  model: shared\nentries:\n  - mode: draft\n    ledger: b.db\n  - modle: x\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	entries := doc.Content[0].Content[3].Content
	var c config
	tab := table(&c)
	file, err := settings.ParseFile("/etc/t/triage.yaml", []byte("pipeline:\n  model: shared\n"), tab)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Resolve(pflag.NewFlagSet("x", pflag.ContinueOnError), file, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	entry, err := settings.ParseNode("/etc/t/triage.yaml", entries[0], tab)
	if err != nil {
		t.Fatal(err)
	}
	tab.Apply(entry)
	want := config{Model: "shared", Calls: 24, Timeout: time.Second, Mode: "draft", Ledger: "/etc/t/b.db", MaxBytes: 100}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("after Apply (-want +got):\n%s", diff)
	}
	if _, err := settings.ParseNode("/etc/t/triage.yaml", entries[1], tab); err == nil || !strings.HasPrefix(err.Error(), `line 6: unknown field "modle"`) {
		t.Errorf("ParseNode of a bad entry: %v, want line 6 named", err)
	}
}
