package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
	"triage/internal/replies"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/store"
	"triage/internal/testkit/pgtest"
)

// A claim is exclusive while its lease is live, per row and per key; it
// passes to another daemon once the lease runs out, and the old claimant's
// renewal then fails; Unclaim hands a message back without counting the
// attempt; a final row is claimed for its settling only, and a settled
// row not at all.
func TestClaim(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: 1}
		e := Entry{Loc: loc, Key: "k1", MessageID: "<m1@x>", Sender: "c@x", Subject: "S"}
		const lease = 30 * time.Second

		got, err := l.Claim(ctx, e, "A", lease)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != StateProcessing || got.Attempts != 1 {
			t.Errorf("first claim = %+v, want processing, attempt 1", got)
		}
		if _, err := l.Claim(ctx, e, "B", lease); !errors.Is(err, ErrClaimed) {
			t.Errorf("B claims A's live claim: err = %v, want ErrClaimed", err)
		}
		// Another copy of the message (same key, another UID) waits too.
		copyLoc := loc
		copyLoc.UID = 2
		if _, err := l.Claim(ctx, Entry{Loc: copyLoc, Key: "k1"}, "B", lease); !errors.Is(err, ErrClaimed) {
			t.Errorf("B claims a copy under A's key: err = %v, want ErrClaimed", err)
		}
		if _, err := l.Get(ctx, copyLoc); !errors.Is(err, ErrNotFound) {
			t.Errorf("the refused claim left a row: %v", err)
		}
		// A renews; later the lease runs out all the same (A died).
		now = now.Add(20 * time.Second)
		if err := l.Renew(ctx, loc, "A", lease); err != nil {
			t.Fatalf("A renews: %v", err)
		}
		now = now.Add(29 * time.Second)
		if _, err := l.Claim(ctx, e, "B", lease); !errors.Is(err, ErrClaimed) {
			t.Errorf("B claims within A's renewed lease: err = %v, want ErrClaimed", err)
		}
		if c, until, err := l.Claimant(ctx, loc); err != nil || c != "A" || !until.Equal(now.Add(lease-29*time.Second)) {
			t.Errorf("Claimant = %q %v %v; want A until %v", c, until, err, now.Add(lease-29*time.Second))
		}
		now = now.Add(2 * time.Second)
		got, err = l.Claim(ctx, e, "B", lease)
		if err != nil {
			t.Fatalf("B claims after A's lease ran out: %v", err)
		}
		if got.Attempts != 2 {
			t.Errorf("attempts after the takeover = %d, want 2", got.Attempts)
		}
		if err := l.Renew(ctx, loc, "A", lease); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("A renews a lost claim: err = %v, want ErrLeaseLost", err)
		}
		// Unclaim by a daemon that does not own it changes nothing.
		if err := l.Unclaim(ctx, loc, "A"); err != nil {
			t.Fatal(err)
		}
		if c, _, _ := l.Claimant(ctx, loc); c != "B" {
			t.Errorf("A's Unclaim took B's claim: claimant %q", c)
		}
		// B is stopped before sending anything: the message is seen again,
		// the attempt not counted, and claimable at once.
		if err := l.Unclaim(ctx, loc, "B"); err != nil {
			t.Fatal(err)
		}
		back, err := l.Get(ctx, loc)
		if err != nil || back.State != StateSeen || back.Attempts != 1 {
			t.Errorf("after Unclaim: %+v, %v; want seen, attempts 1", back, err)
		}
		cl, err := l.Claimable(ctx, "a", "INBOX", 7, 10)
		if err != nil || len(cl) != 1 || cl[0].Loc != loc {
			t.Errorf("Claimable after Unclaim = %v, %v; want %v", cl, err, loc)
		}
		if got, err = l.Claim(ctx, e, "C", lease); err != nil || got.Attempts != 2 {
			t.Fatalf("C claims: %+v, %v; want attempt 2", got, err)
		}
		if cl, _ := l.Claimable(ctx, "a", "INBOX", 7, 10); len(cl) != 0 {
			t.Errorf("Claimable while C's lease is live = %v, want none", cl)
		}
		// C records the final state; the claim lasts until the message is
		// settled on the server.
		done := got
		done.State = StateReplied
		if err := l.Record(ctx, done); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Claim(ctx, e, "D", lease); !errors.Is(err, ErrClaimed) {
			t.Errorf("D claims a final row C is settling: err = %v, want ErrClaimed", err)
		}
		if cl, _ := l.Claimable(ctx, "a", "INBOX", 7, 10); len(cl) != 0 {
			t.Errorf("Claimable while C settles = %v, want none", cl)
		}
		now = now.Add(time.Minute) // C died before settling
		if cl, _ := l.Claimable(ctx, "a", "INBOX", 7, 10); len(cl) != 1 || cl[0].State != StateReplied {
			t.Errorf("Claimable once C's lease ran out = %v, want the final row, to be settled", cl)
		}
		got, err = l.Claim(ctx, e, "D", lease)
		if err != nil || got.State != StateReplied || got.Attempts != 2 {
			t.Errorf("D claims the final row to settle it: %+v, %v; want replied, attempts 2", got, err)
		}
		if err := l.MarkIMAPDone(ctx, loc); err != nil {
			t.Fatal(err)
		}
		if c, _, _ := l.Claimant(ctx, loc); c != "" {
			t.Errorf("claimant after MarkIMAPDone = %q, want none", c)
		}
		if cl, _ := l.Claimable(ctx, "a", "INBOX", 7, 10); len(cl) != 0 {
			t.Errorf("Claimable once settled = %v, want none", cl)
		}
		// A daemon that reaches the settled row late finds nothing to do
		// and claims nothing.
		if got, err := l.Claim(ctx, e, "E", lease); err != nil || got.State != StateReplied || !got.IMAPDone || got.Attempts != 2 {
			t.Errorf("E claims the settled row: %+v, %v; want it as it is, replied and settled", got, err)
		}
		if c, _, _ := l.Claimant(ctx, loc); c != "" {
			t.Errorf("claimant after a claim of the settled row = %q, want none", c)
		}
	})
}

