package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"triage/internal/store"
)

// The complaint clock. A consumer complaint (a message whose scenario
// declares it one) must be answered on its merits within an answer period
// of its receipt, or it is deemed accepted (in Poland, 14 days: Consumer
// Rights Act art. 7a). The ledger keeps, with each complaint message, its
// time of receipt, its deadline (AnswerBy), whether and when it was
// answered on its merits (what its caller decides: Clock.OnTheMerits), and
// when staff were warned of the deadline and when it lapsed, each at most
// once (MarkClock).
//
// A conversation (a ticket) has one clock: the first complaint's. A later
// message of the conversation while its clock runs (a follow-up adding the
// missing serial or proof, an escalation) joins that clock instead of
// starting its own, and answering it on its merits stops the clock. Once
// a conversation's clock stopped, a new complaint in it starts a new one.

// DefaultAnswerPeriod is the statutory answer period of a consumer
// complaint when no other is configured: 14 days (Poland, Consumer Rights
// Act art. 7a).
const DefaultAnswerPeriod = 14 * 24 * time.Hour

// Complaint is a complaint message's clock as the ledger keeps it.
type Complaint struct {
	// Received is the message's time of receipt.
	Received time.Time `json:"received"`
	// AnswerBy is the deadline of the clock the message is on: its own
	// receipt plus the answer period, or, when it joined the clock of its
	// conversation's first complaint (Joined), that one's.
	AnswerBy time.Time `json:"answer_by"`
	Joined   bool      `json:"joined,omitempty"`
	// Answered is when the clock stopped: the conversation was answered
	// on its merits; zero while it runs.
	Answered time.Time `json:"answered,omitzero"`
	// Notified is when staff were warned that the deadline nears; Lapsed
	// when the deadline was found passed unanswered (each once).
	Notified time.Time `json:"notified,omitzero"`
	Lapsed   time.Time `json:"lapsed,omitzero"`
}

// Open reports whether the clock runs (not answered on its merits).
func (c *Complaint) Open() bool { return c != nil && c.Answered.IsZero() }

// Left is the time left until the deadline at now; negative when it passed.
func (c *Complaint) Left(now time.Time) time.Duration { return c.AnswerBy.Sub(now) }

// Clock is what Record needs to keep a message's complaint clock.
type Clock struct {
	// Complaint: the message is itself a consumer complaint (its
	// scenario declares it one); it starts a clock unless it joins its
	// conversation's (Entry.Ticket). A message that is not a complaint
	// joins its conversation's running clock, if any.
	Complaint bool
	// Received is the message's time of receipt; the zero time is the
	// ledger's now.
	Received time.Time
	// Period is the answer period (DefaultAnswerPeriod when zero).
	Period time.Duration
	// OnTheMerits: the message's reply answered it on its merits: the
	// clock it is on stops.
	OnTheMerits bool
}

// complaintSchema keeps the complaint clock with the message: its
// conversation (the ticket), its receipt, the deadline, when it was
// answered on its merits, whether it joined an earlier message's clock,
// and when staff were warned and when it lapsed (Unix milliseconds; 0:
// not). A message with answer_by 0 is no complaint. The running clocks
// are indexed by deadline, the messages by ticket.
const complaintSchema = `ALTER TABLE messages ADD COLUMN ticket TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN received BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN answer_by BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN answered BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN clock_joined INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN notified BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN lapsed BIGINT NOT NULL DEFAULT 0;
CREATE INDEX messages_clocks ON messages(answer_by) WHERE answer_by > 0 AND answered = 0;
CREATE INDEX messages_ticket ON messages(ticket) WHERE ticket <> '';
`

// clockCols are the columns of the complaint clock scanEntry reads after
// entryCols.
const clockCols = `ticket, received, answer_by, answered, clock_joined, notified, lapsed`

// clockScan reads clockCols into e once Scan ran.
type clockScan struct {
	received, answerBy, answered, notified, lapsed int64
	joined                                         int
}

func (c *clockScan) dest(e *Entry) []any {
	return []any{&e.Ticket, &c.received, &c.answerBy, &c.answered, &c.joined, &c.notified, &c.lapsed}
}

func (c *clockScan) set(e *Entry) {
	if c.answerBy == 0 {
		e.Complaint = nil
		return
	}
	e.Complaint = &Complaint{Received: fromUnix(c.received), AnswerBy: fromUnix(c.answerBy), Joined: c.joined != 0,
		Answered: fromUnix(c.answered), Notified: fromUnix(c.notified), Lapsed: fromUnix(c.lapsed)}
}

