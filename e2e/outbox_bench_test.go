package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"triage/internal/clients/mail"
	"triage/internal/replies"
)

// BenchmarkProcessOutboxHistory: what one run of `triage process --outbox
// DIR` answering one email costs (CPU user + system of the process, and its
// peak RSS) when DIR already holds 0, 10,000 or 100,000 earlier replies
// (their files and their lines in DIR/.index.jsonl, as earlier runs left
// them). email=new is an email from a new customer; email=followup answers
// one of the earlier replies, so the reply-loop check finds it and counts
// the replies to its sender in the last hour. Target: the CPU per run at
// 100,000 within 1.5x of the empty outbox's. first-run-cpu-ms is the CPU
// of the unmeasured first run over the outbox as the fixture wrote it (a
// log, no look-up table yet).
//
//	go test -run '^$' -bench ProcessOutboxHistory -benchtime 5x ./e2e
func BenchmarkProcessOutboxHistory(b *testing.B) {
	bin := triageBinary(b)
	for _, n := range []int{0, 10_000, 100_000} {
		dir := benchDir(b)
		fillHistory(b, filepath.Join(dir, "outbox"), n)
		// One run as the earlier runs ended: whatever a run keeps beside the
		// outbox's files is in place before the measured runs.
		if err := os.WriteFile(filepath.Join(dir, "warm.eml"), []byte(historyEmail("new", -1, n)), 0o644); err != nil {
			b.Fatal(err)
		}
		first := measureUsage(b, bin, dir, runOptions{}, "warm.eml")
		if first.code != 0 {
			b.Fatalf("triage process exited %d", first.code)
		}
		for _, kind := range []string{"new", "followup"} {
			b.Run(fmt.Sprintf("replies=%d/email=%s", n, kind), func(b *testing.B) {
				var cpu, rss int64
				for i := range b.N {
					name := fmt.Sprintf("%s-%d.eml", kind, i)
					raw := historyEmail(kind, i, n)
					if err := os.WriteFile(filepath.Join(dir, name), []byte(raw), 0o644); err != nil {
						b.Fatal(err)
					}
					u := measureUsage(b, bin, dir, runOptions{}, name)
					if u.code != 0 {
						b.Fatalf("triage process exited %d", u.code)
					}
					cpu += u.userMS + u.sysMS
					rss = max(rss, u.rss)
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ms/run")
				b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
				b.ReportMetric(float64(first.userMS+first.sysMS), "first-run-cpu-ms")
			})
		}
	}
}

// historyEmail is the i-th email of a kind for BenchmarkProcessOutboxHistory
// over n earlier replies: a new customer's, or a follow-up In-Reply-To
// the i-th newest earlier reply, from its recipient (answered once in the
// last hour: no reply loop, so it is answered).
func historyEmail(kind string, i, n int) string {
	from, inReplyTo := fmt.Sprintf("nowy%d-%d@customer.example", n, i), ""
	if j := n - 1 - i; kind == "followup" && j >= 0 {
		from, inReplyTo = histCustomer(j), "In-Reply-To: "+histID(j)+"\r\n"
	}
	return fmt.Sprintf("From: Klient <%s>\r\nTo: serwis@example.com\r\nSubject: Reklamacja %s %d\r\n"+
		"Message-ID: <hist-%s-%d-%d@customer.example>\r\n%sDate: Mon, 16 Nov 2026 09:12:44 +0100\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n\r\nDzień dobry, mój ekspres SN-48213-PL nie grzeje. Proszę o naprawę.\r\n",
		from, kind, i, kind, n, i, inReplyTo)
}

func histID(i int) string       { return fmt.Sprintf("<triage-hist%07d@example.com>", i) }
func histCustomer(i int) string { return fmt.Sprintf("klient%d@customer.example", i%5000) }

// fillHistory writes n earlier replies into the outbox dir as runs of
// triage process leave them: each reply's file and its line in the index,
// dated one a minute up to a minute ago (the newest within the reply-loop
// window), to 5,000 customers.
func fillHistory(b *testing.B, dir string, n int) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, replies.IndexFile))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	now := time.Now().UTC().Truncate(time.Second)
	for i := range n {
		at := now.Add(-time.Duration(n-i) * time.Minute)
		r := &mail.Reply{From: "serwis@example.com", To: histCustomer(i), Subject: "Re: Reklamacja", Body: "Dzień dobry, zgłoszenie przyjęte.",
			MessageID: histID(i), Date: at, InReplyTo: fmt.Sprintf("<in-%d@customer.example>", i)}
		raw, err := mail.Render(r)
		if err != nil {
			b.Fatal(err)
		}
		name := at.Format("20060102T150405Z") + "-" + mail.FileID(r.MessageID) + ".eml"
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			b.Fatal(err)
		}
		line := map[string]any{"message_id": r.MessageID, "to": r.To, "sender": r.To, "date": at, "file": name}
		if err := enc.Encode(line); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	// The fixture's writes reach the disk now, not during the measured
	// runs.
	syscall.Sync()
}
