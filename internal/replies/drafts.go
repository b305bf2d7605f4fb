package replies

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"triage"
)

// A draft's row: stored in the Drafts folder, claimed and sent by a person
// from the console, settled once watch filed it; and the look-ups of a
// reply by its Message-ID and of the replies a crash left behind.

// Draft outcomes (Reply.Outcome): what a person did with a draft, learnt
// from the Sent folder or the console. "" means not known yet.
const (
	DraftSentAsIs  = "sent_as_is" // the person's reply is the draft (similarity >= the threshold)
	DraftEdited    = "edited"     // the person replied with other text
	DraftRejected  = "rejected"   // a person rejected the draft in the console
	DraftDiscarded = "discarded"  // no reply from a person within the window
)

// MarkDraftStored records that the draft of key is in the Drafts folder.
func (s *Store) MarkDraftStored(ctx context.Context, key triage.Key) error {
	return s.setReply(ctx, key, `state=?, appended=1`, DraftStored)
}

// ReplyByMessageID returns the reply or draft row whose Message-ID is id,
// or ErrNotFound.
func (s *Store) ReplyByMessageID(ctx context.Context, id string) (Reply, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+replyCols+` FROM replies WHERE message_id=? LIMIT 1`, id)
	r, err := scanReply(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Reply{}, ErrNotFound
	}
	if err != nil {
		return Reply{}, fmt.Errorf("replies: reply by message id: %w", err)
	}
	return r, nil
}

// ErrDraftTaken is returned by ClaimDraft when the draft is not waiting for
// review any more (sent, rejected, resolved, or being sent by someone else).
var ErrDraftTaken = errors.New("replies: the draft is no longer waiting for review")

// ClaimDraft marks the unresolved draft of key as being sent and returns
// it with its state before the claim; ErrDraftTaken when another claim or a
// resolution came first, ErrNotFound when key has no draft. Exactly one of
// two people approving the same draft gets it.
func (s *Store) ClaimDraft(ctx context.Context, key triage.Key) (Reply, ReplyState, error) {
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return Reply{}, "", fmt.Errorf("replies: claim draft: %w", err)
	}
	defer tx.Rollback()
	r, err := scanReply(tx.QueryRowContext(ctx, `SELECT `+replyCols+` FROM replies WHERE key=? AND kind=?`, key, KindDraft))
	if errors.Is(err, sql.ErrNoRows) {
		return Reply{}, "", ErrNotFound
	}
	if err != nil {
		return Reply{}, "", fmt.Errorf("replies: claim draft: %w", err)
	}
	if r.Outcome != "" || (r.State != DraftPending && r.State != DraftStored) {
		return Reply{}, "", ErrDraftTaken
	}
	// The update re-checks the state it read: on PostgreSQL (READ
	// COMMITTED) a concurrent claim may have committed since the read, and
	// then this one changes nothing.
	res, err := tx.ExecContext(ctx, `UPDATE replies SET state=? WHERE key=? AND kind=? AND outcome='' AND state=?`,
		DraftSending, key, KindDraft, r.State)
	if err != nil {
		return Reply{}, "", fmt.Errorf("replies: claim draft: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return Reply{}, "", ErrDraftTaken
	}
	if err := tx.Commit(); err != nil {
		return Reply{}, "", fmt.Errorf("replies: claim draft: %w", err)
	}
	return r, r.State, nil
}

