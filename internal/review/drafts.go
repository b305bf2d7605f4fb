package review

import (
	"context"
	"fmt"
	"time"

	"triage"
	"triage/internal/replies"
)

// What became of the drafts: resolved by a person's reply in the Sent
// folder (sent as is or edited), rejected in the console, or discarded when
// nobody answered within the draft window; and the figures over them. The
// outcomes are replies.DraftSentAsIs, DraftEdited, DraftRejected and
// DraftDiscarded, kept on the draft's row.

// ResolveDraft records what a person did with the draft of key: outcome,
// the similarity of their reply to the draft, and the reply's Message-ID.
// Only the first resolution counts: it reports false when the key has no
// draft or its outcome is already known.
func (s *Store) ResolveDraft(ctx context.Context, key triage.Key, outcome string, similarity float64, personMessageID string) (bool, error) {
	switch outcome {
	case replies.DraftSentAsIs, replies.DraftEdited, replies.DraftDiscarded:
	default:
		return false, fmt.Errorf("review: resolve draft: unknown outcome %q", outcome)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET outcome=?, similarity=?, resolved_at=?, person_message_id=?
		WHERE key=? AND kind=? AND outcome=''`,
		outcome, similarity, unix(s.now()), personMessageID, key, replies.KindDraft)
	if err != nil {
		return false, fmt.Errorf("review: resolve draft: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// DiscardStaleDrafts marks discarded every draft of the inbox (account,
// mailbox) without an outcome that was recorded before t, and returns how
// many. Another inbox's drafts wait for its own Sent folder.
func (s *Store) DiscardStaleDrafts(ctx context.Context, account, mailbox string, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET outcome=?, resolved_at=? WHERE kind=? AND outcome='' AND created < ? AND account=? AND mailbox=?`,
		replies.DraftDiscarded, unix(s.now()), replies.KindDraft, unix(before), account, mailbox)
	if err != nil {
		return 0, fmt.Errorf("review: discard stale drafts: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// DraftStat is what became of one scenario's drafts in one inbox.
type DraftStat struct {
	Scenario string `json:"scenario"`
	triage.Inbox
	Drafted   int `json:"drafted"`
	SentAsIs  int `json:"sent_as_is"`
	Edited    int `json:"edited"`
	Rejected  int `json:"rejected"`
	Discarded int `json:"discarded"`
	Pending   int `json:"pending"` // no outcome yet
}

// Add adds o's counts to s (its scenario and inbox stay).
func (s *DraftStat) Add(o DraftStat) {
	s.Drafted += o.Drafted
	s.SentAsIs += o.SentAsIs
	s.Edited += o.Edited
	s.Rejected += o.Rejected
	s.Discarded += o.Discarded
	s.Pending += o.Pending
}

// Reviewed counts the drafts whose fate is known: sent as is, edited,
// rejected or discarded.
func (s DraftStat) Reviewed() int { return s.SentAsIs + s.Edited + s.Rejected + s.Discarded }

// DraftStats counts drafts by scenario and inbox (those their message was
// handled in; "" when unknown, e.g. a draft recovered after a crash) and
// outcome, sorted by scenario, account and mailbox.
func (s *Store) DraftStats(ctx context.Context) ([]DraftStat, error) {
	return queryAll(ctx, s, "draft stats", func(sc scanner) (DraftStat, error) {
		var d DraftStat
		err := sc.Scan(&d.Scenario, &d.Account, &d.Mailbox, &d.Drafted, &d.SentAsIs, &d.Edited, &d.Rejected, &d.Discarded, &d.Pending)
		return d, err
	}, `SELECT scenario, account, mailbox,
		COUNT(*), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END),
		SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = '' THEN 1 ELSE 0 END)
		FROM replies WHERE kind = ? GROUP BY scenario, account, mailbox ORDER BY scenario, account, mailbox`,
		replies.DraftSentAsIs, replies.DraftEdited, replies.DraftRejected, replies.DraftDiscarded, replies.KindDraft)
}

// DraftFate is one resolved draft: what a person did with it and when.
type DraftFate struct {
	Scenario   string
	Outcome    string // replies.DraftSentAsIs, replies.DraftEdited, replies.DraftRejected or replies.DraftDiscarded
	Similarity float64
	ResolvedAt time.Time
}

// DraftFates lists the resolved drafts, oldest resolution first.
func (s *Store) DraftFates(ctx context.Context) ([]DraftFate, error) {
	return queryAll(ctx, s, "draft fates", func(sc scanner) (DraftFate, error) {
		var f DraftFate
		var at int64
		err := sc.Scan(&f.Scenario, &f.Outcome, &f.Similarity, &at)
		f.ResolvedAt = fromUnix(at)
		return f, err
	}, `SELECT scenario, outcome, similarity, resolved_at
		FROM replies WHERE kind = ? AND outcome <> '' ORDER BY resolved_at`, replies.KindDraft)
}

// RejectDraft records that a person rejected the unresolved draft of key
// in the console (replies.DraftRejected: told apart from a draft nobody
// answered, it stops reply mode auto from sending);
// replies.ErrDraftTaken when it is resolved or being sent.
func (s *Store) RejectDraft(ctx context.Context, key triage.Key) error {
	now := unix(s.now())
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET outcome=?, resolved_at=?
		WHERE key=? AND kind=? AND outcome='' AND state IN (?,?)`,
		replies.DraftRejected, now, key, replies.KindDraft, replies.DraftPending, replies.DraftStored)
	if err != nil {
		return fmt.Errorf("review: reject draft: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return replies.ErrDraftTaken
	}
	return nil
}
