package instructions_test

import (
	"os"
	"path/filepath"
	"testing"
)

// basicDirWith is an instructions directory in the basic format (main.md
// and the valid-warranty scenario of testdata/basic) with one more file,
// name, holding text.
func basicDirWith(t *testing.T, name, text string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"main.md", "scenarios/valid-warranty.md", name} {
		b := []byte(text)
		if f != name {
			var err error
			if b, err = os.ReadFile(filepath.Join("testdata/basic", f)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
