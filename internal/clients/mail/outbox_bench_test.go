package mail

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fillOutbox writes n earlier replies into dir the way Send names them.
func fillOutbox(b *testing.B, dir string, n int) {
	b.Helper()
	stamp := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("<old-%d@example.com>", i)
		raw, err := Render(&Reply{From: "support@example.com", To: fmt.Sprintf("c%d@example.org", i%500), Subject: "Re: x",
			Body: "b", MessageID: id, Date: stamp})
		if err != nil {
			b.Fatal(err)
		}
		name := stamp.Format("20060102T150405Z") + "-" + sanitize(id) + ".eml"
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOutboxSend is one email's work on the outbox (the reply-loop
// checks, then the send) with 0, 10k and 100k earlier replies in the
// directory: it must stay flat as history grows.
func BenchmarkOutboxSend(b *testing.B) {
	for _, n := range []int{0, 10_000, 100_000} {
		b.Run(fmt.Sprintf("prior=%d", n), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			fillOutbox(b, dir, n)
			o, err := NewOutbox(dir)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := o.RepliesSince(ctx, "warm@example.org", time.Time{}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				to := fmt.Sprintf("new%d@example.org", i)
				if _, err := o.SentReply(ctx, fmt.Sprintf("<in-%d@example.org>", i)); err != nil {
					b.Fatal(err)
				}
				if _, err := o.RepliesSince(ctx, to, time.Now().Add(-time.Hour)); err != nil {
					b.Fatal(err)
				}
				if _, err := o.Send(ctx, &Reply{From: "support@example.com", To: to, Subject: "Re: x", Body: "b",
					MessageID: fmt.Sprintf("<new-%d@example.com>", i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOutboxFirstFollowup is the first reply-history lookup of a run
// over an outbox that earlier runs filled.
func BenchmarkOutboxFirstFollowup(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("prior=%d", n), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			fillOutbox(b, dir, n)
			prev, err := NewOutbox(dir) // an earlier run
			if err != nil {
				b.Fatal(err)
			}
			if _, err := prev.RepliesSince(ctx, "c1@example.org", time.Time{}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				o, err := NewOutbox(dir)
				if err != nil {
					b.Fatal(err)
				}
				if got, err := o.RepliesSince(ctx, "c1@example.org", time.Time{}); err != nil || got != n/500 {
					b.Fatalf("RepliesSince = %d, %v; want %d", got, err, n/500)
				}
			}
		})
	}
}
