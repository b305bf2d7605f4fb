package review

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestAssess(t *testing.T) {
	th := DefaultThresholds
	tests := []struct {
		w     Window
		ready bool
		why   string
	}{
		{Window{Reviewed: 29, SentAsIs: 29}, false, "29 of 30 reviewed drafts needed"},
		{Window{Reviewed: 30, SentAsIs: 28, Edited: 2}, true, "28 of the last 30 sent as is (93%), none rejected"},
		{Window{Reviewed: 30, SentAsIs: 27, Edited: 3}, true, "27 of the last 30 sent as is (90%), none rejected"},
		{Window{Reviewed: 30, SentAsIs: 26, Edited: 3, Discarded: 1}, false, "26 of the last 30 sent as is (87%), below 90%"},
		{Window{Reviewed: 30, SentAsIs: 29, Rejected: 1}, false, "1 rejected among the last 30 reviewed drafts"},
	}
	for _, tt := range tests {
		got := th.Assess(tt.w)
		if got.Ready != tt.ready || got.Why != tt.why || got.Window != tt.w {
			t.Errorf("Assess(%+v) = %+v, want ready %v, %q", tt.w, got, tt.ready, tt.why)
		}
	}
	if err := (Thresholds{MinReviewed: 0, MinSentAsIs: 120, SampleEvery: -1}).Check(); err == nil ||
		fmt.Sprint(err) != "autonomy.min_reviewed must be at least 1, got 0\nautonomy.min_sent_as_is must be a percentage above 0 and at most 100, got 120\nautonomy.sample_every must not be negative, got -1" {
		t.Errorf("Check: %v", err)
	}
}

// world is a ledger on a store and a clock, with drafts written as watch
// and the console write them.
type world struct {
	l   *ledger.Ledger
	rs  *Store
	now time.Time
	uid uint32
}

