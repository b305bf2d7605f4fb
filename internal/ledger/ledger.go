// Package ledger is the inbound message lifecycle of `triage watch`: a
// table in the store (a SQLite file in WAL mode, or PostgreSQL shared by
// several daemons) that records every inbound IMAP message as it is
// claimed, leased and settled, so that restarts, crashes, overlapping runs
// and UIDVALIDITY changes never leave a message forgotten or worked twice.
//
// Messages are keyed by (account, mailbox, UIDVALIDITY, UID), with a secondary
// key (Message-ID + sender, or a hash of the raw bytes) that survives a
// UIDVALIDITY change. Replies are keyed by the inbound secondary key; they
// are package replies' (Replies), on the same store.
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
	"triage/internal/store"
)

// State is where an inbound message is in the ledger. processing is
// transient (a run is working on it; a crash leaves it for the next run);
// the retry states are a person's request in the console (review.go); the
// others are terminal: the message needs nothing more from triage.
type State string

// Message states. Four are spelled as the outcome statuses they record
// (StateOf); the others are the ledger's own.
const (
	StateProcessing State = "processing"
	StateReplied    State = State(triage.StatusReplied)
	StateSkipped    State = State(triage.StatusSkipped)
	StateFailed     State = State(triage.StatusFailed)
	StateNeedsHuman State = "needs_human"
	StateOverLimit  State = "over_limit"
	StateDrafted    State = State(triage.StatusDrafted) // reply mode draft: the reply waits in the Drafts folder
)

// Terminal reports whether s ends the message's processing: it is not
// taken up again (a copy of it is already handled).
func (s State) Terminal() bool { return slices.Contains(terminal, s) }

// terminal are the terminal states.
var terminal = []State{StateReplied, StateSkipped, StateFailed, StateNeedsHuman, StateOverLimit, StateDrafted}

// StateOf is the terminal state of a message whose outcome has status s,
// when no reply row says otherwise (see Resolve). A status the ledger does
// not know is failed: the message is left for a person.
func StateOf(s triage.Status) State {
	switch s {
	case triage.StatusReplied:
		return StateReplied
	case triage.StatusDrafted:
		return StateDrafted
	case triage.StatusSkipped:
		return StateSkipped
	default:
		return StateFailed
	}
}

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("ledger: not found")

// Loc is where a message lives on the IMAP server.
type Loc struct {
	Account     string `json:"account"`
	Mailbox     string `json:"mailbox"`
	UIDValidity uint32 `json:"uidvalidity"`
	UID         uint32 `json:"uid"`
}

func (l Loc) String() string {
	return fmt.Sprintf("%s|%s|%d|%d", l.Account, l.Mailbox, l.UIDValidity, l.UID)
}

