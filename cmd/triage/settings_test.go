package main

import (
	"os"
	"path"
	"strings"
	"testing"

	"triage/internal/settings"
)

// Every setting is declared with a flag or a key, help text, and is
// documented where its command is: README for process, docs/watch.md (its
// table of every flag, key, variable and default) for watch, docs/eval.md
// for eval.
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
	} {
		doc := read(tc.doc)
		flags, keys := map[string]bool{}, map[string]bool{}
		for _, s := range tc.table {
			switch {
			case s.Flag == "" && s.Key == "":
				t.Errorf("%s: a setting with neither flag nor key: %+v", tc.name, s)
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
