package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"triage"
	"triage/internal/clip"
)

// What a person decided about a message in the console, kept apart from
// its pipeline state: closed (resolved or dismissed) with a reason, opened
// again, or its draft rejected with a reason. The rows are a history,
// never rewritten; a message's standing is its latest close or reopen.

// Action is what a person did with a message.
type Action string

// Actions.
const (
	ActionResolved  Action = "resolved"  // dealt with: nothing more waits
	ActionDismissed Action = "dismissed" // nothing to deal with
	ActionReopened  Action = "reopened"  // waits for a person again
	ActionRejected  Action = "rejected"  // its draft was rejected; the customer waits for a person
)

// CloseReason is why a person resolved or dismissed a message, or
// rejected its draft.
type CloseReason string

// Reasons for resolving or dismissing.
const (
	CloseAnsweredElsewhere CloseReason = "answered_elsewhere" // answered by phone, another channel or mail client
	CloseNoActionNeeded    CloseReason = "no_action_needed"
	CloseSpam              CloseReason = "spam"
	CloseDuplicate         CloseReason = "duplicate"
	// CloseUnsettled dismisses a reply that could not be confirmed and
	// the person settled by hand (checked the mailbox, called the
	// customer).
	CloseUnsettled CloseReason = "settled_by_hand"
	// CloseFoundInSent settles a reply that could not be confirmed: it
	// was found in the Sent folder (the console's check).
	CloseFoundInSent CloseReason = "found_in_sent"
)

// Reasons for rejecting a draft.
const (
	RejectWrongFacts   CloseReason = "wrong_facts"   // the draft says something untrue
	RejectWrongTone    CloseReason = "wrong_tone"    // right facts, wrong words
	RejectDoNotAnswer  CloseReason = "do_not_answer" // this email must not be answered by triage
	RejectPersonWrites CloseReason = "person_writes" // a person answers it themselves
)

// CloseReasons are the reasons a message may be resolved or dismissed
// with; RejectReasons those a draft may be rejected with.
var (
	CloseReasons  = []CloseReason{CloseAnsweredElsewhere, CloseNoActionNeeded, CloseSpam, CloseDuplicate, CloseUnsettled, CloseFoundInSent}
	RejectReasons = []CloseReason{RejectWrongFacts, RejectWrongTone, RejectDoNotAnswer, RejectPersonWrites}
)

// MaxResolutionNote bounds the words a person adds to a resolution.
const MaxResolutionNote = 2000

// MaxResolutions bounds the history of one message read back.
const MaxResolutions = 200

// Resolution is one decision of a person about a message.
type Resolution struct {
	Key    triage.Key
	At     time.Time
	Action Action
	Reason CloseReason // "" for ActionReopened
	Person string
	Note   string
	// Assignee is who ActionAssigned gives the message to ("" nobody).
	Assignee string
}

// Closes reports whether r takes the message out of the queue.
func (r Resolution) Closes() bool { return r.Action == ActionResolved || r.Action == ActionDismissed }

// ErrBadResolution names a resolution that cannot be recorded (an unknown
// action or reason, no person).
var ErrBadResolution = errors.New("ledger: bad resolution")

// resolutionSchema is the history of the decisions people make in the
// console, in the order they were made (id); resolutionColumns are its
// columns after the id, the same in both dialects.
const (
	resolutionSQLite   = `CREATE TABLE resolutions (id INTEGER PRIMARY KEY AUTOINCREMENT,` + resolutionColumns
	resolutionPostgres = `CREATE TABLE resolutions (id BIGSERIAL PRIMARY KEY,` + resolutionColumns
)

const resolutionColumns = `
	key    TEXT NOT NULL,
	at     BIGINT NOT NULL,
	action TEXT NOT NULL,
	reason TEXT NOT NULL DEFAULT '',
	person TEXT NOT NULL DEFAULT '',
	note   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX resolutions_key ON resolutions(key, id);
`

// Resolve records r (its At is the ledger's time). A close needs a
// CloseReasons reason, a rejection a RejectReasons one, a reopen none;
// every one a person.
func (l *Ledger) Resolve(ctx context.Context, r Resolution) error {
	ok := false
	switch r.Action {
	case ActionResolved, ActionDismissed:
		ok = slices.Contains(CloseReasons, r.Reason)
	case ActionRejected:
		ok = slices.Contains(RejectReasons, r.Reason)
	case ActionReopened:
		ok = r.Reason == ""
	default:
		ok = r.Reason == "" && slices.Contains(PersonActions, r.Action)
	}
	if !ok || r.Key == "" || strings.TrimSpace(r.Person) == "" {
		return fmt.Errorf("%w: action %q, reason %q, person %q", ErrBadResolution, r.Action, r.Reason, r.Person)
	}
	note := r.Note
	if !utf8.ValidString(note) {
		note = strings.ToValidUTF8(note, "?")
	}
	_, err := l.db.ExecContext(ctx, `INSERT INTO resolutions (key, at, action, reason, person, note, assignee) VALUES (?,?,?,?,?,?,?)`,
		r.Key, unix(l.now()), r.Action, r.Reason, clip.Bytes(r.Person, 200, ""), clip.Bytes(note, MaxResolutionNote, ""), clip.Bytes(r.Assignee, 200, ""))
	if err != nil {
		return fmt.Errorf("ledger: resolve: %w", err)
	}
	return nil
}

// Resolutions is the history of key, oldest first (at most MaxResolutions,
// the newest).
func (l *Ledger) Resolutions(ctx context.Context, key triage.Key) ([]Resolution, error) {
	rs, err := l.resolutions(ctx, `WHERE key=? ORDER BY id DESC LIMIT ?`, key, MaxResolutions)
	slices.Reverse(rs)
	return rs, err
}

// Standing returns, of keys, those whose latest close or reopen closes
// them, with that resolution.
func (l *Ledger) Standing(ctx context.Context, keys []triage.Key) (map[triage.Key]Resolution, error) {
	out := map[triage.Key]Resolution{}
	for chunk := range slices.Chunk(keys, 500) {
		args := make([]any, 0, len(chunk)+3)
		for _, k := range chunk {
			args = append(args, k)
		}
		args = append(args, ActionResolved, ActionDismissed, ActionReopened)
		rs, err := l.resolutions(ctx, `WHERE key IN (?`+strings.Repeat(",?", len(chunk)-1)+`) AND action IN (?,?,?) ORDER BY id`, args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rs { // oldest first: the latest wins
			if r.Closes() {
				out[r.Key] = r
			} else {
				delete(out, r.Key)
			}
		}
	}
	return out, nil
}

func (l *Ledger) resolutions(ctx context.Context, where string, args ...any) ([]Resolution, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT key, at, action, reason, person, note, assignee FROM resolutions `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: resolutions: %w", err)
	}
	defer rows.Close()
	var out []Resolution
	for rows.Next() {
		var r Resolution
		var at int64
		if err := rows.Scan(&r.Key, &at, &r.Action, &r.Reason, &r.Person, &r.Note, &r.Assignee); err != nil {
			return nil, fmt.Errorf("ledger: resolutions: %w", err)
		}
		r.At = fromUnix(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: resolutions: %w", err)
	}
	return out, nil
}
