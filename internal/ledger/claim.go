package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"triage/internal/store"
)

// Claims let several daemons share one inbox on one store. Before a daemon
// works on a message it claims the message's row: the row names the daemon
// (claimant) and holds a lease (lease_until) the daemon renews while it
// works. A row whose lease is live belongs to its claimant; a row whose lease
// ran out (its claimant died) may be claimed again. A claim ends when the
// message is settled on the server (MarkIMAPDone) or handed back (Unclaim,
// Forget). Replies are keyed by the inbound key, so claims are also exclusive
// per key: a message is not claimed while another message with its key is.

// StateSeen is the state of a message a watcher found in the mailbox and
// recorded (Offer) for any daemon of the inbox to claim. Like processing,
// it is not final.
const StateSeen State = "seen"

// ErrClaimed is returned by Claim when another daemon holds a live claim on
// the message (or on another message with its key), or is claiming it at
// this moment.
var ErrClaimed = errors.New("ledger: claimed by another daemon")

// ErrLeaseLost is returned by Renew when the claim is no longer ours: the
// lease ran out and another daemon claimed the message.
var ErrLeaseLost = errors.New("ledger: claim lost")

// Shared reports whether the store may be shared by several daemons
// (PostgreSQL); a SQLite store serves the processes of one machine, which
// the watch lock file keeps to one.
func (l *Ledger) Shared() bool { return l.db.Dialect() == store.Postgres }

// Offer records e, a message found in the mailbox, as seen, unless the
// ledger already has its row. It reports whether it added the row.
func (l *Ledger) Offer(ctx context.Context, e Entry) (bool, error) {
	n, err := l.OfferAll(ctx, []Entry{e})
	return n > 0, err
}

// offerBatch bounds the rows one statement of OfferAll inserts.
const offerBatch = 100

// OfferAll is Offer for each of es, in one statement for up to offerBatch
// of them. It returns how many rows it added.
func (l *Ledger) OfferAll(ctx context.Context, es []Entry) (int, error) {
	now := unix(l.now())
	added := 0
	for batch := range slices.Chunk(es, offerBatch) {
		var rows []string
		var args []any
		for _, e := range batch {
			rows = append(rows, `(?,?,?,?,?,?,?,?,?,'','',0,0,?,?,'','','')`)
			args = append(args, e.Account, e.Mailbox, e.UIDValidity, e.UID, e.Key, e.MessageID, e.Sender, e.Subject, StateSeen, now, now)
		}
		res, err := l.db.ExecContext(ctx, `INSERT INTO messages (`+entryCols+`) VALUES `+strings.Join(rows, `,`)+`
			ON CONFLICT(account, mailbox, uidvalidity, uid) DO NOTHING`, args...)
		if err != nil {
			return added, fmt.Errorf("ledger: offer %s (%d messages): %w", batch[0].Loc, len(batch), err)
		}
		n, _ := res.RowsAffected()
		added += int(n)
	}
	return added, nil
}

