package tickets

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"time"
)

// ErrOldSchema is returned by OpenSQLiteReadOnly for a store written by an
// older triage: reading it needs the upgrade a read-only open never makes.
var ErrOldSchema = errors.New("tickets: sqlite: the store's schema is older than this program's")

// OpenSQLiteReadOnly opens an existing store at path without writing to it
// at all: no schema, no upgrade, no journal-mode change (for dry runs).
// Every write through it fails. While no other process has the store open
// (no -wal file) it is read as immutable, which creates no files either. A store of an older schema is refused with
// an error wrapping ErrOldSchema.
func OpenSQLiteReadOnly(path string) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("tickets: sqlite: path is required")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Set("mode", "ro")
	if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
		// No writer has the store open: reading it as immutable keeps
		// SQLite from creating the -wal and -shm files a reader of a
		// WAL-mode database otherwise leaves behind.
		q.Set("immutable", "1")
	}
	db, err := sql.Open("sqlite", "file:"+uriPath.Replace(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("tickets: sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("tickets: sqlite: open %s read-only: %w", path, err)
	}
	if v < len(migrations) {
		db.Close()
		return nil, fmt.Errorf("%w: %s is at version %d, this program writes %d", ErrOldSchema, path, v, len(migrations))
	}
	return &SQLite{db: db, now: time.Now}, nil
}
