package replies_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// The store tests run on SQLite and on a real PostgreSQL (pgtest.Each).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openAt opens the reply memory of a ledger at path (its schema is the
// ledger's) on the clock *now.
func openAt(t testing.TB, path string, now *time.Time) *replies.Store {
	t.Helper()
	l, err := ledger.Open(context.Background(), ledger.Config{Path: path, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Replies()
}

func TestReplies(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)

		r := replies.Reply{Key: "k1", MessageID: "<triage-1@example.com>", To: "Jan@Example.com", Raw: []byte("raw")}
		if err := l.PutPending(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := l.PutPending(ctx, r); !errors.Is(err, replies.ErrReplyExists) {
			t.Fatalf("second PutPending: err = %v, want ErrReplyExists", err)
		}
		pending, err := l.Replies(ctx, replies.ReplyPending)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) != 1 || pending[0].Key != "k1" || string(pending[0].Raw) != "raw" {
			t.Errorf("pending = %+v, want k1 with raw bytes", pending)
		}
		now = now.Add(time.Minute)
		if err := l.MarkSent(ctx, "k1"); err != nil {
			t.Fatal(err)
		}
		if err := l.DropPending(ctx, "k1"); err != nil {
			t.Fatal(err)
		}
		got, err := l.GetReply(ctx, "k1")
		if err != nil {
			t.Fatalf("sent reply dropped: %v", err)
		}
		if got.State != replies.ReplySent || !got.SentAt.Equal(now) || got.To != "jan@example.com" {
			t.Errorf("reply = %+v, want sent at %v to jan@example.com", got, now)
		}

		if err := l.PutPending(ctx, replies.Reply{Key: "k2", MessageID: "<m2@x>", To: "jan@example.com", Raw: []byte("r2")}); err != nil {
			t.Fatal(err)
		}
		if err := l.PutPending(ctx, replies.Reply{Key: "k3", MessageID: "<m3@x>", To: "ola@example.com", Raw: []byte("r3")}); err != nil {
			t.Fatal(err)
		}
		if err := l.DropPending(ctx, "k3"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.GetReply(ctx, "k3"); !errors.Is(err, replies.ErrNotFound) {
			t.Errorf("dropped reply: err = %v, want replies.ErrNotFound", err)
		}
		if err := l.MarkReplyNeedsHuman(ctx, "k2"); err != nil {
			t.Fatal(err)
		}
		if err := l.MarkAppended(ctx, "nope"); !errors.Is(err, replies.ErrNotFound) {
			t.Errorf("MarkAppended unknown key: err = %v, want replies.ErrNotFound", err)
		}

		tests := []struct {
			to    string
			since time.Time
			want  int
		}{
			{"jan@example.com", now.Add(-time.Hour), 2},
			{"JAN@example.com", now.Add(-time.Hour), 2},
			{"ola@example.com", now.Add(-time.Hour), 0},
			{"", now.Add(-time.Hour), 2},
			{"", now.Add(time.Second), 0},
		}
		for _, tt := range tests {
			n, err := l.RepliesSince(ctx, tt.to, tt.since)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("RepliesSince(%q, %v) = %d, want %d", tt.to, tt.since, n, tt.want)
			}
		}
	})
}

