package watch

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"triage/internal/testkit/mailtest"
)

// BenchmarkPassPerMessage measures the watcher's own cost per message (IMAP
// header and body fetch, flag, ledger writes, SMTP submission through the
// ledger sender) with the fake pipeline against the in-memory server.
func BenchmarkPassPerMessage(b *testing.B) {
	s := mailtest.StartIMAP(b, mailtest.IMAPOptions{})
	e := newEnv(b, s.Target())
	for i := range b.N {
		e.deliver(i, "klient@customer.example", "Gwarancja")
	}
	e.limit(Limits{PerSenderLimit: -1, GlobalPerHour: -1})
	w, err := New(e.config(func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := w.RunOnce(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got := len(e.sink.Messages()); got != b.N {
		b.Fatalf("sent %d replies, want %d", got, b.N)
	}
}
