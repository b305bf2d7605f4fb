package review

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"triage"
	"triage/internal/replies"
)

// What reply mode auto decides from and records (Resolver makes the
// decisions): the fate of a scenario's last reviewed drafts in an
// inbox, the mode auto chose there, and every switch between draft and
// send with the figures behind it.

// Window is what people did with a scenario's most recent reviewed drafts
// in one inbox: the drafts whose fate is known (sent as is, edited,
// rejected, discarded), newest resolution first.
type Window struct {
	Reviewed  int `json:"reviewed"`
	SentAsIs  int `json:"sent_as_is"`
	Edited    int `json:"edited"`
	Rejected  int `json:"rejected"`
	Discarded int `json:"discarded"`
}

// Share is the part of the window sent as is (0 when it is empty).
func (w Window) Share() float64 {
	if w.Reviewed == 0 {
		return 0
	}
	return float64(w.SentAsIs) / float64(w.Reviewed)
}

// ReviewWindow counts the fates of the last n reviewed drafts of scenario
// in inbox (fewer when there are fewer).
func (s *Store) ReviewWindow(ctx context.Context, scenario string, inbox triage.Inbox, n int) (Window, error) {
	var w Window
	outcomes, err := s.replies.LastOutcomes(ctx, scenario, inbox, n)
	if err != nil {
		return w, err
	}
	for _, outcome := range outcomes {
		w.Reviewed++
		switch outcome {
		case replies.DraftSentAsIs:
			w.SentAsIs++
		case replies.DraftEdited:
			w.Edited++
		case replies.DraftRejected:
			w.Rejected++
		case replies.DraftDiscarded:
			w.Discarded++
		}
	}
	return w, nil
}

// AutoMode is the reply mode auto chose for a scenario in an inbox.
type AutoMode struct {
	Scenario string `json:"scenario"`
	triage.Inbox
	Mode  triage.ReplyMode `json:"mode"` // ReplySend or ReplyDraft
	Since time.Time        `json:"since"`
	// Counted is how many messages auto has decided while sending (since
	// Since): every SampleEvery-th of them is drafted.
	Counted int `json:"counted"`
}

// GetAutoMode returns the mode auto chose for scenario in inbox, or
// ErrNotFound when it never switched there (it drafts).
func (s *Store) GetAutoMode(ctx context.Context, scenario string, inbox triage.Inbox) (AutoMode, error) {
	m := AutoMode{Scenario: scenario, Inbox: inbox}
	var since int64
	err := s.db.QueryRowContext(ctx, `SELECT mode, since, counted FROM autonomy_modes WHERE scenario=? AND account=? AND mailbox=?`,
		scenario, inbox.Account, inbox.Mailbox).Scan(&m.Mode, &since, &m.Counted)
	if errors.Is(err, sql.ErrNoRows) {
		return AutoMode{}, ErrNotFound
	}
	if err != nil {
		return AutoMode{}, fmt.Errorf("review: auto mode: %w", err)
	}
	m.Since = fromUnix(since)
	return m, nil
}

// AutoModes lists the modes auto chose, by scenario, account and mailbox.
func (s *Store) AutoModes(ctx context.Context) ([]AutoMode, error) {
	return queryAll(ctx, s, "auto modes", func(sc scanner) (AutoMode, error) {
		var m AutoMode
		var since int64
		err := sc.Scan(&m.Scenario, &m.Account, &m.Mailbox, &m.Mode, &since, &m.Counted)
		m.Since = fromUnix(since)
		return m, err
	}, `SELECT scenario, account, mailbox, mode, since, counted FROM autonomy_modes ORDER BY scenario, account, mailbox`)
}

// Switch is one switch of reply mode auto, with the figures it was made on.
type Switch struct {
	At       time.Time `json:"at"`
	Scenario string    `json:"scenario"`
	triage.Inbox
	Mode triage.ReplyMode `json:"mode"` // the mode switched to
	// Window holds the last reviewed drafts the decision counted.
	Window
	MinReviewed int     `json:"min_reviewed"`
	MinSentAsIs float64 `json:"min_sent_as_is"` // percent
	Why         string  `json:"why"`
}

// SwitchAutoMode records that auto switches sw.Scenario in sw.Inbox to
// sw.Mode, at the store's time; it reports false, recording nothing, when
// the scenario already is in that mode there (another process switched
// first). A switch to send starts counting from zero.
func (s *Store) SwitchAutoMode(ctx context.Context, sw Switch) (bool, error) {
	if sw.Mode != triage.ReplySend && sw.Mode != triage.ReplyDraft {
		return false, fmt.Errorf("review: switch auto mode: mode %q: want %s or %s", sw.Mode, triage.ReplySend, triage.ReplyDraft)
	}
	now := unix(s.now())
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return false, fmt.Errorf("review: switch auto mode: %w", err)
	}
	defer tx.Rollback()
	// No row is draft; the conditional update is the guard two processes
	// deciding at once pass only one at a time.
	res, err := tx.ExecContext(ctx, `INSERT INTO autonomy_modes (scenario, account, mailbox, mode, since, counted) VALUES (?,?,?,?,?,0)
		ON CONFLICT (scenario, account, mailbox) DO UPDATE SET mode=excluded.mode, since=excluded.since, counted=0
		WHERE autonomy_modes.mode <> excluded.mode`,
		sw.Scenario, sw.Account, sw.Mailbox, sw.Mode, now)
	if err != nil {
		return false, fmt.Errorf("review: switch auto mode: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO autonomy_switches
		(at, scenario, account, mailbox, mode, reviewed, sent_as_is, edited, rejected, discarded, min_reviewed, min_sent_as_is, why)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		now, sw.Scenario, sw.Account, sw.Mailbox, sw.Mode, sw.Reviewed, sw.SentAsIs, sw.Edited, sw.Rejected, sw.Discarded,
		sw.MinReviewed, sw.MinSentAsIs, sw.Why); err != nil {
		return false, fmt.Errorf("review: switch auto mode: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("review: switch auto mode: %w", err)
	}
	return true, nil
}

// CountAutoSend counts one more message of scenario in inbox decided while
// auto sends there, and returns how many that makes since the switch to
// send; 0 when auto does not send there.
func (s *Store) CountAutoSend(ctx context.Context, scenario string, inbox triage.Inbox) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `UPDATE autonomy_modes SET counted = counted + 1
		WHERE scenario=? AND account=? AND mailbox=? AND mode=? RETURNING counted`,
		scenario, inbox.Account, inbox.Mailbox, triage.ReplySend).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("review: count auto send: %w", err)
	}
	return n, nil
}

// Switches lists the switches of reply mode auto, newest first, at most
// limit (default 100).
func (s *Store) Switches(ctx context.Context, limit int) ([]Switch, error) {
	if limit <= 0 {
		limit = 100
	}
	return queryAll(ctx, s, "switches", func(sc scanner) (Switch, error) {
		var sw Switch
		var at int64
		err := sc.Scan(&at, &sw.Scenario, &sw.Account, &sw.Mailbox, &sw.Mode, &sw.Reviewed, &sw.SentAsIs, &sw.Edited, &sw.Rejected, &sw.Discarded,
			&sw.MinReviewed, &sw.MinSentAsIs, &sw.Why)
		sw.At = fromUnix(at)
		return sw, err
	}, `SELECT at, scenario, account, mailbox, mode, reviewed, sent_as_is, edited, rejected, discarded,
		min_reviewed, min_sent_as_is, why FROM autonomy_switches ORDER BY at DESC, scenario, account, mailbox LIMIT ?`, limit)
}
