// Package replies is the reply memory: whether a message was answered,
// the claim on answering it, the loop history, and the per-sender, global
// and notice limits; one implementation on the store (the replies table of
// `triage watch`, the outbox index of `triage process --store`), used by
// process and by watch, and the outbox directory's own index for process
// without a store (its log and a SQLite look-up table of it, in the
// directory).
package replies

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"triage"
	"triage/internal/store"
)

// The replies table: one row per outgoing reply, draft or staff notice,
// written with its rendered bytes before it is submitted, and its listings.
// No other package reads or writes it; its schema (schema.go) is run by
// the ledger's migration (ledger.Migrate).

// Store is the reply memory on an open store (SQLite or PostgreSQL); safe
// for concurrent use, also by several processes sharing the store.
type Store struct {
	db  *store.DB
	now func() time.Time
}

// New is the reply memory on db, whose schema ledger.Migrate made; now is
// the clock replies are recorded by (nil: time.Now).
func New(db *store.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

// ErrNotFound is returned when a reply row does not exist.
var ErrNotFound = errors.New("replies: not found")

// ErrReplyExists is returned by PutPending when the inbound key already has a
// reply row (pending or sent): the reply must not be submitted again.
var ErrReplyExists = errors.New("replies: reply already recorded for this message")

// unix and fromUnix are the tables' times (store.Millis).
var unix, fromUnix = store.Millis, store.FromMillis

// scanner is a query's row, or its rows at the current one.
type scanner = store.Scanner

// queryAll runs q and reads every row of it with scan; what names the
// listing in errors.
func queryAll[T any](ctx context.Context, s *Store, what string, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	return store.QueryAll(ctx, s.db, "replies: "+what, scan, q, args...)
}

// Reply is one outgoing reply, keyed by the inbound key.
type Reply struct {
	Key       triage.Key `json:"key"`
	MessageID string     `json:"message_id"`
	To        string     `json:"to"`
	// InboundFrom is the From of the message the reply answers: the reply
	// counts against it too.
	InboundFrom string     `json:"sender,omitempty"`
	Raw         []byte     `json:"-"`
	State       ReplyState `json:"state"`
	Appended    bool       `json:"appended"` // copy stored in the Sent folder
	Created     time.Time  `json:"created"`
	SentAt      time.Time  `json:"sent_at"`
	// Kind is KindReply (sent by triage) or KindDraft (left in the Drafts
	// folder); for drafts, Outcome says what a person did with it.
	Kind            Kind      `json:"kind"`
	Outcome         string    `json:"outcome,omitempty"`
	Similarity      float64   `json:"similarity,omitempty"` // of the person's reply to the draft
	ResolvedAt      time.Time `json:"resolved_at,omitzero"`
	PersonMessageID string    `json:"person_message_id,omitempty"` // the person's reply in the Sent folder
	// Account and Mailbox name the inbox of the message the reply answers:
	// only a watcher of that inbox settles it after a crash.
	Account string `json:"account,omitempty"`
	Mailbox string `json:"mailbox,omitempty"`
	// Author and Answers are a person's reply's (KindPerson): who wrote
	// it, and the key of the email it answers.
	Author  string     `json:"author,omitempty"`
	Answers triage.Key `json:"answers,omitempty"`
}

const replyCols = `key, message_id, recipient, sender, raw, state, appended, created, sent_at, kind, outcome, similarity, resolved_at, person_message_id, account, mailbox, author, answers`

// scanReply reads a row of replyCols.
func scanReply(sc scanner) (Reply, error) { return scanReplyRow(sc, true) }

// scanListedReply reads a row of replyListCols (Raw stays nil).
func scanListedReply(sc scanner) (Reply, error) { return scanReplyRow(sc, false) }

// scanReplyRow reads a reply row, with its raw bytes or without.
func scanReplyRow(sc scanner, raw bool) (Reply, error) {
	var r Reply
	var appended int
	var created, sent, resolved int64
	dest := []any{&r.Key, &r.MessageID, &r.To, &r.InboundFrom, &r.Raw, &r.State, &appended, &created, &sent,
		&r.Kind, &r.Outcome, &r.Similarity, &resolved, &r.PersonMessageID, &r.Account, &r.Mailbox, &r.Author, &r.Answers}
	if !raw {
		dest = slices.Delete(dest, 4, 5) // &r.Raw
	}
	err := sc.Scan(dest...)
	r.Appended = appended != 0
	r.Created, r.SentAt, r.ResolvedAt = fromUnix(created), fromUnix(sent), fromUnix(resolved)
	return r, err
}

// GetReply returns the reply row of an inbound key, or ErrNotFound.
func (s *Store) GetReply(ctx context.Context, key triage.Key) (Reply, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+replyCols+` FROM replies WHERE key=?`, key)
	r, err := scanReply(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Reply{}, ErrNotFound
	}
	if err != nil {
		return Reply{}, fmt.Errorf("replies: get reply: %w", err)
	}
	return r, nil
}

