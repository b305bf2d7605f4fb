package review_test

import (
	"context"
	"fmt"
	"testing"

	"triage/internal/ledger"
	"triage/internal/review"
	"triage/internal/testkit/ledgertest"
)

// filled opens ledgers of 300 and 100,000 messages, each with its reply
// (every tenth a draft), for the listing benchmarks.
func filled(b *testing.B) map[int]*ledger.Ledger {
	return map[int]*ledger.Ledger{300: ledgertest.Filled(b, 300), 100_000: ledgertest.Filled(b, 100_000)}
}

// BenchmarkDraftStats sums the drafts up per scenario and outcome
// (triage ledger stats, the watch metrics) at 300 and 100,000 replies, a
// tenth of them drafts.
//
//	go test -run '^$' -bench DraftStats -benchmem ./internal/review
func BenchmarkDraftStats(b *testing.B) {
	ls := filled(b)
	for _, n := range []int{300, 100_000} {
		b.Run(fmt.Sprintf("replies=%d", n), func(b *testing.B) {
			for b.Loop() {
				stats, err := review.Of(ls[n]).DraftStats(context.Background())
				if err != nil || len(stats) == 0 {
					b.Fatalf("stats %v, %v", stats, err)
				}
			}
		})
	}
}
