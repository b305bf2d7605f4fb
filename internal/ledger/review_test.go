package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

func TestOutcomeKeptAndBounded(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: 1}
		key := triage.Key("msgid:<a@x>|jan@example.com")
		if _, err := l.Begin(ctx, Entry{Loc: loc, Key: key, MessageID: "<a@x>", Sender: "jan@example.com"}); err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("ż", MaxBodyBytes) // 2 bytes a rune: cut in the middle of none
		if err := l.SetOutcome(ctx, loc, []byte(`{"status":"replied"}`), long, Usage{}); err != nil {
			t.Fatal(err)
		}
		if err := l.Finish(ctx, loc, StateReplied, "", "s"); err != nil {
			t.Fatal(err)
		}
		es, err := l.ByRef(ctx, key.Ref())
		if err != nil || len(es) != 1 {
			t.Fatalf("ByRef = %v, %v", es, err)
		}
		if string(es[0].Outcome) != `{"status":"replied"}` || len(es[0].Body) != MaxBodyBytes || !strings.HasSuffix(es[0].Body, "ż") {
			t.Errorf("kept outcome %q, body %d bytes", es[0].Outcome, len(es[0].Body))
		}
		if err := l.SetOutcome(ctx, loc, make([]byte, MaxOutcomeBytes+1), "", Usage{}); err != nil {
			t.Fatal(err)
		}
		if es, _ := l.ByRef(ctx, key.Ref()); es[0].Outcome != nil {
			t.Errorf("an outcome over MaxOutcomeBytes was kept (%d bytes)", len(es[0].Outcome))
		}
		if _, err := l.ByRef(ctx, triage.Key("other").Ref()); !errors.Is(err, ErrNotFound) {
			t.Errorf("ByRef(unknown) err = %v, want ErrNotFound", err)
		}
		if strings.Contains(key.Ref(), "jan") || len(key.Ref()) != 20 {
			t.Errorf("Ref %q", key.Ref())
		}
	})
}

func TestSearch(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		add := func(uid uint32, sender, subject string, state State, reason triage.Reason, outcome string) {
			loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}
			if _, err := l.Begin(ctx, Entry{Loc: loc, Key: triage.Key(sender + subject), MessageID: "<m@x>", Sender: sender, Subject: subject}); err != nil {
				t.Fatal(err)
			}
			if outcome != "" {
				if err := l.SetOutcome(ctx, loc, []byte(outcome), "", Usage{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Finish(ctx, loc, state, reason, "sc"); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Minute)
		}
		add(1, "jan@example.com", "100% broken", StateFailed, "email_not_sent", "")
		add(2, "ola@example.com", "Kettle_1", StateReplied, "", `{"escalated":true}`)
		add(3, "ewa@example.com", "Kettle", StateReplied, "", `{"escalated":false}`)
		tests := []struct {
			name string
			q    Query
			want []uint32
		}{
			{"all, newest first", Query{}, []uint32{3, 2, 1}},
			{"percent is literal", Query{Text: "100%"}, []uint32{1}},
			{"underscore is literal", Query{Text: "kettle_"}, []uint32{2}},
			{"case-insensitive sender", Query{Text: "OLA@"}, []uint32{2}},
			{"state or escalated", Query{States: []State{StateFailed}, Escalated: true}, []uint32{2, 1}},
			{"reason", Query{Reason: "email_not_sent"}, []uint32{1}},
			{"before", Query{Before: time.Date(2026, 1, 2, 3, 5, 30, 0, time.UTC)}, []uint32{2, 1}},
			{"limit", Query{Limit: 1}, []uint32{3}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				es, err := l.Search(ctx, tt.q)
				if err != nil {
					t.Fatal(err)
				}
				var got []uint32
				for _, e := range es {
					got = append(got, e.UID)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestUpgradeAddsReviewColumns: a ledger written before the outcome and
// body columns keeps its rows and gains them empty.
func TestUpgradeAddsReviewColumns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, sqliteSchema+`INSERT INTO messages (account, mailbox, uidvalidity, uid, key, state, created, updated)
		VALUES ('a', 'INBOX', 1, 1, 'k', 'failed', 1000, 1000);`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	now := time.UnixMilli(2000)
	l := openAt(t, path, &now)
	es, err := l.ByRef(ctx, triage.Key("k").Ref())
	if err != nil || len(es) != 1 || es[0].Outcome != nil || es[0].Body != "" || es[0].State != StateFailed {
		t.Fatalf("old entry = %+v, %v", es, err)
	}
}

// TestRetryRequest: only a settled failure with a Message-ID and no reply,
// for a reason a retry may cure, can be retried; the request is listed
// until it ends.
func TestRetryRequest(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		add := func(uid uint32, key triage.Key, done bool) Loc {
			loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}
			if _, err := l.Begin(ctx, Entry{Loc: loc, Key: key, MessageID: "<" + string(key) + "@x>", Sender: "jan@x"}); err != nil {
				t.Fatal(err)
			}
			reason := triage.ReasonEmailNotSent
			if key == "nosender" {
				reason = triage.ReasonNoSender // fails again, whatever is tried
			}
			if err := l.Finish(ctx, loc, StateFailed, reason, "sc"); err != nil {
				t.Fatal(err)
			}
			if done {
				if err := l.MarkIMAPDone(ctx, loc); err != nil {
					t.Fatal(err)
				}
			}
			return loc
		}
		ok := add(1, "ok", true)
		add(2, "notmoved", false)
		add(3, "replied", true)
		add(4, "nosender", true)
		if err := l.Replies().PutPending(ctx, replies.Reply{Key: "replied", MessageID: "<r@x>", To: "jan@x", Raw: []byte("raw")}); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[triage.Key]error{"ok": nil, "nosender": ErrNotRetryable, "notmoved": ErrNotRetryable, "replied": ErrNotRetryable, "none": ErrNotRetryable} {
			if err := l.RequestRetry(ctx, key); !errors.Is(err, want) {
				t.Errorf("RequestRetry(%s) = %v, want %v", key, err, want)
			}
		}
		es, err := l.RetryRequests(ctx, "a")
		if err != nil || len(es) != 1 || es[0].Loc != ok {
			t.Fatalf("RetryRequests = %+v, %v", es, err)
		}
		if err := l.EndRetry(ctx, ok, true); err != nil {
			t.Fatal(err)
		}
		if e, _ := l.Get(ctx, ok); e.State != StateRetried {
			t.Errorf("state after EndRetry = %q, want %q", e.State, StateRetried)
		}
		counts, err := l.ScenarioCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []ScenarioCount{{"sc", StateFailed, 3}, {"sc", StateRetried, 1}}
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("ScenarioCounts (-want +got):\n%s", diff)
		}
	})
}