// PutPending durably records a rendered reply before it is submitted. It
// returns ErrReplyExists when the key already has a reply row.
func (s *Store) PutPending(ctx context.Context, r Reply) error {
	return s.PutPendingWithin(ctx, r, Limits{})
}

// PutPendingWithin is PutPending under limits: in one transaction it checks
// that the key has no reply yet (ErrReplyExists), that the recipient and
// the sender are both under lim.PerAddress and that the hour is under
// lim.PerHour (*LimitError), and records the reply. A staff notice (Kind
// KindNotice, InboundFrom the customer it is about) is checked against
// lim.Notices instead. Concurrent callers are
// serialised, so a limit is exact however many replies race for it.
func (s *Store) PutPendingWithin(ctx context.Context, r Reply, lim Limits) error {
	if r.Key == "" || r.MessageID == "" || len(r.Raw) == 0 {
		return errors.New("replies: put pending: Key, MessageID and Raw are required")
	}
	r.To, r.InboundFrom = normAddr(r.To), normAddr(r.InboundFrom)
	now := s.now()
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("replies: put pending: %w", err)
	}
	defer tx.Rollback()
	// Serialise with every other reply being recorded, in this process or
	// another sharing the store, so the counts below stay exact.
	if err := tx.Lock(ctx, "replies"); err != nil {
		return fmt.Errorf("replies: put pending: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM replies WHERE key=?`, r.Key).Scan(&n); err != nil {
		return fmt.Errorf("replies: put pending: %w", err)
	}
	if n > 0 {
		return ErrReplyExists
	}
	exceeded := lim.exceeded
	if r.Kind == KindNotice {
		exceeded = lim.noticesExceeded
	}
	if le, err := exceeded(ctx, tx, r.InboundFrom, r.To, now); err != nil {
		return err
	} else if le != nil {
		return le
	}
	kind, state := KindReply, ReplyPending
	switch r.Kind {
	case KindDraft:
		kind, state = KindDraft, DraftPending
	case KindNotice:
		kind = KindNotice
	case KindPerson:
		if r.Author == "" || r.Answers == "" {
			return errors.New("replies: put pending: a person's reply needs its Author and the key it Answers")
		}
		kind = KindPerson
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO replies (key, message_id, recipient, sender, raw, state, created, kind, account, mailbox, author, answers)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.Key, r.MessageID, r.To, r.InboundFrom, r.Raw, state, unix(now), kind, r.Account, r.Mailbox, r.Author, r.Answers); err != nil {
		return fmt.Errorf("replies: put pending: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("replies: put pending: %w", err)
	}
	return nil
}

// normAddr is the form addresses are compared in: trimmed, lower case.
func normAddr(a string) string { return strings.ToLower(strings.TrimSpace(a)) }

// SentReply reports whether messageID (with or without brackets) is the
// Message-ID of one of our replies, pending ones included (they may have
// gone out). It serves loop breaking (processor.History).
func (s *Store) SentReply(ctx context.Context, messageID string) (bool, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(messageID), "<"), ">")
	if id == "" {
		return false, nil
	}
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM replies WHERE message_id = ?`, "<"+id+">").Scan(&n)
	if err != nil {
		return false, fmt.Errorf("replies: look up reply %s: %w", messageID, err)
	}
	return n > 0, nil
}

// MarkSent records that the SMTP server accepted the reply of key.
func (s *Store) MarkSent(ctx context.Context, key triage.Key) error {
	return s.setReply(ctx, key, `state=?, sent_at=?`, ReplySent, unix(s.now()))
}

// MarkReplyNeedsHuman records that it is unknown whether the pending reply
// of key went out; a person must look. A reply no longer pending (recorded
// sent meanwhile) keeps its state.
func (s *Store) MarkReplyNeedsHuman(ctx context.Context, key triage.Key) error {
	res, err := s.db.ExecContext(ctx, `UPDATE replies SET state=? WHERE key=? AND state IN (?, ?)`, ReplyNeedsHuman, key, ReplyPending, ReplyNeedsHuman)
	if err != nil {
		return fmt.Errorf("replies: update reply: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.GetReply(ctx, key); err != nil {
			return fmt.Errorf("replies: update reply %q: %w", key, err)
		}
	}
	return nil
}

// MarkAppended records that the reply of key was stored in the Sent folder.
func (s *Store) MarkAppended(ctx context.Context, key triage.Key) error {
	return setReply(ctx, s.db, key, `appended=?`, 1)
}

// MarkAppendedIn is MarkAppended inside tx, a transaction on the store's
// database: for a caller that records the message settled in the same
// commit.
func (s *Store) MarkAppendedIn(ctx context.Context, tx *store.Tx, key triage.Key) error {
	return setReply(ctx, tx, key, `appended=?`, 1)
}

// DropPending deletes a pending reply that certainly was not submitted (the
// SMTP server refused it before DATA), so a later attempt may send it.
func (s *Store) DropPending(ctx context.Context, key triage.Key) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM replies WHERE key=? AND state=?`, key, ReplyPending)
	if err != nil {
		return fmt.Errorf("replies: drop pending: %w", err)
	}
	return nil
}

