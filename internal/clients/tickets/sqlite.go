package tickets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SQLite is a local ticket store in one SQLite file (WAL mode). Ticket IDs
// are TKT-000001, TKT-000002, ... in creation order. It is safe for
// concurrent use, also by several processes sharing the file: lookup and
// insert run in one IMMEDIATE transaction, and the idempotency key is unique.
type SQLite struct {
	db  *sql.DB
	now func() time.Time
}

var _ Store = (*SQLite)(nil)

const schema = `CREATE TABLE IF NOT EXISTS tickets (
	seq             INTEGER PRIMARY KEY AUTOINCREMENT,
	idempotency_key TEXT NOT NULL UNIQUE,
	serial_number   TEXT NOT NULL,
	customer_email  TEXT NOT NULL,
	priority        TEXT NOT NULL,
	summary         TEXT NOT NULL,
	created_at      TEXT NOT NULL
)`

// OpenSQLite opens (creating when missing) the store at path.
func OpenSQLite(path string) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("tickets: sqlite: path is required")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + uriPath.Replace(path) + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("tickets: sqlite: open %s: %w", path, err)
	}
	// One connection per store: goroutines queue in database/sql instead of
	// spinning in SQLite's busy handler; other processes still wait on the
	// file lock (busy_timeout).
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("tickets: sqlite: %s: create schema: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("tickets: sqlite: %s: %w", path, err)
	}
	return &SQLite{db: db, now: time.Now}, nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// Create opens a ticket for r, or returns the ticket already opened under
// r.IdempotencyKey with Status "existing".
func (s *SQLite) Create(ctx context.Context, r Request) (Ticket, error) {
	if r.IdempotencyKey == "" {
		return Ticket{}, ErrNoKey
	}
	// The transaction starts IMMEDIATE (see _txlock in OpenSQLite): writers
	// queue on the database lock (busy_timeout), so the lookup and the insert
	// are atomic across goroutines and processes and IDs stay dense.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Ticket{}, fmt.Errorf("tickets: sqlite: begin: %w", err)
	}
	defer tx.Rollback()
	var seq int64
	err = tx.QueryRowContext(ctx, `SELECT seq FROM tickets WHERE idempotency_key = ?`, r.IdempotencyKey).Scan(&seq)
	switch {
	case err == nil:
		return Ticket{TicketID: FormatID(seq), Status: StatusExisting}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Ticket{}, fmt.Errorf("tickets: sqlite: lookup: %w", err)
	}
	now := s.now().UTC().Format(time.RFC3339Nano)
	err = tx.QueryRowContext(ctx, `INSERT INTO tickets
		(idempotency_key, serial_number, customer_email, priority, summary, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`,
		r.IdempotencyKey, r.SerialNumber, r.CustomerEmail, r.Priority, r.Summary, now).Scan(&seq)
	if err != nil {
		return Ticket{}, fmt.Errorf("tickets: sqlite: insert: %w", err)
	}
	if r.MessageID != "" {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE `+insertMessage,
			seq, r.MessageID, Inbound, r.CustomerEmail, r.Summary, now); err != nil {
			return Ticket{}, fmt.Errorf("tickets: sqlite: insert message: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return Ticket{}, fmt.Errorf("tickets: sqlite: commit: %w", err)
	}
	return Ticket{TicketID: FormatID(seq), Status: StatusCreated}, nil
}

// FormatID is the ticket ID for a sequence number: TKT-000123.
func FormatID(seq int64) string { return fmt.Sprintf("TKT-%06d", seq) }

// uriPath escapes the characters that would end the file name in a "file:"
// DSN (a ledger in "/srv/mail#2/" must not open "/srv/mail").
var uriPath = strings.NewReplacer("%", "%25", "#", "%23", "?", "%3f")
