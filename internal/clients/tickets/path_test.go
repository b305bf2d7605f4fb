package tickets

import (
	"os"
	"path/filepath"
	"testing"
)

// A path with characters that are special in a "file:" DSN opens that file.
func TestOpenSQLiteOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail#2?x %y")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tickets.db")
	db, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("store not at %s: %v", path, err)
	}
}
