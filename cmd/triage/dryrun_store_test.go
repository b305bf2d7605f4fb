package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// `process --dry-run` opens an existing ticket store read-only: a store of
// an older schema is neither upgraded nor switched to WAL mode, whatever
// the run reads from it; the run still answers (dry).
func TestProcessDryRunStoreReadOnly(t *testing.T) {
	for _, old := range []bool{true, false} {
		dir := t.TempDir()
		db := filepath.Join(dir, "t.db")
		if old {
			// The first schema of the local store: tickets only, user_version 0.
			sdb, err := sql.Open("sqlite", db)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sdb.Exec(`CREATE TABLE tickets (seq INTEGER PRIMARY KEY AUTOINCREMENT, idempotency_key TEXT NOT NULL UNIQUE,
				serial_number TEXT NOT NULL, customer_email TEXT NOT NULL, priority TEXT NOT NULL, summary TEXT NOT NULL, created_at TEXT NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			sdb.Close()
		} else {
			code, _, stderr := runCLI(t, "", "process", "--json", "--warranty-csv", "../../examples/warranty.csv",
				"--tickets-db", db, "--outbox", filepath.Join(dir, "outbox"), "../../examples/inbox/01-valid-warranty-pl.eml")
			if code != 0 {
				t.Fatalf("set-up run: exit %d: %s", code, stderr)
			}
		}
		before, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		names := dirFiles(t, dir)
		code, stdout, stderr := runCLI(t, "", "process", "--json", "--dry-run", "--warranty-csv", "../../examples/warranty.csv",
			"--tickets-db", db, "--outbox", filepath.Join(dir, "outbox"), "../../examples/inbox/01-valid-warranty-pl.eml")
		if code != 0 || !strings.Contains(stdout, `"dry_run":true`) {
			t.Errorf("old %v: dry run exit %d, want 0 and a dry outcome\nstdout %s\nstderr %s", old, code, stdout, stderr)
		}
		after, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("old %v: the dry run changed the ticket store", old)
		}
		if got := dirFiles(t, dir); strings.Join(got, ",") != strings.Join(names, ",") {
			t.Errorf("old %v: files %v after the dry run, want %v", old, got, names)
		}
	}
}
