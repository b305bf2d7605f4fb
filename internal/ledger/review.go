package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"triage"
	"triage/internal/clip"
	"triage/internal/replies"
)

// What the ledger keeps for people reviewing triage's work (the console):
// each handled message's outcome (the pipeline's JSON record: scenario and
// why, every function call, the model calls and tokens) and the text the
// customer wrote, bounded.

// MaxBodyBytes bounds the customer's text kept with a message; longer text
// is cut at a rune boundary.
const MaxBodyBytes = 64 << 10

// MaxOutcomeBytes bounds the outcome JSON kept with a message; a larger
// outcome is not kept (the ledger row stays).
const MaxOutcomeBytes = 1 << 20

// Stored is an entry with what was kept for review.
type Stored struct {
	Entry
	Outcome []byte // the outcome JSON; nil when none was kept
	Body    string // the customer's text; "" when none was kept
}

// Usage is what one attempt at a message cost: its model calls and tokens
// as the model reported them (Prompt includes Cached, the tokens served
// from a context cache; Output includes thinking), and the model.
type Usage struct {
	Model                  string
	Calls                  int
	Prompt, Cached, Output int
}

// Kept is what one attempt at a message leaves for review: the outcome
// JSON, the customer's text and the attempt's usage (SetOutcome).
type Kept struct {
	Outcome []byte
	Body    string
	Usage   Usage
}

// SetOutcome keeps the outcome JSON and the customer's text with the entry
// at loc, and adds the attempt's usage to the message's (the month of its
// latest attempt is the ledger's clock's, UTC). Record does the same in
// its own transaction for an entry that carries them (Entry.Kept).
func (l *Ledger) SetOutcome(ctx context.Context, loc Loc, outcome []byte, body string, u Usage) error {
	return l.setOutcome(ctx, l.db, loc, Kept{Outcome: outcome, Body: body, Usage: u})
}

// execer is a *store.DB or a *store.Tx.
type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}

func (l *Ledger) setOutcome(ctx context.Context, x execer, loc Loc, k Kept) error {
	outcome, body, u := k.Outcome, k.Body, k.Usage
	if len(outcome) > MaxOutcomeBytes {
		outcome = nil
	}
	res, err := x.ExecContext(ctx, `UPDATE messages SET outcome=?, body=?,
		model=?, usage_month=?, model_calls=model_calls+?, prompt_tokens=prompt_tokens+?, cached_tokens=cached_tokens+?, output_tokens=output_tokens+?
		WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`,
		string(outcome), clip.Bytes(body, MaxBodyBytes, ""),
		u.Model, l.now().UTC().Format("2006-01"), u.Calls, u.Prompt, u.Cached, u.Output,
		loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID)
	return checkOne(res, err, "set outcome", loc)
}

// UsageStat is the usage of the messages of one scenario ("" when none
// was chosen) answered by one model in one month (2026-11).
type UsageStat struct {
	Scenario, Month, Model string
	// Messages counts the messages; Resolved those replied to or drafted.
	Messages, Resolved     int64
	Calls                  int64
	Prompt, Cached, Output int64
}

// Add adds the counts of o to u (its scenario, month and model stay).
func (u *UsageStat) Add(o UsageStat) {
	u.Messages += o.Messages
	u.Resolved += o.Resolved
	u.Calls += o.Calls
	u.Prompt += o.Prompt
	u.Cached += o.Cached
	u.Output += o.Output
}

// UsageStats sums the usage kept with the messages (SetOutcome) per
// scenario, month and model, by scenario then month.
func (l *Ledger) UsageStats(ctx context.Context) ([]UsageStat, error) {
	return queryAll(ctx, l, "usage stats", func(sc scanner) (UsageStat, error) {
		var u UsageStat
		err := sc.Scan(&u.Scenario, &u.Month, &u.Model, &u.Messages, &u.Resolved, &u.Calls, &u.Prompt, &u.Cached, &u.Output)
		return u, err
	}, `SELECT scenario, usage_month, model, COUNT(*),
		CAST(SUM(CASE WHEN state IN (?, ?) THEN 1 ELSE 0 END) AS BIGINT),
		CAST(SUM(model_calls) AS BIGINT), CAST(SUM(prompt_tokens) AS BIGINT), CAST(SUM(cached_tokens) AS BIGINT), CAST(SUM(output_tokens) AS BIGINT)
		FROM messages WHERE usage_month <> '' GROUP BY scenario, usage_month, model ORDER BY scenario, usage_month, model`,
		StateReplied, StateDrafted)
}