// Offer records a message once, as seen; Forget deletes a seen row whose
// message left the mailbox but never a final one.
func TestOfferForget(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		for uid := uint32(1); uid <= 3; uid++ {
			e := Entry{Loc: Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: uid}, Key: triage.Key(fmt.Sprint("k", uid))}
			for i, want := range []bool{true, false} {
				if added, err := l.Offer(ctx, e); err != nil || added != want {
					t.Fatalf("Offer %d #%d = %v, %v; want %v", uid, i, added, err, want)
				}
			}
		}
		cl, err := l.Claimable(ctx, "a", "INBOX", 7, 2)
		if err != nil {
			t.Fatal(err)
		}
		var uids []uint32
		for _, e := range cl {
			uids = append(uids, e.UID)
		}
		if diff := cmp.Diff([]uint32{1, 2}, uids); diff != "" {
			t.Errorf("Claimable (limit 2) (-want +got):\n%s", diff)
		}
		if cl, _ := l.Claimable(ctx, "a", "INBOX", 8, 10); len(cl) != 0 {
			t.Errorf("Claimable under another UIDVALIDITY = %v", cl)
		}
		final := Entry{Loc: Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: 3}, Key: "k3", State: StateSkipped}
		if err := l.Record(ctx, final); err != nil {
			t.Fatal(err)
		}
		for uid := uint32(1); uid <= 3; uid++ {
			if err := l.Forget(ctx, Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: uid}, "A"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Get(ctx, Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: 1}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Forget left a seen row: %v", err)
		}
		if e, err := l.Get(ctx, final.Loc); err != nil || e.State != StateSkipped {
			t.Errorf("Forget removed a final row: %+v, %v", e, err)
		}
	})
}

