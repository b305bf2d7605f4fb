package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// inboxesConfig writes a watch configuration with the given inboxes:
// section (and shared settings) under dir.
func inboxesConfig(t *testing.T, dir, inboxes string) string {
	t.Helper()
	csv := stateDir(t, dir)
	path := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, path, `smtp:
  addr: 127.0.0.1:2
  tls: none
ledger: state/ledger.db
pipeline:
  offline: true
  warranty_csv: `+csv+`
  tickets_db: state/tickets.db
inboxes:
`+inboxes)
	return path
}

// Each inbox of inboxes: reads its own settings over the shared ones: the
// servers, folders, from, instructions and reply mode; its secrets come
// from its own files before the environment every inbox would share.
func TestInboxesResolve(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a.pass"), "pass-a\n")
	writeTestFile(t, filepath.Join(dir, "b.pass"), "pass-b\n")
	t.Setenv("TRIAGE_IMAP_PASSWORD", "from-env")
	path := inboxesConfig(t, dir, `  - name: brand-a
    imap: {addr: 127.0.0.1:143, tls: none, user: a@example.com, password_file: a.pass, sent_folder: Sent}
    from: "Serwis A <a@example.com>"
  - name: brand-b
    imap: {addr: 127.0.0.1:143, tls: none, user: b@example.com, password_file: b.pass, mailbox: Brand-B, failed_folder: B-Human}
    smtp: {addr: 127.0.0.1:3, tls: none}
    from: "Serwis B <b@example.com>"
    reply_mode: draft
  - name: brand-c
    imap: {addr: 127.0.0.1:143, tls: none, user: c@example.com}
`)
	cmd, o := watchCommand()
	if err := cmd.ParseFlags([]string{"--config", path}); err != nil {
		t.Fatal(err)
	}
	ws, err := loadWatch(cmd.Flags(), o)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Label, Account, Mailbox, Failed, Sent, From, ReplyMode, SMTP, Pass string
	}
	var all []got
	for _, is := range ws.inboxes {
		all = append(all, got{is.o.label, is.o.account(), is.o.Mailbox, is.o.FailedFolder, is.o.SentFolder, is.o.From, is.o.ReplyMode, is.o.SMTP.Addr, is.imapPass})
	}
	want := []got{
		{"inboxes[1] (brand-a)", "a@example.com", "INBOX", "Needs-Human", "Sent", "Serwis A <a@example.com>", "send", "127.0.0.1:2", "pass-a"},
		{"inboxes[2] (brand-b)", "b@example.com", "Brand-B", "B-Human", "", "Serwis B <b@example.com>", "draft", "127.0.0.1:3", "pass-b"},
		{"inboxes[3] (brand-c)", "c@example.com", "INBOX", "Needs-Human", "", "Serwis gwarancyjny <serwis@example.com>", "send", "127.0.0.1:2", "from-env"},
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("inboxes (-want +got):\n%s", diff)
	}
	if code, out, errOut := runArgs(t, "watch", "--config", path, "--check"); code != 0 {
		t.Errorf("watch --check: exit %d\n%s%s", code, out, errOut)
	}
}

// Every problem of every inbox is reported at once, naming the inbox and
// the line: an unknown key, a missing address, a bad reply mode, two
// inboxes on one mailbox. A problem of the shared settings is reported
// once, not once per inbox.
func TestInboxesProblemsListed(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	path := inboxesConfig(t, dir, `  - name: a
    imap: {addr: 127.0.0.1:143, tls: none, user: a@example.com, password: x}
  - imap: {tls: none, user: b@example.com, password: x}
    reply_mode: maybe
  - name: again
    imap: {addr: 127.0.0.1:143, tls: none, user: a@example.com, password: x}
  - name: typo
    imap: {addr: 127.0.0.1:143, tls: none, user: d@example.com, password: x}
    imap_typo: 1
  - just a string
`)
	writeTestFile(t, path, strings.Replace(readTestFile(t, path), "warranty_csv: ", "warranty_csv: missing-", 1))
	code, _, errOut := runArgs(t, "watch", "--config", path, "--check")
	if code != 2 || !strings.Contains(errOut, "inboxes: each inbox is a section of settings (name, imap, smtp, outbox, from, instructions, reply_mode)") {
		t.Fatalf("exit %d, want 2 naming the entry that is no section:\n%s", code, errOut)
	}
	// Once the list is well formed, its entries are read, each problem
	// named.
	writeTestFile(t, path, strings.Replace(readTestFile(t, path), "  - just a string\n", "", 1))
	code, _, errOut = runArgs(t, "watch", "--config", path, "--check")
	if code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, errOut)
	}
	for _, want := range []string{
		`inboxes[4]: line 18: unknown field "imap_typo"; valid: from, imap, instructions, name, outbox, reply_mode, smtp`,
		`inboxes[2]: reply_mode "maybe": want send, draft or auto`,
		`inboxes[2]: imap.addr: missing`,
		`inboxes[1] (a) and inboxes[3] (again) both watch mailbox INBOX of account a@example.com`,
		`inboxes[1] (a): --warranty-csv: `,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if n := strings.Count(errOut, "--warranty-csv: "); n != 1 {
		t.Errorf("the shared registry's problem is reported %d times, want once:\n%s", n, errOut)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A stop requested while watch is still starting (here: the store's server
// accepts the connection and never answers) ends the run as a requested
// stop, exit 0, not as a failure.
func TestWatchStoppedWhileStarting(t *testing.T) {
	noDefaultConfig(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	dir := t.TempDir()
	path := watchConfig(t, dir, "  offline: true\n")
	writeTestFile(t, path, readTestFile(t, path)+"store: postgres://triage@"+ln.Addr().String()+"/triage?sslmode=disable&connect_timeout=60\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"watch", "--config", path}, strings.NewReader(""), &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "stopped while starting") {
		t.Errorf("exit %d, want 0 and 'stopped while starting':\n%s", code, errb.String())
	}
}
