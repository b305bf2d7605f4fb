package review

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// draftIn records a handled message of scenario in inbox with a draft, as
// watch does (the draft during processing, the final state after), and
// returns its key.
func draftIn(t *testing.T, l *ledger.Ledger, inbox triage.Inbox, uid uint32, scenario string) triage.Key {
	t.Helper()
	ctx := context.Background()
	key := triage.Key(fmt.Sprintf("%s-%s-%d", scenario, inbox.Account, uid))
	loc := ledger.Loc{Account: inbox.Account, Mailbox: inbox.Mailbox, UIDValidity: 1, UID: uid}
	if _, err := l.Begin(ctx, ledger.Entry{Loc: loc, Key: key, Sender: "c@x"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: "<d-" + string(key) + ">", To: "c@x", Raw: []byte("x"), Kind: replies.KindDraft}); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(ctx, loc, ledger.StateDrafted, "", scenario); err != nil {
		t.Fatal(err)
	}
	return key
}

// A draft counts for the scenario and inbox its message was handled in; a
// console rejection is its own outcome, told apart from a draft nobody
// answered; the review window holds the last N fates, newest first.
func TestReviewWindow(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
		l, rs := openAt(t, target, &now)
		a := triage.Inbox{Account: "support@a.example", Mailbox: "INBOX"}
		b := triage.Inbox{Account: "support@b.example", Mailbox: "INBOX"}
		// Inbox a: 5 old drafts edited, then 30 sent as is but 2 edited.
		uid := uint32(0)
		resolve := func(inbox triage.Inbox, scenario, outcome string) {
			t.Helper()
			uid++
			key := draftIn(t, l, inbox, uid, scenario)
			now = now.Add(time.Minute)
			var err error
			switch outcome {
			case replies.DraftRejected:
				err = rs.RejectDraft(ctx, key)
			case "":
			default:
				_, err = rs.ResolveDraft(ctx, key, outcome, 1, "")
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			resolve(a, "missing-info", replies.DraftEdited)
		}
		for i := range 30 {
			resolve(a, "missing-info", map[bool]string{true: replies.DraftEdited, false: replies.DraftSentAsIs}[i == 3 || i == 17])
		}
		resolve(a, "missing-info", "") // pending: not reviewed
		resolve(b, "missing-info", replies.DraftRejected)
		resolve(b, "missing-info", replies.DraftSentAsIs)
		resolve(a, "valid-warranty", replies.DraftSentAsIs)
		// Stale: the pending one of inbox a is discarded, and stays apart
		// from the rejection.
		now = now.Add(8 * 24 * time.Hour)
		if n, err := rs.DiscardStaleDrafts(ctx, a.Account, a.Mailbox, now.Add(-7*24*time.Hour)); err != nil || n != 1 {
			t.Fatalf("DiscardStaleDrafts = %d, %v; want 1", n, err)
		}

		for _, tc := range []struct {
			scenario string
			inbox    triage.Inbox
			n        int
			want     Window
		}{
			{"missing-info", a, 30, Window{Reviewed: 30, SentAsIs: 27, Edited: 2, Discarded: 1}},
			{"missing-info", a, 100, Window{Reviewed: 36, SentAsIs: 28, Edited: 7, Discarded: 1}},
			{"missing-info", b, 30, Window{Reviewed: 2, SentAsIs: 1, Rejected: 1}},
			{"valid-warranty", a, 30, Window{Reviewed: 1, SentAsIs: 1}},
			{"valid-warranty", b, 30, Window{}},
		} {
			w, err := rs.ReviewWindow(ctx, tc.scenario, tc.inbox, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, w); diff != "" {
				t.Errorf("ReviewWindow(%s, %s, %d) (-want +got):\n%s", tc.scenario, tc.inbox, tc.n, diff)
			}
		}
		stats, err := rs.DraftStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []DraftStat{
			{Scenario: "missing-info", Inbox: a, Drafted: 36, SentAsIs: 28, Edited: 7, Discarded: 1},
			{Scenario: "missing-info", Inbox: b, Drafted: 2, SentAsIs: 1, Rejected: 1},
			{Scenario: "valid-warranty", Inbox: a, Drafted: 1, SentAsIs: 1},
		}
		if diff := cmp.Diff(want, stats); diff != "" {
			t.Errorf("DraftStats (-want +got):\n%s", diff)
		}
	})
}

// A switch is recorded once, whoever decides it first; sending counts the
// messages it decides from zero; the switches are listed newest first.
func TestSwitchAutoMode(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
		_, rs0 := openAt(t, target, &now)
		_, rs1 := openAt(t, target, &now)
		ls := []*Store{rs0, rs1} // two processes
		rs := ls[0]
		in := triage.Inbox{Account: "support@x", Mailbox: "INBOX"}
		if _, err := rs.GetAutoMode(ctx, "missing-info", in); err != ErrNotFound {
			t.Fatalf("GetAutoMode before any switch: %v, want ErrNotFound", err)
		}
		if n, err := rs.CountAutoSend(ctx, "missing-info", in); n != 0 || err != nil {
			t.Errorf("CountAutoSend while drafting = %d, %v; want 0", n, err)
		}
		toSend := Switch{Scenario: "missing-info", Inbox: in, Mode: triage.ReplySend,
			Window: Window{Reviewed: 30, SentAsIs: 28, Edited: 2}, MinReviewed: 30, MinSentAsIs: 90, Why: "ready"}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Go(func() {
				ok, err := ls[i%2].SwitchAutoMode(ctx, toSend)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if ok {
					won++
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d of 8 racing switches recorded, want 1", won)
		}
		for i := 1; i <= 3; i++ {
			if n, err := ls[i%2].CountAutoSend(ctx, "missing-info", in); n != i || err != nil {
				t.Errorf("CountAutoSend #%d = %d, %v", i, n, err)
			}
		}
		if n, _ := rs.CountAutoSend(ctx, "valid-warranty", in); n != 0 {
			t.Errorf("CountAutoSend of another scenario = %d, want 0", n)
		}
		now = now.Add(time.Hour)
		toDraft := toSend
		toDraft.Mode, toDraft.Window, toDraft.Why = triage.ReplyDraft, Window{Reviewed: 30, SentAsIs: 28, Edited: 1, Rejected: 1}, "a rejection"
		if ok, err := rs.SwitchAutoMode(ctx, toDraft); !ok || err != nil {
			t.Fatalf("switch back to draft: %v, %v", ok, err)
		}
		m, err := rs.GetAutoMode(ctx, "missing-info", in)
		if err != nil || m.Mode != triage.ReplyDraft || !m.Since.Equal(now) || m.Counted != 0 {
			t.Errorf("mode after the switch back = %+v, %v", m, err)
		}
		if ok, _ := rs.SwitchAutoMode(ctx, toDraft); ok {
			t.Error("a switch to the mode already in force was recorded")
		}
		if _, err := rs.SwitchAutoMode(ctx, Switch{Scenario: "x", Inbox: in, Mode: triage.ReplyAuto}); err == nil {
			t.Error("a switch to auto was accepted")
		}
		sw, err := rs.Switches(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		toSend.At, toDraft.At = now.Add(-time.Hour), now
		if diff := cmp.Diff([]Switch{toDraft, toSend}, sw); diff != "" {
			t.Errorf("Switches (-want +got):\n%s", diff)
		}
		modes, err := rs.AutoModes(ctx)
		if err != nil || len(modes) != 1 || modes[0] != m {
			t.Errorf("AutoModes = %+v, %v; want [%+v]", modes, err, m)
		}
	})
}
