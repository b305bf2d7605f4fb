package mail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
)

// The outbox transport writes the rendered reply, headed by the outbox's own
// headers, at <dir>/<UTC stamp>-<id>.eml (a draft under drafts/), and
// nothing else: it keeps no index and takes no lock.
func TestOutboxTransport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "outbox") // created by NewOutbox
	o, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reply{
		From: "Wsparcie <support@example.com>", To: "Jan <jan@example.org>", Subject: "Re: Gwarancja",
		Body: "Dzień dobry.", InReplyTo: "<in@example.org>", References: []string{"<in@example.org>"},
		MessageID: "<triage-0123/x@example.com>", Date: date, InboundDigest: "d1",
	}
	rc, err := o.Send(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	wantPath := filepath.Join(dir, "20261122T083000Z-triage-0123_x@example.com.eml")
	if diff := cmp.Diff(triage.Receipt{MessageID: "<triage-0123/x@example.com>", To: "jan@example.org", Path: wantPath}, rc); diff != "" {
		t.Errorf("receipt (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(rc.Path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(InboundHeader+": d1\r\n"+string(want), string(raw)); diff != "" {
		t.Errorf("file content (-want +got):\n%s", diff)
	}

	notice := &Reply{From: "support@example.com", To: "staff@example.com", Subject: "x", Body: "x", MessageID: "<n@example.com>", Date: date,
		Notice: true, InboundFrom: "cust@\r\nexample.org"}
	f, err := o.Prepare(notice)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(f.Raw), NoticeHeader+": cust@example.org\r\n") {
		t.Errorf("notice file starts %q, want its %s", f.Raw[:40], NoticeHeader)
	}

	r.Draft, r.MessageID = true, "<triage-d1@example.com>"
	rc, err = o.Send(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, DraftsDir, "20261122T083000Z-triage-d1@example.com.eml"); rc.Path != want || !rc.Drafted {
		t.Errorf("draft receipt %+v, want drafted at %s", rc, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name() != "20261122T083000Z-triage-0123_x@example.com.eml" || entries[1].Name() != DraftsDir {
		t.Errorf("outbox holds %v, want the reply and the drafts directory", entries)
	}
}

// FileID and FileIDOf: the Message-ID in an outbox file's name.
func TestOutboxFileID(t *testing.T) {
	for id, want := range map[string]string{"<a/b c@x.example>": "a_b_c@x.example", "<>": "reply", "<" + strings.Repeat("x", 120) + ">": strings.Repeat("x", 100)} {
		if got := FileID(id); got != want {
			t.Errorf("FileID(%q) = %q, want %q", id, got, want)
		}
	}
	for name, want := range map[string]string{"20261122T083000Z-a@x.eml": "a@x", ".index.jsonl": "", "x.eml": "", "20261122T083000Z-a@x.txt": ""} {
		if got := FileIDOf(name); got != want {
			t.Errorf("FileIDOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestOutboxErrors(t *testing.T) {
	if _, err := NewOutbox(""); err == nil {
		t.Error("empty directory accepted")
	}
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Send(context.Background(), &Reply{From: "a@example.com", To: "b@example.com, c@example.com"}); err == nil {
		t.Error("two recipients accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Send(ctx, &Reply{From: "a@example.com", To: "b@example.com"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Send after cancel: %v", err)
	}
}

// TestOutboxSyncsTheName: a reply's file is renamed into place, then its
// directory is synced, so the name survives a power failure before Send
// returns. When that sync fails, Send fails and the file stays. A first
// draft also syncs the new drafts directory's name in the outbox.
func TestOutboxSyncsTheName(t *testing.T) {
	dir := t.TempDir()
	o, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	var synced []string
	var fail error
	defer func(f func(string) error) { syncDir = f }(syncDir)
	syncDir = func(d string) error {
		entries, _ := os.ReadDir(d)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		synced = append(synced, fmt.Sprintf("%s: %s", d, strings.Join(names, " ")))
		return fail
	}
	r := &Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	reply := "20261122T083000Z-triage-1@example.com.eml"

	fail = errors.New("input/output error")
	if rc, err := o.Send(context.Background(), r); !errors.Is(err, fail) {
		t.Fatalf("Send whose directory sync fails: %+v, %v; want that error", rc, err)
	}
	fail = nil
	r.Draft, r.MessageID = true, "<triage-2@example.com>"
	if _, err := o.Send(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	drafts := filepath.Join(dir, DraftsDir)
	want := []string{
		dir + ": " + reply, // the name already there when its directory is synced
		dir + ": " + reply + " " + DraftsDir,
		drafts + ": 20261122T083000Z-triage-2@example.com.eml",
	}
	if diff := cmp.Diff(want, synced); diff != "" {
		t.Errorf("directory syncs (-want +got):\n%s", diff)
	}
}
