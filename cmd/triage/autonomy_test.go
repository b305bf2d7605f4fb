package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/message"
	"triage/internal/review"
)

// customer is the sample valid-warranty email from another customer, with
// a Message-ID of its own.
func customer(t *testing.T, n int) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../examples/inbox/01-valid-warranty-pl.eml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("anna.nowak@example.pl", fmt.Sprintf("klient%d@example.pl", n),
		"<20261116091244.5521@mail.example.pl>", fmt.Sprintf("<auto-%d@mail.example.pl>", n)).Replace(string(raw))
	return []byte(s)
}

// autoStats reads `triage ledger stats --json` of the configuration.
func autoStats(t *testing.T, e *watchEnv) []statsLine {
	t.Helper()
	code, stdout, stderr := e.run(t, "ledger", "stats", "--config", e.config, "--json")
	if code != 0 {
		t.Fatalf("ledger stats: exit %d: %s", code, stderr)
	}
	var out []statsLine
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var l statsLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("ledger stats --json: %v\n%s", err, stdout)
		}
		out = append(out, l)
	}
	return out
}

// Reply mode auto end to end, through triage watch on an in-memory IMAP
// server: the scenario drafts; people send 28 of 30 drafts as is from
// their mail client (2 edited) and the next message is sent on its own,
// the switch recorded with its figures; the 10th message while sending is
// drafted as a sample; a rejection of it sends the scenario back to
// drafting, recorded too; ledger stats shows it all.
func TestWatchReplyModeAuto(t *testing.T) {
	e := newWatchEnv(t, "reply_mode: auto\noutbox: out\n")
	outbox := filepath.Join(e.dir, "out")
	sent := func() int {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
		return len(files)
	}
	pass := func() {
		t.Helper()
		if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
			t.Fatalf("watch exit %d\n%s", code, stderr)
		}
	}
	inbound := map[string]int{} // Message-ID -> customer
	for n := 1; n <= 30; n++ {
		e.srv.Append(t, "INBOX", customer(t, n))
		inbound[fmt.Sprintf("<auto-%d@mail.example.pl>", n)] = n
	}
	pass()
	drafts := e.srv.Messages(t, "Szkice")
	if len(drafts) != 30 || sent() != 0 {
		t.Fatalf("after 30 messages: %d drafts, %d sent; want 30 drafts, nothing sent", len(drafts), sent())
	}
	// People answer every customer from their mail client: 28 drafts go
	// out as they are, two rewritten. The rewritten two (customers 8 and
	// 9) are sent last and have the largest keys, so when a rejection
	// later pushes the oldest review out of the window of 30, that is one
	// sent as is, whichever way equal review times are ordered.
	parsed := make([]*message.Message, len(drafts))
	for i, d := range drafts {
		m, err := message.Parse(d.Raw)
		if err != nil {
			t.Fatal(err)
		}
		parsed[i] = m
	}
	rewritten := func(m *message.Message) bool { n := inbound[m.InReplyTo]; return n == 8 || n == 9 }
	slices.SortStableFunc(parsed, func(a, b *message.Message) int {
		switch {
		case rewritten(a) == rewritten(b):
			return 0
		case rewritten(a):
			return 1
		}
		return -1
	})
	for i, m := range parsed {
		n := inbound[m.InReplyTo]
		text := m.Text
		if rewritten(m) {
			text = "Dzień dobry, prosimy przynieść ekspres do punktu serwisowego; naprawimy go w ciągu tygodnia."
		}
		e.srv.Append(t, "Sent", []byte(fmt.Sprintf("From: Serwis <serwis@example.com>\r\nTo: klient%d@example.pl\r\nSubject: %s\r\n"+
			"Message-ID: <person-%d@example.com>\r\nIn-Reply-To: %s\r\nReferences: %s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
			n, m.Subject, i, m.InReplyTo, m.InReplyTo, text)))
	}
	e.srv.Append(t, "INBOX", customer(t, 31))
	pass()
	if sent() != 1 || len(e.srv.Messages(t, "Szkice")) != 30 {
		t.Fatalf("the 31st message: %d sent, %d drafts; want it sent on its own", sent(), len(e.srv.Messages(t, "Szkice")))
	}
	st := autoStats(t, e)
	if len(st) != 1 {
		t.Fatalf("ledger stats lines %+v, want one", st)
	}
	toSend := review.Switch{Scenario: "valid-warranty", Inbox: triage.Inbox{Account: "support@example.com", Mailbox: "INBOX"}, Mode: triage.ReplySend,
		Window: review.Window{Reviewed: 30, SentAsIs: 28, Edited: 2}, MinReviewed: 30, MinSentAsIs: 90, Why: "28 of the last 30 sent as is (93%), none rejected"}
	if l := st[0]; l.Mode != triage.ReplySend || !l.Readiness.Ready || len(l.Switches) != 1 || l.SentAsIs != 28 || l.Edited != 2 {
		t.Errorf("after the switch: %+v", l)
	} else if toSend.At = l.Switches[0].At; !cmp.Equal(toSend, l.Switches[0]) {
		t.Errorf("recorded switch (-want +got):\n%s", cmp.Diff(toSend, l.Switches[0]))
	}

	// Nine more messages: eight sent, the tenth since the switch drafted
	// as a sample for review.
	for n := 32; n <= 40; n++ {
		e.srv.Append(t, "INBOX", customer(t, n))
	}
	pass()
	if sent() != 9 || len(e.srv.Messages(t, "Szkice")) != 31 {
		t.Fatalf("messages 32-40: %d sent in all, %d drafts; want 9 and 31 (one sample)", sent(), len(e.srv.Messages(t, "Szkice")))
	}
	// The support lead rejects the sample (as the console does).
	l, err := ledger.Open(context.Background(), ledger.Config{Path: e.ledger})
	if err != nil {
		t.Fatal(err)
	}
	var sample triage.Key
	var sampleID string
	for _, m := range e.srv.Messages(t, "Szkice") {
		pm, _ := message.Parse(m.Raw)
		if r, err := l.Replies().ReplyByMessageID(context.Background(), pm.MessageID); err == nil && r.Outcome == "" {
			sample, sampleID = r.Key, pm.MessageID
		}
	}
	if err := review.Of(l).RejectDraft(context.Background(), sample); err != nil {
		t.Fatalf("reject the sample %q: %v", sample, err)
	}
	l.Close()
	e.srv.Append(t, "INBOX", customer(t, 41))
	pass()
	// The rejected sample leaves the Drafts folder and the 41st is drafted.
	drafts = e.srv.Messages(t, "Szkice")
	if sent() != 9 || len(drafts) != 31 {
		t.Fatalf("after the rejection: %d sent, %d drafts; want the rejected one removed and the 41st drafted", sent(), len(drafts))
	}
	for _, m := range drafts {
		if pm, _ := message.Parse(m.Raw); pm.MessageID == sampleID {
			t.Fatalf("the rejected sample %s is still in the Drafts folder", sampleID)
		}
	}
	st = autoStats(t, e)
	if l := st[0]; l.Mode != triage.ReplyDraft || l.Readiness.Ready || len(l.Switches) != 2 || l.Rejected != 1 {
		t.Fatalf("after the fall back: %+v", l)
	}
	back := st[0].Switches[0]
	if back.Mode != triage.ReplyDraft || back.Window != (review.Window{Reviewed: 30, SentAsIs: 27, Edited: 2, Rejected: 1}) || back.Why != "1 rejected among the last 30 reviewed drafts" {
		t.Errorf("the switch back: mode %s window %+v why %q", back.Mode, back.Window, back.Why)
	}
	_, stdout, _ := e.run(t, "ledger", "stats", "--config", e.config)
	for _, want := range []string{"Ready to send on its own: at least 30 reviewed drafts", "READY", "AUTO", "draft since",
		"Switches of reply_mode: auto", "valid-warranty  support@example.com/INBOX  send", "1 rejected among the last 30 reviewed drafts"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ledger stats lacks %q:\n%s", want, stdout)
		}
	}
}

