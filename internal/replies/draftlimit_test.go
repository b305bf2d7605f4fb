package replies_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
	"triage/internal/replies"

	"triage"
)

// Draft mode is bounded per sender too: one sender's drafts count against
// the per-address limit (each cost a model run and a ticket), so at a limit
// of 5 a sender's 6th message is over it before the model runs. They do
// not count against the hourly cap on mail sent.
func TestDraftsCountPerSender(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	l := openAt(t, filepath.Join(t.TempDir(), "ledger.db"), &now)
	lim := replies.Limits{PerAddress: 5, PerHour: 1}
	for i := range 5 {
		r := replies.Reply{Key: triage.Key(fmt.Sprint("k", i)), MessageID: fmt.Sprintf("<d%d@x>", i), To: "anna@x", InboundFrom: "anna@x", Raw: []byte("x"), Kind: replies.KindDraft}
		if err := l.PutPendingWithin(ctx, r, lim); err != nil {
			t.Fatalf("draft %d: %v", i, err)
		}
	}
	le, err := l.Exceeded(ctx, lim, "anna@x", "anna@x", now)
	if err != nil || le == nil || le.Reason != triage.ReasonPerSenderLimit {
		t.Fatalf("after 5 drafts: Exceeded = %v, %v; want %s", le, err, triage.ReasonPerSenderLimit)
	}
	var lerr *replies.LimitError
	err = l.PutPendingWithin(ctx, replies.Reply{Key: triage.Key("k5"), MessageID: "<d5@x>", To: "anna@x", InboundFrom: "anna@x", Raw: []byte("x"), Kind: replies.KindDraft}, lim)
	if !errors.As(err, &lerr) || lerr.Reason != triage.ReasonPerSenderLimit {
		t.Errorf("6th draft: err = %v, want %s", err, triage.ReasonPerSenderLimit)
	}
	// Another sender is not bounded by anna's drafts, nor by the hourly
	// cap on sent mail (drafts sent nothing).
	if le, err := l.Exceeded(ctx, lim, "jan@x", "jan@x", now); err != nil || le != nil {
		t.Errorf("another sender: Exceeded = %v, %v; want nil", le, err)
	}
}
