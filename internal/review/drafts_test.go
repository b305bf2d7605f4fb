package review

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

// A draft lives in the replies table: one per key (no second draft, no reply
// after a draft), it counts against no limit, its outcome is resolved once,
// stale ones are discarded, and the stats count them per scenario.
func TestDrafts(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
		l, rs := openAt(t, target, &now)

		handled := func(uid uint32, key triage.Key, msgID, scenario string, state ledger.State) {
			t.Helper()
			e := ledger.Entry{Loc: ledger.Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}, Key: key, MessageID: msgID, Sender: "c@x", State: state, Scenario: scenario}
			if err := l.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		uid := uint32(0)
		draft := func(key triage.Key, id string) {
			t.Helper()
			if err := l.Replies().PutPendingWithin(ctx, replies.Reply{Key: key, MessageID: id, To: "c@x", InboundFrom: "c@x", Raw: []byte("x"), Kind: replies.KindDraft, Account: "a", Mailbox: "INBOX"}, replies.Limits{PerAddress: 10, PerHour: 1}); err != nil {
				t.Fatalf("draft %s: %v", key, err)
			}
			uid++
			handled(uid, key, "<in-"+string(key)+">", map[bool]string{true: "valid-warranty", false: "missing-info"}[key[0] == 'v'], ledger.StateDrafted)
		}
		draft("v1", "<d-v1>")
		draft("v2", "<d-v2>")
		draft("v3", "<d-v3>")
		draft("m1", "<d-m1>")

		r, err := l.Replies().GetReply(ctx, "v1")
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != replies.KindDraft || r.State != replies.DraftPending || r.Outcome != "" {
			t.Errorf("draft row = %+v, want kind draft, state draft_pending, no outcome", r)
		}
		if n, _ := l.Replies().RepliesSince(ctx, "c@x", now.Add(-time.Hour)); n != 0 {
			t.Errorf("RepliesSince counts %d drafts, want 0 (drafts go to nobody)", n)
		}
		if err := l.Replies().PutPending(ctx, replies.Reply{Key: "v1", MessageID: "<r-v1>", To: "c@x", Raw: []byte("x")}); !errors.Is(err, replies.ErrReplyExists) {
			t.Errorf("reply after a draft: err = %v, want ErrReplyExists", err)
		}
		if err := l.Replies().MarkDraftStored(ctx, "v1"); err != nil {
			t.Fatal(err)
		}
		if r, _ := l.Replies().GetReply(ctx, "v1"); r.State != replies.DraftStored || !r.Appended {
			t.Errorf("after MarkDraftStored: %+v", r)
		}

		// Thread lookups: by the inbound Message-ID, and by our draft's.
		for _, ids := range [][]string{{"<unknown>", "<in-v2>"}, {"<d-v2>"}} {
			th, err := rs.ThreadOf(ctx, ids, nil)
			if err != nil || th.Key != "v2" || th.MessageID != "<in-v2>" || th.Scenario != "valid-warranty" || th.Matched != ids[len(ids)-1] {
				t.Errorf("ThreadOf(%v) = %+v, %v", ids, th, err)
			}
		}
		if _, err := rs.ThreadOf(ctx, []string{"<nope>"}, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("ThreadOf(unknown): %v, want ErrNotFound", err)
		}

		now = now.Add(3 * 24 * time.Hour)
		if ok, err := rs.ResolveDraft(ctx, "v1", replies.DraftSentAsIs, 0.97, "<p1>"); !ok || err != nil {
			t.Fatalf("ResolveDraft v1: %v %v", ok, err)
		}
		if ok, _ := rs.ResolveDraft(ctx, "v1", replies.DraftEdited, 0.2, "<p2>"); ok {
			t.Error("a second resolution was recorded")
		}
		if ok, _ := rs.ResolveDraft(ctx, "v2", replies.DraftEdited, 0.5, "<p3>"); !ok {
			t.Error("v2 not resolved")
		}
		r, _ = l.Replies().GetReply(ctx, "v1")
		if r.Outcome != replies.DraftSentAsIs || r.Similarity != 0.97 || r.PersonMessageID != "<p1>" || !r.ResolvedAt.Equal(now) {
			t.Errorf("v1 = %+v", r)
		}

		// Seven days after the drafts, the two without a reply are
		// discarded; another inbox's draft waits for its own Sent folder.
		if err := l.Replies().PutPending(ctx, replies.Reply{Key: "o1", MessageID: "<d-o1>", To: "c@x", Raw: []byte("x"), Kind: replies.KindDraft, Account: "b", Mailbox: "INBOX"}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(4*24*time.Hour + time.Minute)
		if n, err := rs.DiscardStaleDrafts(ctx, "a", "INBOX", now.Add(-7*24*time.Hour)); n != 2 || err != nil {
			t.Fatalf("DiscardStaleDrafts = %d, %v; want 2", n, err)
		}
		if r, err := l.Replies().GetReply(ctx, "o1"); err != nil || r.Outcome != "" || r.Account != "b" {
			t.Errorf("another inbox's draft after DiscardStaleDrafts of inbox a: %+v, %v; want no outcome", r, err)
		}
		stats, err := rs.DraftStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []DraftStat{
			{Scenario: "", Inbox: triage.Inbox{Account: "b", Mailbox: "INBOX"}, Drafted: 1, Pending: 1},
			{Scenario: "missing-info", Inbox: triage.Inbox{Account: "a", Mailbox: "INBOX"}, Drafted: 1, Discarded: 1},
			{Scenario: "valid-warranty", Inbox: triage.Inbox{Account: "a", Mailbox: "INBOX"}, Drafted: 3, SentAsIs: 1, Edited: 1, Discarded: 1},
		}
		if diff := cmp.Diff(want, stats); diff != "" {
			t.Errorf("DraftStats (-want +got):\n%s", diff)
		}
	})
}

func TestSentScanState(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Now()
		_, rs := openAt(t, target, &now)
		if _, _, err := rs.SentScan(ctx, "a", "Sent"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("SentScan before any: %v", err)
		}
		for _, st := range [][2]uint32{{5, 10}, {5, 12}, {6, 1}} {
			if err := rs.SetSentScan(ctx, "a", "Sent", st[0], st[1]); err != nil {
				t.Fatal(err)
			}
			v, u, err := rs.SentScan(ctx, "a", "Sent")
			if err != nil || v != st[0] || u != st[1] {
				t.Errorf("SentScan = %d %d %v, want %v", v, u, err, st)
			}
		}
	})
}

// openAt opens the ledger at path on the clock *now, and the draft review
// on its store.
func openAt(t *testing.T, path string, now *time.Time) (*ledger.Ledger, *Store) {
	t.Helper()
	l, err := ledger.Open(context.Background(), ledger.Config{Path: path, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, Of(l)
}