func (s *Store) setReply(ctx context.Context, key triage.Key, set string, args ...any) error {
	return setReply(ctx, s.db, key, set, args...)
}

// execer is a *store.DB or a *store.Tx.
type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}

func setReply(ctx context.Context, x execer, key triage.Key, set string, args ...any) error {
	res, err := x.ExecContext(ctx, `UPDATE replies SET `+set+` WHERE key=?`, append(args, key)...)
	if err != nil {
		return fmt.Errorf("replies: update reply: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("replies: update reply %q: %w", key, ErrNotFound)
	}
	return nil
}

// Replies lists every reply row in a state (all states when ""), oldest
// first, with its rendered bytes: for copying a whole ledger. Listings for
// people use RepliesPage, the watcher Orphaned.
func (s *Store) Replies(ctx context.Context, state ReplyState) ([]Reply, error) {
	q := `SELECT ` + replyCols + ` FROM replies`
	var args []any
	if state != "" {
		q += ` WHERE state=?`
		args = append(args, state)
	}
	return queryAll(ctx, s, "replies", scanReply, q+` ORDER BY created`, args...)
}

// replyListCols are replyCols without raw: listings never read the
// rendered bytes (GetReply does, for one reply).
var replyListCols = strings.Replace(replyCols, "raw, ", "", 1)

// MaxInState bounds Orphaned: the transient states it serves (a reply or
// draft a crash left pending, a draft a person sent from the console) hold
// a handful of rows; more wait for the next call.
const MaxInState = 1000

// ReplyFilter selects a page of RepliesPage.
type ReplyFilter struct {
	State  ReplyState // "" for every state
	Before time.Time  // only replies recorded before it (zero: the newest)
	Limit  int        // page size (default 50)
}

// RepliesPage lists reply rows newest first, without their rendered bytes:
// at most f.Limit, recorded before f.Before. Replies recorded in the same
// millisecond as the page's last one all join the page, so the next page,
// Before that last reply's Created, misses none.
func (s *Store) RepliesPage(ctx context.Context, f ReplyFilter) ([]Reply, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	where, args := []string{}, []any{}
	if f.State != "" {
		where, args = append(where, `state=?`), append(args, f.State)
	}
	if !f.Before.IsZero() {
		where, args = append(where, `created < ?`), append(args, unix(f.Before))
	}
	q := `SELECT ` + replyListCols + ` FROM replies`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	out, err := s.listReplies(ctx, q+` ORDER BY created DESC, key DESC LIMIT ?`, append(args, f.Limit)...)
	if err != nil || len(out) < f.Limit {
		return out, err
	}
	// The rest of the last reply's millisecond.
	last := out[len(out)-1]
	q = `SELECT ` + replyListCols + ` FROM replies WHERE created = ? AND key < ?`
	args = []any{unix(last.Created), last.Key}
	if f.State != "" {
		q, args = q+` AND state=?`, append(args, f.State)
	}
	more, err := s.listReplies(ctx, q+` ORDER BY key DESC LIMIT ?`, append(args, maxSameMilli)...)
	return append(out, more...), err
}

// maxSameMilli bounds the replies of one millisecond RepliesPage adds to
// a page.
const maxSameMilli = 10_000

func (s *Store) listReplies(ctx context.Context, q string, args ...any) ([]Reply, error) {
	return queryAll(ctx, s, "replies", scanListedReply, q, args...)
}
