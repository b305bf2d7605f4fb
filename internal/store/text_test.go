package store_test

import (
	"context"
	"testing"

	"triage/internal/store"
	"triage/internal/testkit/pgtest"
)

// label is a named string type, as the packages pass keys and states.
type label string

// TestTextRoundTrip: text with a NUL byte or an invalid UTF-8 sequence is
// stored in both backends (PostgreSQL's text would refuse it) and reads
// back the same from each: those bytes replaced by U+FFFD, everything else
// as written; bytes stay bytes.
func TestTextRoundTrip(t *testing.T) {
	ctx := context.Background()
	texts := map[string]string{
		"nul":     "Dzień dobry\x00, ekspres",
		"invalid": "Frsche \xf6 und \xff",
		"plain":   "zwykły tekst <&>",
		"escaped": `{"body":"a\u0000b"}`,
	}
	want := map[string]string{
		"nul":     "Dzień dobry\uFFFD, ekspres",
		"invalid": "Frsche \uFFFD und \uFFFD",
		"plain":   "zwykły tekst <&>",
		"escaped": `{"body":"a\u0000b"}`,
	}
	pgtest.Each(t, func(t *testing.T, target string) {
		db := open(t, target)
		if err := db.Migrate(ctx, "text", []store.Migration{{
			SQLite:   `CREATE TABLE notes (name TEXT PRIMARY KEY, text TEXT NOT NULL, kind TEXT NOT NULL, raw BLOB NOT NULL)`,
			Postgres: `CREATE TABLE notes (name TEXT PRIMARY KEY, text TEXT NOT NULL, kind TEXT NOT NULL, raw BYTEA NOT NULL)`,
		}}); err != nil {
			t.Fatal(err)
		}
		tx, err := db.BeginTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for name, text := range texts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO notes (name, text, kind, raw) VALUES (?, ?, ?, ?)`, name, text, label(text), []byte(text)); err != nil {
				tx.Rollback()
				t.Fatalf("%s: %v", name, err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `UPDATE notes SET text = ? WHERE name = ?`, texts["nul"]+"!", "nul"); err != nil {
			t.Fatal(err)
		}
		for name := range texts {
			w := want[name]
			if name == "nul" {
				w += "!"
			}
			var text, kind string
			var raw []byte
			// The query's own text argument is stored text too: it finds the row.
			if err := db.QueryRowContext(ctx, `SELECT text, kind, raw FROM notes WHERE name = ? AND kind = ?`, name, texts[name]).Scan(&text, &kind, &raw); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if text != w || kind != want[name] || string(raw) != texts[name] {
				t.Errorf("%s: read back %q, %q, raw %q; want %q, %q, raw %q", name, text, kind, raw, w, want[name], texts[name])
			}
		}
	})
}
