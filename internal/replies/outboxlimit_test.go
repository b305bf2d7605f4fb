package replies

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"triage/internal/clients/mail"
)

// Under a per-sender limit, Send refuses the reply or draft that would pass
// it, counting against the recipient and the sender of the message
// answered; drafts count for the limit but are not replies that went out;
// a reply already written is reported again, never refused.
func TestOutboxPerSenderLimit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	o, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	o.SetPerSenderLimit(3, time.Hour)
	send := func(o *Outbox, id, to, from string, at time.Time, draft bool) error {
		_, err := o.Send(ctx, &mail.Reply{From: "serwis@example.com", To: to, InboundFrom: from, Subject: "Re: x", Body: "x",
			MessageID: id, Date: at, Draft: draft})
		return err
	}
	steps := []struct {
		id, to, from string
		at           time.Time
		draft        bool
		refused      bool
	}{
		{"<old@x>", "anna@example.pl", "anna@example.pl", now.Add(-2 * time.Hour), false, false}, // outside the window
		{"<r1@x>", "anna@example.pl", "anna@example.pl", now, false, false},
		{"<d1@x>", "anna@example.pl", "anna@example.pl", now, true, false},
		// A Reply-To elsewhere: counts against the From too.
		{"<r2@x>", "elsewhere@example.pl", "Anna <ANNA@example.pl>", now, false, false},
		{"<r3@x>", "anna@example.pl", "anna@example.pl", now, false, true},
		{"<r4@x>", "other@example.pl", "anna@example.pl", now, false, true},
		{"<d2@x>", "anna@example.pl", "anna@example.pl", now, true, true},
		// The same reply again (a second run over the inbox): reported.
		{"<r1@x>", "anna@example.pl", "anna@example.pl", now, false, false},
		// Notices to staff answer no message: never refused.
		{"<n1@x>", "anna@example.pl", "", now, false, false},
		{"<n2@x>", "anna@example.pl", "", now, false, false},
		{"<r5@x>", "jan@example.pl", "jan@example.pl", now, false, false},
	}
	for _, s := range steps {
		err := send(o, s.id, s.to, s.from, s.at, s.draft)
		var le *LimitError
		if got := errors.As(err, &le); got != s.refused || (!s.refused && err != nil) {
			t.Errorf("%s: %v; refused %v, want %v", s.id, err, got, s.refused)
		}
		if le != nil && (le.Address != "anna@example.pl" || le.Count != 3 || le.Limit != 3) {
			t.Errorf("%s: %+v", s.id, le)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "20261122T100000Z-r3@x.eml")); !os.IsNotExist(err) {
		t.Errorf("a refused reply was written: %v", err)
	}
	// A later run sees the drafts in the index: they count for the limit,
	// not as
	o2, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := o2.RepliesSince(ctx, "anna@example.pl", now.Add(-time.Hour)); err != nil || n != 4 {
		t.Errorf("RepliesSince = %d, %v; want 4 (r1, r2, n1, n2)", n, err)
	}
	if n, err := o2.CountedSince(ctx, "anna@example.pl", now.Add(-time.Hour)); err != nil || n != 5 {
		t.Errorf("CountedSince = %d, %v; want 5 (r1, d1, r2, n1, n2)", n, err)
	}
	if ok, _ := o2.SentReply(ctx, "<d1@x>"); ok {
		t.Error("a draft is a sent reply")
	}
	// An outbox without its index (files written by another program) is
	// read from the files: drafts included.
	if err := os.Remove(filepath.Join(dir, IndexFile)); err != nil {
		t.Fatal(err)
	}
	o3, _ := NewOutbox(dir)
	if n, err := o3.CountedSince(ctx, "anna@example.pl", now.Add(-time.Hour)); err != nil || n != 4 {
		t.Errorf("without the index: CountedSince = %d, %v; want 4 (r1, d1, n1, n2 are to anna; r2's sender is not in its file)", n, err)
	}
}

// However many replies race for it, the limit is exact.
func TestOutboxPerSenderLimitConcurrent(t *testing.T) {
	for _, draft := range []bool{false, true} {
		o, err := NewOutbox(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		o.SetPerSenderLimit(5, 0)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, refused := 0, 0
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := o.Send(context.Background(), &mail.Reply{From: "serwis@example.com", To: "anna@example.pl", InboundFrom: "anna@example.pl",
					Subject: "Re: x", Body: "x", MessageID: fmt.Sprintf("<c%d@x>", i), Draft: draft})
				var le *LimitError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case errors.As(err, &le):
					refused++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if ok != 5 || refused != 7 {
			t.Errorf("draft %v: %d written, %d refused; want 5 and 7", draft, ok, refused)
		}
	}
}
