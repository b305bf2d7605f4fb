package replies

import (
	"context"
	"fmt"
	"testing"
	"time"
	"triage/internal/clients/mail"
)

// TestOutboxHistory: an outbox remembers the replies in its directory, also
// those written by an earlier run; drafts are not replies that went out.
func TestOutboxHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	send := func(o *Outbox, id, to string, at time.Time, draft bool) {
		t.Helper()
		r := &mail.Reply{From: "serwis@example.com", To: to, Subject: "Re: x", Body: "x", MessageID: id, Date: at, Draft: draft}
		if _, err := o.Send(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	run1, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	send(run1, "<old@example.com>", "anna@example.pl", now.Add(-2*time.Hour), false)
	send(run1, "<a1@example.com>", "Anna <ANNA@example.pl>", now.Add(-30*time.Minute), false)

	run2, err := NewOutbox(dir) // a later `triage process` into the same outbox
	if err != nil {
		t.Fatal(err)
	}
	send(run2, "<a2@example.com>", "anna@example.pl", now.Add(-time.Minute), false)
	send(run2, "<draft@example.com>", "anna@example.pl", now, true)
	for _, o := range []*Outbox{run2} {
		for id, want := range map[string]bool{"<old@example.com>": true, "<a1@example.com>": true, "a2@example.com": true,
			"<draft@example.com>": false, "<other@example.com>": false, "<not an id>": false} {
			if got, err := o.SentReply(ctx, id); err != nil || got != want {
				t.Errorf("SentReply(%s) = %v, %v; want %v", id, got, err, want)
			}
		}
		if n, err := o.RepliesSince(ctx, "Anna@Example.PL", now.Add(-time.Hour)); err != nil || n != 2 {
			t.Errorf("RepliesSince(last hour) = %d, %v; want 2", n, err)
		}
		if n, _ := o.RepliesSince(ctx, "jan@example.pl", now.Add(-24*time.Hour)); n != 0 {
			t.Errorf("RepliesSince(jan) = %d, want 0", n)
		}
	}
	// run1 loads lazily too: its first lookup sees what run2 wrote.
	if ok, _ := run1.SentReply(ctx, "<a2@example.com>"); !ok {
		t.Error("an outbox does not see replies written by another run before its first lookup")
	}
}

// Two processes sharing one outbox, taking turns: each counts every reply
// once, its own and the other's, however their index lines interleave.
func TestOutboxSharedIndexCountsEachReplyOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a, b := twoRuns(t, dir)
	for i, o := range []*Outbox{a, a, b, a, b, b, a} {
		r := &mail.Reply{From: "serwis@example.com", To: "anna@example.pl", Subject: "Re: x", Body: "x",
			MessageID: fmt.Sprintf("<r%d@example.com>", i), Date: now.Add(time.Duration(i) * time.Minute)}
		if _, err := o.Send(ctx, r); err != nil {
			t.Fatal(err)
		}
		for name, o := range map[string]*Outbox{"a": a, "b": b} {
			if n, err := o.RepliesSince(ctx, "anna@example.pl", now); err != nil || n != i+1 {
				t.Fatalf("after send %d, outbox %s counts %d (%v); want %d", i, name, n, err, i+1)
			}
		}
	}
}
