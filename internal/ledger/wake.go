package ledger

import (
	"context"
	"fmt"
	"time"

	"triage/internal/store"
)

// Waking triage watch from another process (the console): a person asked
// for something only the daemon does (retry a message, remove a rejected
// draft, file a person's reply in the Sent folder), and the daemon should
// not wait for its next pass. Wake bumps a counter in the store and, on
// PostgreSQL, sends a notification; Wakes delivers them: a LISTEN on
// PostgreSQL, a cheap poll of the counter on SQLite.

// WakeChannel is the PostgreSQL notification channel of Wake.
const WakeChannel = "triage_wake"

// wakeSchema is the counter Wake bumps; the types are the same in both
// dialects.
const wakeSchema = `
CREATE TABLE wakes (id INTEGER PRIMARY KEY, seq BIGINT NOT NULL);
INSERT INTO wakes (id, seq) VALUES (1, 0);
`

// Wake asks every triage watch on the store for a pass now.
func (l *Ledger) Wake(ctx context.Context) error {
	if _, err := l.db.ExecContext(ctx, `UPDATE wakes SET seq = seq + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("ledger: wake: %w", err)
	}
	if l.db.Dialect() == store.Postgres {
		if _, err := l.db.ExecContext(ctx, `SELECT pg_notify(?, '')`, WakeChannel); err != nil {
			return fmt.Errorf("ledger: wake: %w", err)
		}
	}
	return nil
}

// wakeSeq reads the counter Wake bumps.
func (l *Ledger) wakeSeq(ctx context.Context) (int64, error) {
	var n int64
	err := l.db.QueryRowContext(ctx, `SELECT seq FROM wakes WHERE id = 1`).Scan(&n)
	return n, err
}

// Wakes calls wake for every Wake after it started, until ctx ends: on
// PostgreSQL as the notification arrives (LISTEN on a connection of its
// own, redialled after a failure), and on either store by reading the
// counter every poll (a notification lost while redialling is caught
// there). Several wakes in between call wake once.
func (l *Ledger) Wakes(ctx context.Context, poll time.Duration, wake func()) {
	last, err := l.wakeSeq(ctx)
	if err != nil {
		last = -1
	}
	if l.db.Dialect() == store.Postgres {
		go l.db.Listen(ctx, WakeChannel, wake)
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := l.wakeSeq(ctx)
		if err != nil {
			continue
		}
		if last >= 0 && n != last {
			wake()
		}
		last = n
	}
}
