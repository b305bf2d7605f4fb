package ledger

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A path with characters that are special in a "file:" DSN opens that file.
func TestOpenOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail#2?x %y")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger.db")
	l, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("ledger not at %s: %v", path, err)
	}
}
