package replies

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"triage/internal/atomicfile"
	"triage/internal/clients/mail"

	"github.com/google/go-cmp/cmp"

	"triage"
)

// date is the date of the replies the tests write.
var date = time.Date(2026, 11, 22, 9, 30, 0, 0, time.FixedZone("CET", 3600))

func TestOutbox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "outbox") // created by NewOutbox
	o, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &mail.Reply{
		From: "Wsparcie <support@example.com>", To: "jan@example.org", Subject: "Re: Gwarancja",
		Body: "Dzień dobry,\ngwarancja jest ważna.", InReplyTo: "<in@example.org>",
		References: []string{"<in@example.org>"}, MessageID: "<triage-0123/x@example.com>", Date: date,
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
	want, err := mail.Render(r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(raw)); diff != "" {
		t.Errorf("file content (-want +got):\n%s", diff)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[0].Name() != IndexDB || entries[1].Name() != IndexFile || entries[2].Name() != LockFile {
		t.Errorf("outbox holds %d entries (temp files left?), want the reply, %s, %s and %s", len(entries), IndexDB, IndexFile, LockFile)
	}
}

func TestOutboxGeneratedID(t *testing.T) {
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rc, err := o.Send(context.Background(), &mail.Reply{From: "support@example.com", To: "a@example.org", Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^<triage-[0-9a-f]{24}@example\.com>$`).MatchString(rc.MessageID) {
		t.Errorf("MessageID %q", rc.MessageID)
	}
	if !regexp.MustCompile(`/\d{8}T\d{6}Z-triage-[0-9a-f]{24}@example\.com\.eml$`).MatchString(filepath.ToSlash(rc.Path)) {
		t.Errorf("Path %q", rc.Path)
	}
}

func TestOutboxErrors(t *testing.T) {
	if _, err := NewOutbox(""); err == nil {
		t.Error("empty dir accepted")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewOutbox(filepath.Join(file, "sub")); err == nil {
		t.Error("dir under a file accepted")
	}
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Send(ctx, &mail.Reply{From: "a@example.com", To: "b@example.com"}); err == nil {
		t.Error("cancelled context accepted")
	}
	if _, err := o.Send(context.Background(), &mail.Reply{From: "a@example.com", To: "b@example.com, c@example.com"}); err == nil {
		t.Error("two recipients accepted")
	}
}

// A reply whose file cannot be put in place (a directory stands at its
// path, which rename cannot replace) is an error, leaves no temporary
// file, and is not remembered as sent: once the path is free, the same
// reply is written.
func TestOutboxRenameFails(t *testing.T) {
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	if _, err := o.Send(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	r := &mail.Reply{From: "support@example.com", To: "jan@example.org", Subject: "Re: b", Body: "b", MessageID: "<triage-2@example.com>", Date: date}
	blocked := filepath.Join(o.Dir(), "20261122T083000Z-triage-2@example.com.eml")
	if err := os.MkdirAll(filepath.Join(blocked, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if rc, err := o.Send(context.Background(), r); err == nil || !strings.Contains(err.Error(), blocked) {
		t.Fatalf("Send onto a directory: receipt %+v, error %v; want an error naming %s", rc, err, blocked)
	}
	if tmp, _ := filepath.Glob(filepath.Join(o.Dir(), ".*.tmp-*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	if err := os.RemoveAll(blocked); err != nil {
		t.Fatal(err)
	}
	rc, err := o.Send(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Existing || rc.Path != blocked {
		t.Errorf("receipt %+v after the path was freed, want the reply written at %s", rc, blocked)
	}
	if raw, err := os.ReadFile(blocked); err != nil || !strings.Contains(string(raw), "jan@example.org") {
		t.Errorf("reply file: %v\n%s", err, raw)
	}
}

// TestOutboxSyncsTheName: a reply's file is synced, then renamed into
// place, then its directory is synced, so the name survives a power failure
// before Send returns (and before the caller records the reply as sent).
// When that sync fails, Send fails and the file stays: the retry finds it,
// syncs again and writes no second file. A first draft also syncs the new
// drafts directory's name in the outbox.
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
	r := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	reply := "20261122T083000Z-triage-1@example.com.eml"

	fail = errors.New("input/output error")
	if rc, err := o.Send(context.Background(), r); !errors.Is(err, fail) {
		t.Fatalf("Send whose directory sync fails: %+v, %v; want that error", rc, err)
	}
	fail = nil
	rc, err := o.Send(context.Background(), r)
	if err != nil || !rc.Existing {
		t.Fatalf("retry: %+v, %v; want the reply written before", rc, err)
	}
	r.Draft, r.MessageID = true, "<triage-2@example.com>"
	if _, err := o.Send(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	drafts := filepath.Join(dir, mail.DraftsDir)
	want := []string{ // the transport syncs the new drafts directory's name (mail's test)
		dir + ": .index.db .index.db-shm .index.db-wal .index.jsonl .lock " + reply, // the name already there when its directory is synced
		dir + ": .index.db .index.db-shm .index.db-wal .index.jsonl .lock " + reply, // the retry
		drafts + ": 20261122T083000Z-triage-2@example.com.eml",
	}
	if diff := cmp.Diff(want, synced); diff != "" {
		t.Errorf("directory syncs (-want +got):\n%s", diff)
	}
}

// The same Message-ID sent again to another address (a forged From that
// reuses a customer's Message-ID with its own Reply-To gets the customer's
// idempotency key): nothing is written, and the receipt says where the
// existing reply went, not where this call asked.
func TestOutboxExistingReceiptNamesWhereItWent(t *testing.T) {
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &mail.Reply{From: "support@example.com", To: "Anna <anna@example.pl>", Subject: "Re: x", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	if _, err := o.Send(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	r2 := *r
	r2.To = "eve@example.net"
	rc, err := o.Send(context.Background(), &r2)
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Existing || rc.To != "anna@example.pl" {
		t.Errorf("receipt %+v, want Existing to anna@example.pl", rc)
	}
	if files, _ := filepath.Glob(filepath.Join(o.Dir(), "*.eml")); len(files) != 1 {
		t.Errorf("outbox files %v", files)
	}
}

// Find tells, from the index, whether a reply or a draft with a Message-ID
// is in the outbox: its receipt (where it went, its subject as sent) and the
// digest of the message it answers; the reply wins over a draft.
func TestOutboxFind(t *testing.T) {
	ctx := context.Background()
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := o.Find(ctx, "<triage-1@example.com>"); ok || err != nil {
		t.Fatalf("empty outbox: Find = %v, %v; want nothing", ok, err)
	}
	reply := &mail.Reply{From: "support@example.com", To: "Anna <anna@example.pl>", Subject: "Re: Żółw [TKT-000007]", Body: "b",
		MessageID: "<triage-1@example.com>", Date: date, InboundDigest: "d1"}
	draft := &mail.Reply{From: "support@example.com", To: "ola@example.pl", Subject: "Re: y", Body: "b",
		MessageID: "<triage-2@example.com>", Date: date, Draft: true}
	var sent []triage.Receipt
	for _, r := range []*mail.Reply{reply, draft} {
		rc, err := o.Send(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, rc)
	}
	type found struct {
		Receipt triage.Receipt
		Inbound string
		OK      bool
	}
	var got []found
	for _, id := range []string{"<triage-1@example.com>", "<triage-2@example.com>", "<triage-3@example.com>"} {
		rc, inbound, ok, err := o.Find(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, found{rc, inbound, ok})
	}
	want := []found{
		{triage.Receipt{MessageID: "<triage-1@example.com>", To: "anna@example.pl", Subject: "Re: Żółw [TKT-000007]", Path: sent[0].Path, Existing: true}, "d1", true},
		{triage.Receipt{MessageID: "<triage-2@example.com>", To: "ola@example.pl", Subject: "Re: y", Path: sent[1].Path, Existing: true, Drafted: true}, "", true},
		{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Find (-want +got):\n%s", diff)
	}
}

// TestOutboxWaitsForTheOtherProcess: while another process holds the
// outbox's lock, Send waits, and gives up with a clear error when its
// context ends; once the lock is free it writes.
func TestOutboxWaitsForTheOtherProcess(t *testing.T) {
	o, err := NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(o.Dir(), LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	r := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if rc, err := o.Send(ctx, r); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "another process holds it") {
		t.Fatalf("Send while the lock is held: %+v, %v", rc, err)
	}
	if files, _ := filepath.Glob(filepath.Join(o.Dir(), "*.eml")); len(files) != 0 {
		t.Errorf("written while the lock was held: %v", files)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		close(released)
	}()
	rc, err := o.Send(context.Background(), r)
	<-released
	if err != nil || rc.Existing {
		t.Fatalf("Send once the lock is free: %+v, %v", rc, err)
	}
}

// TestOutboxIndexAfterATornLine: a run that crashed while appending to the
// index left a line without its end. The next line appended starts on a
// line of its own, so another run sharing the outbox still reads it and
// finds the reply instead of writing it again.
func TestOutboxIndexAfterATornLine(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(`{"message_id":"<torn@exa`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := twoRuns(t, dir)
	r := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	if ok, err := b.SentReply(context.Background(), r.MessageID); ok || err != nil { // b has read the index
		t.Fatalf("SentReply before any send: %v, %v", ok, err)
	}
	first, err := a.Send(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	r.Date = date.Add(time.Hour)
	again, err := b.Send(context.Background(), r)
	if err != nil || !again.Existing || again.Path != first.Path {
		t.Errorf("the other run's send: %+v, %v; want the reply at %s, existing", again, err, first.Path)
	}
}

// twoRuns opens two outboxes on dir, as two runs of triage process sharing
// it would.
func twoRuns(t *testing.T, dir string) (a, b *Outbox) {
	t.Helper()
	var err error
	if a, err = NewOutbox(dir); err != nil {
		t.Fatal(err)
	}
	if b, err = NewOutbox(dir); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestOutboxSyncsOutsideTheLock: the two syncs of a send (the file's bytes,
// then its directory) wait for no other send, and no other send waits for
// them. While another process holds the outbox's lock, a send writes and
// syncs its file under a temporary name, and takes the lock only to look
// for an earlier reply and rename; the directory is synced once the lock
// is free again.
func TestOutboxSyncsOutsideTheLock(t *testing.T) {
	dir := t.TempDir()
	o, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	lockedWhileSyncing := make(chan bool, 1)
	defer func(f func(string) error) { syncDir = f }(syncDir)
	syncDir = func(d string) error {
		fd, err := syscall.Open(filepath.Join(dir, LockFile), syscall.O_RDWR|syscall.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		lockedWhileSyncing <- syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil
		return atomicfile.SyncDir(d)
	}
	// Another process's send holds the lock.
	fd, err := syscall.Open(filepath.Join(dir, LockFile), syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	r := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	done := make(chan error, 1)
	go func() {
		_, err := o.Send(context.Background(), r)
		done <- err
	}()
	staged := false
	for deadline := time.Now().Add(5 * time.Second); !staged && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			staged = staged || strings.Contains(e.Name(), ".tmp-")
		}
	}
	syscall.Close(fd) // the other send is done
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !staged {
		t.Error("the reply's file was not written while another process held the outbox's lock")
	}
	if <-lockedWhileSyncing {
		t.Error("the directory was synced under the outbox's lock")
	}
	if _, err := os.Stat(filepath.Join(dir, "20261122T083000Z-triage-1@example.com.eml")); err != nil {
		t.Error(err)
	}
}