// Many daemons claiming one message at once (each with its own connection):
// exactly one wins; the same holds for several copies of one message.
func TestClaimRace(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		const daemons = 8
		var ls []*Ledger
		for range daemons {
			l, err := Open(ctx, Config{Path: target})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			ls = append(ls, l)
		}
		for round := range 20 {
			key := triage.Key(fmt.Sprint("race", round))
			var wg sync.WaitGroup
			wins := make(chan string, daemons)
			for i, l := range ls {
				uid := uint32(round*100 + 1)
				if i%2 == 1 {
					uid += uint32(i) // a copy of the message under another UID
				}
				e := Entry{Loc: Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}, Key: key}
				wg.Go(func() {
					_, err := l.Claim(ctx, e, fmt.Sprint("daemon", i), time.Minute)
					switch {
					case err == nil:
						wins <- fmt.Sprint("daemon", i)
					case !errors.Is(err, ErrClaimed):
						t.Errorf("daemon %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			close(wins)
			var won []string
			for w := range wins {
				won = append(won, w)
			}
			if len(won) != 1 {
				t.Fatalf("round %d: %d claims won (%v), want exactly 1", round, len(won), won)
			}
		}
	})
}

// On PostgreSQL a row another transaction holds is skipped at once (SKIP
// LOCKED), not waited for.
func TestClaimSkipsLockedRow(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	now := time.Now()
	l := openAt(t, url, &now)
	loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: 5}
	if _, err := l.Offer(ctx, Entry{Loc: loc, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE uid=? FOR UPDATE`, loc.UID).Scan(&one); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := l.Claim(cctx, Entry{Loc: loc, Key: "k"}, "A", time.Minute); !errors.Is(err, ErrClaimed) {
		t.Errorf("claim of a locked row: err = %v, want ErrClaimed without waiting", err)
	}
	tx.Rollback()
	if _, err := l.Claim(ctx, Entry{Loc: loc, Key: "k"}, "A", time.Minute); err != nil {
		t.Errorf("claim once the row is free: %v", err)
	}
}

// Orphaned lists an inbox's pending replies whose claimant is gone: not one
// whose message is under a live claim (it may be going out now), not
// another inbox's.
func TestOrphaned(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		for i, inbox := range []string{"a", "a", "b"} {
			key := triage.Key(fmt.Sprint("k", i))
			loc := Loc{Account: inbox, Mailbox: "INBOX", UIDValidity: 1, UID: uint32(i + 1)}
			if _, err := l.Claim(ctx, Entry{Loc: loc, Key: key}, "A", time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := l.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: fmt.Sprintf("<r%d@x>", i), To: "c@x", Raw: []byte("x"), Account: inbox, Mailbox: "INBOX"}); err != nil {
				t.Fatal(err)
			}
		}
		ids := func() []string {
			rs, err := l.Replies().Orphaned(ctx, "a", "INBOX", replies.ReplyPending)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range rs {
				out = append(out, r.MessageID)
			}
			return out
		}
		if got := ids(); len(got) != 0 {
			t.Errorf("Orphaned while the claims are live = %v, want none", got)
		}
		if err := l.Renew(ctx, Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: 2}, "A", 3*time.Minute); err != nil {
			t.Fatal(err)
		}
		now = now.Add(2 * time.Minute) // k0's lease ran out; k1's was renewed
		if diff := cmp.Diff([]string{"<r0@x>"}, ids()); diff != "" {
			t.Errorf("Orphaned (-want +got):\n%s", diff)
		}
	})
}

// A ledger written before claims existed keeps its rows: a message an
// older daemon left processing is claimable once the step has run, and the
// replies keep the inbox their migration gave them.
func TestClaimMigration(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		db, err := store.Open(ctx, target, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		step := -1
		for i, m := range migrations {
			if m.SQLite == claimSchema {
				step = i
			}
		}
		if step < 0 {
			t.Fatal("no migration step adds the claims")
		}
		if err := db.Migrate(ctx, Component, migrations[:step]); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`INSERT INTO messages (account, mailbox, uidvalidity, uid, key, state, attempts, created, updated) VALUES ('a', 'INBOX', 1, 1, 'k1', 'processing', 1, 1, 1)`,
			`INSERT INTO replies (key, message_id, recipient, raw, state, created, account, mailbox) VALUES ('k1', '<r1@x>', 'c@x', 'x', 'reply_pending', 1, 'a', 'INBOX')`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		l, err := Open(ctx, Config{Store: db})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := l.Claimable(ctx, "a", "INBOX", 1, 10)
		if err != nil || len(cl) != 1 || cl[0].Key != "k1" {
			t.Fatalf("Claimable after the migration = %v, %v; want the processing row", cl, err)
		}
		if rs, err := l.Replies().Orphaned(ctx, "a", "INBOX", replies.ReplyPending); err != nil || len(rs) != 1 {
			t.Errorf("Orphaned after the migration = %v, %v; want the pending reply", rs, err)
		}
		if got, err := l.Claim(ctx, cl[0], "A", time.Minute); err != nil || got.Attempts != 2 {
			t.Errorf("Claim after the migration = %+v, %v; want attempt 2", got, err)
		}
	})
}

// RenewAll renews every claim of its owner in one call and names those
// that are no longer the owner's: taken over after the lease ran out, or
// gone; a claim of another owner is not touched.
func TestRenewAll(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		const lease = 30 * time.Second
		var locs []Loc
		for uid := range uint32(4) {
			loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: uid + 1}
			if _, err := l.Claim(ctx, Entry{Loc: loc, Key: triage.Key(fmt.Sprint("k", uid))}, "A", lease); err != nil {
				t.Fatal(err)
			}
			locs = append(locs, loc)
		}
		other := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: 9}
		if _, err := l.Claim(ctx, Entry{Loc: other, Key: "k9"}, "B", lease); err != nil {
			t.Fatal(err)
		}
		// A stalled past its lease: B took the third message over; the
		// fourth is gone.
		now = now.Add(lease + time.Second)
		if _, err := l.Claim(ctx, Entry{Loc: locs[2], Key: "k2"}, "B", lease); err != nil {
			t.Fatal(err)
		}
		if err := l.Forget(ctx, locs[3], "A"); err != nil {
			t.Fatal(err)
		}
		lost, err := l.RenewAll(ctx, "A", locs, lease)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]Loc{locs[2], locs[3]}, lost); diff != "" {
			t.Errorf("lost (-want +got):\n%s", diff)
		}
		for _, c := range []struct {
			loc   Loc
			owner string
			until time.Time
		}{
			{locs[0], "A", now.Add(lease)},
			{locs[1], "A", now.Add(lease)},
			{locs[2], "B", now.Add(lease)},
			{other, "B", now.Add(-time.Second)},
		} {
			if owner, until, err := l.Claimant(ctx, c.loc); err != nil || owner != c.owner || !until.Equal(c.until) {
				t.Errorf("claim on %v: %q until %v (%v), want %q until %v", c.loc, owner, until, err, c.owner, c.until)
			}
		}
		// More claims than one statement renews.
		var many []Loc
		for uid := range uint32(renewBatch + 5) {
			loc := Loc{Account: "m", Mailbox: "INBOX", UIDValidity: 1, UID: uid + 1}
			if _, err := l.Claim(ctx, Entry{Loc: loc}, "A", lease); err != nil {
				t.Fatal(err)
			}
			many = append(many, loc)
		}
		now = now.Add(lease / 2)
		if lost, err := l.RenewAll(ctx, "A", many, lease); err != nil || len(lost) != 0 {
			t.Fatalf("renewing %d claims: lost %v, %v", len(many), lost, err)
		}
		if _, until, _ := l.Claimant(ctx, many[len(many)-1]); !until.Equal(now.Add(lease)) {
			t.Errorf("the last of %d claims runs until %v, want %v", len(many), until, now.Add(lease))
		}
	})
}

// OfferAll records many messages as seen at once, more than one statement
// holds among them, and leaves the rows the ledger already has alone.
func TestOfferAll(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		entry := func(uid uint32) Entry {
			return Entry{Loc: Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: uid}, Key: triage.Key(fmt.Sprint("k", uid)),
				MessageID: fmt.Sprintf("<m%d@x>", uid), Sender: "c@x", Subject: "S"}
		}
		if _, err := l.Claim(ctx, entry(2), "A", time.Minute); err != nil {
			t.Fatal(err)
		}
		var es []Entry
		for uid := range uint32(offerBatch + 10) {
			es = append(es, entry(uid+1))
		}
		if added, err := l.OfferAll(ctx, es); err != nil || added != len(es)-1 {
			t.Fatalf("OfferAll of %d = %d, %v; want %d added", len(es), added, err, len(es)-1)
		}
		if added, err := l.OfferAll(ctx, es); err != nil || added != 0 {
			t.Errorf("OfferAll again = %d, %v; want none added", added, err)
		}
		for _, uid := range []uint32{1, offerBatch + 10} {
			got, err := l.Get(ctx, entry(uid).Loc)
			if err != nil || got.State != StateSeen || got.Key != entry(uid).Key || got.MessageID != entry(uid).MessageID || got.Sender != "c@x" {
				t.Errorf("row %d = %+v, %v; want seen, with its key, Message-ID and sender", uid, got, err)
			}
		}
		if got, err := l.Get(ctx, entry(2).Loc); err != nil || got.State != StateProcessing {
			t.Errorf("the claimed row after OfferAll = %+v, %v; want it processing", got, err)
		}
	})
}
