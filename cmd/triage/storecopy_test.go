package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/store"
	"triage/internal/testkit/pgtest"
)

// snapshot is everything the ledger and the ticket store answer about
// their contents, through their own APIs.
type snapshot struct {
	Entries    []ledger.Entry
	Stored     []ledger.Stored
	Counts     map[ledger.State]int
	Replies    []replies.Reply
	Raw        map[string]string
	DraftStats []review.DraftStat
	AutoModes  []review.AutoMode
	Switches   []review.Switch
	Scan       [2]uint32
	Index      []any
	Tickets    []tickets.Listed
	States     []*tickets.State
}

func takeSnapshot(t *testing.T, l *ledger.Ledger, tk *tickets.SQLite) snapshot {
	t.Helper()
	ctx := context.Background()
	var s snapshot
	var err error
	if s.Entries, err = l.Recent(ctx, 1000, ""); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range s.Entries {
		ids = append(ids, e.MessageID)
	}
	if s.Stored, err = l.ByMessageIDs(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if s.Counts, err = l.Counts(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Replies, err = l.Replies().Replies(ctx, ""); err != nil {
		t.Fatal(err)
	}
	s.Raw = map[string]string{}
	for _, r := range s.Replies {
		s.Raw[string(r.Key)] = string(r.Raw)
	}
	if s.DraftStats, err = review.Of(l).DraftStats(ctx); err != nil {
		t.Fatal(err)
	}
	if s.AutoModes, err = review.Of(l).AutoModes(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Switches, err = review.Of(l).Switches(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if s.Scan[0], s.Scan[1], err = review.Of(l).SentScan(ctx, "acct", "Sent"); err != nil {
		t.Fatal(err)
	}
	// The outbox index of process --store: each row's file, the counts
	// by recipient and by sender, the staff notices about a customer.
	for _, k := range []replies.Kind{replies.KindReply, replies.KindDraft, replies.KindNotice} {
		path, ok, err := l.Replies().OutboxFile(ctx, "x-"+string(k)+"@us", k)
		if err != nil {
			t.Fatal(err)
		}
		s.Index = append(s.Index, path, ok)
	}
	for _, addr := range []string{"to@x.example", "from@x.example"} {
		n, err := l.Replies().OutboxCount(ctx, addr, time.Unix(0, 0), replies.KindReply, replies.KindDraft, replies.KindNotice)
		if err != nil {
			t.Fatal(err)
		}
		s.Index = append(s.Index, n)
	}
	n, err := l.Replies().OutboxNotices(ctx, "cust@x.example", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	s.Index = append(s.Index, n)
	if s.Tickets, err = tk.List(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, x := range s.Tickets {
		st, err := tk.Get(ctx, x.TicketID)
		if err != nil {
			t.Fatal(err)
		}
		s.States = append(s.States, st)
	}
	return s
}

// fill writes an installation's worth of history through the APIs.
func fill(t *testing.T, l *ledger.Ledger, tk *tickets.SQLite) {
	t.Helper()
	ctx := context.Background()
	loc := func(uid uint32) ledger.Loc {
		return ledger.Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 4000000000, UID: uid}
	}
	for i, st := range []ledger.State{ledger.StateReplied, ledger.StateDrafted, ledger.StateSkipped, ledger.StateFailed, ledger.StateNeedsHuman} {
		uid := uint32(i + 1)
		e := ledger.Entry{Loc: loc(uid), Key: triage.Key("key" + st), MessageID: "<in" + string(st) + "@x>", Sender: "c@x.example", Subject: "Re: " + string(st),
			Digest: "digest-" + string(st), TraceID: fmt.Sprintf("%032x", 0xabc0+i)}
		if _, err := l.Begin(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := l.Finish(ctx, e.Loc, st, triage.Reason("why-"+st), "valid-warranty"); err != nil {
			t.Fatal(err)
		}
		if err := l.SetOutcome(ctx, e.Loc, []byte(`{"status":"`+string(st)+`"}`), "Treść "+string(st), ledger.Usage{}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := l.MarkIMAPDone(ctx, e.Loc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := l.Begin(ctx, ledger.Entry{Loc: loc(9), Key: "kp", MessageID: "<p@x>"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Postpone(ctx, loc(9), "smtp-refused", "452 4.2.2 mailbox full"); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().PutPending(ctx, replies.Reply{Key: "keyreplied", MessageID: "<r1@us>", To: "c@x.example", InboundFrom: "c@x.example", Raw: []byte("From: us\r\n\r\nDzień dobry\x00\xff")}); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().MarkSent(ctx, "keyreplied"); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().MarkAppended(ctx, "keyreplied"); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().PutPending(ctx, replies.Reply{Key: "keydrafted", MessageID: "<d1@us>", To: "c@x.example", Raw: []byte("draft"), Kind: replies.KindDraft}); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().MarkDraftStored(ctx, "keydrafted"); err != nil {
		t.Fatal(err)
	}
	if _, err := review.Of(l).ResolveDraft(ctx, "keydrafted", replies.DraftEdited, 0.625, "<person@us>"); err != nil {
		t.Fatal(err)
	}
	// The draft's scenario and inbox, and what reply mode auto did there.
	if err := l.Finish(ctx, loc(2), ledger.StateDrafted, "", "valid-warranty"); err != nil {
		t.Fatal(err)
	}
	if _, err := review.Of(l).SwitchAutoMode(ctx, review.Switch{Scenario: "valid-warranty", Inbox: triage.Inbox{Account: "acct", Mailbox: "INBOX"}, Mode: triage.ReplySend,
		Window: review.Window{Reviewed: 30, SentAsIs: 29, Edited: 1}, MinReviewed: 30, MinSentAsIs: 90, Why: "ready"}); err != nil {
		t.Fatal(err)
	}
	if _, err := review.Of(l).CountAutoSend(ctx, "valid-warranty", triage.Inbox{Account: "acct", Mailbox: "INBOX"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Replies().PutPending(ctx, replies.Reply{Key: "kp", MessageID: "<p1@us>", To: "d@x.example", Raw: []byte("pending")}); err != nil {
		t.Fatal(err)
	}
	if err := review.Of(l).SetSentScan(ctx, "acct", "Sent", 4000000001, 77); err != nil {
		t.Fatal(err)
	}
	for i, k := range []replies.Kind{replies.KindReply, replies.KindDraft, replies.KindNotice} {
		if err := l.Replies().AddOutbox(ctx, "x-"+string(k)+"@us", k, "outbox/"+string(k)+".eml", "to@x.example", "from@x.example", "cust@x.example",
			time.Date(2026, 2, 1, 0, 0, i, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		tkt, err := tk.Create(ctx, tickets.Request{IdempotencyKey: k, SerialNumber: "SN-" + k, CustomerEmail: k + "@x.example", Priority: "normal", Summary: "Zgłoszenie " + k, MessageID: "<t" + k + "@x>"})
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range []string{"<n1@x>", "<n2@x>"} {
			if _, err := tk.AddNote(ctx, tkt.TicketID, tickets.Note{MessageID: id + k, From: k + "@x.example", Text: "note", At: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := tk.AddMessage(ctx, tkt.TicketID, tickets.Message{MessageID: "<out" + k + "@us>", Direction: tickets.Outbound, Subject: "Re"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tk.Takeover(ctx, "TKT-000002", "anna"); err != nil {
		t.Fatal(err)
	}
	// A ticket restored under its own, higher ID.
	if err := tk.Restore(ctx, tickets.State{TicketID: "TKT-000050", CustomerEmail: "old@x.example", Status: tickets.StatusOpen,
		Messages: []tickets.Message{{MessageID: "<old@x>", Direction: tickets.Inbound}}}); err != nil {
		t.Fatal(err)
	}
}

func TestFromSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ledgerPath, ticketsPath := filepath.Join(dir, "ledger.db"), filepath.Join(dir, "tickets.db")
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	src, err := ledger.Open(ctx, ledger.Config{Path: ledgerPath, Now: func() time.Time { now = now.Add(time.Second); return now }})
	if err != nil {
		t.Fatal(err)
	}
	srcT, err := tickets.OpenSQLite(ticketsPath)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, src, srcT)
	want := takeSnapshot(t, src, srcT)
	src.Close()
	srcT.Close()

	url := pgtest.URL(t)
	dst, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	n, err := copyFromSQLite(ctx, dst, ledgerPath, ticketsPath)
	if err != nil {
		t.Fatal(err)
	}
	wantN := copyCounts{Messages: 6, Replies: 3, SentScans: 1, OutboxIndex: 3, AutoModes: 1, Switches: 1, Tickets: 4, TicketMessages: 13, TicketNotes: 6}
	if diff := cmp.Diff(wantN, n); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}

	l, err := ledger.Open(ctx, ledger.Config{Store: dst})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tickets.New(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, takeSnapshot(t, l, tk)); diff != "" {
		t.Errorf("PostgreSQL store after the copy (-sqlite +postgres):\n%s", diff)
	}
	// The copy goes on where the files left off.
	got, err := tk.Create(ctx, tickets.Request{IdempotencyKey: "d", CustomerEmail: "d@x.example"})
	if err != nil || got.TicketID != "TKT-000051" {
		t.Errorf("first ticket after the copy = %+v, %v; want TKT-000051", got, err)
	}
	if got, err := tk.Create(ctx, tickets.Request{IdempotencyKey: "a"}); err != nil || got != (tickets.Ticket{TicketID: "TKT-000001", Status: tickets.StatusExisting}) {
		t.Errorf("idempotency key of a copied ticket = %+v, %v", got, err)
	}
	if err := l.Replies().PutPending(ctx, replies.Reply{Key: "keyreplied", MessageID: "<again@us>", Raw: []byte("x")}); !errors.Is(err, replies.ErrReplyExists) {
		t.Errorf("a second reply to a copied message: err = %v, want ErrReplyExists", err)
	}

	// A second copy would mix two histories: refused, nothing written.
	if _, err := copyFromSQLite(ctx, dst, ledgerPath, ticketsPath); !errors.Is(err, errStoreNotEmpty) {
		t.Errorf("copy into a used store: err = %v, want ErrNotEmpty", err)
	}
	if c, err := l.Counts(ctx); err != nil || c[ledger.StateReplied] != 1 {
		t.Errorf("counts after the refused copy = %v, %v", c, err)
	}
}

func TestFromSQLiteFailsWhole(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ledgerPath := filepath.Join(dir, "ledger.db")
	l, err := ledger.Open(ctx, ledger.Config{Path: ledgerPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, ledger.Entry{Loc: ledger.Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: 1}, Key: "k", State: ledger.StateReplied}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	dst, err := store.Open(ctx, pgtest.URL(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// The ticket file is not a SQLite database: nothing of the ledger is copied either.
	bad := filepath.Join(dir, "tickets.db")
	if err := os.WriteFile(bad, []byte("not a database, just text that goes on for a while ......"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := copyFromSQLite(ctx, dst, ledgerPath, bad); err == nil {
		t.Fatal("copy from a broken ticket file succeeded")
	}
	if err := prepareStore(ctx, dst); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dst.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages`).Scan(&n); err != nil || n != 0 {
		t.Errorf("messages after a failed copy = %d, %v; want 0", n, err)
	}
}
