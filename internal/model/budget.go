// The rate budget: the model calls of every triage process sharing a
// store stay within model.requests_per_minute and model.tokens_per_minute,
// a token bucket kept in one row of the store and updated atomically per
// call, and a shared back-off after the model answers 429 (too many
// requests), so every daemon waits, not only the one that was refused.
// Without a store the bucket lives in memory and binds one process.

package model

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"triage/internal/store"
)

// budgetComponent is the budget's name in the store's schema_versions table.
const budgetComponent = "budget"

// budgetMigrations are the budget's schema, forward only (see store.Migrate).
var budgetMigrations = []store.Migration{
	{SQLite: bucketSchema, Postgres: bucketSchema},
}

// bucketSchema holds one row per bucket: what is left of each allowance
// (it refills at the per-minute rate up to one minute's worth; tokens may
// go below zero when a call used more than it was estimated at), when the
// row was last brought up to date, and until when every process waits
// after a 429 (Unix milliseconds).
const bucketSchema = `
CREATE TABLE IF NOT EXISTS model_budget (
	name          TEXT PRIMARY KEY,
	requests      DOUBLE PRECISION NOT NULL,
	tokens        DOUBLE PRECISION NOT NULL,
	updated       BIGINT NOT NULL,
	backoff_until BIGINT NOT NULL DEFAULT 0
);
`

// MigrateBudget brings the budget's table in db up to date (NewBudget does
// it too).
func MigrateBudget(ctx context.Context, db *store.DB) error {
	return db.Migrate(ctx, budgetComponent, budgetMigrations)
}

// defaultBudgetBackoff is how long every process waits after a 429 that
// does not say (google.rpc.RetryInfo).
const defaultBudgetBackoff = 10 * time.Second

// BudgetConfig configures NewBudget. A zero RequestsPerMinute or TokensPerMinute is no
// limit on that allowance.
type BudgetConfig struct {
	RequestsPerMinute int
	TokensPerMinute   int
	// DB is the store the bucket is shared through; nil keeps it in
	// memory, for this process alone.
	DB *store.DB
	// Name is the bucket's row (default "model"): processes with the same
	// name on one store share one budget.
	Name    string
	Backoff time.Duration // after a 429 without a retry hint (default 10s)
	Now     func() time.Time
	// Sleep waits d or until ctx ends (default: a timer).
	Sleep  func(ctx context.Context, d time.Duration) error
	Logger *slog.Logger
}

// Budget is a token bucket; safe for concurrent use, and across processes
// when it lives in a store.
type Budget struct {
	cfg BudgetConfig
	log *slog.Logger

	mu  sync.Mutex // guards mem
	mem budgetState
}

// budgetState is a bucket at a moment.
type budgetState struct {
	requests, tokens float64
	updated, backoff time.Time
	fresh            bool // no row yet
}

// NewBudget checks cfg and, with a store, brings the budget's table up to
// date.
func NewBudget(ctx context.Context, cfg BudgetConfig) (*Budget, error) {
	if cfg.RequestsPerMinute < 0 || cfg.TokensPerMinute < 0 {
		return nil, fmt.Errorf("budget: requests_per_minute %d, tokens_per_minute %d: want 0 (no limit) or more", cfg.RequestsPerMinute, cfg.TokensPerMinute)
	}
	if cfg.Name == "" {
		cfg.Name = "model"
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = defaultBudgetBackoff
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DB != nil && !cfg.DB.ReadOnly() {
		if err := MigrateBudget(ctx, cfg.DB); err != nil {
			return nil, fmt.Errorf("budget: %w", err)
		}
	}
	return &Budget{cfg: cfg, log: cfg.Logger, mem: budgetState{fresh: true}}, nil
}

// Limited reports whether the budget limits anything.
func (b *Budget) Limited() bool {
	return b.cfg.RequestsPerMinute > 0 || b.cfg.TokensPerMinute > 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// refill brings s up to now: each allowance grows at its per-minute rate up
// to one minute's worth.
func (b *Budget) refill(s *budgetState, now time.Time) {
	if s.fresh {
		s.requests, s.tokens, s.updated, s.fresh = float64(b.cfg.RequestsPerMinute), float64(b.cfg.TokensPerMinute), now, false
		return
	}
	if el := now.Sub(s.updated).Minutes(); el > 0 {
		s.requests = math.Min(float64(b.cfg.RequestsPerMinute), s.requests+el*float64(b.cfg.RequestsPerMinute))
		s.tokens = math.Min(float64(b.cfg.TokensPerMinute), s.tokens+el*float64(b.cfg.TokensPerMinute))
		s.updated = now
	}
}

// admit is how long a call estimated at tokens must wait under s at now (0:
// it may go). A call needs one request and its tokens, or a full minute's
// tokens when it needs more than a minute holds.
func (b *Budget) admit(s *budgetState, now time.Time, tokens int) time.Duration {
	if now.Before(s.backoff) {
		return s.backoff.Sub(now)
	}
	b.refill(s, now)
	var wait time.Duration
	if rpm := float64(b.cfg.RequestsPerMinute); rpm > 0 && s.requests < 1 {
		wait = max(wait, minutes((1-s.requests)/rpm))
	}
	if tpm := float64(b.cfg.TokensPerMinute); tpm > 0 {
		if need := math.Min(float64(tokens), tpm); s.tokens < need {
			wait = max(wait, minutes((need-s.tokens)/tpm))
		}
	}
	return wait
}

func minutes(m float64) time.Duration {
	return max(time.Millisecond, time.Duration(m*float64(time.Minute)))
}

// Wait blocks until a call estimated at tokens would be admitted, without
// taking anything: the agent waits here outside its per-turn timeout.
func (b *Budget) Wait(ctx context.Context, tokens int) error {
	return b.loop(ctx, tokens, false)
}

// Take waits until a call estimated at tokens is admitted and takes one
// request and the tokens from the budget.
func (b *Budget) Take(ctx context.Context, tokens int) error {
	return b.loop(ctx, tokens, true)
}

func (b *Budget) loop(ctx context.Context, tokens int, take bool) error {
	if !b.Limited() {
		return b.waitBackoff(ctx)
	}
	for logged := false; ; {
		var wait time.Duration
		err := b.update(ctx, func(s *budgetState, now time.Time) bool {
			wait = b.admit(s, now, tokens)
			if wait == 0 && take {
				s.requests--
				s.tokens -= float64(tokens)
				return true
			}
			return false
		})
		if err != nil {
			return err
		}
		if wait == 0 {
			return nil
		}
		if !logged {
			b.log.InfoContext(ctx, "model budget: waiting", "wait", wait.Round(time.Millisecond).String(), "tokens", tokens)
			logged = true
		}
		if err := b.cfg.Sleep(ctx, wait); err != nil {
			return fmt.Errorf("budget: waiting for the model budget: %w", err)
		}
	}
}

// waitBackoff, for a budget without limits, only honours a back-off after
// a 429: nothing is taken, so nothing is written, and the store is read
// without its lock.
func (b *Budget) waitBackoff(ctx context.Context) error {
	until, err := b.backoffUntil(ctx)
	if err != nil {
		return err
	}
	if d := until.Sub(b.cfg.Now()); d > 0 {
		b.log.InfoContext(ctx, "model budget: backing off after a 429", "wait", d.Round(time.Millisecond).String())
		if err := b.cfg.Sleep(ctx, d); err != nil {
			return fmt.Errorf("budget: backing off: %w", err)
		}
	}
	return nil
}

// backoffUntil is when the back-off after the last 429 ends.
func (b *Budget) backoffUntil(ctx context.Context) (time.Time, error) {
	if b.cfg.DB == nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.mem.backoff, nil
	}
	var until int64
	err := b.cfg.DB.QueryRowContext(ctx, `SELECT backoff_until FROM model_budget WHERE name = ?`, b.cfg.Name).Scan(&until)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("budget: read %s: %w", b.cfg.Name, err)
	}
	return time.UnixMilli(until), nil
}

