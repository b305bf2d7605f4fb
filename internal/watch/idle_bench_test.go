package watch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"triage/internal/testkit/ledgertest"
	"triage/internal/testkit/mailtest"
	"triage/internal/trace"
)

// BenchmarkIdlePass measures a watch session that finds nothing new
// (connect, the pending-reply and draft checks, one pass with the Sent
// folder scan and the draft metrics, logout) against a ledger holding 300,
// 10,000 or 100,000 earlier messages, each with its reply (every tenth a
// draft). The mailbox holds 50 handled messages in every case. One
// untimed session first does what a daemon does once after it starts (the
// draft figures, discarding drafts past their window). The cost should not
// grow with the ledger (target: 100k within 1.5x of 300).
//
//	go test -run '^$' -bench IdlePass -benchtime 20x ./internal/watch
func BenchmarkIdlePass(b *testing.B) {
	sizes := []int{300, 10_000, 100_000}
	type world struct {
		e *env
		m *trace.Metrics
	}
	worlds := map[int]world{}
	for _, n := range sizes {
		s := mailtest.StartIMAP(b, mailtest.IMAPOptions{Mailboxes: []string{"Sent"}})
		e := newEnv(b, s.Target())
		for i := range 50 {
			raw := fmt.Sprintf("From: c%d@customer.example\r\nTo: support@example.com\r\nSubject: Gwarancja\r\nMessage-ID: <m%d@customer.example>\r\n\r\nSN-%04d\r\n", i, i, i)
			s.Append(b, "INBOX", []byte(raw), imap.Flag(DefaultKeyword))
		}
		c := s.Client(b)
		sel, err := c.Select("INBOX", nil).Wait()
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
		start := time.Now()
		ledgertest.Fill(b, e.ledger.Path(), ledgertest.History{Account: "bench@example.com", UIDValidity: sel.UIDValidity,
			Messages: n, DraftEvery: 10})
		b.Logf("ledger of %d messages written in %s", n, time.Since(start).Round(time.Millisecond))
		worlds[n] = world{e, trace.NewMetrics()}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("ledger=%d", n), func(b *testing.B) {
			wd := worlds[n]
			w, err := New(wd.e.config(func(c *Config) {
				c.Account = "bench@example.com"
				c.SentFolder = "Sent"
				c.Metrics = wd.m
				c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			}))
			if err != nil {
				b.Fatal(err)
			}
			// The daemon's first pass after start does the one-time work
			// (the draft figures, drafts past their window): not timed.
			if err := w.RunOnce(context.Background()); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := w.RunOnce(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			if calls := wd.e.proc.Calls(); calls != 0 {
				b.Fatalf("the pipeline ran %d times; the pass should find nothing new", calls)
			}
		})
	}
}
