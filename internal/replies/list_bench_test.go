package replies_test

import (
	"context"
	"fmt"
	"testing"

	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/ledgertest"
)

// filled opens ledgers of 300 and 100,000 messages, each with its reply
// (every tenth a draft), for the listing benchmarks.
func filled(b *testing.B) map[int]*ledger.Ledger {
	return map[int]*ledger.Ledger{300: ledgertest.Filled(b, 300), 100_000: ledgertest.Filled(b, 100_000)}
}

// BenchmarkRepliesPage lists the newest 50 replies (triage ledger
// --replies), then the page before them (--before), at 300 and 100,000
// replies: the cost should follow the page, not the history.
//
//	go test -run '^$' -bench RepliesPage -benchmem ./internal/replies
func BenchmarkRepliesPage(b *testing.B) {
	ls := filled(b)
	for _, n := range []int{300, 100_000} {
		for _, state := range []replies.ReplyState{"", replies.ReplySent} {
			b.Run(fmt.Sprintf("replies=%d/state=%s", n, state), func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					page, err := ls[n].Replies().RepliesPage(ctx, replies.ReplyFilter{State: state, Limit: 50})
					if err != nil || len(page) != 50 {
						b.Fatalf("page of %d, %v", len(page), err)
					}
					next, err := ls[n].Replies().RepliesPage(ctx, replies.ReplyFilter{State: state, Limit: 50, Before: page[len(page)-1].Created})
					if err != nil || len(next) == 0 {
						b.Fatalf("next page of %d, %v", len(next), err)
					}
				}
			})
		}
	}
}
