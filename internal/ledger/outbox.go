package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"triage"
)

// OutboxEntry is one reply in the outbox index: where the reply with a
// Message-ID went, so finding it never means reading the outbox directory.
type OutboxEntry struct {
	MessageID string     `json:"message_id"` // with angle brackets
	Key       triage.Key `json:"key,omitempty"`
	Path      string     `json:"path,omitempty"` // the .eml file; "" when it went by SMTP
	Created   time.Time  `json:"created"`
}

// IndexOutbox records e (replacing an entry with the same Message-ID).
func (l *Ledger) IndexOutbox(ctx context.Context, e OutboxEntry) error {
	if e.MessageID == "" {
		return errors.New("ledger: index outbox: MessageID is required")
	}
	if e.Created.IsZero() {
		e.Created = l.now()
	}
	_, err := l.db.ExecContext(ctx, `INSERT INTO outbox (message_id, key, path, created) VALUES (?, ?, ?, ?)
		ON CONFLICT (message_id) DO UPDATE SET key = excluded.key, path = excluded.path, created = excluded.created`,
		e.MessageID, e.Key, e.Path, unix(e.Created))
	if err != nil {
		return fmt.Errorf("ledger: index outbox %s: %w", e.MessageID, err)
	}
	return nil
}

// Outbox returns the outbox index entry of messageID, or ErrNotFound.
func (l *Ledger) Outbox(ctx context.Context, messageID string) (OutboxEntry, error) {
	e := OutboxEntry{MessageID: messageID}
	var created int64
	err := l.db.QueryRowContext(ctx, `SELECT key, path, created FROM outbox WHERE message_id = ?`, messageID).
		Scan(&e.Key, &e.Path, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return OutboxEntry{}, ErrNotFound
	}
	if err != nil {
		return OutboxEntry{}, fmt.Errorf("ledger: outbox %s: %w", messageID, err)
	}
	e.Created = fromUnix(created)
	return e, nil
}