// Entry is one inbound message.
type Entry struct {
	Loc
	Key       triage.Key    `json:"key"` // secondary key: Message-ID + sender, or raw hash
	MessageID string        `json:"message_id"`
	Sender    string        `json:"sender"`
	Subject   string        `json:"subject"`
	State     State         `json:"state"`
	Reason    triage.Reason `json:"reason,omitempty"`
	Scenario  string        `json:"scenario,omitempty"`
	Attempts  int           `json:"attempts"`
	IMAPDone  bool          `json:"imap_done"` // flag/move on the server finished
	// Digest is triage.DigestOf the message, when it was read: a copy of
	// the message has the same, another message reusing its Key not.
	Digest string `json:"digest,omitempty"`
	// Detail says why, for a failed message (the mail server's reply to a
	// refused send); at most triage.MaxDetail bytes.
	Detail string `json:"detail,omitempty"`
	// TraceID is the OpenTelemetry trace of the message's latest attempt
	// (package trace), when tracing is on.
	TraceID string    `json:"trace_id,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Ticket is the conversation the message belongs to ("" when none).
	Ticket string `json:"ticket_id,omitempty"`
	// Complaint is the message's complaint clock (complaint.go); nil when
	// it is on none.
	Complaint *Complaint `json:"complaint,omitempty"`
	// Clock is what Record needs to keep the complaint clock; it is not
	// read back (Complaint is).
	Clock Clock `json:"-"`
	// Kept, when not nil, is what Record keeps for review with the entry
	// in its transaction, as SetOutcome does; it is read back by the
	// review listings (Stored), not here.
	Kept *Kept `json:"-"`
}

// Config configures Open; Path or Store is required.
type Config struct {
	// Path is a SQLite file or a postgres:// URL.
	Path string
	// Store is an open store to use instead of Path (shared with the
	// ticket store); Close leaves it open.
	Store *store.DB
	// ReadOnly opens an existing ledger without writing anything, not even
	// the schema (triage watch --dry-run, triage ledger).
	ReadOnly bool
	Now      func() time.Time
}

// Ledger is the ledger on a store (SQLite or PostgreSQL); safe for
// concurrent use, also by several processes sharing the store.
type Ledger struct {
	db      *store.DB
	replies *replies.Store // the replies on db, on the ledger's clock
	now     func() time.Time
	path    string
	owned   bool // Close closes db
}

// Open opens the ledger at cfg.Path, a SQLite file (created when missing)
// or a postgres:// URL, or on cfg.Store, and brings its schema up to date.
func Open(ctx context.Context, cfg Config) (*Ledger, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	db, owned := cfg.Store, false
	if db == nil {
		if cfg.Path == "" {
			return nil, errors.New("ledger: Path or Store is required")
		}
		var err error
		db, err = store.Open(ctx, cfg.Path, store.Options{ReadOnly: cfg.ReadOnly, Synchronous: "FULL"})
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		owned = true
	}
	l := &Ledger{db: db, replies: replies.New(db, cfg.Now), now: cfg.Now, path: db.Name(), owned: owned}
	if cfg.ReadOnly {
		return l, nil
	}
	if err := Migrate(ctx, db); err != nil {
		l.Close()
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return l, nil
}

// Path is the ledger file, or the PostgreSQL URL without its password.
func (l *Ledger) Path() string { return l.path }

// Close closes the database, unless it came from Config.Store.
func (l *Ledger) Close() error {
	if !l.owned {
		return nil
	}
	return l.db.Close()
}

// Store is the store the ledger is on, for what shares it (the tickets,
// the model budget): one pool of connections per process. It stays open
// until the ledger is closed.
func (l *Ledger) Store() *store.DB { return l.db }

// Replies is the reply memory on the ledger's store, on its clock: the
// replies, drafts and staff notices of the messages the ledger records.
func (l *Ledger) Replies() *replies.Store { return l.replies }

// Now is the ledger's clock (Config.Now), for what stamps rows on the
// same store beside the ledger's (package review).
func (l *Ledger) Now() time.Time { return l.now() }

// unix and fromUnix are the tables' times (store.Millis).
var unix, fromUnix = store.Millis, store.FromMillis

// entryCols are the columns a new row is written with; readCols those
// scanEntry reads.
const (
	entryCols = `account, mailbox, uidvalidity, uid, key, message_id, sender, subject, state, reason, scenario, attempts, imap_done, created, updated, digest, detail, trace_id`
	readCols  = entryCols + `, ` + clockCols
)

// scanner is a query's row, or its rows at the current one.
type scanner = store.Scanner

// queryAll runs q and reads every row of it with scan; what names the
// listing in errors.
func queryAll[T any](ctx context.Context, l *Ledger, what string, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	return store.QueryAll(ctx, l.db, "ledger: "+what, scan, q, args...)
}

func scanEntry(sc scanner) (Entry, error) {
	var e Entry
	var done int
	var created, updated int64
	var c clockScan
	err := sc.Scan(append([]any{&e.Account, &e.Mailbox, &e.UIDValidity, &e.UID, &e.Key, &e.MessageID, &e.Sender, &e.Subject,
		&e.State, &e.Reason, &e.Scenario, &e.Attempts, &done, &created, &updated, &e.Digest, &e.Detail, &e.TraceID}, c.dest(&e)...)...)
	e.IMAPDone = done != 0
	e.Created, e.Updated = fromUnix(created), fromUnix(updated)
	c.set(&e)
	return e, err
}

// Get returns the entry at loc, or ErrNotFound.
func (l *Ledger) Get(ctx context.Context, loc Loc) (Entry, error) {
	row := l.db.QueryRowContext(ctx, `SELECT `+readCols+` FROM messages WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`,
		loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID)
	e, err := scanEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("ledger: get %s: %w", loc, err)
	}
	return e, nil
}

// TerminalByKey returns the oldest terminal entry with the same secondary
// key at another location (an older UIDVALIDITY, another mailbox), or
// ErrNotFound. The store picks it: the row being worked on, which the
// key's index finds as a rule, is never read into an Entry.
func (l *Ledger) TerminalByKey(ctx context.Context, key triage.Key, not Loc) (Entry, error) {
	args := []any{key}
	for _, s := range terminal {
		args = append(args, s)
	}
	args = append(args, not.Account, not.Mailbox, not.UIDValidity, not.UID)
	e, err := scanEntry(l.db.QueryRowContext(ctx, `SELECT `+readCols+` FROM messages WHERE key=?
		AND state IN (?`+strings.Repeat(",?", len(terminal)-1)+`)
		AND NOT (account=? AND mailbox=? AND uidvalidity=? AND uid=?) ORDER BY created LIMIT 1`, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("ledger: by key: %w", err)
	}
	return e, nil
}

// Begin records that e is being processed: it inserts the row (state
// processing, attempts 1) or, for an existing non-terminal row, increments its
// attempts. It returns the attempt number.
func (l *Ledger) Begin(ctx context.Context, e Entry) (int, error) {
	now := unix(l.now())
	_, err := l.db.ExecContext(ctx, `INSERT INTO messages (`+entryCols+`)
		VALUES (?,?,?,?,?,?,?,?,?,'','',1,0,?,?,?,'',?)
		ON CONFLICT(account, mailbox, uidvalidity, uid) DO UPDATE SET
			attempts = messages.attempts + 1, state = excluded.state, updated = excluded.updated, trace_id = excluded.trace_id,
			key = excluded.key, message_id = excluded.message_id, sender = excluded.sender, subject = excluded.subject`,
		e.Account, e.Mailbox, e.UIDValidity, e.UID, e.Key, e.MessageID, e.Sender, e.Subject, StateProcessing, now, now, e.Digest, e.TraceID)
	if err != nil {
		return 0, fmt.Errorf("ledger: begin %s: %w", e.Loc, err)
	}
	got, err := l.Get(ctx, e.Loc)
	if err != nil {
		return 0, err
	}
	return got.Attempts, nil
}

// Record inserts or replaces e as a terminal entry (a message processed,
// or one without processing: a duplicate of an already handled message,
// mail over a limit), and in the same transaction keeps its complaint
// clock (e.Ticket, e.Clock), what it leaves for review (e.Kept) and, when
// it has a scenario, the scenario and inbox on its reply (attribute): one
// synced commit for all of it.
func (l *Ledger) Record(ctx context.Context, e Entry) error {
	now := unix(l.now())
	tx, err := l.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("ledger: record %s: %w", e.Loc, err)
	}
	defer tx.Rollback()
	var key triage.Key // the row's: a row recorded again keeps its key
	// A row keeps the conversation it was put in first; the clock reads
	// the row's as the statement leaves it.
	var ticket string
	var answerBy int64
	err = tx.QueryRowContext(ctx, `INSERT INTO messages (`+entryCols+`, ticket)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,0,?,?,?,?,?,?)
		ON CONFLICT(account, mailbox, uidvalidity, uid) DO UPDATE SET
			state = excluded.state, reason = excluded.reason, scenario = excluded.scenario, updated = excluded.updated,
			trace_id = CASE WHEN excluded.trace_id <> '' THEN excluded.trace_id ELSE messages.trace_id END,
			digest = CASE WHEN excluded.digest != '' THEN excluded.digest ELSE messages.digest END,
			detail = excluded.detail,
			ticket = CASE WHEN messages.ticket = '' THEN excluded.ticket ELSE messages.ticket END
		RETURNING key, ticket, answer_by`,
		e.Account, e.Mailbox, e.UIDValidity, e.UID, e.Key, e.MessageID, e.Sender, e.Subject,
		e.State, e.Reason, e.Scenario, e.Attempts, now, now, e.Digest, clip.Bytes(e.Detail, triage.MaxDetail, ""), e.TraceID,
		e.Ticket).Scan(&key, &ticket, &answerBy)
	if err == nil && (e.Ticket != "" || e.Clock.Complaint) {
		err = l.clock(ctx, tx, e, ticket, answerBy)
	}
	if err == nil && e.Kept != nil {
		err = l.setOutcome(ctx, tx, e.Loc, *e.Kept)
	}
	if err == nil && e.Scenario != "" {
		err = l.replies.AttributeIn(ctx, tx, key, e.Scenario, triage.Inbox{Account: e.Account, Mailbox: e.Mailbox})
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fmt.Errorf("ledger: record %s: %w", e.Loc, err)
	}
	return nil
}

// Finish sets the terminal state of the entry at loc.
func (l *Ledger) Finish(ctx context.Context, loc Loc, state State, reason triage.Reason, scenario string) error {
	if !state.Terminal() {
		return fmt.Errorf("ledger: finish %s: %q is not a terminal state", loc, state)
	}
	var key triage.Key
	err := l.db.QueryRowContext(ctx, `UPDATE messages SET state=?, reason=?, scenario=?, updated=?
		WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=? RETURNING key`,
		state, reason, scenario, unix(l.now()), loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("ledger: finish %s: %w", loc, err)
	}
	return l.attribute(ctx, key, loc, scenario)
}

// attribute puts on the reply or draft of key, the message at loc, the
// scenario and inbox it was handled in: what the draft statistics and
// reply mode auto count by (package review). A message without a scenario
// changes nothing.
func (l *Ledger) attribute(ctx context.Context, key triage.Key, loc Loc, scenario string) error {
	if scenario == "" {
		return nil
	}
	if err := l.replies.Attribute(ctx, key, scenario, triage.Inbox{Account: loc.Account, Mailbox: loc.Mailbox}); err != nil {
		return fmt.Errorf("ledger: attribute the reply of %s: %w", loc, err)
	}
	return nil
}

// MarkIMAPDone records that the server-side flag/move of loc is done: the
// message is settled, and its claim ends.
func (l *Ledger) MarkIMAPDone(ctx context.Context, loc Loc) error {
	return markIMAPDone(ctx, l.db, l.now(), loc)
}

// MarkSettled is MarkIMAPDone for a message whose reply (of key
// appended) was also stored in the Sent folder: both recorded in one
// transaction (replies.Store.MarkAppended). An empty appended is
// MarkIMAPDone alone.
func (l *Ledger) MarkSettled(ctx context.Context, loc Loc, appended triage.Key) error {
	if appended == "" {
		return l.MarkIMAPDone(ctx, loc)
	}
	tx, err := l.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("ledger: mark imap done %s: %w", loc, err)
	}
	defer tx.Rollback()
	if err := markIMAPDone(ctx, tx, l.now(), loc); err != nil {
		return err
	}
	if err := l.replies.MarkAppendedIn(ctx, tx, appended); err != nil {
		return fmt.Errorf("ledger: mark imap done %s: %w", loc, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("ledger: mark imap done %s: %w", loc, err)
	}
	return nil
}

func markIMAPDone(ctx context.Context, x execer, now time.Time, loc Loc) error {
	res, err := x.ExecContext(ctx, `UPDATE messages SET imap_done=1, claimant='', lease_until=0, updated=?
		WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`,
		unix(now), loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID)
	return checkOne(res, err, "mark imap done", loc)
}

func checkOne(res sql.Result, err error, op string, loc Loc) error {
	if err != nil {
		return fmt.Errorf("ledger: %s %s: %w", op, loc, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("ledger: %s %s: %w", op, loc, ErrNotFound)
	}
	return nil
}

// Settled returns which of uids, in (account, mailbox, uidvalidity), have
// entries that are terminal and whose server-side marking is done: nothing is
// left to do. It looks up only the UIDs asked about (those a search
// found), so its cost follows the mailbox, not the ledger's history.
func (l *Ledger) Settled(ctx context.Context, account, mailbox string, uidValidity uint32, uids []uint32) (map[uint32]bool, error) {
	out := map[uint32]bool{}
	for len(uids) > 0 {
		chunk := uids[:min(len(uids), settledChunk)]
		uids = uids[len(chunk):]
		args := []any{account, mailbox, uidValidity}
		for _, u := range chunk {
			args = append(args, u)
		}
		rows, err := l.db.QueryContext(ctx, `SELECT uid, state FROM messages WHERE account=? AND mailbox=? AND uidvalidity=? AND imap_done=1
			AND uid IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("ledger: settled: %w", err)
		}
		for rows.Next() {
			var uid uint32
			var state State
			if err := rows.Scan(&uid, &state); err != nil {
				rows.Close()
				return nil, fmt.Errorf("ledger: settled: %w", err)
			}
			if state.Terminal() {
				out[uid] = true
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("ledger: settled: %w", err)
		}
	}
	return out, nil
}