// Claim makes owner the claimant of the message e for lease, in one
// transaction. A message without a row gets one (state processing, attempt
// 1); a row that is not final becomes processing and counts one more
// attempt; a final row (its server-side marking not done yet) keeps its
// state and attempts. It returns the row as claimed. A row already settled
// on the server (final, IMAPDone) is returned as it is, unclaimed: there is
// nothing left to do. It returns ErrClaimed
// when another owner's lease on the row, or on another row with e.Key, is
// live, or when another transaction holds the row right now (PostgreSQL:
// SELECT ... FOR UPDATE SKIP LOCKED; SQLite transactions are serialised).
func (l *Ledger) Claim(ctx context.Context, e Entry, owner string, lease time.Duration) (Entry, error) {
	if owner == "" || lease <= 0 {
		return Entry{}, errors.New("ledger: claim: an owner and a lease are required")
	}
	now := l.now()
	until := unix(now.Add(lease))
	tx, err := l.db.BeginTx(ctx)
	if err != nil {
		return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
	}
	defer tx.Rollback()
	if e.Key != "" {
		// Claims of one key queue here, so two daemons never both find
		// the key free and claim two of its messages.
		if err := tx.Lock(ctx, "claim:"+string(e.Key)); err != nil {
			return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE key=? AND claimant<>'' AND claimant<>? AND lease_until>?
			AND NOT (account=? AND mailbox=? AND uidvalidity=? AND uid=?)`,
			e.Key, owner, unix(now), e.Account, e.Mailbox, e.UIDValidity, e.UID).Scan(&n); err != nil {
			return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
		}
		if n > 0 {
			return Entry{}, ErrClaimed
		}
	}
	q := `SELECT ` + readCols + `, claimant, lease_until FROM messages WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`
	if tx.Dialect() == store.Postgres {
		q += ` FOR UPDATE SKIP LOCKED`
	}
	var claimant string
	var leaseUntil int64
	row := tx.QueryRowContext(ctx, q, e.Account, e.Mailbox, e.UIDValidity, e.UID)
	got, err := scanEntry(scanWith(row, &claimant, &leaseUntil))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// No row, or one another transaction holds: the insert tells.
		res, err := tx.ExecContext(ctx, `INSERT INTO messages (`+entryCols+`, claimant, lease_until)
			VALUES (?,?,?,?,?,?,?,?,?,'','',1,0,?,?,?,'',?,?,?)
			ON CONFLICT(account, mailbox, uidvalidity, uid) DO NOTHING`,
			e.Account, e.Mailbox, e.UIDValidity, e.UID, e.Key, e.MessageID, e.Sender, e.Subject, StateProcessing,
			unix(now), unix(now), e.Digest, e.TraceID, owner, until)
		if err != nil {
			return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return Entry{}, ErrClaimed
		}
		got = e
		got.State, got.Attempts, got.Created, got.Updated = StateProcessing, 1, now.UTC().Truncate(time.Millisecond), now.UTC().Truncate(time.Millisecond)
	case err != nil:
		return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
	case claimant != "" && claimant != owner && leaseUntil > unix(now):
		return Entry{}, ErrClaimed
	case got.State.Terminal() && got.IMAPDone:
		// Settled on the server (by another daemon): nothing is left to
		// do, and nothing is claimed.
		return got, nil
	case got.State.Terminal():
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET claimant=?, lease_until=? WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`,
			owner, until, e.Account, e.Mailbox, e.UIDValidity, e.UID); err != nil {
			return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
		}
	default:
		if e.Key != "" {
			got.Key, got.MessageID, got.Sender, got.Subject = e.Key, e.MessageID, e.Sender, e.Subject
		}
		if e.TraceID != "" { // the trace of this attempt
			got.TraceID = e.TraceID
		}
		got.State, got.Attempts, got.Updated = StateProcessing, got.Attempts+1, now.UTC().Truncate(time.Millisecond)
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET state=?, attempts=?, updated=?, key=?, message_id=?, sender=?, subject=?, trace_id=?, claimant=?, lease_until=?
			WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`,
			got.State, got.Attempts, unix(now), got.Key, got.MessageID, got.Sender, got.Subject, got.TraceID, owner, until,
			e.Account, e.Mailbox, e.UIDValidity, e.UID); err != nil {
			return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return Entry{}, fmt.Errorf("ledger: claim %s: %w", e.Loc, err)
	}
	return got, nil
}

// scanWith appends dest to the columns a scanEntry reads.
func scanWith(sc scanner, dest ...any) scanner {
	return scanFunc(func(d ...any) error { return sc.Scan(append(d, dest...)...) })
}

type scanFunc func(...any) error

func (f scanFunc) Scan(d ...any) error { return f(d...) }

// Renew extends owner's claim on loc to lease from now; ErrLeaseLost when
// the claim is no longer owner's.
func (l *Ledger) Renew(ctx context.Context, loc Loc, owner string, lease time.Duration) error {
	res, err := l.db.ExecContext(ctx, `UPDATE messages SET lease_until=? WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=? AND claimant=?`,
		unix(l.now().Add(lease)), loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID, owner)
	if err != nil {
		return fmt.Errorf("ledger: renew %s: %w", loc, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// renewBatch bounds the claims one statement of RenewAll renews.
const renewBatch = 200

// RenewAll extends owner's claims on locs to lease from now, in one
// statement for up to renewBatch of them (a daemon renews every claim it
// holds at once, not one message at a time). It returns the locs whose
// claim is no longer owner's: their lease ran out and another daemon
// claimed them, or their row is gone.
func (l *Ledger) RenewAll(ctx context.Context, owner string, locs []Loc, lease time.Duration) ([]Loc, error) {
	var lost []Loc
	for batch := range slices.Chunk(locs, renewBatch) {
		args := []any{unix(l.now().Add(lease)), owner}
		var match []string
		for _, loc := range batch {
			match = append(match, `(account=? AND mailbox=? AND uidvalidity=? AND uid=?)`)
			args = append(args, loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID)
		}
		renewed, err := store.QueryAll(ctx, l.db, "ledger: renew", func(sc scanner) (Loc, error) {
			var loc Loc
			err := sc.Scan(&loc.Account, &loc.Mailbox, &loc.UIDValidity, &loc.UID)
			return loc, err
		}, `UPDATE messages SET lease_until=? WHERE claimant=? AND (`+strings.Join(match, ` OR `)+`)
			RETURNING account, mailbox, uidvalidity, uid`, args...)
		if err != nil {
			return nil, err
		}
		for _, loc := range batch {
			if !slices.Contains(renewed, loc) {
				lost = append(lost, loc)
			}
		}
	}
	return lost, nil
}

// Unclaim hands a message owner was processing back, as seen, without
// counting the attempt: nothing was sent (processing was cancelled at
// shutdown), and any daemon of the inbox may claim it now. A row no longer
// owner's, or already final, is left alone.
func (l *Ledger) Unclaim(ctx context.Context, loc Loc, owner string) error {
	_, err := l.db.ExecContext(ctx, `UPDATE messages SET state=?, claimant='', lease_until=0, updated=?,
		attempts=CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END
		WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=? AND state=? AND claimant=?`,
		StateSeen, unix(l.now()), loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID, StateProcessing, owner)
	if err != nil {
		return fmt.Errorf("ledger: unclaim %s: %w", loc, err)
	}
	return nil
}

// Forget deletes the row of a message that is no longer in the mailbox and
// was never finished (seen, or processing by owner or by nobody alive).
func (l *Ledger) Forget(ctx context.Context, loc Loc, owner string) error {
	_, err := l.db.ExecContext(ctx, `DELETE FROM messages WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?
		AND state IN (?, ?) AND (claimant IN ('', ?) OR lease_until<?)`,
		loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID, StateSeen, StateProcessing, owner, unix(l.now()))
	if err != nil {
		return fmt.Errorf("ledger: forget %s: %w", loc, err)
	}
	return nil
}

// ReleaseClaims ends every claim in the store: for a store only one process
// can use (a SQLite ledger under the watch lock file), the claims left by a
// process that died belong to nobody.
func (l *Ledger) ReleaseClaims(ctx context.Context) error {
	if _, err := l.db.ExecContext(ctx, `UPDATE messages SET claimant='', lease_until=0 WHERE claimant<>''`); err != nil {
		return fmt.Errorf("ledger: release claims: %w", err)
	}
	return nil
}

// Claimable lists up to limit messages of (account, mailbox, uidValidity)
// a daemon may claim, oldest UID first: every message not settled on the
// server (seen, processing, or final with its flag or move not done) whose
// lease is empty or ran out.
func (l *Ledger) Claimable(ctx context.Context, account, mailbox string, uidValidity uint32, limit int) ([]Entry, error) {
	return queryAll(ctx, l, "claimable", scanEntry, `SELECT `+readCols+` FROM messages WHERE account=? AND mailbox=? AND uidvalidity=?
		AND imap_done = 0 AND lease_until<? ORDER BY uid LIMIT ?`,
		account, mailbox, uidValidity, unix(l.now()), limit)
}

// Claimant returns the claimant of loc and until when its lease runs (""
// and the zero time when nobody claims it), or ErrNotFound.
func (l *Ledger) Claimant(ctx context.Context, loc Loc) (string, time.Time, error) {
	var owner string
	var until int64
	err := l.db.QueryRowContext(ctx, `SELECT claimant, lease_until FROM messages WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=?`,
		loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID).Scan(&owner, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, ErrNotFound
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("ledger: claimant %s: %w", loc, err)
	}
	return owner, fromUnix(until), nil
}

// PollLock is the session lock whose holder polls the inbox (account,
// mailbox) for the daemons sharing the store.
func (l *Ledger) PollLock(account, mailbox string) *store.SessionLock {
	return l.db.SessionLock("poll:" + account + "\x00" + mailbox)
}
