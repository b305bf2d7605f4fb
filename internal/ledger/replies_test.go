package ledger

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// Settled answers for the UIDs asked about, however many (the query names
// them in chunks), and for no other.
func TestSettledAskedUIDs(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		var asked []uint32
		want := map[uint32]bool{}
		for uid := uint32(1); uid <= 1300; uid++ {
			loc := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 7, UID: uid}
			state := StateReplied
			if uid%100 == 0 {
				state = StateProcessing // not final: not settled
			}
			if err := l.Record(ctx, Entry{Loc: loc, Key: triage.Key(fmt.Sprint("k", uid)), State: state}); err != nil {
				t.Fatal(err)
			}
			if uid%3 == 0 {
				continue // not marked done on the server: not settled
			}
			if err := l.MarkIMAPDone(ctx, loc); err != nil {
				t.Fatal(err)
			}
			if uid%2 == 0 {
				asked = append(asked, uid)
				if uid%100 != 0 {
					want[uid] = true
				}
			}
		}
		asked = append(asked, 5000) // not in the ledger
		got, err := l.Settled(ctx, "acct", "INBOX", 7, asked)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Settled (-want +got):\n%s", diff)
		}
		if got, err := l.Settled(ctx, "acct", "INBOX", 7, nil); err != nil || len(got) != 0 {
			t.Errorf("Settled of no UIDs = %v, %v", got, err)
		}
	})
}

// Finish and Record put on the reply of the message they settle the
// scenario and inbox it was handled in: the reply of the row's key, which
// a row recorded again keeps.
func TestSettlingAttributesTheReply(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		draft := func(key triage.Key) {
			t.Helper()
			// Recorded under no inbox: attributing gives it its message's.
			if err := l.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: "<" + string(key) + "@us>", To: "jan@example.com",
				Raw: []byte("raw"), Kind: replies.KindDraft}); err != nil {
				t.Fatal(err)
			}
		}
		inbox := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 7, UID: 1}
		support := Loc{Account: "acct", Mailbox: "Support", UIDValidity: 7, UID: 2}
		unknown := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 7, UID: 9}
		if _, err := l.Begin(ctx, Entry{Loc: inbox, Key: "k1"}); err != nil {
			t.Fatal(err)
		}
		draft("k1")
		if err := l.Finish(ctx, inbox, StateDrafted, "", "missing-info"); err != nil {
			t.Fatal(err)
		}
		if err := l.Finish(ctx, unknown, StateDrafted, "", "missing-info"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Finish of no entry: err = %v, want ErrNotFound", err)
		}
		if err := l.Record(ctx, Entry{Loc: support, Key: "k2", State: StateSkipped}); err != nil {
			t.Fatal(err)
		}
		draft("k2")
		// Recorded again under another key: the row keeps k2.
		if err := l.Record(ctx, Entry{Loc: support, Key: "k3", State: StateDrafted, Scenario: "defect"}); err != nil {
			t.Fatal(err)
		}
		draft("k3")
		counts, err := l.Replies().DraftCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []replies.DraftCount{
			{Scenario: "", Drafted: 1, Pending: 1}, // k3: no message row of its own
			{Scenario: "defect", Inbox: triage.Inbox{Account: "acct", Mailbox: "Support"}, Drafted: 1, Pending: 1},
			{Scenario: "missing-info", Inbox: triage.Inbox{Account: "acct", Mailbox: "INBOX"}, Drafted: 1, Pending: 1},
		}
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("DraftCounts (-want +got):\n%s", diff)
		}
	})
}
