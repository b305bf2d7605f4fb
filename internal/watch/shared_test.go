package watch

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/store"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
)

// newSharedEnv is newEnv on a PostgreSQL store: the ledger several daemons
// share.
func newSharedEnv(t *testing.T, tgt mailtest.Target) (*env, string) {
	t.Helper()
	e := newEnv(t, tgt)
	url := pgtest.URL(t)
	e.ledger = openLedger(t, url)
	s, err := replies.NewLedgerSender(replies.LedgerSenderConfig{Replies: e.ledger.Replies(), Next: e.smtp, Domain: "example.com", Limits: Limits{}.Replies(), Inbox: e.inbox()})
	if err != nil {
		t.Fatal(err)
	}
	e.proc.sender = s
	return e, url
}

func openLedger(t *testing.T, target string) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(context.Background(), ledger.Config{Path: target})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// A pending reply whose message another daemon holds a live claim on may be
// going out this moment: a connecting daemon leaves it (and the message)
// alone. Once that claim's lease runs out (the daemon died), the reply is
// settled by the Sent folder, never sent again.
func TestSharedPendingLeftToItsLiveClaimant(t *testing.T) {
	ctx := context.Background()
	e, _ := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{Mailboxes: []string{"Sent"}}).Target())
	c := e.tgt.Client(t)
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	id := e.deliver(1, "jan@customer.example", "Gwarancja")
	key := keyOf(id, "jan@customer.example")
	loc := ledger.Loc{Account: e.tgt.User, Mailbox: "INBOX", UIDValidity: sel.UIDValidity, UID: 1}
	// Daemon B claimed the message and recorded its reply; it is sending.
	const lease = 1500 * time.Millisecond
	if _, err := e.ledger.Claim(ctx, ledger.Entry{Loc: loc, Key: key, MessageID: id}, "daemon-B", lease); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: "<r1@example.com>", To: "jan@customer.example", Raw: []byte("x"),
		Account: e.tgt.User, Mailbox: "INBOX"}); err != nil {
		t.Fatal(err)
	}
	w := e.runOnce(func(c *Config) { c.SentFolder = "Sent" })
	if r, err := e.ledger.Replies().GetReply(ctx, key); err != nil || r.State != replies.ReplyPending {
		t.Errorf("B's reply after A's run: %q (%v), want still pending", r.State, err)
	}
	if got := w.Stats().ByState; len(got) != 0 {
		t.Errorf("A finished B's message: %v", got)
	}
	if n := len(e.sink.Messages()) + e.proc.Calls(); n != 0 {
		t.Errorf("A sent or processed B's message (%d)", n)
	}
	// B died: after its lease, the reply (not in Sent) goes to a person.
	time.Sleep(lease + 200*time.Millisecond)
	w = e.runOnce(func(c *Config) { c.SentFolder = "Sent" })
	if r, _ := e.ledger.Replies().GetReply(ctx, key); r.State != replies.ReplyNeedsHuman {
		t.Errorf("reply after B's lease ran out: %q, want %q", r.State, replies.ReplyNeedsHuman)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateNeedsHuman: 1}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	if n := len(e.sink.Messages()); n != 0 {
		t.Errorf("sent %d replies, want none (never twice)", n)
	}
}

