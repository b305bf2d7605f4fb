package replies_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"triage/internal/atomicfile"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/store"
)

// fillOutbox writes n earlier replies into dir the way Send names them.
func fillOutbox(b *testing.B, dir string, n int) {
	b.Helper()
	stamp := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("<old-%d@example.com>", i)
		raw, err := mail.Render(&mail.Reply{From: "support@example.com", To: fmt.Sprintf("c%d@example.org", i%500), Subject: "Re: x",
			Body: "b", MessageID: id, Date: stamp})
		if err != nil {
			b.Fatal(err)
		}
		name := stamp.Format("20060102T150405Z") + "-" + mail.FileID(id) + ".eml"
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// The fixture's writes reach the disk now, not during the timed sends
	// (whose fsync would otherwise wait for them).
	syscall.Sync()
}

// storeIndex opens a SQLite store whose outbox index lists the n replies
// fillOutbox wrote (triage process --store keeps it in PostgreSQL; the
// queries are the same).
func storeIndex(b *testing.B, dir string, n int) *replies.Store {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "store.db")
	l, err := ledger.Open(ctx, ledger.Config{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	db, err := store.Open(ctx, path, store.Options{Synchronous: "OFF"})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	stamp := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("old-%d@example.com", i)
		name := stamp.Format("20060102T150405Z") + "-" + mail.FileID(id) + ".eml"
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_index (message_id, kind, path, recipient, created) VALUES (?, 'reply', ?, ?, ?)`,
			id, filepath.Join(dir, name), fmt.Sprintf("c%d@example.org", i%500), stamp.UnixMilli()); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return l.Replies()
}

// BenchmarkOutboxSend is one email's work on the outbox (the reply-loop
// checks, then the send) with 0, 10k and 100k earlier replies in the
// directory, the index in the directory (IndexFile) or in the store
// (triage process --store): it must stay flat as history grows.
func BenchmarkOutboxSend(b *testing.B) {
	for _, idx := range []string{"file", "store"} {
		for _, n := range []int{0, 10_000, 100_000} {
			b.Run(fmt.Sprintf("index=%s/prior=%d", idx, n), func(b *testing.B) {
				ctx := context.Background()
				dir := b.TempDir()
				fillOutbox(b, dir, n)
				o, err := replies.NewOutbox(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer o.Close()
				if idx == "store" {
					if err := o.UseIndex(ctx, storeIndex(b, dir, n)); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := o.RepliesSince(ctx, "warm@example.org", time.Time{}); err != nil {
					b.Fatal(err)
				}
				runtime.GC() // the fixture's garbage is not the sends' cost
				cpu0 := cpuTime(b)
				b.ResetTimer()
				defer func() {
					b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
				}()
				for i := range b.N {
					to := fmt.Sprintf("new%d@example.org", i)
					if _, err := o.SentReply(ctx, fmt.Sprintf("<in-%d@example.org>", i)); err != nil {
						b.Fatal(err)
					}
					if _, err := o.RepliesSince(ctx, to, time.Now().Add(-time.Hour)); err != nil {
						b.Fatal(err)
					}
					if _, err := o.Send(ctx, &mail.Reply{From: "support@example.com", To: to, Subject: "Re: x", Body: "b",
						MessageID: fmt.Sprintf("<new-%d@example.com>", i)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
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
			prev, err := replies.NewOutbox(dir) // an earlier run
			if err != nil {
				b.Fatal(err)
			}
			if _, err := prev.RepliesSince(ctx, "c1@example.org", time.Time{}); err != nil {
				b.Fatal(err)
			}
			prev.Close()
			b.ResetTimer()
			for range b.N {
				o, err := replies.NewOutbox(dir)
				if err != nil {
					b.Fatal(err)
				}
				if got, err := o.RepliesSince(ctx, "c1@example.org", time.Time{}); err != nil || got != n/500 {
					b.Fatalf("RepliesSince = %d, %v; want %d", got, err, n/500)
				}
				o.Close()
			}
		})
	}
}

// cpuTime is the CPU time (user and system) this process has used: the
// outbox's cost without the disk's fsync latency, which varies with
// whatever else the machine writes.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplyFileFloor is what the file system alone charges for one
// reply file written as Send writes it (atomicfile: a temporary file, its
// bytes, its fsync, the rename, the directory's fsync): the floor under BenchmarkOutboxSend's figure, which
// on a virtual disk is most of it.
func BenchmarkReplyFileFloor(b *testing.B) {
	dir := b.TempDir()
	raw, err := mail.Render(&mail.Reply{From: "support@example.com", To: "c@example.org", Subject: "Re: x", Body: "b", MessageID: "<floor@example.com>"})
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime(b)
	b.ResetTimer()
	defer func() {
		b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	}()
	for i := range b.N {
		if err := atomicfile.Write(filepath.Join(dir, fmt.Sprintf("%06d.eml", i)), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
