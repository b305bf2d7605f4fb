package ledger_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"triage/internal/ledger"
	"triage/internal/testkit/ledgertest"
)

// filled opens ledgers of 300 and 100,000 messages, each with its reply
// (every tenth a draft), for the listing benchmarks.
func filled(b *testing.B) map[int]*ledger.Ledger {
	out := map[int]*ledger.Ledger{}
	for _, n := range []int{300, 100_000} {
		path := filepath.Join(b.TempDir(), "ledger.db")
		l, err := ledger.Open(context.Background(), ledger.Config{Path: path})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		ledgertest.Fill(b, path, ledgertest.History{Account: "a", UIDValidity: 1, Messages: n, DraftEvery: 10})
		out[n] = l
	}
	return out
}

// BenchmarkRepliesPage lists the newest 50 replies (triage ledger
// --replies), then the page before them (--before), at 300 and 100,000
// replies: the cost should follow the page, not the history.
//
//	go test -run '^$' -bench 'RepliesPage|DraftStats' -benchmem ./internal/ledger
func BenchmarkRepliesPage(b *testing.B) {
	ls := filled(b)
	for _, n := range []int{300, 100_000} {
		for _, state := range []ledger.ReplyState{"", ledger.ReplySent} {
			b.Run(fmt.Sprintf("replies=%d/state=%s", n, state), func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					page, err := ls[n].RepliesPage(ctx, ledger.ReplyFilter{State: state, Limit: 50})
					if err != nil || len(page) != 50 {
						b.Fatalf("page of %d, %v", len(page), err)
					}
					next, err := ls[n].RepliesPage(ctx, ledger.ReplyFilter{State: state, Limit: 50, Before: page[len(page)-1].Created})
					if err != nil || len(next) == 0 {
						b.Fatalf("next page of %d, %v", len(next), err)
					}
				}
			})
		}
	}
}

// BenchmarkDraftStats sums the drafts up per scenario and outcome
// (triage ledger stats, the watch metrics) at 300 and 100,000 replies, a
// tenth of them drafts.
func BenchmarkDraftStats(b *testing.B) {
	ls := filled(b)
	for _, n := range []int{300, 100_000} {
		b.Run(fmt.Sprintf("replies=%d", n), func(b *testing.B) {
			for b.Loop() {
				stats, err := ls[n].DraftStats(context.Background())
				if err != nil || len(stats) == 0 {
					b.Fatalf("stats %v, %v", stats, err)
				}
			}
		})
	}
}
