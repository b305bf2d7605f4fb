package tickets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"triage/internal/store"
)

// SQLite is the ticket store on a store database: a SQLite file (WAL
// mode) by default, or PostgreSQL. Ticket IDs are TKT-000001, TKT-000002,
// ... in creation order. It is safe for concurrent use, also by several
// processes sharing the database: lookup and insert run in one transaction
// under the store's "tickets" lock, and the idempotency key is unique.
type SQLite struct {
	db    *store.DB
	now   func() time.Time
	owned bool // Close closes db
}

var _ Store = (*SQLite)(nil)

// OpenSQLite opens (creating when missing) the store at path: a SQLite
// file, or a postgres:// URL.
func OpenSQLite(path string) (*SQLite, error) {
	return Open(context.Background(), path)
}

// Open opens the ticket store at target (a SQLite file, created when
// missing, or a postgres:// URL) and brings its schema up to date.
func Open(ctx context.Context, target string) (*SQLite, error) {
	if target == "" {
		return nil, errors.New("tickets: sqlite: path is required")
	}
	db, err := store.Open(ctx, target, store.Options{Synchronous: "NORMAL"})
	if err != nil {
		return nil, fmt.Errorf("tickets: %w", err)
	}
	s, err := New(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New is the ticket store on db, shared with the ledger; Close leaves db
// open.
func New(ctx context.Context, db *store.DB) (*SQLite, error) {
	if err := Migrate(ctx, db); err != nil {
		return nil, fmt.Errorf("tickets: %w", err)
	}
	return &SQLite{db: db, now: time.Now}, nil
}

// Close closes the database, unless it came from New.
func (s *SQLite) Close() error {
	if !s.owned {
		return nil
	}
	return s.db.Close()
}

// Create opens a ticket for r, or returns the ticket already opened under
// r.IdempotencyKey with Status "existing".
func (s *SQLite) Create(ctx context.Context, r Request) (Ticket, error) {
	if r.IdempotencyKey == "" {
		return Ticket{}, ErrNoKey
	}
	// Creators queue on the store's lock (SQLite: the write lock every
	// transaction begins with; PostgreSQL: an advisory lock), so the lookup
	// and the insert are atomic across goroutines and processes and IDs stay
	// dense.
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return Ticket{}, fmt.Errorf("tickets: sqlite: begin: %w", err)
	}
	defer tx.Rollback()
	if err := tx.Lock(ctx, "tickets"); err != nil {
		return Ticket{}, fmt.Errorf("tickets: %w", err)
	}
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
		if _, err := tx.ExecContext(ctx, `INSERT `+insertMessage+onConflictIgnore,
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
