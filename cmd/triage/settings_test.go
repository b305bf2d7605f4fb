package main

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/settings"
)

// Every setting is declared with a flag, a key or a variable, help text, and is
// documented where its command is: README for process, docs/watch.md (its
// table of every flag, key, variable and default) for watch, docs/eval.md
// for eval, README for replay.
func TestSettingsDeclaredAndDocumented(t *testing.T) {
	read := func(file string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	_, po := newProcessCmdOptions()
	_, wo := watchCommand()
	eo := &evalOptions{}
	for _, tc := range []struct {
		name  string
		table settings.Table
		doc   string
	}{
		{"process", po.table, "../../README.md"},
		{"watch", wo.table, "../../docs/watch.md"},
		{"eval", evalSettings(eo), "../../docs/eval.md"},
		{"replay", replaySettings(&replayOptions{}), "../../README.md"},
	} {
		doc := read(tc.doc)
		flags, keys := map[string]bool{}, map[string]bool{}
		for _, s := range tc.table {
			switch {
			case s.Flag == "" && s.Key == "" && s.Env == "":
				t.Errorf("%s: a setting with no flag, key or variable: %+v", tc.name, s)
			case s.Flag != "" && flags[s.Flag], s.Key != "" && keys[s.Key]:
				t.Errorf("%s: %s declared twice", tc.name, s.Name())
			}
			flags[s.Flag], keys[s.Key] = true, true
			if s.Usage == "" || s.Var == nil {
				t.Errorf("%s: %s has no help text or no value", tc.name, s.Name())
			}
			if s.Flag != "" && !strings.Contains(doc, "`--"+s.Flag) && !strings.Contains(doc, "--"+s.Flag+"`") {
				t.Errorf("%s: %s does not mention --%s", tc.name, tc.doc, s.Flag)
			}
			// A key is written whole, or as .last beside its section's first.
			if s.Key != "" && tc.name == "watch" && !strings.Contains(doc, "`"+s.Key) && !strings.Contains(doc, "`"+path.Ext(s.Key)) {
				t.Errorf("%s: %s does not mention the key %s", tc.name, tc.doc, s.Key)
			}
			if s.Env != "" && !strings.Contains(doc, s.Env) {
				t.Errorf("%s: %s does not mention $%s", tc.name, tc.doc, s.Env)
			}
		}
	}
}

// The model section and store: are settings of the watch file like any
// other: model.name wins over pipeline.model, model.api_key_file is
// relative to the file, and a wrong value is reported under its key.
func TestWatchModelAndStoreKeys(t *testing.T) {
	noDefaultConfig(t)
	for _, env := range []string{"TRIAGE_MODEL", "TRIAGE_PROVIDER", "OPENAI_BASE_URL", "OPENAI_API_KEY_FILE", "TRIAGE_STORE"} {
		t.Setenv(env, "")
	}
	load := func(t *testing.T, extra string) (*watchOptions, error) {
		t.Helper()
		dir := t.TempDir()
		cmd, wo := watchCommand()
		if err := cmd.ParseFlags([]string{"--config", watchConfig(t, dir, extra)}); err != nil {
			t.Fatal(err)
		}
		_, err := loadWatch(cmd.Flags(), wo)
		return wo, err
	}
	dir := t.TempDir()
	cmd, wo := watchCommand()
	cfg := watchConfig(t, dir, "  offline: true\n  model: pipeline-model\nmodel:\n  provider: openai\n  base_url: http://127.0.0.1:1/v1\n  name: section-model\n  api_key_file: openai.key\nstore: postgres://triage@127.0.0.1:1/triage\n")
	if err := cmd.ParseFlags([]string{"--config", cfg}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWatch(cmd.Flags(), wo); err != nil {
		t.Fatal(err)
	}
	want := []string{"section-model", "openai", "http://127.0.0.1:1/v1", filepath.Join(dir, "openai.key"), "postgres://triage@127.0.0.1:1/triage"}
	if diff := cmp.Diff(want, []string{wo.Model, string(wo.Provider), wo.BaseURL, wo.APIKeyFile, wo.Store}); diff != "" {
		t.Errorf("model section and store (-want +got):\n%s", diff)
	}

	_, err := load(t, "  offline: true\nmodel: {provider: anthropic}\nstore: state/ledger.db\n")
	if err == nil {
		t.Fatal("a wrong provider and a SQLite file as store: accepted")
	}
	for _, w := range []string{`model.provider "anthropic": want gemini or openai`, `store "state/ledger.db" is not a postgres:// URL`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

// --console-url (console.url) is an http(s) URL: staff notices link there.
// A wrong one is a usage error naming the flag, its password never shown.
func TestConsoleURLSetting(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"https://triage.example.com/console", ""},
		{"ftp://user:secret@x.example", `--console-url "ftp://user:redacted@x.example": want an http:// or https:// URL with a host`},
		{"triage.example.com", "--console-url"},
	} {
		cmd, o := newProcessCmdOptions()
		if err := cmd.Flags().Parse([]string{"--console-url", tc.value}); err != nil {
			t.Fatal(err)
		}
		err := o.table.Resolve(cmd.Flags(), nil, func(string) string { return "" })
		if err == nil {
			err = o.table.Check()
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.value, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret")):
			t.Errorf("%q: %v, want %q", tc.value, err, tc.want)
		}
	}
}