// TestUsageStats: each attempt's usage adds to its message's; the stats sum
// the messages per scenario, month (of the latest attempt) and model, and
// count the resolved ones (replied or drafted); a message the pipeline
// never reached is not counted.
func TestUsageStats(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		msg := func(uid uint32, state State, scenario string, us ...Usage) {
			t.Helper()
			loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}
			if _, err := l.Begin(ctx, Entry{Loc: loc, Key: triage.Key(fmt.Sprint("k", uid)), Sender: "jan@example.com"}); err != nil {
				t.Fatal(err)
			}
			for _, u := range us {
				if err := l.SetOutcome(ctx, loc, []byte(`{}`), "", u); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Finish(ctx, loc, state, "", scenario); err != nil {
				t.Fatal(err)
			}
		}
		flash := func(calls, prompt, cached, output int) Usage {
			return Usage{Model: "gemini-2.5-flash", Calls: calls, Prompt: prompt, Cached: cached, Output: output}
		}
		msg(1, StateReplied, "valid-warranty", flash(3, 9000, 6000, 200))
		now = now.Add(2 * time.Hour) // November
		msg(2, StateFailed, "valid-warranty", flash(1, 3000, 0, 50), flash(3, 9100, 6100, 210))
		msg(3, StateDrafted, "valid-warranty", flash(2, 5000, 4000, 100))
		msg(4, StateSkipped, "")
		msg(5, StateSkipped, "", Usage{})
		got, err := l.UsageStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []UsageStat{
			{Scenario: "", Month: "2026-11", Model: "", Messages: 1},
			{Scenario: "valid-warranty", Month: "2026-10", Model: "gemini-2.5-flash", Messages: 1, Resolved: 1, Calls: 3, Prompt: 9000, Cached: 6000, Output: 200},
			{Scenario: "valid-warranty", Month: "2026-11", Model: "gemini-2.5-flash", Messages: 2, Resolved: 1, Calls: 6, Prompt: 17100, Cached: 10100, Output: 360},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("UsageStats (-want +got):\n%s", diff)
		}
	})
}
