package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/atomicfile"
)

// leftovers lists the temporary files left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	tmp, err := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return tmp
}

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	for _, data := range []string{"first\n", "second, longer\n"} {
		if err := atomicfile.Write(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Errorf("after writing %q: %q, %v", data, got, err)
		}
	}
	// The mode is perm whatever the umask, and no temporary file stays.
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v, %v; want 0600", fi.Mode(), err)
	}
	if tmp := leftovers(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// A failed rename (a directory at the name) and a missing directory are
// errors, and leave nothing behind; the name keeps what it had.
func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	taken := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(taken, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(taken, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), taken) {
		t.Errorf("Write onto a directory: %v, want an error naming %s", err, taken)
	}
	if fi, err := os.Stat(taken); err != nil || !fi.IsDir() {
		t.Errorf("the directory at the name: %v, %v", fi, err)
	}
	if tmp := leftovers(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	missing := filepath.Join(dir, "missing", "file")
	if err := atomicfile.Write(missing, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), filepath.Dir(missing)) {
		t.Errorf("Write into a missing directory: %v", err)
	}
	if err := atomicfile.SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("SyncDir of a missing directory: no error")
	}
}
