package replies

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"triage/internal/clients/mail"
)

// TestOutboxHistory: an outbox remembers the replies in its directory, also
// those written by an earlier run; drafts are not replies that went out.
func TestOutboxHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	send := func(o *Outbox, id, to string, at time.Time, draft bool) {
		t.Helper()
		r := &mail.Reply{From: "serwis@example.com", To: to, Subject: "Re: x", Body: "x", MessageID: id, Date: at, Draft: draft}
		if _, err := o.Send(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	run1, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	send(run1, "<old@example.com>", "anna@example.pl", now.Add(-2*time.Hour), false)
	send(run1, "<a1@example.com>", "Anna <ANNA@example.pl>", now.Add(-30*time.Minute), false)

	run2, err := NewOutbox(dir) // a later `triage process` into the same outbox
	if err != nil {
		t.Fatal(err)
	}
	send(run2, "<a2@example.com>", "anna@example.pl", now.Add(-time.Minute), false)
	send(run2, "<draft@example.com>", "anna@example.pl", now, true)
	for _, o := range []*Outbox{run2} {
		for id, want := range map[string]bool{"<old@example.com>": true, "<a1@example.com>": true, "a2@example.com": true,
			"<draft@example.com>": false, "<other@example.com>": false, "<not an id>": false} {
			if got, err := o.SentReply(ctx, id); err != nil || got != want {
				t.Errorf("SentReply(%s) = %v, %v; want %v", id, got, err, want)
			}
		}
		if n, err := o.RepliesSince(ctx, "Anna@Example.PL", now.Add(-time.Hour)); err != nil || n != 2 {
			t.Errorf("RepliesSince(last hour) = %d, %v; want 2", n, err)
		}
		if n, _ := o.RepliesSince(ctx, "jan@example.pl", now.Add(-24*time.Hour)); n != 0 {
			t.Errorf("RepliesSince(jan) = %d, want 0", n)
		}
	}
	// run1 loads lazily too: its first lookup sees what run2 wrote.
	if ok, _ := run1.SentReply(ctx, "<a2@example.com>"); !ok {
		t.Error("an outbox does not see replies written by another run before its first lookup")
	}
}

// Two processes sharing one outbox, taking turns: each counts every reply
// once, its own and the other's, however their index lines interleave.
func TestOutboxSharedIndexCountsEachReplyOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a, b := twoRuns(t, dir)
	for i, o := range []*Outbox{a, a, b, a, b, b, a} {
		r := &mail.Reply{From: "serwis@example.com", To: "anna@example.pl", Subject: "Re: x", Body: "x",
			MessageID: fmt.Sprintf("<r%d@example.com>", i), Date: now.Add(time.Duration(i) * time.Minute)}
		if _, err := o.Send(ctx, r); err != nil {
			t.Fatal(err)
		}
		for name, o := range map[string]*Outbox{"a": a, "b": b} {
			if n, err := o.RepliesSince(ctx, "anna@example.pl", now); err != nil || n != i+1 {
				t.Fatalf("after send %d, outbox %s counts %d (%v); want %d", i, name, n, err, i+1)
			}
		}
	}
}

// outboxRun is one run of triage process on the outbox dir: a fresh
// Outbox, closed when the test ends.
func outboxRun(t *testing.T, dir string) *Outbox {
	t.Helper()
	o, err := NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// TestOutboxLineWithoutItsFile: a send appends its line to the index
// before it puts the file in place, so a crash in between leaves a line
// whose file is missing. That reply was never written: the next run
// writes it instead of answering that it exists.
func TestOutboxLineWithoutItsFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b", MessageID: "<triage-1@example.com>", Date: date}
	first, err := outboxRun(t, dir).Send(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(first.Path); err != nil { // the crash: the line, not the file
		t.Fatal(err)
	}
	again, err := outboxRun(t, dir).Send(ctx, r)
	if err != nil || again.Existing {
		t.Fatalf("the next run's send: %+v, %v; want the reply written", again, err)
	}
	if _, err := os.Stat(again.Path); err != nil {
		t.Errorf("the reply is not in the outbox: %v", err)
	}
}

// TestOutboxIndexDBRebuilt: the look-up table (IndexDB) only holds what
// the log (IndexFile) says; deleted, the next run builds it again from the
// log, and finds every reply, count and file.
func TestOutboxIndexDBRebuilt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	o := outboxRun(t, dir)
	var sent []string
	for i := range 3 {
		r := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b",
			MessageID: fmt.Sprintf("<triage-%d@example.com>", i), Date: now.Add(time.Duration(i) * time.Minute)}
		rc, err := o.Send(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, rc.Path)
	}
	o.Close()
	for _, name := range []string{IndexDB, IndexDB + "-wal", IndexDB + "-shm"} {
		os.Remove(filepath.Join(dir, name))
	}
	o = outboxRun(t, dir)
	if n, err := o.RepliesSince(ctx, "anna@example.pl", now); err != nil || n != 3 {
		t.Errorf("RepliesSince = %d, %v; want 3", n, err)
	}
	rc, _, ok, err := o.Find(ctx, "<triage-2@example.com>")
	if err != nil || !ok || rc.Path != sent[2] {
		t.Errorf("Find = %+v, %v, %v; want %s", rc, ok, err, sent[2])
	}
	if lines := indexLines(t, dir); lines != 3 {
		t.Errorf("the log holds %d lines, want 3 (nothing added)", lines)
	}
}

