package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"triage"
	"triage/internal/replies"
)

// ResolveDraft records what a person did with the draft of key: outcome,
// the similarity of their reply to the draft, and the reply's Message-ID.
// Only the first resolution counts: it reports false when the key has no
// draft or its outcome is already known.
func (l *Ledger) ResolveDraft(ctx context.Context, key triage.Key, outcome string, similarity float64, personMessageID string) (bool, error) {
	switch outcome {
	case replies.DraftSentAsIs, replies.DraftEdited, replies.DraftDiscarded:
	default:
		return false, fmt.Errorf("ledger: resolve draft: unknown outcome %q", outcome)
	}
	res, err := l.db.ExecContext(ctx, `UPDATE replies SET outcome=?, similarity=?, resolved_at=?, person_message_id=?
		WHERE key=? AND kind=? AND outcome=''`,
		outcome, similarity, unix(l.now()), personMessageID, key, replies.KindDraft)
	if err != nil {
		return false, fmt.Errorf("ledger: resolve draft: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// DiscardStaleDrafts marks discarded every draft of the inbox (account,
// mailbox) without an outcome that was recorded before t, and returns how
// many. Another inbox's drafts wait for its own Sent folder.
func (l *Ledger) DiscardStaleDrafts(ctx context.Context, account, mailbox string, before time.Time) (int, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE replies SET outcome=?, resolved_at=? WHERE kind=? AND outcome='' AND created < ? AND account=? AND mailbox=?`,
		replies.DraftDiscarded, unix(l.now()), replies.KindDraft, unix(before), account, mailbox)
	if err != nil {
		return 0, fmt.Errorf("ledger: discard stale drafts: %w", err)
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
func (l *Ledger) DraftStats(ctx context.Context) ([]DraftStat, error) {
	return queryAll(ctx, l, "draft stats", func(sc scanner) (DraftStat, error) {
		var s DraftStat
		err := sc.Scan(&s.Scenario, &s.Account, &s.Mailbox, &s.Drafted, &s.SentAsIs, &s.Edited, &s.Rejected, &s.Discarded, &s.Pending)
		return s, err
	}, `SELECT scenario, account, mailbox,
		COUNT(*), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END),
		SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), SUM(CASE WHEN outcome = '' THEN 1 ELSE 0 END)
		FROM replies WHERE kind = ? GROUP BY scenario, account, mailbox ORDER BY scenario, account, mailbox`,
		replies.DraftSentAsIs, replies.DraftEdited, replies.DraftRejected, replies.DraftDiscarded, replies.KindDraft)
}

// Thread is an inbound message the ledger handled, found through a
// Message-ID of its thread.
type Thread struct {
	Key       triage.Key // the inbound key
	MessageID string     // the inbound Message-ID
	Sender    string     // the inbound From (the customer)
	Scenario  string
	State     State  // the inbound message's terminal state
	Matched   string // the Message-ID that led to it (inbound, or our reply or draft)
}

// ThreadOf returns the handled inbound message that one of ids names: an
// inbound message with a terminal state, or the message one of our replies or
// drafts answers. ids are tried in order (put the nearest first, e.g.
// In-Reply-To, then References from the last); ErrNotFound when none.
//
// A Message-ID is only a claim: anyone who saw it can send another message
// carrying it. Among the handled messages with that Message-ID, the one whose
// sender (or the address our reply went to) is among to, the recipients of
// the message being threaded, wins; only when none is, the most recently
// updated one.
func (l *Ledger) ThreadOf(ctx context.Context, ids, to []string) (Thread, error) {
	for _, id := range ids {
		if id == "" {
			continue
		}
		var key triage.Key
		if r, err := l.replies.ReplyByMessageID(ctx, id); err == nil {
			key = r.Key
		} else if !errors.Is(err, replies.ErrNotFound) {
			return Thread{}, err
		}
		q, arg := `SELECT key, message_id, sender, scenario, state FROM messages WHERE message_id=? ORDER BY updated DESC`, id
		if key != "" {
			q, arg = `SELECT key, message_id, sender, scenario, state FROM messages WHERE key=? ORDER BY updated DESC`, string(key)
		}
		found, err := l.handled(ctx, q, arg)
		if err != nil {
			return Thread{}, err
		}
		if len(found) == 0 {
			continue
		}
		t := found[0]
		for _, c := range found {
			ok, err := l.answers(ctx, c, to)
			if err != nil {
				return Thread{}, err
			}
			if ok {
				t = c
				break
			}
		}
		t.Matched = id
		return t, nil
	}
	return Thread{}, ErrNotFound
}

// handled runs a thread query and returns its rows with a terminal state.
func (l *Ledger) handled(ctx context.Context, q string, arg any) ([]Thread, error) {
	rows, err := l.db.QueryContext(ctx, q, arg)
	if err != nil {
		return nil, fmt.Errorf("ledger: thread of: %w", err)
	}
	defer rows.Close()
	var found []Thread
	for rows.Next() {
		var t Thread
		if err := rows.Scan(&t.Key, &t.MessageID, &t.Sender, &t.Scenario, &t.State); err != nil {
			return nil, fmt.Errorf("ledger: thread of: %w", err)
		}
		if t.State.Terminal() {
			found = append(found, t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: thread of: %w", err)
	}
	return found, nil
}

// answers reports whether one of to is t's sender or the address our reply
// to t went to.
func (l *Ledger) answers(ctx context.Context, t Thread, to []string) (bool, error) {
	want := []string{t.Sender}
	r, err := l.replies.GetReply(ctx, t.Key)
	switch {
	case err == nil:
		want = append(want, r.To)
	case !errors.Is(err, replies.ErrNotFound):
		return false, err
	}
	for _, a := range to {
		for _, w := range want {
			if w != "" && strings.EqualFold(strings.TrimSpace(a), w) {
				return true, nil
			}
		}
	}
	return false, nil
}

// SentScan returns how far the Sent folder scan of (account, folder) got:
// the UIDVALIDITY and the last UID looked at; ErrNotFound before the first
// scan.
func (l *Ledger) SentScan(ctx context.Context, account, folder string) (uidValidity, lastUID uint32, err error) {
	err = l.db.QueryRowContext(ctx, `SELECT uidvalidity, last_uid FROM sent_scan WHERE account=? AND folder=?`, account, folder).Scan(&uidValidity, &lastUID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, ErrNotFound
	}
	if err != nil {
		return 0, 0, fmt.Errorf("ledger: sent scan: %w", err)
	}
	return uidValidity, lastUID, nil
}

// SetSentScan records how far the Sent folder scan got.
func (l *Ledger) SetSentScan(ctx context.Context, account, folder string, uidValidity, lastUID uint32) error {
	_, err := l.db.ExecContext(ctx, `INSERT INTO sent_scan (account, folder, uidvalidity, last_uid) VALUES (?,?,?,?)
		ON CONFLICT(account, folder) DO UPDATE SET uidvalidity=excluded.uidvalidity, last_uid=excluded.last_uid`,
		account, folder, uidValidity, lastUID)
	if err != nil {
		return fmt.Errorf("ledger: set sent scan: %w", err)
	}
	return nil
}
