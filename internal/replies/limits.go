package replies

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"triage"
)

// The reply limits (PerAddress, PerHour) and the staff notice bounds
// (Notices) PutPendingWithin checks, in the same transaction that records
// a reply or notice.

// The per-sender limit both commands apply by default: replies (and
// drafts) per window that count against one address.
const (
	DefaultPerSenderLimit  = 5
	DefaultPerSenderWindow = 24 * time.Hour
)

// Limits bound the replies PutPendingWithin admits. A zero or negative
// field is no limit.
type Limits struct {
	// PerAddress caps the replies per Window that count against one
	// address: every reply counts against its recipient and against the
	// sender of the message it answers (Reply.InboundFrom), so neither a
	// Reply-To pointing elsewhere nor changing the From dodges it. Drafts
	// count too (each cost a model run and a ticket); they do not count
	// against PerHour, which caps mail sent.
	PerAddress int
	Window     time.Duration // default DefaultPerSenderWindow
	PerHour    int           // replies in the last hour overall
	// Notices bound the staff notices (Reply.Kind KindNotice), which never
	// count against the limits above.
	Notices triage.NoticeLimits
}

// LimitError refuses a reply, draft or staff notice over a limit: nothing
// was recorded nor written. PutPendingWithin (watch's replies table) and
// Outbox.Send (process's outbox) both return it.
type LimitError struct {
	// Reason is triage.ReasonPerSenderLimit or triage.ReasonGlobalLimit for
	// a reply, triage.ReasonNoticeLimit or triage.ReasonNoticeGlobalLimit
	// for a staff notice.
	Reason triage.Reason
	// Address is the address at its limit: for a notice, the customer it
	// is about ("" for the hourly limits).
	Address string
	Count   int // replies (or notices) already counted
	Limit   int
	Window  time.Duration // of the per-sender limit
	// outbox: the outbox refused it (Outbox.Send), which words it as the
	// mail transport's refusal.
	outbox bool
}

// LimitReason is e.Reason (triage.Limited).
func (e *LimitError) LimitReason() triage.Reason { return e.Reason }

func (e *LimitError) Error() string {
	prefix := "ledger: "
	if e.outbox {
		prefix = "mail: outbox: "
	}
	switch {
	case e.Reason == triage.ReasonNoticeLimit:
		return fmt.Sprintf(prefix+"%s: %d staff notices about mail from %s in the last hour (limit %d)", e.Reason, e.Count, e.Address, e.Limit)
	case e.Reason == triage.ReasonNoticeGlobalLimit:
		return fmt.Sprintf(prefix+"%s: %d staff notices in the last hour (limit %d)", e.Reason, e.Count, e.Limit)
	case e.outbox:
		return fmt.Sprintf("mail: outbox: %s was already answered %d times in the last %v (limit %d; drafts count); not written, left for a person",
			e.Address, e.Count, e.Window, e.Limit)
	case e.Address == "":
		return fmt.Sprintf("ledger: %s: %d replies in the last hour (limit %d)", e.Reason, e.Count, e.Limit)
	}
	return fmt.Sprintf("ledger: %s: %d replies already count against %s (limit %d)", e.Reason, e.Count, e.Address, e.Limit)
}

// Exceeded returns the *LimitError a reply answering mail from sender, sent
// to to, would meet under lim at now; nil when it is under every limit. It
// only reads: PutPendingWithin is the exact check, this one saves work on a
// message whose reply would be refused.
func (s *Store) Exceeded(ctx context.Context, lim Limits, sender, to string, now time.Time) (*LimitError, error) {
	return lim.exceeded(ctx, s.db, normAddr(sender), normAddr(to), now)
}

