package replies

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"triage/internal/clients/mail"

	"triage"
)

// triage process keeps the notice bounds in its outbox, as watch does in
// its ledger: staff notices are no replies (they never count against the
// per-sender limit, whichever address they go to), they are bounded per
// customer per hour and per hour overall, and the bounds hold across runs
// over the same outbox, index line or not.
func TestOutboxNoticeBounds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	lim := triage.NoticeLimits{PerCustomer: 2, PerHour: 8}
	open := func() *Outbox {
		o, err := NewOutbox(dir)
		if err != nil {
			t.Fatal(err)
		}
		o.SetNoticeLimits(lim)
		return o
	}
	n := 0
	notice := func(o *Outbox, customer string) error {
		n++
		_, err := o.Send(ctx, &mail.Reply{From: "serwis@example.com", To: "boss@example.com", Subject: "[triage escalation] x", Body: "x",
			MessageID: fmt.Sprintf("<n%d@example.com>", n), Date: now.Add(time.Duration(n) * time.Minute), Notice: true, InboundFrom: customer})
		return err
	}
	reason := func(err error) triage.Reason {
		var l triage.Limited
		if errors.As(err, &l) {
			return l.LimitReason()
		}
		return ""
	}
	o := open()
	for i := range 6 { // six customers: every notice reaches staff
		if err := notice(o, fmt.Sprintf("c%d@example.com", i)); err != nil {
			t.Fatalf("notice %d: %v", i, err)
		}
	}
	if err := notice(o, "flood@stranger.example"); err != nil {
		t.Fatal(err)
	}
	// A later run, and an index that lost its lines: the files say it.
	if err := os.Remove(filepath.Join(dir, IndexFile)); err != nil {
		t.Fatal(err)
	}
	o = open()
	if err := notice(o, "FLOOD@stranger.example"); err != nil {
		t.Fatal(err)
	}
	if got := reason(notice(o, "flood@stranger.example")); got != triage.ReasonNoticeLimit {
		t.Errorf("the flood's third notice: %q, want %s", got, triage.ReasonNoticeLimit)
	}
	if got := reason(notice(o, "late@example.com")); got != triage.ReasonNoticeGlobalLimit {
		t.Errorf("the ninth notice of the hour: %q, want %s", got, triage.ReasonNoticeGlobalLimit)
	}
	for _, a := range []string{"boss@example.com", "flood@stranger.example"} {
		if got, err := o.RepliesSince(ctx, a, now.Add(-time.Hour)); err != nil || got != 0 {
			t.Errorf("RepliesSince(%s) = %d, %v; want 0: notices are no replies", a, got, err)
		}
	}
	// Notices are triage's mail: a loop through one is seen.
	if ok, err := o.SentReply(ctx, "<n1@example.com>"); err != nil || !ok {
		t.Errorf("SentReply(notice) = %v, %v; want true", ok, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 8 {
		t.Errorf("%d files, want 8 (refused notices are not written)", len(files))
	}
	raw, ok, err := o.ReplyRaw(ctx, "<n1@example.com>")
	if err != nil || !ok || !strings.Contains(string(raw), mail.NoticeHeader+": c0@example.com") {
		t.Errorf("ReplyRaw = %v, %v:\n%s", ok, err, raw)
	}
	if _, ok, err := o.ReplyRaw(ctx, "<none@example.com>"); ok || err != nil {
		t.Errorf("ReplyRaw(unknown) = %v, %v", ok, err)
	}
}

// A staff notice names the customer it is about in InboundFrom, as a reply
// names the sender it answers, and still never meets the per-sender limit:
// a customer at their limit is escalated all the same, and the notice adds
// nothing to their count.
func TestOutboxNoticeNotPerSender(t *testing.T) {
	ctx := context.Background()
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o.SetPerSenderLimit(1, time.Hour)
	now := time.Now()
	if _, err := o.Send(ctx, &mail.Reply{From: "serwis@example.com", To: "jan@example.com", InboundFrom: "jan@example.com",
		Subject: "Re: x", Body: "x", MessageID: "<r1@example.com>", Date: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Send(ctx, &mail.Reply{From: "serwis@example.com", To: "boss@example.com", InboundFrom: "Jan <jan@example.com>",
		Subject: "[triage escalation] x", Body: "x", MessageID: "<n1@example.com>", Date: now, Notice: true}); err != nil {
		t.Fatalf("notice about a customer at the per-sender limit: %v; want it written", err)
	}
	if n, err := o.CountedSince(ctx, "jan@example.com", now.Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("CountedSince(jan) = %d, %v; want 1: the notice is no reply", n, err)
	}
}