const storedCols = readCols + `, outcome, body`

func scanStored(sc scanner) (Stored, error) {
	var s Stored
	var outcome string
	e, err := scanEntry(scanWith(sc, &outcome, &s.Body))
	s.Entry = e
	if outcome != "" {
		s.Outcome = []byte(outcome)
	}
	return s, err
}

func (l *Ledger) queryStored(ctx context.Context, what, q string, args ...any) ([]Stored, error) {
	return queryAll(ctx, l, what, scanStored, `SELECT `+storedCols+` FROM messages `+q, args...)
}

// ByRef returns the entries whose key has Ref ref, newest first, or
// ErrNotFound. It reads every key: the console's conversation page is rare
// next to the pipeline's work.
func (l *Ledger) ByRef(ctx context.Context, ref string) ([]Stored, error) {
	if len(ref) != 20 {
		return nil, ErrNotFound
	}
	rows, err := l.db.QueryContext(ctx, `SELECT DISTINCT key FROM messages`)
	if err != nil {
		return nil, fmt.Errorf("ledger: by ref: %w", err)
	}
	var key triage.Key
	found := false
	for rows.Next() && !found {
		if err := rows.Scan(&key); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ledger: by ref: %w", err)
		}
		found = key.Ref() == ref
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("ledger: by ref: %w", err)
	}
	if !found {
		return nil, ErrNotFound
	}
	return l.queryStored(ctx, "by ref", `WHERE key=? ORDER BY updated DESC`, key)
}

// ByMessageIDs returns the entries of the inbound messages with these
// Message-IDs, oldest first.
func (l *Ledger) ByMessageIDs(ctx context.Context, ids []string) ([]Stored, error) {
	var args []any
	for _, id := range ids {
		if id != "" {
			args = append(args, id)
		}
	}
	if len(args) == 0 {
		return nil, nil
	}
	return l.queryStored(ctx, "by message ids", `WHERE message_id IN (?`+strings.Repeat(",?", len(args)-1)+`) ORDER BY created`, args...)
}

// Query selects entries for Search; zero fields select everything.
type Query struct {
	States   []State
	Account  string
	Mailbox  string
	Scenario string
	Reason   triage.Reason
	Before   time.Time // updated before
	// Text matches the sender, subject, Message-ID, scenario, reason or
	// state (case-insensitive substring).
	Text string
	// Escalated also selects entries whose outcome says staff were told,
	// whatever their state.
	Escalated bool
	Limit     int // default 200
}