// TestLimitsCountSenderAndRecipient: every reply counts against both the
// sender it answers and the address it went to, and the limit holds on each:
// a Reply-To pointing elsewhere, or many senders naming one Reply-To, do not
// get past it.
func TestLimitsCountSenderAndRecipient(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		lim := replies.Limits{PerAddress: 2, Window: 24 * time.Hour}
		n := 0
		put := func(sender, to string) error {
			n++
			return l.PutPendingWithin(ctx, replies.Reply{Key: triage.Key(fmt.Sprintf("k%d", n)), MessageID: fmt.Sprintf("<m%d@x>", n),
				InboundFrom: sender, To: to, Raw: []byte("raw")}, lim)
		}
		wantLimit := func(err error, addr string) {
			t.Helper()
			var le *replies.LimitError
			if !errors.As(err, &le) || le.Reason != triage.ReasonPerSenderLimit || le.Address != addr {
				t.Fatalf("err = %v, want a %s replies.LimitError for %s", err, triage.ReasonPerSenderLimit, addr)
			}
		}
		// One sender, a new Reply-To each time: limited by the sender.
		for _, to := range []string{"a1@evil.example", "a2@evil.example"} {
			if err := put("attacker@evil.example", to); err != nil {
				t.Fatal(err)
			}
		}
		wantLimit(put("Attacker@Evil.example", "a3@evil.example"), "attacker@evil.example")
		// Many senders, one Reply-To: limited by the recipient.
		for _, from := range []string{"b1@evil.example", "b2@evil.example"} {
			if err := put(from, "victim@bank.example"); err != nil {
				t.Fatal(err)
			}
		}
		wantLimit(put("b3@evil.example", "VICTIM@bank.example"), "victim@bank.example")
		// A reply sent to an address counts when that address writes itself.
		if err := put("a1@evil.example", "a1@evil.example"); err != nil {
			t.Fatal(err)
		}
		wantLimit(put("a1@evil.example", "a1@evil.example"), "a1@evil.example")
		if got, err := l.RepliesSince(ctx, "a1@evil.example", now.Add(-time.Hour)); err != nil || got != 2 {
			t.Errorf("RepliesSince(a1) = %d, %v; want 2", got, err)
		}
		if got, err := l.RepliesSince(ctx, "attacker@evil.example", now.Add(-time.Hour)); err != nil || got != 2 {
			t.Errorf("RepliesSince(attacker) = %d, %v; want 2 (counted by sender)", got, err)
		}
		// Refusals recorded nothing; the window moves on.
		all, err := l.Replies(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 5 {
			t.Errorf("recorded %d replies, want 5 (refusals record nothing)", len(all))
		}
		now = now.Add(25 * time.Hour)
		if err := put("attacker@evil.example", "victim@bank.example"); err != nil {
			t.Errorf("after the window: %v", err)
		}
		// The global limit, and replies.ErrReplyExists before any limit.
		lim = replies.Limits{PerHour: 1}
		var le *replies.LimitError
		if err := put("new@x.example", "new@x.example"); !errors.As(err, &le) || le.Reason != triage.ReasonGlobalLimit {
			t.Errorf("over the hour: err = %v, want %s", err, triage.ReasonGlobalLimit)
		}
		if err := l.PutPendingWithin(ctx, replies.Reply{Key: "k1", MessageID: "<m1@x>", To: "x@x.example", Raw: []byte("r")}, lim); !errors.Is(err, replies.ErrReplyExists) {
			t.Errorf("existing key over the limit: err = %v, want ErrReplyExists", err)
		}
	})
}

// TestLimitsExactUnderConcurrency: replies racing for the last places under
// a limit get exactly the limit.
func TestLimitsExactUnderConcurrency(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
		// Two ledgers on one store: two processes' connections race too.
		ls := []*replies.Store{openAt(t, target, &now), openAt(t, target, &now)}
		const racers, limit = 24, 5
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted, refused := 0, 0
		for i := range racers {
			wg.Go(func() {
				err := ls[i%2].PutPendingWithin(ctx, replies.Reply{Key: triage.Key(fmt.Sprintf("k%d", i)), MessageID: fmt.Sprintf("<m%d@x>", i),
					InboundFrom: fmt.Sprintf("s%d@x.example", i), To: "victim@bank.example", Raw: []byte("raw")},
					replies.Limits{PerAddress: limit, PerHour: 100})
				mu.Lock()
				defer mu.Unlock()
				var le *replies.LimitError
				switch {
				case err == nil:
					admitted++
				case errors.As(err, &le):
					refused++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if admitted != limit || refused != racers-limit {
			t.Errorf("admitted %d, refused %d; want %d and %d", admitted, refused, limit, racers-limit)
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
			if err := l.PutPending(ctx, replies.Reply{Key: key, MessageID: fmt.Sprintf("<r%d@us>", i), To: "jan@example.com", Raw: []byte("raw")}); err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if err := l.MarkSent(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			all = append([]string{string(key)}, all...)
		}
		pending, err := l.InState(ctx, replies.ReplyPending)
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

		pages := func(state replies.ReplyState, limit int) (out [][]string) {
			f := replies.ReplyFilter{State: state, Limit: limit}
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
		if diff := cmp.Diff([][]string{{"k8", "k6"}, {"k4", "k2"}, {"k0"}}, pages(replies.ReplySent, 2)); diff != "" {
			t.Errorf("sent replies by 2 (-want +got):\n%s", diff)
		}
	})
}
