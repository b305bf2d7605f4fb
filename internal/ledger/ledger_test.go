package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/testkit/pgtest"
)

func openAt(t *testing.T, path string, now *time.Time) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), Config{Path: path, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestMessageLifecycle(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		path := target
		l := openAt(t, path, &now)

		loc := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 7, UID: 3}
		if _, err := l.Get(ctx, loc); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get before Begin: err = %v, want ErrNotFound", err)
		}
		e := Entry{Loc: loc, Key: "<a@x>|jan@example.com", MessageID: "<a@x>", Sender: "jan@example.com", Subject: "S"}
		for want := 1; want <= 2; want++ {
			n, err := l.Begin(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Errorf("Begin attempt = %d, want %d", n, want)
			}
		}
		settled, err := l.Settled(ctx, "acct", "INBOX", 7, []uint32{2, 3, 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(settled) != 0 {
			t.Errorf("Settled while processing = %v, want empty", settled)
		}
		if unsettled, err := l.Unsettled(ctx, "acct", "INBOX", 7); err != nil || len(unsettled) != 0 {
			t.Errorf("Unsettled while processing = %v, %v; want none (not final yet)", unsettled, err)
		}
		if err := l.Finish(ctx, loc, StateReplied, "", "valid-warranty"); err != nil {
			t.Fatal(err)
		}
		unsettled, err := l.Unsettled(ctx, "acct", "INBOX", 7)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]uint32{3}, unsettled); diff != "" {
			t.Errorf("Unsettled before MarkIMAPDone (-want +got):\n%s", diff)
		}
		if err := l.MarkIMAPDone(ctx, loc); err != nil {
			t.Fatal(err)
		}
		if unsettled, err := l.Unsettled(ctx, "acct", "INBOX", 7); err != nil || len(unsettled) != 0 {
			t.Errorf("Unsettled after MarkIMAPDone = %v, %v; want none", unsettled, err)
		}
		if err := l.Finish(ctx, loc, StateProcessing, "", ""); err == nil {
			t.Error("Finish with a non-final state: want error")
		}

		// Reopen: everything is durable.
		l.Close()
		l = openAt(t, path, &now)
		got, err := l.Get(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		want := Entry{Loc: loc, Key: e.Key, MessageID: "<a@x>", Sender: "jan@example.com", Subject: "S",
			State: StateReplied, Scenario: "valid-warranty", Attempts: 2, IMAPDone: true, Created: now, Updated: now}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("entry (-want +got):\n%s", diff)
		}
		settled, err = l.Settled(ctx, "acct", "INBOX", 7, []uint32{2, 3, 4})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[uint32]bool{3: true}, settled); diff != "" {
			t.Errorf("Settled (-want +got):\n%s", diff)
		}

		// The same message under a new UIDVALIDITY is found by its key.
		newLoc := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 8, UID: 1}
		prev, err := l.TerminalByKey(ctx, e.Key, newLoc)
		if err != nil {
			t.Fatal(err)
		}
		if prev.Loc != loc {
			t.Errorf("TerminalByKey loc = %v, want %v", prev.Loc, loc)
		}
		if _, err := l.TerminalByKey(ctx, e.Key, loc); !errors.Is(err, ErrNotFound) {
			t.Errorf("TerminalByKey excluding its only row: err = %v, want ErrNotFound", err)
		}

		// Abandon only deletes processing rows.
		other := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 7, UID: 4}
		if _, err := l.Begin(ctx, Entry{Loc: other, Key: "k2"}); err != nil {
			t.Fatal(err)
		}
		for _, lc := range []Loc{other, loc} {
			if err := l.Abandon(ctx, lc); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Get(ctx, other); !errors.Is(err, ErrNotFound) {
			t.Errorf("abandoned row still there: %v", err)
		}
		if _, err := l.Get(ctx, loc); err != nil {
			t.Errorf("final row was abandoned: %v", err)
		}
		counts, err := l.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[State]int{StateReplied: 1}, counts); diff != "" {
			t.Errorf("Counts (-want +got):\n%s", diff)
		}
	})
}