// UnclaimDraft puts a claimed draft back in state (what ClaimDraft
// returned) when sending it certainly failed.
func (s *Store) UnclaimDraft(ctx context.Context, key triage.Key, state ReplyState) error {
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET state=? WHERE key=? AND kind=? AND state=?`, state, key, KindDraft, DraftSending)
	if err != nil {
		return fmt.Errorf("replies: unclaim draft: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("replies: unclaim draft: %w", ErrNotFound)
	}
	return nil
}

// DraftSent records that a claimed draft went out from the console:
// state DraftSentByPerson, its outcome (DraftSentAsIs or DraftEdited), the
// similarity of what was sent to the draft, and the rendered message as
// sent.
func (s *Store) DraftSent(ctx context.Context, key triage.Key, outcome string, similarity float64, raw []byte) error {
	if outcome != DraftSentAsIs && outcome != DraftEdited {
		return fmt.Errorf("replies: draft sent: outcome %q: want %s or %s", outcome, DraftSentAsIs, DraftEdited)
	}
	now := unix(s.now())
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET state=?, sent_at=?, outcome=?, similarity=?, resolved_at=?, raw=?
		WHERE key=? AND kind=? AND state=?`,
		DraftSentByPerson, now, outcome, similarity, now, raw, key, KindDraft, DraftSending)
	if err != nil {
		return fmt.Errorf("replies: draft sent: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("replies: draft sent: %w", ErrNotFound)
	}
	return nil
}

// SettleSentDraft records that watch removed the Drafts folder copy of a
// draft sent from the console and filed it in the Sent folder: ReplySent.
func (s *Store) SettleSentDraft(ctx context.Context, key triage.Key) error {
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET state=? WHERE key=? AND kind=? AND state=?`, ReplySent, key, KindDraft, DraftSentByPerson)
	if err != nil {
		return fmt.Errorf("replies: settle sent draft: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("replies: settle sent draft %q: %w", key, ErrNotFound)
	}
	return nil
}

// Orphaned lists the replies of an inbox in state (ReplyPending,
// DraftPending, DraftSentByPerson), oldest first, at most MaxInState and
// without their rendered bytes (GetReply reads them), that no daemon is
// working on: no message with their key is under a live claim. A pending
// reply whose claimant is alive may be going out this very moment; one
// whose claimant died is settled by the inbox's watcher (found in the Sent
// folder, or left for a person), never sent again.
func (s *Store) Orphaned(ctx context.Context, account, mailbox string, state ReplyState) ([]Reply, error) {
	return s.listReplies(ctx, `SELECT `+replyListCols+` FROM replies r WHERE state=? AND account=? AND mailbox=?
		AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.key = r.key AND m.claimant<>'' AND m.lease_until>?)
		AND NOT (kind=? AND created>?)
		ORDER BY created, key LIMIT ?`, state, account, mailbox, unix(s.now()), KindPerson, unix(s.now().Add(-PersonSendBound)), MaxInState)
}

// PersonSendBound is how long a person's reply may be in flight from the
// console (it holds no claim): a pending one younger than this is not
// orphaned.
const PersonSendBound = 10 * time.Minute

// RejectedInDrafts lists the drafts of an inbox a person rejected whose
// copy may still sit in the Drafts folder (stored, not yet removed), oldest
// first, at most MaxInState and without their rendered bytes: watch removes
// each copy so nobody sends a rejected draft from a mail client.
func (s *Store) RejectedInDrafts(ctx context.Context, account, mailbox string) ([]Reply, error) {
	return s.listReplies(ctx, rejectedInDraftsQuery, account, mailbox, MaxInState)
}

// rejectedInDraftsQuery is RejectedInDrafts' query. It runs on every watch
// pass: its conditions on kind, outcome and appended are written as the
// replies_rejected_drafts index's are, so that it reads that index, which
// holds the rejected drafts still in a Drafts folder only, not every
// rejected draft of the history.
var rejectedInDraftsQuery = `SELECT ` + replyListCols + ` FROM replies
	WHERE kind='` + string(KindDraft) + `' AND outcome='` + DraftRejected + `' AND appended=1 AND account=? AND mailbox=?
	ORDER BY created, key LIMIT ?`

// MarkDraftRemoved records that the copy of the rejected draft of key left
// the Drafts folder.
func (s *Store) MarkDraftRemoved(ctx context.Context, key triage.Key) error {
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET appended=0 WHERE key=? AND kind=? AND outcome=?`, key, KindDraft, DraftRejected)
	if err != nil {
		return fmt.Errorf("replies: mark draft removed: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("replies: mark draft removed %q: %w", key, ErrNotFound)
	}
	return nil
}