// Two inboxes on one store: one inbox's pending draft is neither stored in
// the other's Drafts folder nor discarded by the other's Sent folder scan,
// and its pending reply is not settled by the other.
func TestSharedOtherInboxLeftAlone(t *testing.T) {
	ctx := context.Background()
	e, _ := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{Mailboxes: []string{"Sent"}}).Target())
	e.proc.draft = true
	for _, r := range []replies.Reply{
		{Key: "other-draft", MessageID: "<d@example.com>", To: "x@customer.example", Raw: []byte("Subject: other\r\n\r\nx\r\n"), Kind: replies.KindDraft, Account: "brand-b@example.com", Mailbox: "INBOX"},
		{Key: "other-reply", MessageID: "<r@example.com>", To: "x@customer.example", Raw: []byte("Subject: other\r\n\r\nx\r\n"), Account: "brand-b@example.com", Mailbox: "INBOX"},
	} {
		if err := e.ledger.Replies().PutPending(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	e.deliver(1, "jan@customer.example", "Gwarancja")
	e.runOnce(func(c *Config) {
		c.SentFolder = "Sent"
		c.DraftWindow = time.Nanosecond // every draft without a reply is stale at once
	})
	drafts := summary(e.mailbox(DefaultDraftsFolder), DefaultKeyword)
	if diff := cmp.Diff([]string{"Re: Gwarancja +seen"}, drafts); diff != "" {
		t.Errorf("Drafts (-want +got):\n%s", diff)
	}
	for key, want := range map[string]replies.ReplyState{"other-draft": replies.DraftPending, "other-reply": replies.ReplyPending} {
		r, err := e.ledger.Replies().GetReply(ctx, triage.Key(key))
		if err != nil || r.State != want || r.Outcome != "" {
			t.Errorf("the other inbox's %s: state %q outcome %q (%v), want %q and no outcome", key, r.State, r.Outcome, err, want)
		}
	}
}

// Two daemons on one inbox and one store: one polls, the other helps; both
// work; every message is answered once. When the poller stops, the helper
// takes over polling and answers what arrives next.
func TestSharedPollerAndHelper(t *testing.T) {
	e, url := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	procA := &fakeProc{sender: e.proc.sender, delay: 30 * time.Millisecond}
	ledB := openLedger(t, url) // the other daemon's own connections
	senderB, err := replies.NewLedgerSender(replies.LedgerSenderConfig{Replies: ledB.Replies(), Next: e.smtp, Domain: "example.com", Limits: Limits{}.Replies(), Inbox: e.inbox()})
	if err != nil {
		t.Fatal(err)
	}
	procB := &fakeProc{sender: senderB, delay: 30 * time.Millisecond}
	var logA, logB lockedBuffer
	a := e.watcher(func(c *Config) {
		c.Processor, c.Owner, c.Concurrency, c.Interval = procA, "daemon-A", 2, 50*time.Millisecond
		c.Logger = logA.logger()
	})
	b := e.watcher(func(c *Config) {
		c.Processor, c.Ledger, c.Owner, c.Concurrency, c.Interval = procB, ledB, "daemon-B", 2, 50*time.Millisecond
		c.Logger = logB.logger()
	})
	var ids []string
	for i := range 30 {
		ids = append(ids, e.deliver(i, "klient"+string(rune('a'+i%26))+"@customer.example", "Gwarancja"))
	}
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctxA); err != nil {
			t.Errorf("A: %v", err)
		}
	})
	wg.Go(func() {
		if err := b.Run(ctxB); err != nil {
			t.Errorf("B: %v", err)
		}
	})
	defer func() { stopA(); stopB(); wg.Wait() }()
	answered := func(ids []string) bool {
		n := e.repliesTo()
		for _, id := range ids {
			if n[id] != 1 {
				return false
			}
		}
		return true
	}
	e.sink.WaitFor(t, func() bool { return answered(ids) })
	if procA.Calls() == 0 || procB.Calls() == 0 {
		t.Errorf("calls: A %d, B %d; want both daemons to work", procA.Calls(), procB.Calls())
	}
	polls := func(l *lockedBuffer) bool { return strings.Contains(l.String(), "polling this inbox") }
	if polls(&logA) == polls(&logB) {
		t.Errorf("polling: A %v, B %v; want exactly one\nA:\n%s\nB:\n%s", polls(&logA), polls(&logB), logA.String(), logB.String())
	}
	// The poller stops; the other takes the poll lock over and answers
	// new mail.
	other, stop := &logB, stopA
	if polls(&logB) {
		other, stop = &logA, stopB
	}
	stop()
	for !polls(other) {
		time.Sleep(20 * time.Millisecond)
	}
	late := e.deliver(100, "late@customer.example", "Gwarancja")
	e.sink.WaitFor(t, func() bool { return answered(append(ids, late)) })
	for id, n := range e.repliesTo() {
		if n != 1 {
			t.Errorf("%s answered %d times", id, n)
		}
	}
}

