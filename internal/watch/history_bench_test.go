package watch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"syscall"
	"testing"
	"time"

	"triage/internal/testkit/ledgertest"
	"triage/internal/testkit/mailtest"
)

// BenchmarkPassPerMessageHistory measures what one new message costs the
// watcher (fetch, claim, the reply limits, the reply recorded and sent
// through the ledger, flag) when the ledger already holds 0 or 100,000
// earlier messages with their replies (every tenth a draft), the hourly
// and per-sender limits on. The history should not show in the figure
// (target: 100k within 1.5x of 0). It reports the process's CPU time per
// message (cpu-ms/msg) beside the wall time. What a daemon does once after
// it starts runs first, untimed, as BenchmarkIdlePass does.
//
//	go test -run '^$' -bench PassPerMessageHistory -benchtime 200x ./internal/watch
func BenchmarkPassPerMessageHistory(b *testing.B) {
	for _, n := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			s := mailtest.StartIMAP(b, mailtest.IMAPOptions{})
			e := newEnv(b, s.Target())
			if n > 0 {
				ledgertest.Fill(b, e.ledger.Path(), ledgertest.History{Account: "earlier@example.com", UIDValidity: 1,
					Messages: n, DraftEvery: 10})
			}
			e.limit(Limits{PerSenderLimit: 1 << 30, GlobalPerHour: 1 << 30})
			w, err := New(e.config(func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			}))
			if err != nil {
				b.Fatal(err)
			}
			// The daemon's first pass after start does the one-time work
			// (the draft figures, the drafts past their window, the inbox's
			// last UIDVALIDITY): before the messages come, not timed.
			if err := w.RunOnce(context.Background()); err != nil {
				b.Fatal(err)
			}
			for i := range b.N {
				e.deliver(i, fmt.Sprintf("c%d@customer.example", i), "Gwarancja")
			}
			// The history's fill leaves garbage behind: collected here, so
			// that the collector's work on it is not charged to the pass.
			runtime.GC()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			if err := w.RunOnce(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/msg")
			if got := len(e.sink.Messages()); got != b.N {
				b.Fatalf("sent %d replies, want %d", got, b.N)
			}
		})
	}
}

// cpuTime is the user and system time this process has used.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