// settledChunk is how many UIDs one Settled query names (SQLite allows
// 32766 parameters, PostgreSQL 65535).
const settledChunk = 500

// LastUIDValidityQuery is LastUIDValidity's query: the newest row of the
// inbox, read through the messages_inbox_updated index.
const LastUIDValidityQuery = `SELECT uidvalidity FROM messages WHERE account=? AND mailbox=? ORDER BY updated DESC LIMIT 1`

// LastUIDValidity returns the UIDVALIDITY of the most recently updated
// entry of (account, mailbox), or 0 when there is none: what the mailbox was
// numbered as when triage last worked on it.
func (l *Ledger) LastUIDValidity(ctx context.Context, account, mailbox string) (uint32, error) {
	var v uint32
	err := l.db.QueryRowContext(ctx, LastUIDValidityQuery, account, mailbox).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: last uidvalidity: %w", err)
	}
	return v, nil
}

// Unsettled returns the UIDs in (account, mailbox, uidvalidity) whose
// entries are terminal but whose server-side marking (flag, move) is not done,
// in ascending order: a crash between the flag and the move leaves such a
// message flagged, where a search for unflagged mail no longer finds it.
func (l *Ledger) Unsettled(ctx context.Context, account, mailbox string, uidValidity uint32) ([]uint32, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT uid, state FROM messages WHERE account=? AND mailbox=? AND uidvalidity=? AND imap_done=0 ORDER BY uid`,
		account, mailbox, uidValidity)
	if err != nil {
		return nil, fmt.Errorf("ledger: unsettled: %w", err)
	}
	defer rows.Close()
	var out []uint32
	for rows.Next() {
		var uid uint32
		var state State
		if err := rows.Scan(&uid, &state); err != nil {
			return nil, fmt.Errorf("ledger: unsettled: %w", err)
		}
		if state.Terminal() {
			out = append(out, uid)
		}
	}
	return out, rows.Err()
}

// Recent lists the most recently updated entries, newest first; a non-empty
// state filters by state.
func (l *Ledger) Recent(ctx context.Context, limit int, state State) ([]Entry, error) {
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT ` + readCols + ` FROM messages`
	args := []any{}
	if state != "" {
		q += ` WHERE state=?`
		args = append(args, state)
	}
	q += ` ORDER BY updated DESC, uid DESC LIMIT ?`
	args = append(args, limit)
	return queryAll(ctx, l, "recent", scanEntry, q, args...)
}

// Counts returns the number of entries per state.
func (l *Ledger) Counts(ctx context.Context) (map[State]int, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM messages GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("ledger: counts: %w", err)
	}
	defer rows.Close()
	out := map[State]int{}
	for rows.Next() {
		var s State
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, fmt.Errorf("ledger: counts: %w", err)
		}
		out[s] = n
	}
	return out, rows.Err()
}
