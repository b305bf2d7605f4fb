package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Replies lists every reply row in a state (all states when ""), oldest
// first, with its rendered bytes: for copying a whole ledger. Listings for
// people use RepliesPage, the watcher Orphaned.
func (l *Ledger) Replies(ctx context.Context, state ReplyState) ([]Reply, error) {
	q := `SELECT ` + replyCols + ` FROM replies`
	var args []any
	if state != "" {
		q += ` WHERE state=?`
		args = append(args, state)
	}
	rows, err := l.db.QueryContext(ctx, q+` ORDER BY created`, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: replies: %w", err)
	}
	defer rows.Close()
	var out []Reply
	for rows.Next() {
		r, err := scanReply(rows)
		if err != nil {
			return nil, fmt.Errorf("ledger: replies: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// replyListCols are replyCols without raw: listings never read the
// rendered bytes (GetReply does, for one reply).
var replyListCols = strings.Replace(replyCols, "raw, ", "", 1)

func scanListedReply(sc interface{ Scan(...any) error }) (Reply, error) {
	var r Reply
	var appended int
	var created, sent, resolved int64
	err := sc.Scan(&r.Key, &r.MessageID, &r.To, &r.InboundFrom, &r.State, &appended, &created, &sent,
		&r.Kind, &r.Outcome, &r.Similarity, &resolved, &r.PersonMessageID, &r.Account, &r.Mailbox)
	r.Appended = appended != 0
	r.Created, r.SentAt, r.ResolvedAt = fromUnix(created), fromUnix(sent), fromUnix(resolved)
	return r, err
}

// MaxInState bounds InState: the transient states it serves (a reply or
// draft a crash left pending, a draft a person sent from the console) hold
// a handful of rows; more wait for the next call.
const MaxInState = 1000

// InState lists the reply rows in state, oldest first, at most MaxInState,
// without their rendered bytes (Raw is nil; GetReply reads them). The
// replies_state index makes its cost follow the rows in that state, not
// the ledger's history.
func (l *Ledger) InState(ctx context.Context, state ReplyState) ([]Reply, error) {
	return l.listReplies(ctx, `SELECT `+replyListCols+` FROM replies WHERE state=? ORDER BY created, key LIMIT ?`, state, MaxInState)
}

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
func (l *Ledger) RepliesPage(ctx context.Context, f ReplyFilter) ([]Reply, error) {
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
	out, err := l.listReplies(ctx, q+` ORDER BY created DESC, key DESC LIMIT ?`, append(args, f.Limit)...)
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
	more, err := l.listReplies(ctx, q+` ORDER BY key DESC LIMIT ?`, append(args, maxSameMilli)...)
	return append(out, more...), err
}

// maxSameMilli bounds the replies of one millisecond RepliesPage adds to
// a page.
const maxSameMilli = 10_000

func (l *Ledger) listReplies(ctx context.Context, q string, args ...any) ([]Reply, error) {
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: replies: %w", err)
	}
	defer rows.Close()
	var out []Reply
	for rows.Next() {
		r, err := scanListedReply(rows)
		if err != nil {
			return nil, fmt.Errorf("ledger: replies: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: replies: %w", err)
	}
	return out, nil
}
