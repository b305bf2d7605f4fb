package replies_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/store"
	"triage/internal/testkit/ledgertest"
	"triage/internal/testkit/pgtest"
)

// TestLimitCountsUseTheirIndexes asks each backend how it runs the counts
// of the reply limits and the notice bounds over a store with a history
// (2,000 replies over 2,000 minutes): each must search an index bounded by
// its window or its address, never scan the table or every row of a kind
// (the replies_drafts index, led by kind, did). Run for every reply, a
// count that scanned made each new message cost as much as the history.
func TestLimitCountsUseTheirIndexes(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		db := withHistory(t, target)
		hourAgo := store.Millis(time.Now().Add(-time.Hour))
		dayAgo := store.Millis(time.Now().Add(-24 * time.Hour))
		addr := "c7@customer.example"
		// The indexes that bound a count by its window (kind and created, or
		// created alone, as PostgreSQL's figures may prefer), and those that
		// bound it by the address.
		byWindow := []string{"replies_kind_created", "replies_created"}
		byAddress := []string{"replies_recipient", "replies_sender"}
		for _, c := range []struct {
			name  string
			query string
			args  []any
			want  []string // the plan names one of these indexes
		}{
			{"replies in the last hour", replies.CountRepliesQuery(false, false), []any{hourAgo}, byWindow},
			{"a sender's replies and drafts", replies.CountRepliesQuery(true, true), []any{dayAgo, addr, addr}, byAddress},
			{"a sender's replies", replies.CountRepliesQuery(true, false), []any{hourAgo, addr, addr}, append(byAddress, byWindow...)},
			{"notices in the last hour", replies.CountNoticesQuery(false), []any{replies.KindNotice, hourAgo}, byWindow},
			{"a customer's notices", replies.CountNoticesQuery(true), []any{replies.KindNotice, hourAgo, addr}, append(byAddress, byWindow...)},
		} {
			plan := explain(t, db, c.query, c.args...)
			for _, bad := range []string{"Seq Scan", "SCAN replies", "replies_drafts", "replies_kind "} {
				if strings.Contains(plan, bad) {
					t.Errorf("%s: the plan has %q:\n%s", c.name, bad, plan)
				}
			}
			if !slices.ContainsFunc(c.want, func(index string) bool { return strings.Contains(plan, index+" ") }) {
				t.Errorf("%s: the plan uses none of %v:\n%s", c.name, c.want, plan)
			}
		}
	})
}

// TestPassQueriesUseTheirIndexes asks each backend how it runs what every
// watch pass asks of the drafts, and what a watcher's first pass asks of
// the inbox's messages, over a store with a history: the rejected drafts
// still in a Drafts folder, the drafts past their window, and the inbox's
// latest UIDVALIDITY must each read the index that holds what they return
// (a partial index, the drafts by outcome, the inbox's rows by time),
// never scan the table, every draft of the history, or sort the inbox's
// rows.
func TestPassQueriesUseTheirIndexes(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		db := withHistory(t, target)
		// Every draft of the history is past a window that ends now: an
		// index on the time alone would read every reply.
		now := store.Millis(time.Now())
		for _, c := range []struct {
			name, query string
			args        []any
			want        []string // the plan names one of these indexes
		}{
			{"rejected drafts in the Drafts folder", replies.RejectedInDraftsQuery, []any{"earlier@example.com", "INBOX", replies.MaxInState}, []string{"replies_rejected_drafts"}},
			{"drafts past their window", replies.DiscardStaleDraftsQuery, []any{replies.DraftDiscarded, now, now, "earlier@example.com", "INBOX"}, []string{"replies_pending_drafts", "replies_kind"}},
			{"the inbox's latest UIDVALIDITY", ledger.LastUIDValidityQuery, []any{"support@example.com", "INBOX"}, []string{"messages_inbox_updated"}},
		} {
			plan := explain(t, db, c.query, c.args...)
			for _, bad := range []string{"Seq Scan", "SCAN replies", "SCAN messages", "TEMP B-TREE", "Sort", "replies_kind_created", "replies_drafts "} {
				if strings.Contains(plan, bad) {
					t.Errorf("%s: the plan has %q:\n%s", c.name, bad, plan)
				}
			}
			if !slices.ContainsFunc(c.want, func(index string) bool { return strings.Contains(plan, index+" ") }) {
				t.Errorf("%s: the plan uses none of %v:\n%s", c.name, c.want, plan)
			}
		}
	})
}

// withHistory is the store at target, a ledger holding a history of 2,000
// earlier messages over 2,000 minutes, each answered (every tenth by a
// draft), with PostgreSQL's planner figures for its tables and indexes
// as autovacuum keeps them; it is closed when t ends.
func withHistory(t *testing.T, target string) *store.DB {
	t.Helper()
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: target})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	ledgertest.Fill(t, target, ledgertest.History{Account: "earlier@example.com", UIDValidity: 1, Messages: 2000, DraftEvery: 10})
	db, err := store.Open(ctx, target, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if db.Dialect() == store.Postgres {
		for _, table := range []string{"replies", "messages"} {
			if _, err := db.ExecContext(ctx, `VACUUM ANALYZE `+table); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db
}

// explain is the backend's plan of query, one step a line.
func explain(t *testing.T, db *store.DB, query string, args ...any) string {
	t.Helper()
	prefix := "EXPLAIN QUERY PLAN "
	if db.Dialect() == store.Postgres {
		prefix = "EXPLAIN "
	}
	rows, err := db.QueryContext(context.Background(), prefix+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		// The step's text is the last column on both (SQLite's detail,
		// PostgreSQL's QUERY PLAN).
		switch v := vals[len(vals)-1].(type) {
		case string:
			lines = append(lines, v)
		case []byte:
			lines = append(lines, string(v))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
