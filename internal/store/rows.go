package store

import (
	"context"
	"fmt"
	"time"
)

// Millis is t as the tables keep times: Unix milliseconds (UTC).
func Millis(t time.Time) int64 { return t.UTC().UnixMilli() }

// FromMillis is the time a Millis value stands for; 0 is the zero time.
func FromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// Scanner is a query's row, or its rows at the current one.
type Scanner interface{ Scan(...any) error }

// QueryAll runs q and reads every row of it with scan; what names the
// listing in errors.
func QueryAll[T any](ctx context.Context, db *DB, what string, scan func(Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
