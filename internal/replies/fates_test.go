package replies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// The fate of each draft: set once, by a person's reply, a rejection or
// the draft window running out, and counted by the scenario and inbox the
// ledger attributed the draft to.
func TestDraftFates(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
		s := openAt(t, target, &now)
		inbox := triage.Inbox{Account: "acc", Mailbox: "INBOX"}
		other := triage.Inbox{Account: "acc", Mailbox: "Support"}
		put := func(key triage.Key, kind replies.Kind, in triage.Inbox) {
			t.Helper()
			r := replies.Reply{Key: key, MessageID: "<" + string(key) + "@us>", To: "jan@example.com", Raw: []byte("raw"),
				Kind: kind, Account: in.Account, Mailbox: in.Mailbox}
			if err := s.PutPending(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		put("k1", replies.KindDraft, inbox)
		put("k2", replies.KindDraft, inbox)
		put("k3", replies.KindDraft, inbox)
		put("k4", replies.KindDraft, other)
		put("r1", replies.KindReply, inbox)
		now = now.Add(time.Hour)
		put("k5", replies.KindDraft, inbox) // too recent to be discarded
		for _, k := range []triage.Key{"k1", "k2", "k3", "k5", "r1"} {
			if err := s.Attribute(ctx, k, "missing-info", inbox); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Attribute(ctx, "none", "missing-info", inbox); err != nil {
			t.Errorf("Attribute of a key without a reply: %v", err)
		}

		now = now.Add(time.Minute)
		if ok, err := s.SetDraftOutcome(ctx, "k1", replies.DraftSentAsIs, 0.97, "<person-1@us>"); err != nil || !ok {
			t.Fatalf("SetDraftOutcome(k1) = %v, %v; want true", ok, err)
		}
		if ok, err := s.SetDraftOutcome(ctx, "k1", replies.DraftEdited, 0.2, "<person-2@us>"); err != nil || ok {
			t.Errorf("second SetDraftOutcome(k1) = %v, %v; want false (the first counts)", ok, err)
		}
		if ok, err := s.SetDraftOutcome(ctx, "r1", replies.DraftEdited, 0.2, ""); err != nil || ok {
			t.Errorf("SetDraftOutcome of a reply = %v, %v; want false", ok, err)
		}
		if _, err := s.SetDraftOutcome(ctx, "k2", replies.DraftRejected, 0, ""); err == nil {
			t.Error("SetDraftOutcome(rejected): want an error (RejectDraft rejects)")
		}
		got, err := s.GetReply(ctx, "k1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Outcome != replies.DraftSentAsIs || got.Similarity != 0.97 || got.PersonMessageID != "<person-1@us>" || !got.ResolvedAt.Equal(now) {
			t.Errorf("k1 = %+v, want sent as is at %v", got, now)
		}

		now = now.Add(time.Minute)
		if err := s.RejectDraft(ctx, "k2"); err != nil {
			t.Fatal(err)
		}
		for _, k := range []triage.Key{"k2", "k1", "r1"} {
			if err := s.RejectDraft(ctx, k); !errors.Is(err, replies.ErrDraftTaken) {
				t.Errorf("RejectDraft(%s): err = %v, want ErrDraftTaken", k, err)
			}
		}
		if _, _, err := s.ClaimDraft(ctx, "k5"); err != nil {
			t.Fatal(err)
		}
		if err := s.RejectDraft(ctx, "k5"); !errors.Is(err, replies.ErrDraftTaken) {
			t.Errorf("RejectDraft of a draft being sent: err = %v, want ErrDraftTaken", err)
		}
		if err := s.UnclaimDraft(ctx, "k5", replies.DraftPending); err != nil {
			t.Fatal(err)
		}

		now = now.Add(time.Minute)
		n, err := s.DiscardStaleDrafts(ctx, inbox.Account, inbox.Mailbox, now.Add(-30*time.Minute))
		if err != nil || n != 1 {
			t.Errorf("DiscardStaleDrafts = %d, %v; want 1 (k3: not k5, too recent, nor k4, another inbox's)", n, err)
		}

		counts, err := s.DraftCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts := []replies.DraftCount{
			{Scenario: "", Inbox: other, Drafted: 1, Pending: 1},
			{Scenario: "missing-info", Inbox: inbox, Drafted: 4, SentAsIs: 1, Rejected: 1, Discarded: 1, Pending: 1},
		}
		if diff := cmp.Diff(wantCounts, counts); diff != "" {
			t.Errorf("DraftCounts (-want +got):\n%s", diff)
		}

		outcomes, err := s.DraftOutcomes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
		wantOutcomes := []replies.DraftOutcome{
			{Scenario: "missing-info", Outcome: replies.DraftSentAsIs, Similarity: 0.97, ResolvedAt: start.Add(time.Minute)},
			{Scenario: "missing-info", Outcome: replies.DraftRejected, ResolvedAt: start.Add(2 * time.Minute)},
			{Scenario: "missing-info", Outcome: replies.DraftDiscarded, ResolvedAt: start.Add(3 * time.Minute)},
		}
		if diff := cmp.Diff(wantOutcomes, outcomes); diff != "" {
			t.Errorf("DraftOutcomes (-want +got):\n%s", diff)
		}

		for _, c := range []struct {
			scenario string
			inbox    triage.Inbox
			n        int
			want     []string
		}{
			{"missing-info", inbox, 2, []string{replies.DraftDiscarded, replies.DraftRejected}},
			{"missing-info", inbox, 10, []string{replies.DraftDiscarded, replies.DraftRejected, replies.DraftSentAsIs}},
			{"missing-info", other, 10, nil},
			{"", other, 10, nil},
		} {
			got, err := s.LastOutcomes(ctx, c.scenario, c.inbox, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("LastOutcomes(%q, %v, %d) (-want +got):\n%s", c.scenario, c.inbox, c.n, diff)
			}
		}
	})
}

// Unanswered holds, inside another table's statement, for a key without a
// reply row of any kind or state, and for no other.
func TestUnanswered(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		l, err := ledger.Open(ctx, ledger.Config{Path: target})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		s := l.Replies()
		if err := s.PutPending(ctx, replies.Reply{Key: "sent", MessageID: "<r1@us>", To: "jan@example.com", Raw: []byte("raw")}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutPending(ctx, replies.Reply{Key: "note", MessageID: "<n1@us>", To: "staff@example.com", Raw: []byte("raw"), Kind: replies.KindNotice}); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[triage.Key]bool{"sent": false, "note": false, "none": true} {
			cond, args := replies.Unanswered(key)
			var n int
			if err := l.Store().QueryRowContext(ctx, `SELECT CASE WHEN `+cond+` THEN 1 ELSE 0 END`, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if got := n == 1; got != want {
				t.Errorf("Unanswered(%s) = %v, want %v", key, got, want)
			}
		}
	})
}
