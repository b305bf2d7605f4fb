package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProcessBreaksReplyLoop: `triage process` remembers its replies in the
// outbox directory across runs; a message answering one of them from a
// sender answered twice in the last hour is failed/reply_loop, and the exit
// status says a person must look. (A thread the ticket
// store knows is bounded by its escalation instead.)
func TestProcessBreaksReplyLoop(t *testing.T) {
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	write := func(name, messageID, inReplyTo string) string {
		t.Helper()
		h := "From: Anna Nowak <anna.nowak@example.pl>\r\nTo: serwis@example.com\r\nSubject: Reklamacja\r\n" +
			"Date: " + nowRFC() + "\r\nMessage-ID: " + messageID + "\r\n"
		if inReplyTo != "" {
			h += "In-Reply-To: " + inReplyTo + "\r\n"
		}
		path := filepath.Join(dir, name)
		// An expired warranty opens no ticket, so no conversation bounds
		// the thread: the reply history does.
		body := "Dzień dobry, mój toster SN98765 nie grzeje. Proszę o naprawę.\r\n"
		if err := os.WriteFile(path, []byte(h+"Content-Type: text/plain; charset=utf-8\r\n\r\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	args := func(files ...string) []string {
		return append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv",
			"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox}, files...)
	}

	code, stdout, stderr := runCLI(t, "", args(write("a.eml", "<a@example.pl>", ""), write("b.eml", "<b@example.pl>", ""))...)
	outs := decodeOutcomes(t, stdout)
	if code != 0 || len(outs) != 2 || outs[0].Reply == nil {
		t.Fatalf("first run: exit %d, %d outcomes\n%s", code, len(outs), stderr)
	}
	ours := outs[0].Reply.MessageID

	code, stdout, _ = runCLI(t, "", args(write("c.eml", "<c@example.pl>", ours))...)
	outs = decodeOutcomes(t, stdout)
	if code != 1 || len(outs) != 1 || outs[0].Status != "failed" || outs[0].Reason != "reply_loop" || !strings.Contains(outs[0].Detail, ours) {
		t.Fatalf("second run: exit %d, outcomes %+v; want failed/reply_loop naming %s", code, outs, ours)
	}
}

func nowRFC() string { return time.Now().Format(time.RFC1123Z) }
