package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Migration is one forward step of a component's schema: a script per
// dialect, or Func when a step must look before it changes anything (e.g.
// to bring a file written before versioning up to date).
type Migration struct {
	SQLite   string
	Postgres string
	Func     func(ctx context.Context, tx *Tx) error
}

// ErrNewerSchema is returned by Migrate when the store was written by a
// program that knows more migration steps than this one.
var ErrNewerSchema = errors.New("store: schema is newer than this program knows")

// Migrate brings component's schema to len(steps): it runs the steps past
// the recorded version, in order, in one transaction, and records the new
// version. Several processes may call it at once: on SQLite the
// transaction holds the write lock, on PostgreSQL an advisory lock, so the
// steps run once. A read-only store is only checked, never changed.
func (db *DB) Migrate(ctx context.Context, component string, steps []Migration) error {
	if db.readOnly {
		return nil
	}
	tx, err := db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("store: %s: migrate %s: %w", db.name, component, err)
	}
	defer tx.Rollback()
	if err := tx.Lock(ctx, "migrate"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_versions (
		component TEXT PRIMARY KEY,
		version   INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("store: %s: migrate %s: %w", db.name, component, err)
	}
	var v int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_versions WHERE component = ?`, component).Scan(&v)
	if err != nil && !isNoRows(err) {
		return fmt.Errorf("store: %s: migrate %s: read version: %w", db.name, component, err)
	}
	if v > len(steps) {
		return fmt.Errorf("%w: %s %s is at version %d, this program knows %d", ErrNewerSchema, db.name, component, v, len(steps))
	}
	if v == len(steps) {
		return nil
	}
	for i := v; i < len(steps); i++ {
		if err := steps[i].run(ctx, tx); err != nil {
			return fmt.Errorf("store: %s: migrate %s step %d: %w", db.name, component, i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_versions (component, version) VALUES (?, ?)
		ON CONFLICT (component) DO UPDATE SET version = excluded.version`, component, len(steps)); err != nil {
		return fmt.Errorf("store: %s: migrate %s: record version: %w", db.name, component, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: %s: migrate %s: commit: %w", db.name, component, err)
	}
	return nil
}

// Version is the recorded schema version of component (0 when none).
func (db *DB) Version(ctx context.Context, component string) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `SELECT version FROM schema_versions WHERE component = ?`, component).Scan(&v)
	if err != nil && !isNoRows(err) {
		return 0, fmt.Errorf("store: %s: version of %s: %w", db.name, component, err)
	}
	return v, nil
}

func (m Migration) run(ctx context.Context, tx *Tx) error {
	if m.Func != nil {
		return m.Func(ctx, tx)
	}
	script := m.SQLite
	if tx.Dialect() == Postgres {
		script = m.Postgres
	}
	if script == "" {
		return fmt.Errorf("no script for %s", tx.Dialect())
	}
	_, err := tx.tx.ExecContext(ctx, script)
	return err
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
