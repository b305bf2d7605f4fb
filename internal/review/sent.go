package review

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"triage"
	"triage/internal/ledger"
	"triage/internal/message"
	"triage/internal/replies"
)

// What the Sent folder tells about drafts: a person's reply in a thread
// triage handled grades the thread's draft (watch scans the folder and
// keeps how far it got here).

// SentAsIsSimilarity is the Similarity from which a person's reply counts
// as the draft sent as is; below it, edited.
const SentAsIsSimilarity = 0.9

// Grade is the fate of a draft whose text is draft when a person sent
// sent: replies.DraftSentAsIs from SentAsIsSimilarity on, replies.DraftEdited below it,
// with the similarity.
func Grade(draft, sent string) (outcome string, similarity float64) {
	similarity = Similarity(draft, sent)
	if similarity >= SentAsIsSimilarity {
		return replies.DraftSentAsIs, similarity
	}
	return replies.DraftEdited, similarity
}

// GradeMessages is Grade on two rendered messages, the draft and a
// person's reply: their new text is compared (the quoted history each may
// carry set apart by the parser). A message that cannot be read grades
// edited, with similarity 0.
func GradeMessages(draft, reply []byte) (outcome string, similarity float64) {
	d, err1 := message.Parse(draft)
	r, err2 := message.Parse(reply)
	if err1 != nil || err2 != nil {
		return replies.DraftEdited, 0
	}
	return Grade(d.Text, r.Text)
}

// Thread is an inbound message the ledger handled, found through a
// Message-ID of its thread.
type Thread struct {
	Key       triage.Key // the inbound key
	MessageID string     // the inbound Message-ID
	Sender    string     // the inbound From (the customer)
	Scenario  string
	State     ledger.State // the inbound message's terminal state
	Matched   string       // the Message-ID that led to it (inbound, or our reply or draft)
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
func (s *Store) ThreadOf(ctx context.Context, ids, to []string) (Thread, error) {
	for _, id := range ids {
		if id == "" {
			continue
		}
		var key triage.Key
		if r, err := s.replies.ReplyByMessageID(ctx, id); err == nil {
			key = r.Key
		} else if !errors.Is(err, replies.ErrNotFound) {
			return Thread{}, err
		}
		q, arg := `SELECT key, message_id, sender, scenario, state FROM messages WHERE message_id=? ORDER BY updated DESC`, id
		if key != "" {
			q, arg = `SELECT key, message_id, sender, scenario, state FROM messages WHERE key=? ORDER BY updated DESC`, string(key)
		}
		found, err := s.handled(ctx, q, arg)
		if err != nil {
			return Thread{}, err
		}
		if len(found) == 0 {
			continue
		}
		t := found[0]
		for _, c := range found {
			ok, err := s.answers(ctx, c, to)
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
func (s *Store) handled(ctx context.Context, q string, arg any) ([]Thread, error) {
	rows, err := s.db.QueryContext(ctx, q, arg)
	if err != nil {
		return nil, fmt.Errorf("review: thread of: %w", err)
	}
	defer rows.Close()
	var found []Thread
	for rows.Next() {
		var t Thread
		if err := rows.Scan(&t.Key, &t.MessageID, &t.Sender, &t.Scenario, &t.State); err != nil {
			return nil, fmt.Errorf("review: thread of: %w", err)
		}
		if t.State.Terminal() {
			found = append(found, t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("review: thread of: %w", err)
	}
	return found, nil
}

// answers reports whether one of to is t's sender or the address our reply
// to t went to.
func (s *Store) answers(ctx context.Context, t Thread, to []string) (bool, error) {
	want := []string{t.Sender}
	r, err := s.replies.GetReply(ctx, t.Key)
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
func (s *Store) SentScan(ctx context.Context, account, folder string) (uidValidity, lastUID uint32, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT uidvalidity, last_uid FROM sent_scan WHERE account=? AND folder=?`, account, folder).Scan(&uidValidity, &lastUID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, ErrNotFound
	}
	if err != nil {
		return 0, 0, fmt.Errorf("review: sent scan: %w", err)
	}
	return uidValidity, lastUID, nil
}

// SetSentScan records how far the Sent folder scan got.
func (s *Store) SetSentScan(ctx context.Context, account, folder string, uidValidity, lastUID uint32) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sent_scan (account, folder, uidvalidity, last_uid) VALUES (?,?,?,?)
		ON CONFLICT(account, folder) DO UPDATE SET uidvalidity=excluded.uidvalidity, last_uid=excluded.last_uid`,
		account, folder, uidValidity, lastUID)
	if err != nil {
		return fmt.Errorf("review: set sent scan: %w", err)
	}
	return nil
}
