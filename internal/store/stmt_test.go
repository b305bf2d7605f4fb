package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"triage/internal/store"
)

// A SQLite store keeps the statements of its queries: one first run in a
// transaction is prepared when the next transaction begins, one run
// outside a transaction at once, and either gives the same answers as
// before, after a change of the table's schema too. A query that does not
// prepare reports its error every time it runs; a script runs whole.
func TestSQLiteKeepsStatements(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "s.db"))
	if err := db.Migrate(ctx, "things", steps); err != nil {
		t.Fatal(err)
	}
	insert := func(name string) {
		t.Helper()
		tx, err := db.BeginTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `INSERT INTO things (name) VALUES (?)`, name); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM things WHERE name LIKE ?`, "n%").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The migration's own queries, prepared when a transaction begins.
	tx, err := db.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	base := store.Prepared(db)
	insert("n1")
	if got := store.Prepared(db); got != base {
		t.Fatalf("prepared inside the transaction: %d statements, want %d", got, base)
	}
	insert("n2")
	if got := store.Prepared(db); got != base+1 {
		t.Fatalf("after the next begin: %d statements, want %d", got, base+1)
	}
	if n := count(); n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}
	if got := store.Prepared(db); got != base+2 {
		t.Fatalf("after a query outside a transaction: %d statements, want %d", got, base+2)
	}
	// SQLite prepares a kept statement again when the schema changed.
	if _, err := db.ExecContext(ctx, `ALTER TABLE things ADD COLUMN note TEXT`); err != nil {
		t.Fatal(err)
	}
	insert("n3")
	if n := count(); n != 3 {
		t.Fatalf("count after ALTER TABLE = %d, want 3", n)
	}
	// A script of several statements runs each of them every time.
	for range 2 {
		if _, err := db.ExecContext(ctx, `UPDATE counter SET n = n + 1; UPDATE counter SET n = n + 10`); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT n FROM counter`).Scan(&n); err != nil || n != 22 {
		t.Fatalf("counter = %d, %v; want 22", n, err)
	}
	for range 2 {
		if _, err := db.ExecContext(ctx, `INSERT INTO nowhere VALUES (?)`, 1); err == nil {
			t.Fatal("insert into a missing table: no error")
		}
		tx, err := db.BeginTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `SELEC 1`); err == nil {
			t.Fatal("a syntax error in a transaction: no error")
		}
		tx.Rollback()
	}
}

// Goroutines that run new queries in transactions and outside them at
// once never wait on each other for good: preparing waits for the one
// connection without holding what a transaction needs.
func TestSQLiteStatementsConcurrently(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "s.db"))
	if err := db.Migrate(ctx, "things", steps); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				// A new query text every few rounds, so preparing goes on
				// while other goroutines hold transactions.
				q := fmt.Sprintf(`INSERT INTO things (name) VALUES (? || '-%d')`, i%10)
				tx, err := db.BeginTx(ctx)
				if err != nil {
					errs <- err
					return
				}
				_, err = tx.ExecContext(ctx, q, fmt.Sprintf("g%d-%d", g, i))
				if err == nil {
					err = tx.Commit()
				}
				tx.Rollback()
				if err != nil {
					errs <- err
					return
				}
				var n int
				if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) + %d FROM things`, i%7)).Scan(&n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM things`).Scan(&n); err != nil || n != 8*40 {
		t.Fatalf("count = %d, %v; want %d", n, err, 8*40)
	}
}
