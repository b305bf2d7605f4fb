package ledger

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
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