// The configuration of reply mode auto is checked before anything starts:
// a scenario that may come to send needs a way to send, and the bar must
// be a bar; each problem names its key or scenario.
func TestWatchReplyModeAutoConfig(t *testing.T) {
	noDefaultConfig(t)
	t.Setenv("TRIAGE_REPLY_MODE", "")
	dir := t.TempDir()
	ins := filepath.Join(dir, "instructions")
	if err := os.CopyFS(ins, os.DirFS("../../instructions")); err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(ins, "scenarios", "missing-info.md")
	b, err := os.ReadFile(sc)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, sc, strings.Replace(string(b), "\nname: missing-info\n", "\nname: missing-info\nreply_mode: auto\n", 1))
	csv, _ := filepath.Abs("../../examples/warranty.csv")
	base := "imap: {addr: 127.0.0.1:1, tls: none, user: serwis@example.com, password: secret}\nledger: ledger.db\n" +
		"pipeline: {offline: true, warranty_csv: " + csv + ", tickets_db: tickets.db, instructions: instructions}\n"
	for _, tc := range []struct {
		name, extra string
		code        int
		want        []string
	}{
		{"scenario auto, drafting without smtp", "reply_mode: draft\n", exitUsage,
			[]string{"scenario missing-info: reply_mode auto sends once people's reviews qualify it, and nothing can send: set smtp.addr"}},
		{"scenario auto with an outbox", "reply_mode: draft\noutbox: out\n", 0, []string{"configuration valid"}},
		{"run auto without smtp", "reply_mode: auto\n", exitUsage, []string{"no way to send replies"}},
		{"a bar that is no bar", "reply_mode: auto\noutbox: out\nautonomy: {min_reviewed: 0, min_sent_as_is: 120, sample_every: -1}\n", exitUsage,
			[]string{"autonomy.min_reviewed must be at least 1, got 0", "autonomy.min_sent_as_is must be a percentage above 0 and at most 100, got 120",
				"autonomy.sample_every must be at least 0, got -1"}},
		{"a mode that is none", "reply_mode: sometimes\noutbox: out\n", exitUsage, []string{`reply_mode "sometimes": want send, draft or auto`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(dir, "triage.yaml")
			writeTestFile(t, cfg, base+tc.extra)
			code, stdout, stderr := runArgs(t, "watch", "--config", cfg, "--check")
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, stdout, stderr)
				}
			}
		})
	}
}
