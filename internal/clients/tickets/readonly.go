package tickets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"triage/internal/store"
)

// ErrOldSchema is returned by OpenReadOnly for a store written by an older
// triage: reading it needs the upgrade a read-only open never makes.
var ErrOldSchema = errors.New("tickets: the store's schema is older than this program's")

// OpenReadOnly opens an existing store at target (a SQLite file or a
// postgres:// URL) without writing to it at all: no schema, no upgrade, no
// journal-mode change (for dry runs). Every write through it fails. A
// store of an older schema is refused with an error wrapping ErrOldSchema.
func OpenReadOnly(ctx context.Context, target string) (*SQLite, error) {
	if target == "" {
		return nil, errors.New("tickets: path is required")
	}
	db, err := store.Open(ctx, target, store.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("tickets: %w", err)
	}
	v, err := db.Version(ctx, Component)
	if err != nil || v < len(migrations) {
		db.Close()
		return nil, fmt.Errorf("%w: %s is at version %d, this program writes %d", ErrOldSchema, target, v, len(migrations))
	}
	return &SQLite{db: db, now: time.Now, owned: true}, nil
}