// Settle corrects the tokens a call took: estimated were taken, used were
// spent (the response's usage). A call that used more leaves the budget in
// debt, which later calls wait off.
func (b *Budget) Settle(ctx context.Context, estimated, used int) error {
	if estimated == used || b.cfg.TokensPerMinute == 0 {
		return nil
	}
	err := b.update(ctx, func(s *budgetState, now time.Time) bool {
		b.refill(s, now)
		s.tokens = math.Min(float64(b.cfg.TokensPerMinute), s.tokens+float64(estimated-used))
		return true
	})
	return err
}

// Backoff makes every process sharing the budget wait until until (a later
// back-off already set stays).
func (b *Budget) Backoff(ctx context.Context, until time.Time) error {
	err := b.update(ctx, func(s *budgetState, now time.Time) bool {
		if until.After(s.backoff) {
			s.backoff = until
			return true
		}
		return false
	})
	return err
}

// BackoffAfter is Backoff at now plus d, or plus BudgetConfig.Backoff when
// d is 0.
func (b *Budget) BackoffAfter(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		d = b.cfg.Backoff
	}
	b.log.WarnContext(ctx, "model answered 429 (too many requests): every process on the budget backs off", "for", d.String())
	return b.Backoff(ctx, b.cfg.Now().Add(d))
}

// update runs f on the bucket atomically (in memory, or in one store
// transaction under the bucket's lock) and writes the bucket back when f
// reports a change.
func (b *Budget) update(ctx context.Context, f func(s *budgetState, now time.Time) bool) error {
	if b.cfg.DB == nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		f(&b.mem, b.cfg.Now())
		return nil
	}
	tx, err := b.cfg.DB.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	defer tx.Rollback()
	if err := tx.Lock(ctx, "budget:"+b.cfg.Name); err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	var s budgetState
	var updated, backoff int64
	err = tx.QueryRowContext(ctx, `SELECT requests, tokens, updated, backoff_until FROM model_budget WHERE name = ?`, b.cfg.Name).
		Scan(&s.requests, &s.tokens, &updated, &backoff)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s.fresh = true
	case err != nil:
		return fmt.Errorf("budget: read %s: %w", b.cfg.Name, err)
	default:
		s.updated, s.backoff = time.UnixMilli(updated), time.UnixMilli(backoff)
	}
	now := b.cfg.Now()
	if !f(&s, now) {
		return nil
	}
	if s.fresh { // f only set a back-off: the allowances start full
		b.refill(&s, now)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO model_budget (name, requests, tokens, updated, backoff_until) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET requests = excluded.requests, tokens = excluded.tokens,
			updated = excluded.updated, backoff_until = excluded.backoff_until`,
		b.cfg.Name, s.requests, s.tokens, s.updated.UnixMilli(), backoffMilli(s.backoff)); err != nil {
		return fmt.Errorf("budget: write %s: %w", b.cfg.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("budget: write %s: %w", b.cfg.Name, err)
	}
	return nil
}

func backoffMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
