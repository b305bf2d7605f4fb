package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"triage"
	"triage/internal/testkit/pgtest"
)

// Postpone keeps a processing entry, its attempts and the reason it waits;
// the next Begin counts on from there, and a final entry is never touched.
func TestPostpone(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		loc := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 7, UID: 3}
		e := Entry{Loc: loc, Key: "<a@x>|jan@example.com", MessageID: "<a@x>", Sender: "jan@example.com"}
		if _, err := l.Begin(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := l.Postpone(ctx, loc, triage.ReasonSendFailed, "send_email: 451 try later (temporary)"); err != nil {
			t.Fatal(err)
		}
		got, err := l.Get(ctx, loc)
		if err != nil || got.State != StateProcessing || got.Reason != triage.ReasonSendFailed || got.Detail != "send_email: 451 try later (temporary)" || got.Attempts != 1 {
			t.Fatalf("after Postpone: %+v, %v; want processing, send_failed, the detail, 1 attempt", got, err)
		}
		if n, err := l.Begin(ctx, e); err != nil || n != 2 {
			t.Errorf("Begin after Postpone = %d, %v; want attempt 2", n, err)
		}
		e.State, e.Reason, e.Attempts = StateFailed, triage.ReasonSendFailed, 2
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := l.Postpone(ctx, loc, triage.ReasonSendFailed, "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Postpone of a final entry: %v, want ErrNotFound", err)
		}
		if got, _ := l.Get(ctx, loc); got.State != StateFailed {
			t.Errorf("final entry changed: %+v", got)
		}
	})
}
