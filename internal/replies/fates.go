package replies

import (
	"context"
	"fmt"
	"time"

	"triage"
	"triage/internal/store"
)

// The fate of a draft, kept on its row: what a person did with it (an
// outcome, DraftSentAsIs, DraftEdited, DraftRejected or DraftDiscarded),
// when, how close their reply came to the draft, and the figures over
// them. Package review decides the fates and reads the figures; the
// scenario and inbox a row is counted under come from the ledger
// (Attribute).

// SetDraftOutcome records what a person did with the unresolved draft of
// key: outcome (DraftSentAsIs, DraftEdited or DraftDiscarded), the
// similarity of their reply to the draft and the reply's Message-ID, at
// the store's time. Only the first resolution counts: it reports false
// when key has no draft or its outcome is already known.
func (s *Store) SetDraftOutcome(ctx context.Context, key triage.Key, outcome string, similarity float64, personMessageID string) (bool, error) {
	switch outcome {
	case DraftSentAsIs, DraftEdited, DraftDiscarded:
	default:
		return false, fmt.Errorf("replies: set draft outcome: unknown outcome %q", outcome)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET outcome=?, similarity=?, resolved_at=?, person_message_id=?
		WHERE key=? AND kind=? AND outcome=''`,
		outcome, similarity, unix(s.now()), personMessageID, key, KindDraft)
	if err != nil {
		return false, fmt.Errorf("replies: set draft outcome: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// RejectDraft records DraftRejected on the unresolved draft of key, at the
// store's time, while it waits for review (DraftPending or DraftStored);
// ErrDraftTaken when it is resolved, being sent, or not a draft.
func (s *Store) RejectDraft(ctx context.Context, key triage.Key) error {
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET outcome=?, resolved_at=?
		WHERE key=? AND kind=? AND outcome='' AND state IN (?,?)`,
		DraftRejected, unix(s.now()), key, KindDraft, DraftPending, DraftStored)
	if err != nil {
		return fmt.Errorf("replies: reject draft: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrDraftTaken
	}
	return nil
}

// discardStaleDraftsQuery is DiscardStaleDrafts' statement. It runs on
// every watch pass: its conditions on kind and outcome are written as the
// replies_pending_drafts index's are, so that it reads the drafts without
// an outcome only (that index, or replies_kind on PostgreSQL), not every
// draft of the history.
const discardStaleDraftsQuery = `UPDATE replies SET outcome=?, resolved_at=?
	WHERE kind='` + string(KindDraft) + `' AND outcome='' AND created < ? AND account=? AND mailbox=?`

// DiscardStaleDrafts records DraftDiscarded, at the store's time, on every
// draft of the inbox (account, mailbox) without an outcome that was
// recorded before t, and returns how many.
func (s *Store) DiscardStaleDrafts(ctx context.Context, account, mailbox string, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, discardStaleDraftsQuery, DraftDiscarded, unix(s.now()), unix(before), account, mailbox)
	if err != nil {
		return 0, fmt.Errorf("replies: discard stale drafts: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// DraftCount counts the drafts of one scenario in one inbox by outcome.
type DraftCount struct {
	Scenario string
	triage.Inbox
	Drafted   int // every draft
	SentAsIs  int
	Edited    int
	Rejected  int
	Discarded int
	Pending   int // no outcome yet
}

// DraftCounts counts the drafts by the scenario and inbox their message
// was handled in ("" when unknown, e.g. a draft recovered after a crash)
// and by outcome, sorted by scenario, account and mailbox.
func (s *Store) DraftCounts(ctx context.Context) ([]DraftCount, error) {
	return queryAll(ctx, s, "draft counts", func(sc scanner) (DraftCount, error) {
		var d DraftCount
		err := sc.Scan(&d.Scenario, &d.Account, &d.Mailbox, &d.Drafted, &d.SentAsIs, &d.Edited, &d.Rejected, &d.Discarded, &d.Pending)
		return d, err
	}, `SELECT scenario, account, mailbox,
		COUNT(*), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END),
		SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = '' THEN 1 ELSE 0 END)
		FROM replies WHERE kind = ? GROUP BY scenario, account, mailbox ORDER BY scenario, account, mailbox`,
		DraftSentAsIs, DraftEdited, DraftRejected, DraftDiscarded, KindDraft)
}

// DraftOutcome is one resolved draft: what a person did with it and when.
type DraftOutcome struct {
	Scenario   string
	Outcome    string // DraftSentAsIs, DraftEdited, DraftRejected or DraftDiscarded
	Similarity float64
	ResolvedAt time.Time
}

// DraftOutcomes lists the resolved drafts, oldest resolution first.
func (s *Store) DraftOutcomes(ctx context.Context) ([]DraftOutcome, error) {
	return queryAll(ctx, s, "draft outcomes", func(sc scanner) (DraftOutcome, error) {
		var o DraftOutcome
		var at int64
		err := sc.Scan(&o.Scenario, &o.Outcome, &o.Similarity, &at)
		o.ResolvedAt = fromUnix(at)
		return o, err
	}, `SELECT scenario, outcome, similarity, resolved_at
		FROM replies WHERE kind = ? AND outcome <> '' ORDER BY resolved_at`, KindDraft)
}

// LastOutcomes returns the outcomes of the last n resolved drafts of
// scenario in inbox, newest resolution first (fewer when there are fewer).
func (s *Store) LastOutcomes(ctx context.Context, scenario string, inbox triage.Inbox, n int) ([]string, error) {
	return queryAll(ctx, s, "last outcomes", func(sc scanner) (string, error) {
		var outcome string
		err := sc.Scan(&outcome)
		return outcome, err
	}, `SELECT outcome FROM replies
		WHERE kind=? AND scenario=? AND account=? AND mailbox=? AND outcome IN (?,?,?,?)
		ORDER BY resolved_at DESC, key DESC LIMIT ?`,
		KindDraft, scenario, inbox.Account, inbox.Mailbox, DraftSentAsIs, DraftEdited, DraftRejected, DraftDiscarded, n)
}

// Attribute puts on the reply, draft or notice of key the scenario and
// inbox its message was handled in: what DraftCounts and LastOutcomes
// count by. A key without a reply row changes nothing.
func (s *Store) Attribute(ctx context.Context, key triage.Key, scenario string, inbox triage.Inbox) error {
	return attribute(ctx, s.db, key, scenario, inbox)
}

// AttributeIn is Attribute inside tx, a transaction on the store's
// database: for a caller that records the message in the same commit.
func (s *Store) AttributeIn(ctx context.Context, tx *store.Tx, key triage.Key, scenario string, inbox triage.Inbox) error {
	return attribute(ctx, tx, key, scenario, inbox)
}

func attribute(ctx context.Context, x execer, key triage.Key, scenario string, inbox triage.Inbox) error {
	if _, err := x.ExecContext(ctx, `UPDATE replies SET scenario=?, account=?, mailbox=? WHERE key=?`,
		scenario, inbox.Account, inbox.Mailbox, key); err != nil {
		return fmt.Errorf("replies: attribute %q: %w", key, err)
	}
	return nil
}

// Unanswered is the SQL condition that key has no reply row (a reply,
// draft or notice, in any state), and its arguments, for a statement on
// another table that must check and write at once: a reply recorded by
// another process between a separate check and the write could not slip
// through.
func Unanswered(key triage.Key) (string, []any) {
	return `NOT EXISTS (SELECT 1 FROM replies WHERE key=?)`, []any{key}
}