// lockedBuffer collects a watcher's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// A daemon whose claim is taken over (its lease ran out while it stalled)
// stops working on the message at its next heartbeat: its pipeline is
// cancelled, nothing is sent or recorded, and the claim stays the new
// claimant's.
func TestSharedLostClaimStopsThePipeline(t *testing.T) {
	ctx := context.Background()
	e, url := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	e.proc.hung = make(chan struct{}, 1)
	e.deliver(1, "jan@customer.example", "hang on")
	var log lockedBuffer
	w := e.watcher(func(c *Config) { c.Lease, c.Owner, c.Logger = 300*time.Millisecond, "daemon-A", log.logger() })
	done := make(chan error, 1)
	go func() { done <- w.RunOnce(ctx) }()
	<-e.proc.hung
	db, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Daemon B took the message over (A's lease ran out while it stalled).
	if _, err := db.ExecContext(ctx, `UPDATE messages SET claimant = 'daemon-B', lease_until = ?`, time.Now().Add(time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunOnce: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pipeline went on after the claim was lost")
	}
	if !strings.Contains(log.String(), "claim on the message lost") {
		t.Errorf("no lost claim logged:\n%s", log.String())
	}
	if got := w.Stats().ByState; len(got) != 0 || len(e.sink.Messages()) != 0 {
		t.Errorf("A finished the message (%v) or sent %d replies; want neither", got, len(e.sink.Messages()))
	}
	es, err := e.ledger.Recent(ctx, 10, "")
	if err != nil || len(es) != 1 {
		t.Fatalf("ledger = %v, %v", es, err)
	}
	if owner, _, _ := e.ledger.Claimant(ctx, es[0].Loc); owner != "daemon-B" || es[0].State != ledger.StateProcessing {
		t.Errorf("after A stopped: claimant %q, state %q; want daemon-B's, processing", owner, es[0].State)
	}
}

// A daemon died after recording a message's final state and before its
// flag and move: once the lease runs out, the idle poller of the inbox
// settles the message, without waiting for new mail.
func TestSharedPollerSettlesWhatADeadDaemonLeft(t *testing.T) {
	ctx := context.Background()
	e, _ := newSharedEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	// The dead daemon's message: already flagged by nobody, so only the
	// ledger knows it is unsettled (a search for unflagged mail skips it).
	uid := e.tgt.Append(t, "INBOX", []byte("From: Ola <ola@customer.example>\r\nSubject: Gwarancja\r\nMessage-ID: <dead@customer.example>\r\n\r\nSN-1\r\n"), imap.Flag(DefaultKeyword))
	first := e.deliver(1, "jan@customer.example", "Gwarancja")
	w := e.watcher(func(c *Config) { c.Owner, c.Interval = "daemon-A", 50*time.Millisecond })
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	defer func() { stop(); <-done }()
	e.sink.WaitFor(t, func() bool { return e.repliesTo()[first] == 1 })
	time.Sleep(200 * time.Millisecond) // the poller idles
	sel, err := e.tgt.Client(t).Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	loc := ledger.Loc{Account: e.tgt.User, Mailbox: "INBOX", UIDValidity: sel.UIDValidity, UID: uint32(uid)}
	dead := ledger.Entry{Loc: loc, Key: keyOf("<dead@customer.example>", "ola@customer.example"), MessageID: "<dead@customer.example>"}
	claimed, err := e.ledger.Claim(ctx, dead, "daemon-B", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	claimed.State = ledger.StateNeedsHuman
	if err := e.ledger.Record(ctx, claimed); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := e.ledger.Get(ctx, loc)
		if err == nil && got.IMAPDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the message daemon B left final but unsettled is still unsettled: %+v, %v", got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := summary(e.mailbox(DefaultFailedFolder), DefaultKeyword); len(got) != 1 || !strings.HasPrefix(got[0], "Gwarancja") {
		t.Errorf("%s = %v, want the dead daemon's message moved there", DefaultFailedFolder, got)
	}
}
