package instructions_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/instructions"
)

var builtinNames = []string{"check_warranty", "create_ticket", "send_email", "notify_staff"}

func TestLoadBuiltIn(t *testing.T) {
	set, err := instructions.Load("", builtinNames)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Scenarios.Scenarios) == 0 || set.Tools.File != instructions.ToolsFile {
		t.Errorf("loaded %d scenarios, tools from %q", len(set.Scenarios.Scenarios), set.Tools.File)
	}
}

// A directory in the basic format (no tools.yaml) is bound by the built-in
// tools.yaml's builtins only.
func TestLoadBasicFormat(t *testing.T) {
	set, err := instructions.Load("testdata/basic", builtinNames)
	if err != nil {
		t.Fatal(err)
	}
	if want := "no tools.yaml in testdata/basic: the built-in bindings"; set.Tools.File != want {
		t.Errorf("tools file = %q, want %q", set.Tools.File, want)
	}
	for _, name := range set.Tools.Names() {
		if set.Tools.Get(name).Builtin == "" {
			t.Errorf("%s is bound, but is not a builtin", name)
		}
	}
}

func TestLoadDirErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "main.md")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "none"), file} {
		_, err := instructions.Load(dir, builtinNames)
		var de *instructions.DirError
		if !errors.As(err, &de) || de.Dir != dir || !strings.Contains(err.Error(), dir) {
			t.Errorf("Load(%s) = %v, want a *DirError naming it", dir, err)
		}
	}
}

// Every problem comes in one error, after the directory's name: the
// scenarios' and the bindings'.
func TestLoadReportsEverythingNamingTheDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.md", "Rules.\n")
	write("scenarios/a.md", "---\nname: b\ndescription: d\navailable_functions:\n  - name: send_email\n    description: d\n    parameters: {type: object, properties: {to: {type: string}}}\n---\nBody.\n")
	write("tools.yaml", "tools:\n  send_email: {builtin: nope}\n")
	_, err := instructions.Load(dir, builtinNames)
	if err == nil {
		t.Fatal("loaded")
	}
	var de *instructions.DirError
	if errors.As(err, &de) {
		t.Errorf("a *DirError for problems inside the directory: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{dir + ":\n", `scenario: scenarios/a.md: name: "b" does not match`, `tools: tools.yaml: send_email: builtin: "nope" is not a builtin`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}
