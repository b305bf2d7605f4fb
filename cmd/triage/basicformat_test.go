package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/instructions"
)

// basicDir writes an instructions directory in the basic format: main.md
// and the shipped scenarios that use only builtins, no tools.yaml.
func basicDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := fs.WalkDir(instructions.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := fs.ReadFile(instructions.FS, p)
		if err != nil || strings.Contains(string(b), "search_manual") {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// An instructions directory without tools.yaml runs with the built-in
// bindings, and check says so; a function none of them binds is still an
// error naming tools.yaml.
func TestInstructionsWithoutToolsYAML(t *testing.T) {
	dir := basicDir(t)
	code, out, stderr := runCLI(t, "", "check", "--instructions", dir)
	if code != 0 || !strings.Contains(out, "no tools.yaml in "+dir+": the built-in bindings: 4 tools") {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	work := t.TempDir()
	code, out, stderr = runCLI(t, "", "process", "--json", "--instructions", dir, "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(work, "t.db"), "--outbox", filepath.Join(work, "outbox"), "../../examples/inbox/01-valid-warranty-pl.eml")
	if code != 0 || !strings.Contains(out, `"status":"replied"`) {
		t.Fatalf("process: exit %d\n%s%s", code, out, stderr)
	}

	b, err := fs.ReadFile(instructions.FS, "scenarios/product-question.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scenarios", "product-question.md"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "check", "--instructions", dir); code != exitUsage || !strings.Contains(stderr, "search_manual") || !strings.Contains(stderr, "tools.yaml") {
		t.Errorf("a non-builtin function without tools.yaml: exit %d\n%s", code, stderr)
	}
}