func newWorld(t *testing.T, target string) *world {
	w := &world{now: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	l, err := ledger.Open(context.Background(), ledger.Config{Path: target, Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	w.l, w.rs = l, Of(l)
	return w
}

// reviewed records a handled message of scenario in inbox whose draft a
// person then sent as is, edited, or rejected in the console.
func (w *world) reviewed(t *testing.T, inbox triage.Inbox, scenario, outcome string) {
	t.Helper()
	ctx := context.Background()
	w.uid++
	w.now = w.now.Add(time.Minute)
	key := triage.Key(fmt.Sprintf("k%d", w.uid))
	loc := ledger.Loc{Account: inbox.Account, Mailbox: inbox.Mailbox, UIDValidity: 1, UID: w.uid}
	if _, err := w.l.Begin(ctx, ledger.Entry{Loc: loc, Key: key, Sender: "c@x"}); err != nil {
		t.Fatal(err)
	}
	if err := w.l.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: "<d" + string(key) + ">", To: "c@x", Raw: []byte("x"), Kind: replies.KindDraft}); err != nil {
		t.Fatal(err)
	}
	if err := w.l.Finish(ctx, loc, ledger.StateDrafted, "", scenario); err != nil {
		t.Fatal(err)
	}
	var err error
	if outcome == replies.DraftRejected {
		err = w.rs.RejectDraft(ctx, key)
	} else {
		_, err = w.rs.ResolveDraft(ctx, key, outcome, 1, "")
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A scenario drafts until 30 reviewed drafts, 93% of them sent as is, make
// it ready: then it sends (every 10th message still drafted, as a sample),
// and the switch is recorded with its figures. One rejection sends it back
// to drafting, recorded too. Another inbox earns its own.
func TestResolver(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		w := newWorld(t, target)
		r, err := NewResolver(ResolverConfig{Store: w.rs})
		if err != nil {
			t.Fatal(err)
		}
		in := triage.Inbox{Account: "support@example.com", Mailbox: "INBOX"}
		other := triage.Inbox{Account: "sales@example.com", Mailbox: "INBOX"}
		for i := range 29 {
			outcome := replies.DraftSentAsIs
			if i == 4 || i == 20 {
				outcome = replies.DraftEdited
			}
			w.reviewed(t, in, "missing-info", outcome)
			if m := r.ReplyMode(ctx, "missing-info", in); m != triage.ReplyDraft {
				t.Fatalf("after %d reviewed drafts: %s, want draft", i+1, m)
			}
		}
		w.reviewed(t, in, "missing-info", replies.DraftSentAsIs) // 30 reviewed, 28 as is: 93%
		var modes []triage.ReplyMode
		for range 12 {
			modes = append(modes, r.ReplyMode(ctx, "missing-info", in))
		}
		s, d := triage.ReplySend, triage.ReplyDraft
		if diff := cmp.Diff([]triage.ReplyMode{s, s, s, s, s, s, s, s, s, d, s, s}, modes); diff != "" {
			t.Errorf("modes of the next 12 messages (-want +got):\n%s", diff)
		}
		if m := r.ReplyMode(ctx, "missing-info", other); m != triage.ReplyDraft {
			t.Errorf("another inbox: %s, want draft (it has no reviews)", m)
		}
		if m := r.ReplyMode(ctx, "valid-warranty", in); m != triage.ReplyDraft {
			t.Errorf("another scenario: %s, want draft", m)
		}

		w.now = w.now.Add(time.Hour)
		w.reviewed(t, in, "missing-info", replies.DraftRejected) // the sample, rejected
		if m := r.ReplyMode(ctx, "missing-info", in); m != triage.ReplyDraft {
			t.Errorf("after a rejection: %s, want draft", m)
		}
		sw, err := w.rs.Switches(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []Switch{
			{Scenario: "missing-info", Inbox: in, Mode: d, Window: Window{Reviewed: 30, SentAsIs: 27, Edited: 2, Rejected: 1},
				MinReviewed: 30, MinSentAsIs: 90, Why: "1 rejected among the last 30 reviewed drafts"},
			{Scenario: "missing-info", Inbox: in, Mode: s, Window: Window{Reviewed: 30, SentAsIs: 28, Edited: 2},
				MinReviewed: 30, MinSentAsIs: 90, Why: "28 of the last 30 sent as is (93%), none rejected"},
		}
		if diff := cmp.Diff(want, sw, cmpopts.IgnoreFields(Switch{}, "At")); diff != "" {
			t.Errorf("recorded switches (-want +got):\n%s", diff)
		}
		if !sw[0].At.Equal(w.now) || !sw[1].At.Before(sw[0].At) {
			t.Errorf("switch times %v, %v", sw[0].At, sw[1].At)
		}

		// The standings show the same, per scenario and inbox.
		w.reviewed(t, other, "missing-info", replies.DraftSentAsIs)
		st, err := w.rs.Standings(ctx, r.cfg.Thresholds) // defaults applied
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range st {
			got = append(got, fmt.Sprintf("%s %s drafted=%d ready=%v mode=%q %s", s.Scenario, s.Inbox, s.Drafted, s.Readiness.Ready, s.Mode, s.Readiness.Why))
		}
		if diff := cmp.Diff([]string{
			`missing-info sales@example.com/INBOX drafted=1 ready=false mode="" 1 of 30 reviewed drafts needed`,
			`missing-info support@example.com/INBOX drafted=31 ready=false mode="draft" 1 rejected among the last 30 reviewed drafts`,
		}, got); diff != "" {
			t.Errorf("standings (-want +got):\n%s", diff)
		}
	})
}

// A dry run decides as a run would, and writes nothing: no switch, no
// count (so no sample).
func TestResolverDryRun(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, t.TempDir()+"/ledger.db")
	in := triage.Inbox{Account: "a", Mailbox: "INBOX"}
	for range 30 {
		w.reviewed(t, in, "missing-info", replies.DraftSentAsIs)
	}
	r, err := NewResolver(ResolverConfig{Store: w.rs, DryRun: true, Thresholds: Thresholds{MinReviewed: 30, MinSentAsIs: 90, SampleEvery: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if m := r.ReplyMode(ctx, "missing-info", in); m != triage.ReplySend {
			t.Fatalf("dry run: %s, want send", m)
		}
	}
	if sw, _ := w.rs.Switches(ctx, 0); len(sw) != 0 {
		t.Errorf("a dry run recorded %d switches", len(sw))
	}
	if _, err := w.rs.GetAutoMode(ctx, "missing-info", in); err != ErrNotFound {
		t.Errorf("a dry run recorded a mode: %v", err)
	}
}

// A ledger that cannot be read drafts: sending needs proof.
func TestResolverDraftsOnError(t *testing.T) {
	w := newWorld(t, t.TempDir()+"/ledger.db")
	in := triage.Inbox{Account: "a", Mailbox: "INBOX"}
	for range 30 {
		w.reviewed(t, in, "missing-info", replies.DraftSentAsIs)
	}
	r, err := NewResolver(ResolverConfig{Store: w.rs})
	if err != nil {
		t.Fatal(err)
	}
	w.l.Close()
	if m := r.ReplyMode(context.Background(), "missing-info", in); m != triage.ReplyDraft {
		t.Errorf("closed ledger: %s, want draft", m)
	}
	if _, err := NewResolver(ResolverConfig{Store: w.rs, Thresholds: Thresholds{MinSentAsIs: 150}}); err == nil {
		t.Error("NewResolver accepted min_sent_as_is 150")
	}
}
