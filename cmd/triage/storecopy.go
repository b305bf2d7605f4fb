// The copy behind store migrate --from-sqlite: an installation's SQLite
// ledger and ticket files copied into another store (PostgreSQL), row for
// row, in one transaction: how a team moves from one machine's files to the
// shared store. It lives with the command, not in package store, because it
// knows the ledger's, the tickets' and the budget's tables, and those
// packages build on store.

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/model"
	"triage/internal/store"
)

// copyCounts are the rows copied, per table.
type copyCounts struct {
	Messages       int `json:"messages"`
	Replies        int `json:"replies"`
	SentScans      int `json:"sent_scans"`
	OutboxIndex    int `json:"outbox_index"`
	AutoModes      int `json:"autonomy_modes"`
	Switches       int `json:"autonomy_switches"`
	Resolutions    int `json:"resolutions"`
	PersonDrafts   int `json:"composer_drafts"`
	Tickets        int `json:"tickets"`
	TicketMessages int `json:"ticket_messages"`
	TicketNotes    int `json:"ticket_notes"`
}

// errStoreNotEmpty is returned when the destination already holds ledger rows
// or tickets: a copy would mix two histories (and collide on ticket IDs).
var errStoreNotEmpty = errors.New("storecopy: the destination store is not empty")

// tableCopy is one table to copy: its columns (the same names and values in
// both schemas), the order rows are copied in (the order a generated key
// would have given them), and which columns are bytes (BYTEA here; some
// old SQLite rows hold them as text).
type tableCopy struct {
	name    string
	cols    []string
	orderBy string
	blobs   []string
	count   func(*copyCounts) *int
}

func columnList(list string) []string { return strings.Split(list, ", ") }

// ledgerTables are the tables of the ledger file, every column of each
// but those in notCopied.
var ledgerTables = []tableCopy{
	{name: "messages",
		cols: columnList("account, mailbox, uidvalidity, uid, key, message_id, sender, subject, state, reason, scenario, attempts, imap_done, " +
			"created, updated, digest, detail, outcome, body, trace_id, ticket, received, answer_by, answered, clock_joined, notified, lapsed, " +
			"model, usage_month, model_calls, prompt_tokens, cached_tokens, output_tokens"),
		orderBy: "created, account, mailbox, uidvalidity, uid", count: func(c *copyCounts) *int { return &c.Messages }},
	{name: "replies",
		cols: columnList("key, message_id, recipient, sender, raw, state, appended, created, sent_at, kind, outcome, similarity, resolved_at, " +
			"person_message_id, scenario, account, mailbox, author, answers"),
		orderBy: "created, key", blobs: []string{"raw"}, count: func(c *copyCounts) *int { return &c.Replies }},
	{name: "sent_scan", cols: columnList("account, folder, uidvalidity, last_uid"), orderBy: "account, folder",
		count: func(c *copyCounts) *int { return &c.SentScans }},
	{name: "outbox_index", cols: columnList("message_id, kind, path, recipient, sender, customer, created"), orderBy: "created, message_id, kind",
		count: func(c *copyCounts) *int { return &c.OutboxIndex }},
	{name: "autonomy_modes", cols: columnList("scenario, account, mailbox, mode, since, counted"), orderBy: "scenario, account, mailbox",
		count: func(c *copyCounts) *int { return &c.AutoModes }},
	{name: "autonomy_switches",
		cols:    columnList("at, scenario, account, mailbox, mode, reviewed, sent_as_is, edited, rejected, discarded, min_reviewed, min_sent_as_is, why"),
		orderBy: "at, scenario, account, mailbox", count: func(c *copyCounts) *int { return &c.Switches }},
	{name: "resolutions", cols: columnList("key, at, action, reason, person, note, assignee"), orderBy: "id",
		count: func(c *copyCounts) *int { return &c.Resolutions }},
	{name: "composer_drafts", cols: columnList("key, person, body, updated"), orderBy: "key",
		count: func(c *copyCounts) *int { return &c.PersonDrafts }},
}

