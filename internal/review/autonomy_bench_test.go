package review

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"triage"
	"triage/internal/ledger"
)

// BenchmarkResolver measures what reply mode auto adds to each message of
// a scenario: the window query and the mode look-up (read), and with the
// sample count written (decide: the scenario sends, so every decision
// counts), on a SQLite ledger holding n resolved drafts over 10 scenarios
// and 2 inboxes. The window is one indexed query: its cost must not grow
// with the history.
func BenchmarkResolver(b *testing.B) {
	for _, n := range []int{300, 10000, 100000} {
		b.Run(fmt.Sprintf("drafts=%d", n), func(b *testing.B) {
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), "ledger.db")
			l, err := ledger.Open(ctx, ledger.Config{Path: path})
			if err != nil {
				b.Fatal(err)
			}
			l.Close()
			// The history is written in one transaction, as the ledger
			// would have written it over months.
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				b.Fatal(err)
			}
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				account := []string{"a@x", "b@x"}[i%2]
				key := fmt.Sprintf("k%d", i)
				scenario := fmt.Sprintf("scenario-%d", i%10)
				if _, err := tx.Exec(`INSERT INTO messages (account, mailbox, uidvalidity, uid, key, state, scenario, created, updated) VALUES (?, 'INBOX', 1, ?, ?, 'drafted', ?, ?, ?)`,
					account, i+1, key, scenario, i, i); err != nil {
					b.Fatal(err)
				}
				if _, err := tx.Exec(`INSERT INTO replies (key, message_id, recipient, raw, state, created, kind, outcome, resolved_at, scenario, account, mailbox)
					VALUES (?, ?, 'c@x', 'x', 'draft_stored', ?, 'draft', 'sent_as_is', ?, ?, ?, 'INBOX')`, key, "<"+key+">", i, i+1000, scenario, account); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			db.Close()
			if l, err = ledger.Open(ctx, ledger.Config{Path: path}); err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			inboxes := []triage.Inbox{{Account: "a@x", Mailbox: "INBOX"}, {Account: "b@x", Mailbox: "INBOX"}}
			// read: the decision alone (a dry run writes nothing); decide:
			// with the sample count written, as watch runs it.
			for _, dry := range []bool{true, false} {
				b.Run(map[bool]string{true: "read", false: "decide"}[dry], func(b *testing.B) {
					r, err := NewResolver(ResolverConfig{Store: Of(l), DryRun: dry})
					if err != nil {
						b.Fatal(err)
					}
					i := 0
					for b.Loop() {
						if m := r.ReplyMode(ctx, "scenario-3", inboxes[i%2]); m != triage.ReplySend && m != triage.ReplyDraft {
							b.Fatalf("mode %q", m)
						}
						i++
					}
				})
			}
		})
	}
}