// clock keeps the complaint clock of the message e, in tx, once Record
// wrote its row, which is in conversation ticket ("" when none; the first
// one a row was put in stays its) and on the clock answerBy (0 when none).
// A message already on a clock keeps it (recording it again restarts
// nothing); a complaint joins the running clock of its conversation or
// starts its own; another message joins the running clock of its
// conversation, if any. An answer on the merits stops the clock the
// message is on (every message of the conversation on it).
func (l *Ledger) clock(ctx context.Context, tx *store.Tx, e Entry, ticket string, answerBy int64) error {
	c := e.Clock
	loc := e.Loc
	where := ` WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`
	at := []any{loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID}
	if answerBy == 0 {
		joined := int64(0)
		if ticket != "" {
			err := tx.QueryRowContext(ctx, `SELECT answer_by FROM messages WHERE ticket=? AND answer_by>0 AND answered=0 AND clock_joined=0
				AND NOT (account=? AND mailbox=? AND uidvalidity=? AND uid=?) ORDER BY received LIMIT 1`,
				append([]any{ticket}, at...)...).Scan(&joined)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		received := c.Received
		if received.IsZero() {
			received = l.now()
		}
		switch {
		case joined > 0:
			answerBy = joined
		case c.Complaint:
			period := c.Period
			if period <= 0 {
				period = DefaultAnswerPeriod
			}
			answerBy = unix(received.Add(period))
		default:
			return nil // no complaint, and no running clock to join
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET received=?, answer_by=?, clock_joined=?`+where,
			append([]any{unix(received), answerBy, b2i(joined > 0)}, at...)...); err != nil {
			return err
		}
	}
	if !c.OnTheMerits {
		return nil
	}
	q := `UPDATE messages SET answered=? WHERE answer_by>0 AND answered=0 AND ((account=? AND mailbox=? AND uidvalidity=? AND uid=?)`
	args := append([]any{unix(l.now())}, at...)
	if ticket != "" {
		q += ` OR ticket=?`
		args = append(args, ticket)
	}
	_, err := tx.ExecContext(ctx, q+`)`, args...)
	return err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Due lists the running complaint clocks (one per conversation: joined
// messages are left out), the soonest deadline first, so the lapsed ones
// come first; at most limit (all when limit <= 0).
func (l *Ledger) Due(ctx context.Context, limit int) ([]Entry, error) {
	q := `SELECT ` + readCols + ` FROM messages WHERE answer_by>0 AND answered=0 AND clock_joined=0 ORDER BY answer_by, received, uid`
	args := []any{}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return queryAll(ctx, l, "due", scanEntry, q, args...)
}

// DueCounts counts the running complaint clocks at now: open ones whose
// deadline is ahead, and overdue ones whose deadline passed.
func (l *Ledger) DueCounts(ctx context.Context, now time.Time) (open, overdue int, err error) {
	err = l.db.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(CASE WHEN answer_by > ? THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN answer_by <= ? THEN 1 ELSE 0 END), 0)
		FROM messages WHERE answer_by>0 AND answered=0 AND clock_joined=0`, unix(now), unix(now)).Scan(&open, &overdue)
	if err != nil {
		return 0, 0, fmt.Errorf("ledger: due counts: %w", err)
	}
	return open, overdue, nil
}

// ClockEvent is what happens to a running clock once: staff are warned
// that its deadline nears, and its deadline lapses.
type ClockEvent string

// Clock events (MarkClock).
const (
	ClockNotified ClockEvent = "notified"
	ClockLapsed   ClockEvent = "lapsed"
)

// Pending lists the running clocks (as Due) that ev has not happened to
// and whose deadline is at most before ahead of now (before 0: passed).
func (l *Ledger) Pending(ctx context.Context, ev ClockEvent, now time.Time, before time.Duration) ([]Entry, error) {
	if ev != ClockNotified && ev != ClockLapsed {
		return nil, fmt.Errorf("ledger: pending: unknown clock event %q", ev)
	}
	return queryAll(ctx, l, "pending "+string(ev), scanEntry, `SELECT `+readCols+` FROM messages
		WHERE answer_by>0 AND answered=0 AND clock_joined=0 AND `+string(ev)+`=0 AND answer_by<=? ORDER BY answer_by, uid`,
		unix(now.Add(before)))
}

// MarkClock records that ev happened to the clock of loc, unless it
// happened already (or the clock stopped): it reports whether this call
// recorded it, so that of several daemons sharing the store one acts.
func (l *Ledger) MarkClock(ctx context.Context, loc Loc, ev ClockEvent) (bool, error) {
	if ev != ClockNotified && ev != ClockLapsed {
		return false, fmt.Errorf("ledger: mark clock: unknown clock event %q", ev)
	}
	res, err := l.db.ExecContext(ctx, `UPDATE messages SET `+string(ev)+`=? WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?
		AND answer_by>0 AND answered=0 AND `+string(ev)+`=0`, unix(l.now()), loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID)
	if err != nil {
		return false, fmt.Errorf("ledger: mark clock %s %s: %w", ev, loc, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// UnmarkClock takes back MarkClock(loc, ev), when what it recorded did not
// happen after all (the warning could not be sent): a later pass tries
// again.
func (l *Ledger) UnmarkClock(ctx context.Context, loc Loc, ev ClockEvent) error {
	if ev != ClockNotified && ev != ClockLapsed {
		return fmt.Errorf("ledger: unmark clock: unknown clock event %q", ev)
	}
	_, err := l.db.ExecContext(ctx, `UPDATE messages SET `+string(ev)+`=0 WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`,
		loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID)
	if err != nil {
		return fmt.Errorf("ledger: unmark clock %s %s: %w", ev, loc, err)
	}
	return nil
}
