package watch

import (
	"context"
	"testing"
	"time"

	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
)

// A person's retry in the console wakes a waiting watcher at once
// (ledger.Wake): on PostgreSQL by notification (the counter's poll is an
// hour away), on SQLite by the counter's cheap poll; the idle wait and the
// polling interval are an hour, so nothing else could start the pass.
func TestWakeEndsTheWait(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
		e := newEnv(t, s.Target())
		l, err := ledger.Open(context.Background(), ledger.Config{Path: target})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		e.ledger = l
		e.proc.sender = e.sender(e.smtp)
		poll := 50 * time.Millisecond
		if l.Shared() {
			poll = time.Hour
		}
		id := e.deliver(1, "jan@customer.example", "Gwarancja")
		key := keyOf(id, "jan@customer.example")
		w := e.watcher(func(c *Config) { c.Processor = &outage{next: e.proc, fails: 1}; c.WakePoll = poll })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
		waitFor(t, "the first pass fails the message", func() bool {
			es, err := l.ByMessageIDs(context.Background(), []string{id})
			return err == nil && len(es) == 1 && es[0].State == ledger.StateFailed && es[0].IMAPDone
		})
		time.Sleep(200 * time.Millisecond) // the watcher is waiting now
		if err := l.RequestRetry(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		if err := l.Wake(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the woken watcher retries and replies", func() bool { return e.repliesTo()[id] == 1 })
	})
}

// waitFor polls cond for up to 15 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
