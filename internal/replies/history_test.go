package replies_test

import (
	"context"
	"testing"
	"time"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// TestSentReply: the ledger knows our replies by Message-ID (pending ones
// too: they may have gone out), for loop breaking.
func TestSentReply(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		if err := l.PutPending(ctx, replies.Reply{Key: "k1", MessageID: "<triage-1@example.com>", To: "anna@example.pl", Raw: []byte("r")}); err != nil {
			t.Fatal(err)
		}
		if err := l.PutPending(ctx, replies.Reply{Key: "k2", MessageID: "<triage-2@example.com>", To: "anna@example.pl", Raw: []byte("r")}); err != nil {
			t.Fatal(err)
		}
		if err := l.MarkSent(ctx, "k2"); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{"<triage-1@example.com>": true, "triage-2@example.com": true, "<other@example.com>": false, "": false} {
			if got, err := l.SentReply(ctx, id); err != nil || got != want {
				t.Errorf("SentReply(%q) = %v, %v; want %v", id, got, err, want)
			}
		}
	})
}
