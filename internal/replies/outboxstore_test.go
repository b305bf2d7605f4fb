package replies_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/replies"
)

// With an Index (the store's outbox_index table, here on SQLite; process
// --store on PostgreSQL is cmd/triage's TestStoreCommands) the outbox asks
// it everything it would read from its directory: the existing reply or
// draft of a Message-ID (apart), the reply-loop checks, the per-sender
// limit (drafts count) and the notice bounds; no IndexFile is written. A
// row whose file is missing (a crash between the two) is a reply never
// written: the next send writes it.
func TestOutboxWithStoreIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := ledger.Open(ctx, ledger.Config{Path: filepath.Join(t.TempDir(), "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	open := func() *replies.Outbox { // each is another run of triage process
		o, err := replies.NewOutbox(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.UseIndex(ctx, l.Replies()); err != nil {
			t.Fatal(err)
		}
		o.SetPerSenderLimit(3, time.Hour)
		o.SetNoticeLimits(triage.NoticeLimits{PerCustomer: 1})
		return o
	}
	reply := func(id, to string, draft bool) *mail.Reply {
		return &mail.Reply{From: "support@example.com", To: to, Subject: "Re: x", Body: "b", MessageID: id, Draft: draft,
			InboundFrom: "Jan <jan@example.org>"}
	}
	first, err := open().Send(ctx, reply("<r1@example.com>", "Jan <Jan@Example.org>", false))
	if err != nil || first.Existing {
		t.Fatalf("first send: %+v, %v", first, err)
	}
	again, err := open().Send(ctx, reply("<R1@example.com>", "jan@example.org", false))
	if err != nil || !again.Existing || again.Path != first.Path {
		t.Errorf("second send of the Message-ID: %+v, %v; want the existing %s", again, err, first.Path)
	}
	os.Remove(first.Path)
	rewritten, err := open().Send(ctx, reply("<r1@example.com>", "jan@example.org", false))
	if err != nil || rewritten.Existing {
		t.Errorf("send after the file was lost: %+v, %v; want it written", rewritten, err)
	}
	if _, err := os.Stat(rewritten.Path); err != nil {
		t.Errorf("rewritten reply: %v", err)
	}
	draft, err := open().Send(ctx, reply("<r1@example.com>", "jan@example.org", true))
	if err != nil || draft.Existing || !draft.Drafted {
		t.Errorf("a draft with a reply's Message-ID: %+v, %v; want it written apart", draft, err)
	}
	if again, err := open().Send(ctx, reply("<r1@example.com>", "jan@example.org", true)); err != nil || !again.Existing {
		t.Errorf("second draft: %+v, %v", again, err)
	}
	o := open()
	// Find (process's look-up before anything runs) reads the store's index too.
	if rc, _, ok, err := o.Find(ctx, "<r1@example.com>"); err != nil || !ok || rc.Path != rewritten.Path || rc.Drafted {
		t.Errorf("Find = %+v, %v, %v; want the reply at %s", rc, ok, err, rewritten.Path)
	}
	if _, _, ok, err := o.Find(ctx, "<r9@example.com>"); err != nil || ok {
		t.Errorf("Find of an unknown Message-ID = %v, %v", ok, err)
	}
	if ok, err := o.SentReply(ctx, "r1@example.com"); err != nil || !ok {
		t.Errorf("SentReply = %v, %v", ok, err)
	}
	since := time.Now().Add(-time.Hour)
	if n, err := o.RepliesSince(ctx, "jan@example.org", since); err != nil || n != 1 {
		t.Errorf("RepliesSince = %d, %v; want 1 (drafts do not count)", n, err)
	}
	if n, err := o.CountedSince(ctx, "JAN@example.org", since); err != nil || n != 2 {
		t.Errorf("CountedSince = %d, %v; want 2 (the reply and the draft)", n, err)
	}
	if raw, ok, err := o.ReplyRaw(ctx, "<r1@example.com>"); err != nil || !ok || len(raw) == 0 {
		t.Errorf("ReplyRaw: %d bytes, %v, %v", len(raw), ok, err)
	}
	// The third counting against jan (as the sender answered) is the
	// last under a limit of 3.
	if _, err := open().Send(ctx, reply("<r2@example.com>", "other@example.org", false)); err != nil {
		t.Fatalf("third: %v", err)
	}
	var le *replies.LimitError
	if _, err := open().Send(ctx, reply("<r3@example.com>", "third@example.org", false)); !errors.As(err, &le) || le.Address != "jan@example.org" {
		t.Errorf("fourth to jan's mail: %v; want the per-sender limit on jan@example.org", err)
	}
	notice := &mail.Reply{From: "support@example.com", To: "staff@example.com", Subject: "Eskalacja", Body: "b", MessageID: "<n1@example.com>",
		Notice: true, InboundFrom: "Jan@example.org"}
	if _, err := open().Send(ctx, notice); err != nil {
		t.Fatalf("notice: %v", err)
	}
	notice.MessageID = "<n2@example.com>"
	var ne *replies.LimitError
	if _, err := open().Send(ctx, notice); !errors.As(err, &ne) || ne.Reason != triage.ReasonNoticeLimit {
		t.Errorf("second notice about jan within the hour: %v; want %s", err, triage.ReasonNoticeLimit)
	}
	if _, err := os.Stat(filepath.Join(dir, replies.IndexFile)); err == nil {
		t.Errorf("%s written although the index is in the store", replies.IndexFile)
	}

}

// Moving an outbox to the store: the first run with it copies what the
// directory holds (its index file, and a reply file the file does not
// list), so no earlier reply is written again; a later run without the
// store adds lines the next run with it copies.
func TestOutboxIndexMovesToTheStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	send := func(o *replies.Outbox, id string) mail.Reply {
		t.Helper()
		r := mail.Reply{From: "support@example.com", To: "jan@example.org", Subject: "Re: x", Body: "b", MessageID: id}
		rc, err := o.Send(ctx, &r)
		if err != nil {
			t.Fatal(err)
		}
		if rc.Existing {
			t.Fatalf("%s: already there", id)
		}
		return r
	}
	plain := func() *replies.Outbox {
		o, err := replies.NewOutbox(dir)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	send(plain(), "<a@example.com>")
	// Another program's reply file, which no index lists.
	other, err := mail.Render(&mail.Reply{From: "support@example.com", To: "ola@example.org", Subject: "Re: y", Body: "b", MessageID: "<b@example.com>", Date: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "20260101T000000Z-b@example.com.eml"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ctx, ledger.Config{Path: filepath.Join(t.TempDir(), "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stored := func() *replies.Outbox {
		o := plain()
		if err := o.UseIndex(ctx, l.Replies()); err != nil {
			t.Fatal(err)
		}
		return o
	}
	o := stored()
	for _, id := range []string{"<a@example.com>", "<b@example.com>"} {
		if ok, err := o.SentReply(ctx, id); err != nil || !ok {
			t.Errorf("after the move, SentReply(%s) = %v, %v", id, ok, err)
		}
		rc, err := o.Send(ctx, &mail.Reply{From: "support@example.com", To: "jan@example.org", Subject: "Re: x", Body: "b", MessageID: id})
		if err != nil || !rc.Existing {
			t.Errorf("after the move, %s sent again: %+v, %v", id, rc, err)
		}
	}
	send(plain(), "<c@example.com>") // a run without the store
	if ok, err := stored().SentReply(ctx, "<c@example.com>"); err != nil || !ok {
		t.Errorf("a reply of a run without the store: SentReply = %v, %v", ok, err)
	}
	// And back: a run without the store finds what a run with it wrote.
	send(stored(), "<d@example.com>")
	o = plain()
	if ok, err := o.SentReply(ctx, "<d@example.com>"); err != nil || !ok {
		t.Errorf("a reply of a run with the store: SentReply = %v, %v", ok, err)
	}
	rc, err := o.Send(ctx, &mail.Reply{From: "support@example.com", To: "jan@example.org", Subject: "Re: x", Body: "b", MessageID: "<d@example.com>"})
	if err != nil || !rc.Existing {
		t.Errorf("a reply of a run with the store, sent again without it: %+v, %v", rc, err)
	}
}

// TestOutboxSharedByTwoProcesses: two outboxes on one directory (two
// overlapping `triage process` runs) sending the same replies at once, each
// dated by its own clock, write each reply once, with the index in the
// directory or in the store: the second finds the first's reply, however
// the two interleave.
func TestOutboxSharedByTwoProcesses(t *testing.T) {
	for _, index := range []string{"file", "store"} {
		t.Run(index, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var l *ledger.Ledger
			if index == "store" {
				var err error
				if l, err = ledger.Open(ctx, ledger.Config{Path: filepath.Join(t.TempDir(), "store.db")}); err != nil {
					t.Fatal(err)
				}
				defer l.Close()
			}
			const n = 100
			var wg sync.WaitGroup
			receipts := make([][]triage.Receipt, 2)
			for p := range 2 {
				o, err := replies.NewOutbox(dir)
				if err != nil {
					t.Fatal(err)
				}
				if l != nil {
					if err := o.UseIndex(ctx, l.Replies()); err != nil {
						t.Fatal(err)
					}
				}
				receipts[p] = make([]triage.Receipt, n)
				wg.Go(func() {
					for i := range n {
						r := &mail.Reply{From: "support@example.com", To: fmt.Sprintf("c%d@example.org", i), Subject: "Re: x", Body: "b",
							MessageID: fmt.Sprintf("<triage-%d@example.com>", i), Date: time.Date(2026, 11, 22, 8+p, 30, 0, 0, time.UTC)}
						rc, err := o.Send(ctx, r)
						if err != nil {
							t.Error(err)
							return
						}
						receipts[p][i] = rc
					}
				})
			}
			wg.Wait()
			files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != n {
				t.Errorf("%d reply files for %d replies", len(files), n)
			}
			for i := range n {
				a, b := receipts[0][i], receipts[1][i]
				if a.Path != b.Path || a.Existing == b.Existing {
					t.Errorf("reply %d: receipts %+v and %+v; want one written, the other naming it", i, a, b)
					break
				}
			}
		})
	}
}