func TestReplies(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)

		r := Reply{Key: "k1", MessageID: "<triage-1@example.com>", To: "Jan@Example.com", Raw: []byte("raw")}
		if err := l.PutPending(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := l.PutPending(ctx, r); !errors.Is(err, ErrReplyExists) {
			t.Fatalf("second PutPending: err = %v, want ErrReplyExists", err)
		}
		pending, err := l.Replies(ctx, ReplyPending)
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
		if got.State != ReplySent || !got.SentAt.Equal(now) || got.To != "jan@example.com" {
			t.Errorf("reply = %+v, want sent at %v to jan@example.com", got, now)
		}

		if err := l.PutPending(ctx, Reply{Key: "k2", MessageID: "<m2@x>", To: "jan@example.com", Raw: []byte("r2")}); err != nil {
			t.Fatal(err)
		}
		if err := l.PutPending(ctx, Reply{Key: "k3", MessageID: "<m3@x>", To: "ola@example.com", Raw: []byte("r3")}); err != nil {
			t.Fatal(err)
		}
		if err := l.DropPending(ctx, "k3"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.GetReply(ctx, "k3"); !errors.Is(err, ErrNotFound) {
			t.Errorf("dropped reply: err = %v, want ErrNotFound", err)
		}
		if err := l.MarkReplyNeedsHuman(ctx, "k2"); err != nil {
			t.Fatal(err)
		}
		if err := l.MarkAppended(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("MarkAppended unknown key: err = %v, want ErrNotFound", err)
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
		lim := Limits{PerAddress: 2, Window: 24 * time.Hour}
		n := 0
		put := func(sender, to string) error {
			n++
			return l.PutPendingWithin(ctx, Reply{Key: triage.Key(fmt.Sprintf("k%d", n)), MessageID: fmt.Sprintf("<m%d@x>", n),
				InboundFrom: sender, To: to, Raw: []byte("raw")}, lim)
		}
		wantLimit := func(err error, addr string) {
			t.Helper()
			var le *LimitError
			if !errors.As(err, &le) || le.Reason != triage.ReasonPerSenderLimit || le.Address != addr {
				t.Fatalf("err = %v, want a %s LimitError for %s", err, triage.ReasonPerSenderLimit, addr)
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
		// The global limit, and ErrReplyExists before any limit.
		lim = Limits{PerHour: 1}
		var le *LimitError
		if err := put("new@x.example", "new@x.example"); !errors.As(err, &le) || le.Reason != triage.ReasonGlobalLimit {
			t.Errorf("over the hour: err = %v, want %s", err, triage.ReasonGlobalLimit)
		}
		if err := l.PutPendingWithin(ctx, Reply{Key: "k1", MessageID: "<m1@x>", To: "x@x.example", Raw: []byte("r")}, lim); !errors.Is(err, ErrReplyExists) {
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
		ls := []*Ledger{openAt(t, target, &now), openAt(t, target, &now)}
		const racers, limit = 24, 5
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted, refused := 0, 0
		for i := range racers {
			wg.Go(func() {
				err := ls[i%2].PutPendingWithin(ctx, Reply{Key: triage.Key(fmt.Sprintf("k%d", i)), MessageID: fmt.Sprintf("<m%d@x>", i),
					InboundFrom: fmt.Sprintf("s%d@x.example", i), To: "victim@bank.example", Raw: []byte("raw")},
					Limits{PerAddress: limit, PerHour: 100})
				mu.Lock()
				defer mu.Unlock()
				var le *LimitError
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

// TestUpgradeAddsSenderColumn: a ledger written before replies had a sender
// column opens, keeps its rows and counts them by recipient.
func TestUpgradeAddsSenderColumn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	old := `CREATE TABLE replies (key TEXT PRIMARY KEY, message_id TEXT NOT NULL, recipient TEXT NOT NULL,
		raw BLOB NOT NULL, state TEXT NOT NULL, appended INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL,
		sent_at INTEGER NOT NULL DEFAULT 0);
		INSERT INTO replies (key, message_id, recipient, raw, state, created) VALUES ('k', '<m@x>', 'jan@x.example', 'raw', 'sent', 1000);`
	if _, err := db.ExecContext(ctx, old); err != nil {
		t.Fatal(err)
	}
	db.Close()
	now := time.UnixMilli(2000)
	l := openAt(t, path, &now)
	r, err := l.GetReply(ctx, "k")
	if err != nil || r.To != "jan@x.example" || r.InboundFrom != "" {
		t.Fatalf("old reply = %+v, %v", r, err)
	}
	if n, err := l.RepliesSince(ctx, "jan@x.example", time.UnixMilli(0)); err != nil || n != 1 {
		t.Errorf("RepliesSince = %d, %v; want 1", n, err)
	}
	// The file now records its schema version and has every later table.
	if v, err := l.db.Version(ctx, Component); err != nil || v != len(migrations) {
		t.Errorf("schema version = %d, %v; want %d", v, err, len(migrations))
	}
	if err := l.AddOutbox(ctx, "m@x", "reply", "outbox/m.eml", "jan@x.example", "", "", now); err != nil {
		t.Errorf("outbox index on an upgraded file: %v", err)
	}
	// The first outbox index, which nothing wrote, is gone.
	var n int
	if err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'outbox'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("tables named outbox after the upgrade: %d, %v; want none", n, err)
	}
}
