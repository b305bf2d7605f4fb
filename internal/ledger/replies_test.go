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

// InState lists one state's replies oldest first without their bytes;
// RepliesPage pages through replies newest first, a page at a time, and
// never splits a millisecond between two pages.
func TestInStateAndRepliesPage(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := openAt(t, target, &now)
		var all []string
		for i := range 9 {
			if i%3 != 2 { // every third reply shares the millisecond of the one before
				now = now.Add(time.Second)
			}
			key := triage.Key(fmt.Sprint("k", i))
			if err := l.PutPending(ctx, Reply{Key: key, MessageID: fmt.Sprintf("<r%d@us>", i), To: "jan@example.com", Raw: []byte("raw")}); err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if err := l.MarkSent(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			all = append([]string{string(key)}, all...)
		}
		pending, err := l.InState(ctx, ReplyPending)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, r := range pending {
			keys = append(keys, string(r.Key))
			if r.Raw != nil || r.MessageID == "" || r.Created.IsZero() {
				t.Errorf("InState row %+v: want every field but Raw", r)
			}
		}
		if diff := cmp.Diff([]string{"k1", "k3", "k5", "k7"}, keys); diff != "" {
			t.Errorf("InState(reply_pending) (-want +got):\n%s", diff)
		}

		pages := func(state ReplyState, limit int) (out [][]string) {
			f := ReplyFilter{State: state, Limit: limit}
			for range 20 {
				page, err := l.RepliesPage(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					return out
				}
				var ks []string
				for _, r := range page {
					ks = append(ks, string(r.Key))
					if r.Raw != nil {
						t.Errorf("RepliesPage row %s carries its bytes", r.Key)
					}
				}
				out = append(out, ks)
				f.Before = page[len(page)-1].Created
			}
			t.Fatal("RepliesPage never ends")
			return nil
		}
		// k8 and k7 share a millisecond, as do k5 and k4, k2 and k1.
		want := [][]string{{"k8", "k7"}, {"k6", "k5", "k4"}, {"k3", "k2", "k1"}, {"k0"}}
		if diff := cmp.Diff(want, pages("", 2)); diff != "" {
			t.Errorf("pages of 2 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([][]string{all}, pages("", 50)); diff != "" {
			t.Errorf("one page (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([][]string{{"k8", "k6"}, {"k4", "k2"}, {"k0"}}, pages(ReplySent, 2)); diff != "" {
			t.Errorf("sent replies by 2 (-want +got):\n%s", diff)
		}
	})
}
