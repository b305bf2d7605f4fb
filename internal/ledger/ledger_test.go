package ledger

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/store"
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
	r, err := l.Replies().GetReply(ctx, "k")
	if err != nil || r.To != "jan@x.example" || r.InboundFrom != "" {
		t.Fatalf("old reply = %+v, %v", r, err)
	}
	if n, err := l.Replies().RepliesSince(ctx, "jan@x.example", time.UnixMilli(0)); err != nil || n != 1 {
		t.Errorf("RepliesSince = %d, %v; want 1", n, err)
	}
	// The file now records its schema version and has every later table.
	if v, err := l.db.Version(ctx, Component); err != nil || v != len(migrations) {
		t.Errorf("schema version = %d, %v; want %d", v, err, len(migrations))
	}
	if err := l.Replies().AddOutbox(ctx, "m@x", "reply", "outbox/m.eml", "jan@x.example", "", "", now); err != nil {
		t.Errorf("outbox index on an upgraded file: %v", err)
	}
	// The first outbox index, which nothing wrote, is gone.
	var n int
	if err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'outbox'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("tables named outbox after the upgrade: %d, %v; want none", n, err)
	}
}

// A read-only ledger reads what is there and writes nothing.
func TestReadOnly(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Now()
		path := target
		l := openAt(t, path, &now)
		e := Entry{Loc: Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: 1}, Key: "k", State: StateReplied}
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		ro, err := Open(ctx, Config{Path: path, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if got, err := ro.Get(ctx, e.Loc); err != nil || got.State != StateReplied {
			t.Errorf("read-only Get = %+v, %v", got, err)
		}
		if err := ro.Record(ctx, Entry{Loc: Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: 2}, Key: "k2", State: StateReplied}); err == nil {
			t.Error("a read-only ledger accepted a write")
		}
		if _, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "none.db"), ReadOnly: true}); err == nil {
			t.Error("read-only Open of a missing file succeeded")
		}
		// A ledger on a shared store is only read through it, never closed.
		shared, err := store.Open(ctx, target, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer shared.Close()
		on, err := Open(ctx, Config{Store: shared, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		on.Close()
		if got, err := on.Get(ctx, e.Loc); err != nil || got.State != StateReplied {
			t.Errorf("Get on a shared store after Close = %+v, %v", got, err)
		}
	})
}