// ticketTables are the tables of the ticket file, every column of each
// but those in notCopied.
var ticketTables = []tableCopy{
	{name: "tickets", cols: columnList("seq, idempotency_key, serial_number, customer_email, priority, summary, created_at, status, agent_disabled, owner"),
		orderBy: "seq", count: func(c *copyCounts) *int { return &c.Tickets }},
	{name: "ticket_messages", cols: columnList("ticket_seq, message_id, direction, sender, subject, at"), orderBy: "rowid",
		count: func(c *copyCounts) *int { return &c.TicketMessages }},
	{name: "ticket_notes", cols: columnList("ticket_seq, message_id, sender, subject, body, at"), orderBy: "id",
		count: func(c *copyCounts) *int { return &c.TicketNotes }},
}

// notCopied names what of either schema (the SQLite files', the store's)
// the copy leaves out on purpose, as "table" or "table.column", with why.
// Every other table and column is copied, and the tests fail on one that
// is neither in the lists above nor here: a new column is copied, or named
// here with its reason. State that lives only while processes run (a
// token bucket, a lease) belongs here; history never does.
var notCopied = map[string]string{
	"schema_versions": "each store records the migrations run on it; prepareStore brings the destination's up to date",
	"model_budget": "the shared model budget's token bucket and 429 back-off: transient (it refills within a minute, " +
		"a back-off lasts seconds) and kept only in the store (without one the budget lives in memory); its row starts full",
	"messages.claimant": "a daemon's claim on a message, which lives only while that daemon runs (the copy is made with " +
		"every watch stopped): copied messages start unclaimed, and any daemon may claim them",
	"messages.lease_until": "the lease of a claim (see messages.claimant): transient",
	"ticket_notes.id": "a generated key that nothing outside the ticket store refers to: the store gives it again, " +
		"in the file's order (notes are read in id order)",
	"resolutions.id": "a generated key that nothing refers to: the store gives it again, in the file's order " +
		"(a message's resolutions are read in id order)",
	"wakes": "a counter that wakes running daemons for a pass now: transient, and the destination's row starts at zero",
	"ticket_messages.rowid": "the store's stand-in for SQLite's implicit rowid, the order a ticket's messages were written in: " +
		"given again, in the file's order",
}

// prepareStore brings dst's ledger, model budget and ticket schemas up to date.
func prepareStore(ctx context.Context, dst *store.DB) error {
	if err := ledger.Migrate(ctx, dst); err != nil {
		return err
	}
	if err := model.MigrateBudget(ctx, dst); err != nil {
		return err
	}
	return tickets.Migrate(ctx, dst)
}

// copyFromSQLite copies the ledger file ledgerPath and the ticket file
// ticketsPath into dst, which must hold no ledger rows and no tickets.
// The files are brought up to date first (as any triage command opening
// them would) and otherwise only read. Nothing is copied unless
// everything is.
func copyFromSQLite(ctx context.Context, dst *store.DB, ledgerPath, ticketsPath string) (copyCounts, error) {
	var n copyCounts
	srcL, err := openSQLiteSource(ctx, ledgerPath, ledger.Migrate)
	if err != nil {
		return n, err
	}
	defer srcL.Close()
	srcT, err := openSQLiteSource(ctx, ticketsPath, tickets.Migrate)
	if err != nil {
		return n, err
	}
	defer srcT.Close()
	if err := prepareStore(ctx, dst); err != nil {
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
			return n, fmt.Errorf("%w: %s has %d rows in %s", errStoreNotEmpty, dst.Name(), rows, t)
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

func openSQLiteSource(ctx context.Context, path string, migrate func(context.Context, *store.DB) error) (*store.DB, error) {
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
func copyTable(ctx context.Context, src *store.DB, dst *store.Tx, t tableCopy) (int, error) {
	ncols := len(t.cols)
	list := strings.Join(t.cols, ", ")
	rows, err := src.QueryContext(ctx, `SELECT `+list+` FROM `+t.name+` ORDER BY `+t.orderBy)
	if err != nil {
		return 0, fmt.Errorf("storecopy: %s: read %s: %w", src.Name(), t.name, err)
	}
	defer rows.Close()
	insert := `INSERT INTO ` + t.name + ` (` + list + `) VALUES (?` + strings.Repeat(", ?", ncols-1) + `)`
	var blobs []int
	for i, c := range t.cols {
		if slices.Contains(t.blobs, c) {
			blobs = append(blobs, i)
		}
	}
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
		for _, i := range blobs {
			vals[i] = asBytes(vals[i])
		}
		if _, err := dst.ExecContext(ctx, insert, vals...); err != nil {
			return n, fmt.Errorf("storecopy: %s: copy %s row %d: %w", src.Name(), t.name, n+1, err)
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
