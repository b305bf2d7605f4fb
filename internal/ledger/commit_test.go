package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"triage"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// TestRecordKeepsTheOutcome: Record keeps what an entry carries for review
// (Kept: the outcome, the customer's text, the attempt's usage, added to
// an earlier attempt's) and puts its scenario and inbox on the message's
// reply, with the terminal state; an entry without Kept leaves what an
// earlier attempt kept.
func TestRecordKeepsTheOutcome(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: 7}
		key := triage.Key("msgid:<k@x>|jan@example.com")
		e := Entry{Loc: loc, Key: key, MessageID: "<k@x>", Sender: "jan@example.com"}
		if _, err := l.Claim(ctx, e, "me", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := l.SetOutcome(ctx, loc, []byte(`{"status":"failed"}`), "first", Usage{Model: "m", Calls: 1, Prompt: 100, Output: 10}); err != nil {
			t.Fatal(err)
		}
		if err := l.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: "<r@example.com>", To: "jan@example.com", Raw: []byte("reply")}); err != nil {
			t.Fatal(err)
		}
		e.State, e.Scenario, e.Attempts = StateReplied, "valid-warranty", 2
		e.Kept = &Kept{Outcome: []byte(`{"status":"replied"}`), Body: "Dzień dobry", Usage: Usage{Model: "m", Calls: 3, Prompt: 900, Cached: 600, Output: 20}}
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		es, err := l.ByRef(ctx, key.Ref())
		if err != nil || len(es) != 1 {
			t.Fatalf("ByRef = %v, %v", es, err)
		}
		if got := es[0]; got.State != StateReplied || string(got.Outcome) != `{"status":"replied"}` || got.Body != "Dzień dobry" {
			t.Errorf("recorded %s with outcome %s and body %q; want replied, the second outcome and its text", got.State, got.Outcome, got.Body)
		}
		stats, err := l.UsageStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 1 || stats[0].Calls != 4 || stats[0].Prompt != 1000 || stats[0].Cached != 600 || stats[0].Output != 30 || stats[0].Scenario != "valid-warranty" {
			t.Errorf("UsageStats = %+v; want both attempts' usage under valid-warranty", stats)
		}
		var scenario, account string
		if err := l.Store().QueryRowContext(ctx, `SELECT scenario, account FROM replies WHERE key=?`, key).Scan(&scenario, &account); err != nil {
			t.Fatal(err)
		}
		if scenario != "valid-warranty" || account != "a" {
			t.Errorf("the reply is attributed to %q in %q; want valid-warranty in a", scenario, account)
		}
		// Recorded again without Kept (a later pass settling it): what
		// was kept stays.
		e.Kept = nil
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		if es, err := l.ByRef(ctx, key.Ref()); err != nil || string(es[0].Outcome) != `{"status":"replied"}` {
			t.Errorf("after a Record without Kept: %v, %v; want the outcome kept", es, err)
		}
	})
}

// TestMarkSettledFilesTheReply: MarkSettled ends the claim, settles the
// message and records its reply filed in the Sent folder at once; when the
// reply cannot be recorded (no such row), neither is.
func TestMarkSettledFilesTheReply(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		record := func(uid uint32, key triage.Key) Loc {
			t.Helper()
			loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}
			e := Entry{Loc: loc, Key: key, MessageID: "<" + string(key) + ">", Sender: "jan@example.com"}
			if _, err := l.Claim(ctx, e, "me", time.Minute); err != nil {
				t.Fatal(err)
			}
			e.State = StateReplied
			if err := l.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
			return loc
		}
		loc := record(1, "k1")
		if err := l.Replies().PutPending(ctx, replies.Reply{Key: "k1", MessageID: "<r1@example.com>", To: "jan@example.com", Raw: []byte("reply")}); err != nil {
			t.Fatal(err)
		}
		if err := l.MarkSettled(ctx, loc, "k1"); err != nil {
			t.Fatal(err)
		}
		if r, err := l.Replies().GetReply(ctx, "k1"); err != nil || !r.Appended {
			t.Errorf("reply after MarkSettled: appended %v, %v; want appended", r.Appended, err)
		}
		if owner, _, err := l.Claimant(ctx, loc); err != nil || owner != "" {
			t.Errorf("claimant after MarkSettled = %q, %v; want none", owner, err)
		}
		if u, err := l.Unsettled(ctx, "a", "INBOX", 1); err != nil || len(u) != 0 {
			t.Errorf("Unsettled after MarkSettled = %v, %v; want none", u, err)
		}

		loc = record(2, "k2") // no reply row for k2
		if err := l.MarkSettled(ctx, loc, "k2"); !errors.Is(err, replies.ErrNotFound) {
			t.Errorf("MarkSettled of a reply that is not there: %v; want replies.ErrNotFound", err)
		}
		if u, err := l.Unsettled(ctx, "a", "INBOX", 1); err != nil || len(u) != 1 || u[0] != 2 {
			t.Errorf("Unsettled after the failed MarkSettled = %v, %v; want [2] (nothing recorded)", u, err)
		}
		if owner, _, err := l.Claimant(ctx, loc); err != nil || owner != "me" {
			t.Errorf("claimant after the failed MarkSettled = %q, %v; want me still", owner, err)
		}
		if err := l.MarkSettled(ctx, loc, ""); err != nil {
			t.Fatal(err)
		}
		if u, err := l.Unsettled(ctx, "a", "INBOX", 1); err != nil || len(u) != 0 {
			t.Errorf("Unsettled after MarkSettled without a reply = %v, %v; want none", u, err)
		}
	})
}
