package mail_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"triage/internal/clients/mail"
	"triage/internal/ledger"
)

// With an Index (the store's outbox table) the outbox finds its replies
// there: a second send of one Message-ID is the existing reply, the loop
// checks count from the index, and no IndexFile is written. A row whose
// file is missing (a crash between the two) is a reply never written: the
// next send writes it.
func TestOutboxWithStoreIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := ledger.Open(ctx, ledger.Config{Path: filepath.Join(t.TempDir(), "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	open := func() *mail.Outbox {
		o, err := mail.NewOutbox(dir)
		if err != nil {
			t.Fatal(err)
		}
		o.UseIndex(l)
		return o
	}
	reply := func(id string, draft bool) *mail.Reply {
		return &mail.Reply{From: "support@example.com", To: "Jan <Jan@Example.org>", Subject: "Re: x", Body: "b", MessageID: id, Draft: draft}
	}
	o := open()
	first, err := o.Send(ctx, reply("<r1@example.com>", false))
	if err != nil || first.Existing {
		t.Fatalf("first send: %+v, %v", first, err)
	}
	again, err := open().Send(ctx, reply("<R1@example.com>", false)) // another run, the same Message-ID
	if err != nil || !again.Existing || again.Path != first.Path {
		t.Errorf("second send: %+v, %v; want the existing %s", again, err, first.Path)
	}
	if ok, err := open().SentReply(ctx, "r1@example.com"); err != nil || !ok {
		t.Errorf("SentReply = %v, %v", ok, err)
	}
	if n, err := open().RepliesSince(ctx, "jan@example.org", time.Now().Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("RepliesSince = %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, mail.IndexFile)); err == nil {
		t.Errorf("%s written although the index is in the store", mail.IndexFile)
	}

	os.Remove(first.Path)
	rewritten, err := open().Send(ctx, reply("<r1@example.com>", false))
	if err != nil || rewritten.Existing {
		t.Errorf("send after the file was lost: %+v, %v; want it written", rewritten, err)
	}
	if _, err := os.Stat(rewritten.Path); err != nil {
		t.Errorf("rewritten reply: %v", err)
	}

	d1, err := o.Send(ctx, reply("<d1@example.com>", true))
	if err != nil || !d1.Drafted {
		t.Fatalf("draft: %+v, %v", d1, err)
	}
	d2, err := open().Send(ctx, reply("<d1@example.com>", true))
	if err != nil || !d2.Existing || d2.Path != d1.Path {
		t.Errorf("second draft: %+v, %v; want the existing %s", d2, err, d1.Path)
	}
	if ok, _ := open().SentReply(ctx, "d1@example.com"); ok {
		t.Error("a draft counts as a reply sent")
	}
}
