package review

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// TestClaimDraftOnce: of many people approving one draft at once, exactly
// one gets it; a rejected or sent draft cannot be claimed.
func TestClaimDraftOnce(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l, rs := openAt(t, target, &now)
		for _, k := range []triage.Key{"k1", "k2"} {
			if err := l.Replies().PutPending(ctx, replies.Reply{Key: k, MessageID: "<" + string(k) + "@x>", To: "jan@x", Raw: []byte("raw"), Kind: replies.KindDraft}); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, taken := 0, 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, was, err := l.Replies().ClaimDraft(ctx, "k1")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && was == replies.DraftPending:
					won++
				case errors.Is(err, replies.ErrDraftTaken):
					taken++
				default:
					t.Errorf("ClaimDraft: %q, %v", was, err)
				}
			}()
		}
		wg.Wait()
		if won != 1 || taken != 7 {
			t.Fatalf("claims won %d, refused %d; want 1 and 7", won, taken)
		}
		if err := l.Replies().DraftSent(ctx, "k1", replies.DraftEdited, 0.5, []byte("sent")); err != nil {
			t.Fatal(err)
		}
		r, _ := l.Replies().GetReply(ctx, "k1")
		if diff := cmp.Diff([]any{replies.DraftSentByPerson, replies.DraftEdited, 0.5, "sent"}, []any{r.State, r.Outcome, r.Similarity, string(r.Raw)}); diff != "" {
			t.Errorf("sent draft (-want +got):\n%s", diff)
		}
		if err := l.Replies().SettleSentDraft(ctx, "k1"); err != nil {
			t.Fatal(err)
		}
		if r, _ := l.Replies().GetReply(ctx, "k1"); r.State != replies.ReplySent {
			t.Errorf("settled draft state %q, want %q", r.State, replies.ReplySent)
		}
		if err := rs.RejectDraft(ctx, "k1"); !errors.Is(err, replies.ErrDraftTaken) {
			t.Errorf("RejectDraft(sent) err = %v, want ErrDraftTaken", err)
		}
		// A claim given back (the send certainly failed) can be claimed again.
		if _, was, err := l.Replies().ClaimDraft(ctx, "k2"); err != nil || l.Replies().UnclaimDraft(ctx, "k2", was) != nil {
			t.Fatalf("claim and unclaim k2: %v", err)
		}
		if err := rs.RejectDraft(ctx, "k2"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.Replies().ClaimDraft(ctx, "k2"); !errors.Is(err, replies.ErrDraftTaken) {
			t.Errorf("ClaimDraft(rejected) err = %v, want ErrDraftTaken", err)
		}
		if _, _, err := l.Replies().ClaimDraft(ctx, "nope"); !errors.Is(err, replies.ErrNotFound) {
			t.Errorf("ClaimDraft(unknown) err = %v, want ErrNotFound", err)
		}
	})
}
