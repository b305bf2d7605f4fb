package replies

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"triage/internal/clients/mail"

	"github.com/google/go-cmp/cmp"

	"triage"
)

// A draft goes to <outbox>/drafts/, complete and threaded like a reply, and
// nothing lands in the outbox itself but its line in the index.
func TestOutboxDraft(t *testing.T) {
	dir := t.TempDir()
	o, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &mail.Reply{
		From: "Wsparcie <support@example.com>", To: "jan@example.org", Subject: "Re: Gwarancja",
		Body: "Dzień dobry,\ngwarancja jest ważna.", InReplyTo: "<in@example.org>",
		References: []string{"<a@example.org>", "<in@example.org>"}, MessageID: "<triage-d1@example.com>", Date: date,
		Draft: true,
	}
	rc, err := o.Send(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	wantPath := filepath.Join(dir, mail.DraftsDir, "20261122T083000Z-triage-d1@example.com.eml")
	if diff := cmp.Diff(triage.Receipt{MessageID: "<triage-d1@example.com>", To: "jan@example.org", Path: wantPath, Drafted: true}, rc); diff != "" {
		t.Errorf("receipt (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"In-Reply-To: <in@example.org>", "References: <a@example.org> <in@example.org>",
		"Message-Id: <triage-d1@example.com>", "To: <jan@example.org>", "X-Unsent: 1"} {
		if !strings.Contains(string(raw), h+"\r\n") {
			t.Errorf("draft lacks %q:\n%s", h, raw)
		}
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	top, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(top) != 4 || top[0].Name() != IndexDB || top[1].Name() != IndexFile || top[2].Name() != LockFile || top[3].Name() != mail.DraftsDir {
		t.Errorf("outbox holds %v, want only the index, the lock and the drafts directory", top)
	}

	// A sent reply has no X-Unsent and stays in the outbox itself.
	r.Draft, r.MessageID = false, "<triage-s1@example.com>"
	rc, err = o.Send(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Drafted || filepath.Dir(rc.Path) != dir {
		t.Errorf("sent receipt = %+v, want status sent in %s", rc, dir)
	}
	if raw, _ := os.ReadFile(rc.Path); strings.Contains(string(raw), "X-Unsent") {
		t.Errorf("sent reply carries X-Unsent:\n%s", raw)
	}
}
