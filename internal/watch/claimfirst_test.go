package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
)

// A daemon that does not poll claims a message by its ledger row before it
// reads it over IMAP: a claim another daemon holds costs it no fetch. Here
// daemon B works on a message; a copy of it (its key) waits in the ledger,
// so every claim the helper tries on the copy is lost.
func TestSharedHelperClaimsBeforeFetching(t *testing.T) {
	ctx := context.Background()
	var wire lockedBuffer
	e, _ := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{Debug: &wire}).Target())
	raw := []byte("From: Jan <jan@customer.example>\r\nTo: support@example.com\r\nSubject: Gwarancja\r\nMessage-ID: <copy@customer.example>\r\n\r\nSN-1\r\n")
	first := e.tgt.Append(t, "INBOX", raw)
	copied := e.tgt.Append(t, "INBOX", raw)
	sel, err := e.tgt.Client(t).Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	inbox := e.inbox()
	key := keyOf("<copy@customer.example>", "jan@customer.example")
	at := func(uid uint32) ledger.Loc {
		return ledger.Loc{Account: inbox.Account, Mailbox: inbox.Mailbox, UIDValidity: sel.UIDValidity, UID: uid}
	}
	if _, err := e.ledger.Claim(ctx, ledger.Entry{Loc: at(uint32(first)), Key: key, MessageID: "<copy@customer.example>", Sender: "jan@customer.example"}, "daemon-B", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ledger.Offer(ctx, ledger.Entry{Loc: at(uint32(copied)), Key: key, MessageID: "<copy@customer.example>", Sender: "jan@customer.example"}); err != nil {
		t.Fatal(err)
	}
	// Another daemon polls the inbox: this one helps.
	poll := e.ledger.PollLock(inbox.Account, inbox.Mailbox)
	if ok, err := poll.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("poll lock: %v, %v", ok, err)
	}
	defer poll.Release()

	var log lockedBuffer
	w := e.watcher(func(c *Config) {
		c.Owner, c.Interval, c.Concurrency = "daemon-A", 20*time.Millisecond, 2
		c.Logger = log.debugLogger()
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	for strings.Count(log.String(), "message claimed by another daemon") < 3 {
		select {
		case err := <-done:
			t.Fatalf("Run: %v\n%s", err, log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, line := range strings.Split(wire.String(), "\n") {
		if strings.Contains(strings.ToUpper(line), "FETCH") {
			t.Errorf("the helper read a message it did not claim: %s", line)
		}
	}
	got, err := e.ledger.Get(ctx, at(uint32(copied)))
	if err != nil {
		t.Fatal(err)
	}
	if got.State != ledger.StateSeen || got.Attempts != 0 {
		t.Errorf("the copy after lost claims: state %q, %d attempts; want seen, none", got.State, got.Attempts)
	}
	if n := len(e.sink.Messages()) + e.proc.Calls(); n != 0 {
		t.Errorf("the helper sent or processed %d messages, want none", n)
	}
}

// A helper claims, then reads: every message the poller recorded is
// answered once, read by the daemon that claimed it, and a message gone
// from the mailbox before its claim is forgotten, not answered.
func TestSharedHelperReadsWhatItClaimed(t *testing.T) {
	ctx := context.Background()
	e, _ := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	var ids []string
	for i := range 6 {
		ids = append(ids, e.deliver(i, fmt.Sprintf("klient%d@customer.example", i), "Gwarancja"))
	}
	sel, err := e.tgt.Client(t).Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	inbox := e.inbox()
	// The poller recorded the six messages and a seventh that is gone.
	poller := e.watcher(func(c *Config) { c.Owner = "daemon-P" })
	c, err := poller.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	b := &box{uidValidity: sel.UIDValidity, folders: map[string]bool{}}
	for uid := range 6 {
		m, err := poller.peek(ctx, c, b, imap.UID(uid+1))
		if err != nil || m == nil {
			t.Fatalf("peek %d: %v, %v", uid+1, m, err)
		}
		if _, err := e.ledger.Offer(ctx, m.entry()); err != nil {
			t.Fatal(err)
		}
	}
	gone := ledger.Entry{Loc: ledger.Loc{Account: inbox.Account, Mailbox: inbox.Mailbox, UIDValidity: sel.UIDValidity, UID: 99},
		Key: "msgid:<gone@customer.example>|ola@customer.example", MessageID: "<gone@customer.example>", Sender: "ola@customer.example"}
	if _, err := e.ledger.Offer(ctx, gone); err != nil {
		t.Fatal(err)
	}
	poll := e.ledger.PollLock(inbox.Account, inbox.Mailbox)
	if ok, err := poll.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("poll lock: %v, %v", ok, err)
	}
	defer poll.Release()

	var wg sync.WaitGroup
	for _, owner := range []string{"daemon-A", "daemon-B"} {
		w := e.watcher(func(c *Config) { c.Owner, c.Interval, c.Concurrency = owner, 20*time.Millisecond, 2 })
		wg.Go(func() {
			if err := w.RunOnce(ctx); err != nil {
				t.Errorf("%s: %v", owner, err)
			}
		})
	}
	wg.Wait()
	want := map[string]int{}
	for _, id := range ids {
		want[id] = 1
	}
	if diff := cmp.Diff(want, e.repliesTo()); diff != "" {
		t.Errorf("replies by In-Reply-To (-want +got):\n%s", diff)
	}
	if _, err := e.ledger.Get(ctx, gone.Loc); err != ledger.ErrNotFound {
		t.Errorf("the row of the message gone from the mailbox: %v, want it forgotten", err)
	}
}

// claimOrder starts at the daemon's offset and wraps around, leaves what
// skip names, and lets only the oldest listed message of a sender or key
// start.
func TestClaimOrder(t *testing.T) {
	entry := func(uid uint32, sender string) ledger.Entry {
		return ledger.Entry{Loc: ledger.Loc{UID: uid}, Key: triage.Key(fmt.Sprint("k", uid)), Sender: sender}
	}
	cands := []ledger.Entry{entry(1, "a@x"), entry(2, "b@x"), entry(3, "a@x"), entry(4, "c@x"), entry(5, "d@x")}
	none := func(ledger.Entry, []string) bool { return false }
	uids := func(order []int) []uint32 {
		var u []uint32
		for _, i := range order {
			u = append(u, cands[i].UID)
		}
		return u
	}
	for _, tc := range []struct {
		name   string
		offset uint32
		skip   func(ledger.Entry, []string) bool
		want   []uint32
	}{
		{"oldest first", 0, none, []uint32{1, 2, 4, 5}},
		{"from the offset", 2, none, []uint32{4, 5, 1, 2}},
		{"offset wraps", 6, none, []uint32{4, 5, 1, 2}},
		{"skipped", 1, func(e ledger.Entry, _ []string) bool { return e.UID == 4 }, []uint32{2, 5, 1}},
		{"a busy sender waits, and so does its later mail", 0, func(_ ledger.Entry, keys []string) bool { return keys[1] == "addr:a@x" }, []uint32{2, 4, 5}},
		{"nothing left", 3, func(ledger.Entry, []string) bool { return true }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, uids(claimOrder(cands, tc.offset, tc.skip))); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
	if ownerOffset("daemon-A") == ownerOffset("daemon-B") {
		t.Errorf("two daemons' offsets are the same: %d", ownerOffset("daemon-A"))
	}
}

func (l *lockedBuffer) debugLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// The claims on the messages a watcher works on at once are renewed
// together while it works: with a lease far shorter than the pipeline,
// another daemon cannot claim either message, and each is answered once.
func TestSharedClaimsInFlightRenewed(t *testing.T) {
	ctx := context.Background()
	e, url := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	const lease = 300 * time.Millisecond
	e.proc.delay = 6 * lease
	var ids []string
	for i := range 3 {
		ids = append(ids, e.deliver(i, fmt.Sprintf("klient%d@customer.example", i), "Gwarancja"))
	}
	w := e.watcher(func(c *Config) { c.Owner, c.Lease, c.Concurrency = "daemon-A", lease, 3 })
	done := make(chan error, 1)
	go func() { done <- w.RunOnce(ctx) }()
	ledB := openLedger(t, url)
	deadline := time.Now().Add(10 * time.Second)
	var held []ledger.Entry
	for len(held) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher holds %d claims, want 3", len(held))
		}
		time.Sleep(20 * time.Millisecond)
		es, err := e.ledger.Recent(ctx, 10, ledger.StateProcessing)
		if err != nil {
			t.Fatal(err)
		}
		held = es
	}
	time.Sleep(3 * lease) // the first leases would have run out
	for _, h := range held {
		if _, err := ledB.Claim(ctx, h, "daemon-B", lease); !errors.Is(err, ledger.ErrClaimed) {
			t.Errorf("daemon B claims %v while A works on it: %v, want ErrClaimed", h.Loc, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	want := map[string]int{}
	for _, id := range ids {
		want[id] = 1
	}
	if diff := cmp.Diff(want, e.repliesTo()); diff != "" {
		t.Errorf("replies by In-Reply-To (-want +got):\n%s", diff)
	}
}
