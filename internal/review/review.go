// Package review is draft review: the fate of each draft triage left for
// a person (sent as is, edited, rejected, or discarded because nobody
// answered), the similarity that grades a person's reply against the
// draft, and the autonomy that earns a scenario the right to send without
// a person (reply_mode: auto).
//
// Its tables live in the store beside the ledger's, and the ledger's
// migration (ledger.Migrate) creates them. A draft is a row of the replies
// table: this package decides its fate and reads the figures over the
// fates, through replies.Store, which alone reads and writes that table.
package review

import (
	"context"
	"time"

	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/store"
)

// ErrNotFound is returned when a row does not exist (no auto mode yet, no
// Sent folder scan yet, no handled thread): the ledger's own error value.
var ErrNotFound = ledger.ErrNotFound

// Store is the draft review on an open store. Safe for concurrent use,
// also by several processes sharing the store.
type Store struct {
	db      *store.DB
	now     func() time.Time
	replies *replies.Store // the replies on db, on the same clock
}

// New returns the draft review on db, a store the ledger migrated; now
// stamps resolutions and switches (nil: time.Now).
func New(db *store.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now, replies: replies.New(db, now)}
}

// Of is the draft review on the ledger's store, on the ledger's clock.
func Of(l *ledger.Ledger) *Store { return New(l.Store(), l.Now) }

// unix and fromUnix are the tables' times (store.Millis).
var unix, fromUnix = store.Millis, store.FromMillis

// scanner is a query's row, or its rows at the current one.
type scanner = store.Scanner

// queryAll runs q and reads every row of it with scan; what names the
// listing in errors.
func queryAll[T any](ctx context.Context, s *Store, what string, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	return store.QueryAll(ctx, s.db, "review: "+what, scan, q, args...)
}
