// Package storecopy copies an installation's SQLite ledger and ticket
// files into another store (PostgreSQL), row for row, in one transaction:
// how a team moves from one machine's files to the shared store.
package storecopy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"triage/internal/budget"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/store"
)

// Counts are the rows copied, per table.
type Counts struct {
	Messages       int `json:"messages"`
	Replies        int `json:"replies"`
	SentScans      int `json:"sent_scans"`
	Outbox         int `json:"outbox"`
	AutoModes      int `json:"autonomy_modes"`
	Switches       int `json:"autonomy_switches"`
	Tickets        int `json:"tickets"`
	TicketMessages int `json:"ticket_messages"`
	TicketNotes    int `json:"ticket_notes"`
}

// ErrNotEmpty is returned when the destination already holds ledger rows
// or tickets: a copy would mix two histories (and collide on ticket IDs).
var ErrNotEmpty = errors.New("storecopy: the destination store is not empty")

// table is one table to copy: its columns in both schemas, and the order
// rows are copied in (the order a generated key would have given them).
type table struct {
	name    string
	cols    string
	orderBy string
	count   func(*Counts) *int
}

var ledgerTables = []table{
	{"messages", "account, mailbox, uidvalidity, uid, key, message_id, sender, subject, state, reason, scenario, attempts, imap_done, created, updated",
		"created, account, mailbox, uidvalidity, uid", func(c *Counts) *int { return &c.Messages }},
	{"replies", "key, message_id, recipient, sender, raw, state, appended, created, sent_at, kind, outcome, similarity, resolved_at, person_message_id, scenario, account, mailbox",
		"created, key", func(c *Counts) *int { return &c.Replies }},
	{"sent_scan", "account, folder, uidvalidity, last_uid", "account, folder", func(c *Counts) *int { return &c.SentScans }},
	{"outbox", "message_id, key, path, created", "created, message_id", func(c *Counts) *int { return &c.Outbox }},
	{"autonomy_modes", "scenario, account, mailbox, mode, since, counted", "scenario, account, mailbox", func(c *Counts) *int { return &c.AutoModes }},
	{"autonomy_switches", "at, scenario, account, mailbox, mode, reviewed, sent_as_is, edited, rejected, discarded, min_reviewed, min_sent_as_is, why",
		"at, scenario, account, mailbox", func(c *Counts) *int { return &c.Switches }},
}

var ticketTables = []table{
	{"tickets", "seq, idempotency_key, serial_number, customer_email, priority, summary, created_at, status, agent_disabled, owner",
		"seq", func(c *Counts) *int { return &c.Tickets }},
	// The order of a ticket's messages and notes is the order they were
	// written in: their generated keys (rowid, id) are not copied but
	// given again in the same order.
	{"ticket_messages", "ticket_seq, message_id, direction, sender, subject, at", "rowid", func(c *Counts) *int { return &c.TicketMessages }},
	{"ticket_notes", "ticket_seq, message_id, sender, subject, body, at", "id", func(c *Counts) *int { return &c.TicketNotes }},
}

// Prepare brings dst's ledger, model budget and ticket schemas up to date.
func Prepare(ctx context.Context, dst *store.DB) error {
	if err := ledger.Migrate(ctx, dst); err != nil {
		return err
	}
	if err := budget.Migrate(ctx, dst); err != nil {
		return err
	}
	return tickets.Migrate(ctx, dst)
}

// FromSQLite copies the ledger file ledgerPath and the ticket file
// ticketsPath into dst, which must hold no ledger rows and no tickets.
// The files are brought up to date first (as any triage command opening
// them would) and otherwise only read. Nothing is copied unless
// everything is.
func FromSQLite(ctx context.Context, dst *store.DB, ledgerPath, ticketsPath string) (Counts, error) {
	var n Counts
	srcL, err := openSQLite(ctx, ledgerPath, ledger.Migrate)
	if err != nil {
		return n, err
	}
	defer srcL.Close()
	srcT, err := openSQLite(ctx, ticketsPath, tickets.Migrate)
	if err != nil {
		return n, err
	}
	defer srcT.Close()
	if err := Prepare(ctx, dst); err != nil {
		return n, err
	}
	tx, err := dst.BeginTx(ctx)
	if err != nil {
		return n, fmt.Errorf("storecopy: %s: %w", dst.Name(), err)
	}
	defer tx.Rollback()
	// One copy at a time, and none while a daemon records a reply or
	// opens a ticket.
	for _, lock := range []string{"migrate", "replies", "tickets"} {
		if err := tx.Lock(ctx, lock); err != nil {
			return n, err
		}
	}
	for _, t := range []string{"messages", "replies", "tickets"} {
		var rows int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t).Scan(&rows); err != nil {
			return n, fmt.Errorf("storecopy: %s: count %s: %w", dst.Name(), t, err)
		}
		if rows > 0 {
			return n, fmt.Errorf("%w: %s has %d rows in %s", ErrNotEmpty, dst.Name(), rows, t)
		}
	}
	for _, t := range ledgerTables {
		if *t.count(&n), err = copyTable(ctx, srcL, tx, t); err != nil {
			return n, err
		}
	}
	for _, t := range ticketTables {
		if *t.count(&n), err = copyTable(ctx, srcT, tx, t); err != nil {
			return n, err
		}
	}
	if err := tickets.SyncSeq(ctx, tx); err != nil {
		return n, fmt.Errorf("storecopy: %s: ticket sequence: %w", dst.Name(), err)
	}
	if err := tx.Commit(); err != nil {
		return n, fmt.Errorf("storecopy: %s: commit: %w", dst.Name(), err)
	}
	return n, nil
}

func openSQLite(ctx context.Context, path string, migrate func(context.Context, *store.DB) error) (*store.DB, error) {
	if store.IsURL(path) {
		return nil, fmt.Errorf("storecopy: %s: want a SQLite file", store.Redact(path))
	}
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return nil, fmt.Errorf("storecopy: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("storecopy: %w", err)
	}
	return db, nil
}

// copyTable copies every row of t from src into dst.
func copyTable(ctx context.Context, src *store.DB, dst *store.Tx, t table) (int, error) {
	ncols := strings.Count(t.cols, ",") + 1
	rows, err := src.QueryContext(ctx, `SELECT `+t.cols+` FROM `+t.name+` ORDER BY `+t.orderBy)
	if err != nil {
		return 0, fmt.Errorf("storecopy: %s: read %s: %w", src.Name(), t.name, err)
	}
	defer rows.Close()
	insert := `INSERT INTO ` + t.name + ` (` + t.cols + `) VALUES (?` + strings.Repeat(", ?", ncols-1) + `)`
	vals := make([]any, ncols)
	ptrs := make([]any, ncols)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, fmt.Errorf("storecopy: %s: read %s: %w", src.Name(), t.name, err)
		}
		if t.name == "replies" {
			vals[4] = asBytes(vals[4]) // raw: BLOB in SQLite (text in some old rows), BYTEA here
		}
		if _, err := dst.ExecContext(ctx, insert, vals...); err != nil {
			return n, fmt.Errorf("storecopy: write %s row %d: %w", t.name, n+1, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("storecopy: %s: read %s: %w", src.Name(), t.name, err)
	}
	return n, nil
}

func asBytes(v any) any {
	if s, ok := v.(string); ok {
		return []byte(s)
	}
	return v
}