// likeEscape escapes what LIKE reads as a wildcard, for ESCAPE '\'.
var likeEscape = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Search returns the entries q selects, most recently updated first.
func (l *Ledger) Search(ctx context.Context, q Query) ([]Stored, error) {
	var where []string
	var args []any
	var or []string
	if len(q.States) > 0 {
		or = append(or, `state IN (?`+strings.Repeat(",?", len(q.States)-1)+`)`)
		for _, s := range q.States {
			args = append(args, s)
		}
	}
	if q.Escalated {
		or = append(or, `outcome LIKE '%"escalated":true%'`)
	}
	if len(or) > 0 {
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if q.Account != "" {
		add(`account=?`, q.Account)
	}
	if q.Mailbox != "" {
		add(`mailbox=?`, q.Mailbox)
	}
	if q.Scenario != "" {
		add(`scenario=?`, q.Scenario)
	}
	if q.Reason != "" {
		add(`reason=?`, q.Reason)
	}
	if !q.Before.IsZero() {
		add(`updated<?`, unix(q.Before))
	}
	if t := strings.TrimSpace(q.Text); t != "" {
		like := "%" + likeEscape.Replace(strings.ToLower(t)) + "%"
		where = append(where, `(lower(sender) LIKE ? ESCAPE '\' OR lower(subject) LIKE ? ESCAPE '\' OR lower(message_id) LIKE ? ESCAPE '\'
			OR scenario LIKE ? ESCAPE '\' OR reason LIKE ? ESCAPE '\' OR state LIKE ? ESCAPE '\')`)
		for range 6 {
			args = append(args, like)
		}
	}
	if q.Limit <= 0 {
		q.Limit = 200
	}
	sqlq := ""
	if len(where) > 0 {
		sqlq = `WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, q.Limit)
	return l.queryStored(ctx, "search", sqlq+` ORDER BY updated DESC, uid DESC LIMIT ?`, args...)
}

// ScenarioCount is how many messages of a scenario reached a state.
type ScenarioCount struct {
	Scenario string
	State    State
	Count    int
}

// ScenarioCounts counts the messages per scenario ("" when none was
// chosen) and state.
func (l *Ledger) ScenarioCounts(ctx context.Context) ([]ScenarioCount, error) {
	return queryAll(ctx, l, "scenario counts", func(sc scanner) (ScenarioCount, error) {
		var c ScenarioCount
		err := sc.Scan(&c.Scenario, &c.State, &c.Count)
		return c, err
	}, `SELECT scenario, state, COUNT(*) FROM messages GROUP BY scenario, state ORDER BY scenario, state`)
}

// Retry states: a person asked (in the console) that a failed message be
// handled again; watch moves it back to the watched mailbox and the entry
// becomes retried. Neither is terminal, so the message's next copy (the one
// moved back, under a new UID) is handled afresh.
const (
	StateRetryRequested State = "retry_requested"
	StateRetried        State = "retried"
)

// States lists every message state: the terminal ones, then processing and
// the retry states.
var States = []State{StateReplied, StateDrafted, StateSkipped, StateFailed,
	StateNeedsHuman, StateOverLimit, StateProcessing, StateSeen, StateRetryRequested, StateRetried}

// ErrNotRetryable is returned by RequestRetry for a message that is not a
// settled failure without a reply.
var ErrNotRetryable = errors.New("ledger: only a failed message with no reply, already moved to the failed folder, whose failure a retry may cure, can be retried")

// RequestRetry marks the failed entries of key for another attempt. The
// message must have failed (not be waiting for a person for another
// reason) for a reason a retry may cure (Retryable), have nothing
// recorded as sent or drafted for it, and have a Message-ID (watch finds
// it in the failed folder by it).
func (l *Ledger) RequestRetry(ctx context.Context, key triage.Key) error {
	args := []any{StateRetryRequested, unix(l.now()), key, StateFailed}
	for _, r := range unretryable {
		args = append(args, r)
	}
	tx, err := l.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("ledger: request retry: %w", err)
	}
	defer tx.Rollback()
	// One statement checks and writes, so a reply recorded by another
	// process between a separate check and the update cannot slip through.
	unanswered, uargs := replies.Unanswered(key)
	res, err := tx.ExecContext(ctx, `UPDATE messages SET state=?, updated=? WHERE key=? AND state=? AND imap_done=1 AND message_id<>''
		AND reason NOT IN (?`+strings.Repeat(",?", len(unretryable)-1)+`) AND `+unanswered,
		append(args, uargs...)...)
	if err != nil {
		return fmt.Errorf("ledger: request retry: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotRetryable
	}
	return tx.Commit()
}

// unretryable are the failure reasons a retry meets again: the message
// itself causes them (no usable sender, unreadable, too large, another
// message's Message-ID, an auto-responder loop).
var unretryable = []triage.Reason{triage.ReasonNoSender, triage.ReasonParseError, triage.ReasonTooLarge, triage.ReasonDuplicateKey, triage.ReasonReplyLoop}

// Retryable reports whether a failed message with this reason may be
// retried: RequestRetry refuses the others (they would fail again).
func Retryable(r triage.Reason) bool { return !slices.Contains(unretryable, r) }

// RetryRequests lists the entries of account waiting for a retry, oldest
// request first.
func (l *Ledger) RetryRequests(ctx context.Context, account string) ([]Entry, error) {
	return queryAll(ctx, l, "retry requests", scanEntry,
		`SELECT `+readCols+` FROM messages WHERE account=? AND state=? ORDER BY updated`, account, StateRetryRequested)
}

// EndRetry settles a retry request: moved, the entry becomes retried (the
// message is back in the watched mailbox); not moved (it is no longer in the
// failed folder), it is failed again.
func (l *Ledger) EndRetry(ctx context.Context, loc Loc, moved bool) error {
	state := StateFailed
	if moved {
		state = StateRetried
	}
	res, err := l.db.ExecContext(ctx, `UPDATE messages SET state=?, updated=?
		WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=? AND state=?`,
		state, unix(l.now()), loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID, StateRetryRequested)
	return checkOne(res, err, "end retry", loc)
}