// exceeded is Exceeded on q (the database or a transaction), for
// normalized addresses.
func (lim Limits) exceeded(ctx context.Context, q rowQuerier, sender, to string, now time.Time) (*LimitError, error) {
	if lim.PerAddress > 0 {
		window := lim.Window
		if window <= 0 {
			window = DefaultPerSenderWindow
		}
		for i, a := range []string{sender, to} {
			if a == "" || i == 1 && a == sender {
				continue
			}
			n, err := countReplies(ctx, q, a, now.Add(-window), true)
			if err != nil {
				return nil, err
			}
			if n >= lim.PerAddress {
				return &LimitError{Reason: triage.ReasonPerSenderLimit, Address: a, Count: n, Limit: lim.PerAddress, Window: window}, nil
			}
		}
	}
	if lim.PerHour > 0 {
		n, err := countReplies(ctx, q, "", now.Add(-time.Hour), false)
		if err != nil {
			return nil, err
		}
		if n >= lim.PerHour {
			return &LimitError{Reason: triage.ReasonGlobalLimit, Count: n, Limit: lim.PerHour}, nil
		}
	}
	return nil, nil
}

// RepliesSince counts replies recorded since t (pending ones included, so a
// crash cannot be used to get past a limit); a non-empty addr counts only
// the replies that count against it: sent to it, or answering mail from it.
func (s *Store) RepliesSince(ctx context.Context, addr string, since time.Time) (int, error) {
	return countReplies(ctx, s.db, normAddr(addr), since, false)
}

// rowQuerier is a *store.DB or a *store.Tx.
type rowQuerier interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func countReplies(ctx context.Context, q rowQuerier, addr string, since time.Time, drafts bool) (int, error) {
	// Drafts go to nobody, but each cost a model run and a ticket: they
	// count against the per-address limit (drafts true), not against the
	// hourly cap on mail sent.
	// A person's reply from the console is mail sent like triage's.
	args := []any{unix(since)}
	if addr != "" {
		args = append(args, addr, addr)
	}
	var n int
	if err := q.QueryRowContext(ctx, countRepliesQuery(addr != "", drafts), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("replies: count replies: %w", err)
	}
	return n, nil
}

// countRepliesQuery is countReplies' query: the replies since ? (and,
// with byAddr, to ? or answering mail from ?). Each reads only the rows of
// its window: the hourly count through replies_kind_created, one range
// per kind; a sender's through the indexes by recipient and by sender.
func countRepliesQuery(byAddr, drafts bool) string {
	kinds := `kind IN ('reply', 'person')`
	if drafts {
		kinds = `kind IN ('reply', 'draft', 'person')`
	}
	query := `SELECT COUNT(*) FROM replies WHERE created >= ? AND ` + kinds
	if byAddr {
		query += ` AND (recipient = ? OR sender = ?)`
	}
	return query
}

// noticesExceeded returns the *LimitError a staff notice about mail from
// customer would meet under lim.Notices at now, or nil: the customer's
// notices in the last hour, then every notice in the last hour. A notice
// never counts against the reply limits, nor a reply against these.
func (lim Limits) noticesExceeded(ctx context.Context, q rowQuerier, customer, _ string, now time.Time) (*LimitError, error) {
	since := now.Add(-time.Hour)
	if n := lim.Notices.PerCustomer; n > 0 && customer != "" {
		got, err := countNotices(ctx, q, customer, since)
		if err != nil {
			return nil, err
		}
		if got >= n {
			return &LimitError{Reason: triage.ReasonNoticeLimit, Address: customer, Count: got, Limit: n}, nil
		}
	}
	if n := lim.Notices.PerHour; n > 0 {
		got, err := countNotices(ctx, q, "", since)
		if err != nil {
			return nil, err
		}
		if got >= n {
			return &LimitError{Reason: triage.ReasonNoticeGlobalLimit, Count: got, Limit: n}, nil
		}
	}
	return nil, nil
}

// countNotices counts the staff notices recorded since t (pending ones
// included); a non-empty customer counts only the notices about mail from
// that address.
func countNotices(ctx context.Context, q rowQuerier, customer string, since time.Time) (int, error) {
	args := []any{KindNotice, unix(since)}
	if customer != "" {
		args = append(args, customer)
	}
	var n int
	if err := q.QueryRowContext(ctx, countNoticesQuery(customer != ""), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("replies: count notices: %w", err)
	}
	return n, nil
}

// countNoticesQuery is countNotices' query: the notices since ? (and, with
// byCustomer, about mail from ?), through replies_kind_created.
func countNoticesQuery(byCustomer bool) string {
	query := `SELECT COUNT(*) FROM replies WHERE kind = ? AND created >= ?`
	if byCustomer {
		query += ` AND sender = ?`
	}
	return query
}