// TestOutboxFileWithoutItsLine: a reply file the log does not name (written
// by another program, or a rename a power failure kept while losing its
// line) is read when the run lists the directory: when the index is new,
// after a reboot, or ListEvery after the last listing. Its line is then
// added, so no later run writes that reply again.
func TestOutboxFileWithoutItsLine(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	foreign := func(t *testing.T, dir string, i int) *mail.Reply {
		t.Helper()
		r := &mail.Reply{From: "support@example.com", To: "ola@example.pl", Subject: "Re: x", Body: "b",
			MessageID: fmt.Sprintf("<other-%d@example.com>", i), Date: now}
		raw, err := mail.Render(r)
		if err != nil {
			t.Fatal(err)
		}
		name := now.Format("20060102T150405Z") + "-" + mail.FileID(r.MessageID) + ".eml"
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		name             string
		reboot, lastWeek bool
	}{{name: "reboot", reboot: true}, {name: "a day later", lastWeek: true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := outboxRun(t, dir)
			if _, err := o.SentReply(ctx, "<x@example.com>"); err != nil { // the index is made
				t.Fatal(err)
			}
			if tc.lastWeek {
				if _, err := o.local.db.ExecContext(ctx, `UPDATE outbox_log SET listed = ?`, unix(time.Now().Add(-7*ListEvery))); err != nil {
					t.Fatal(err)
				}
			}
			o.Close()
			r := foreign(t, dir, 1)
			if tc.reboot {
				defer func(f func() string) { bootID = f }(bootID)
				bootID = func() string { return "another boot" }
			}
			o = outboxRun(t, dir)
			if ok, err := o.SentReply(ctx, r.MessageID); !ok || err != nil {
				t.Fatalf("SentReply(%s) = %v, %v; want the file found", r.MessageID, ok, err)
			}
			if n, err := o.RepliesSince(ctx, "ola@example.pl", now); err != nil || n != 1 {
				t.Errorf("RepliesSince = %d, %v; want 1", n, err)
			}
			r.Date = now.Add(time.Hour)
			if rc, err := o.Send(ctx, r); err != nil || !rc.Existing {
				t.Errorf("Send of the same reply: %+v, %v; want the existing file", rc, err)
			}
			if lines := indexLines(t, dir); lines != 1 {
				t.Errorf("the log holds %d lines, want the file's", lines)
			}
		})
	}
}

// TestOutboxIndexFileCutShort: a log replaced by a shorter one (restored
// from a backup, edited by hand) starts the table over from the log and
// the directory: nothing the shorter log lacks is forgotten.
func TestOutboxIndexFileCutShort(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	o := outboxRun(t, dir)
	for i := range 2 {
		r := &mail.Reply{From: "support@example.com", To: "anna@example.pl", Subject: "Re: a", Body: "b",
			MessageID: fmt.Sprintf("<triage-%d@example.com>", i), Date: date}
		if _, err := o.Send(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	o.Close()
	raw, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(first+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o = outboxRun(t, dir)
	for i := range 2 {
		if ok, err := o.SentReply(ctx, fmt.Sprintf("<triage-%d@example.com>", i)); !ok || err != nil {
			t.Errorf("SentReply(triage-%d) = %v, %v; want true", i, ok, err)
		}
	}
}

// indexLines counts the lines of dir's IndexFile.
func indexLines(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(raw), "\n")
}
