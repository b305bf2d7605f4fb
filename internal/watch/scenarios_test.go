package watch

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
)

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// summary describes a folder as "Subject flags" lines, sorted, for cmp.
func summary(msgs []mailtest.Message, keyword string) []string {
	var out []string
	for _, m := range msgs {
		s := subjectOf(m.Raw)
		if m.HasFlag(imap.Flag(keyword)) {
			s += " +kw"
		}
		if m.HasFlag(imap.FlagSeen) {
			s += " +seen"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func subjectOf(raw []byte) string {
	for _, line := range strings.Split(string(raw), "\r\n") {
		if s, ok := strings.CutPrefix(line, "Subject: "); ok {
			return s
		}
	}
	return ""
}

// scenarioAnswerOnce: new mail is answered once, an auto-reply is marked and
// left in place, a failure goes to Needs-Human, and a rerun answers nothing.
func scenarioAnswerOnce(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	id1 := e.deliver(1, "jan@customer.example", "Gwarancja")
	id2 := e.deliver(2, "ola@customer.example", "Naprawa")
	e.deliver(3, "bot@customer.example", "auto: out of office")
	e.deliver(4, "ewa@customer.example", "please fail")

	w := e.runOnce(nil)
	if diff := cmp.Diff(map[string]int{id1: 1, id2: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies by In-Reply-To (-want +got):\n%s", diff)
	}
	wantFinal := map[ledger.State]int{ledger.StateReplied: 2, ledger.StateSkipped: 1, ledger.StateFailed: 1}
	if diff := cmp.Diff(wantFinal, w.Stats().ByState); diff != "" {
		t.Errorf("final states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Gwarancja +kw", "Naprawa +kw", "auto: out of office +kw"}, summary(e.mailbox("INBOX"), DefaultKeyword)); diff != "" {
		t.Errorf("INBOX (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"please fail +kw"}, summary(e.mailbox(DefaultFailedFolder), DefaultKeyword)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", DefaultFailedFolder, diff)
	}
	failed, err := e.ledger.Recent(context.Background(), 10, ledger.StateFailed)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].Reason != "no_scenario" {
		t.Errorf("failed entries = %+v, want one with reason no_scenario", failed)
	}
	for _, m := range e.sink.Messages() {
		if got := m.Header("Auto-Submitted"); got != "auto-replied" {
			t.Errorf("reply Auto-Submitted = %q", got)
		}
	}

	calls := e.proc.Calls()
	w = e.runOnce(nil)
	if diff := cmp.Diff(map[string]int{id1: 1, id2: 1}, e.repliesTo()); diff != "" {
		t.Errorf("after rerun, replies (-want +got):\n%s", diff)
	}
	if e.proc.Calls() != calls || len(w.Stats().ByState) != 0 {
		t.Errorf("rerun processed %d messages (final %v), want none", e.proc.Calls()-calls, w.Stats().ByState)
	}

	// New mail after the rerun is answered, and only it.
	id5 := e.deliver(5, "jan@customer.example", "Jeszcze jedno")
	e.runOnce(nil)
	if diff := cmp.Diff(map[string]int{id1: 1, id2: 1, id5: 1}, e.repliesTo()); diff != "" {
		t.Errorf("after new mail, replies (-want +got):\n%s", diff)
	}
}

// scenarioProcessedFolderAndSent: replied mail moves to the processed folder
// and the reply is stored in Sent.
func scenarioProcessedFolderAndSent(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	id := e.deliver(1, "jan@customer.example", "Gwarancja")
	e.deliver(2, "bot@customer.example", "auto reply")
	mod := func(c *Config) { c.ProcessedFolder = "Processed"; c.SentFolder = "Sent" }
	e.runOnce(mod)
	if diff := cmp.Diff([]string{"auto reply +kw"}, summary(e.mailbox("INBOX"), DefaultKeyword)); diff != "" {
		t.Errorf("INBOX (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Gwarancja +kw"}, summary(e.mailbox("Processed"), DefaultKeyword)); diff != "" {
		t.Errorf("Processed (-want +got):\n%s", diff)
	}
	sent := e.mailbox("Sent")
	if diff := cmp.Diff([]string{"Re: Gwarancja +seen"}, summary(sent, DefaultKeyword)); diff != "" {
		t.Errorf("Sent (-want +got):\n%s", diff)
	}
	if len(sent) == 1 && !strings.Contains(string(sent[0].Raw), "In-Reply-To: "+id) {
		t.Errorf("Sent copy lacks In-Reply-To %s:\n%s", id, sent[0].Raw)
	}
	e.runOnce(mod)
	if diff := cmp.Diff(map[string]int{id: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

// scenarioLimits: the per-sender and global limits leave mail for a person,
// the oldest mail first. (One worker: with more, the global limit goes to
// whichever replies are written first; TestConcurrentLimitsExact checks the
// counts then.)
func scenarioLimits(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	a1 := e.deliver(1, "jan@customer.example", "Pierwsze")
	a2 := e.deliver(2, "jan@customer.example", "Drugie")
	e.deliver(3, "jan@customer.example", "Trzecie")
	b1 := e.deliver(4, "ola@customer.example", "Ola pierwsze")
	e.deliver(5, "ewa@customer.example", "Ewa pierwsze")
	e.limit(Limits{PerSenderLimit: 2, GlobalPerHour: 3})
	w := e.runOnce(func(c *Config) { c.Concurrency = 1 })
	if diff := cmp.Diff(map[string]int{a1: 1, a2: 1, b1: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateReplied: 3, ledger.StateOverLimit: 2}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Ewa pierwsze +kw", "Trzecie +kw"}, summary(e.mailbox(DefaultFailedFolder), DefaultKeyword)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", DefaultFailedFolder, diff)
	}
	over, err := e.ledger.Recent(context.Background(), 10, ledger.StateOverLimit)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, o := range over {
		reasons = append(reasons, o.Sender+" "+string(o.Reason))
	}
	sort.Strings(reasons)
	if diff := cmp.Diff([]string{"ewa@customer.example global_limit", "jan@customer.example per_sender_limit"}, reasons); diff != "" {
		t.Errorf("over-limit reasons (-want +got):\n%s", diff)
	}
}

// scenarioLimitsNotDodged: every reply counts against the From of the
// message it answers and the address it went to, and the limit holds on
// each: a new Reply-To each time, many senders naming one Reply-To, a From
// whose display name is in a charset net/mail does not know, or a reply the
// pipeline sends somewhere the header does not name, are all limited.
func scenarioLimitsNotDodged(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	want := map[string]int{}
	answered := func(id string) { want[id] = 1 }
	// One From, a new Reply-To each time: limited by the From.
	answered(e.deliverHeader(1, "From: Jan <jan@customer.example>\r\nReply-To: r1@elsewhere.example", "Jan 1"))
	answered(e.deliverHeader(2, "From: Jan <jan@customer.example>\r\nReply-To: r2@elsewhere.example", "Jan 2"))
	e.deliverHeader(3, "From: Jan <jan@customer.example>\r\nReply-To: r3@elsewhere.example", "Jan 3")
	// Many Froms, one Reply-To: limited by the address mailed.
	answered(e.deliverHeader(4, "From: <a@spam.example>\r\nReply-To: victim@bank.example", "Victim 1"))
	answered(e.deliverHeader(5, "From: <b@spam.example>\r\nReply-To: victim@bank.example", "Victim 2"))
	e.deliverHeader(6, "From: <c@spam.example>\r\nReply-To: Victim@Bank.example", "Victim 3")
	// A display name in ISO-8859-2 (which net/mail alone cannot decode).
	answered(e.deliverHeader(7, "From: =?iso-8859-2?q?Pawe=B3?= <pawel@customer.example>", "Pawel 1"))
	answered(e.deliverHeader(8, "From: =?iso-8859-2?q?Pawe=B3?= <pawel@customer.example>", "Pawel 2"))
	e.deliverHeader(9, "From: =?iso-8859-2?q?Pawe=B3?= <pawel@customer.example>", "Pawel 3")
	// The pipeline mails an address the header does not name: only the
	// check made when the reply is written can see it.
	answered(e.deliverHeader(10, "From: <d@spam.example>", "to:target@bank.example"))
	answered(e.deliverHeader(11, "From: <e@spam.example>", "to:target@bank.example"))
	e.deliverHeader(12, "From: <f@spam.example>", "to:target@bank.example")

	e.limit(Limits{PerSenderLimit: 2, GlobalPerHour: -1})
	w := e.runOnce(nil)
	if diff := cmp.Diff(want, e.repliesTo()); diff != "" {
		t.Errorf("replies by In-Reply-To (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateReplied: 8, ledger.StateOverLimit: 4}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	over, err := e.ledger.Recent(context.Background(), 20, ledger.StateOverLimit)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range over {
		got = append(got, o.Subject+" "+string(o.Reason))
	}
	sort.Strings(got)
	wantOver := []string{"Jan 3 per_sender_limit", "Pawel 3 per_sender_limit", "Victim 3 per_sender_limit", "to:target@bank.example per_sender_limit"}
	if diff := cmp.Diff(wantOver, got); diff != "" {
		t.Errorf("over-limit messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Jan 3 +kw", "Pawel 3 +kw", "Victim 3 +kw", "to:target@bank.example +kw"}, summary(e.mailbox(DefaultFailedFolder), DefaultKeyword)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", DefaultFailedFolder, diff)
	}
}

// scenarioIdleWakeup: the daemon answers mail that arrives while it idles.
// idleStarted, when not nil, says when the watcher is in IDLE.
func scenarioIdleWakeup(t *testing.T, tgt mailtest.Target, idleStarted <-chan struct{}) {
	answerTwo(t, newEnv(t, tgt), func() {
		if idleStarted != nil {
			<-idleStarted
		}
	}, "Drugie")
}

// answerTwo runs the daemon until it has answered a first message, calls
// between, delivers a second message with the given subject and waits for
// its answer too, then stops the daemon: each message must have been
// answered once. It returns the stopped watcher.
func answerTwo(t *testing.T, e *env, between func(), subject string) *Watcher {
	t.Helper()
	id1 := e.deliver(1, "jan@customer.example", "Pierwsze")
	ctx, cancel := context.WithCancel(context.Background())
	w := e.watcher(nil)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	e.sink.WaitFor(t, func() bool { return e.repliesTo()[id1] == 1 })
	between()
	id2 := e.deliver(2, "ola@customer.example", subject)
	e.sink.WaitFor(t, func() bool { return e.repliesTo()[id2] == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if diff := cmp.Diff(map[string]int{id1: 1, id2: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	return w
}

func TestAnswerOnce(t *testing.T) {
	scenarioAnswerOnce(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestAnswerOnceWithoutMove(t *testing.T) {
	scenarioAnswerOnce(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{NoMove: true}).Target())
}

func TestProcessedFolderAndSent(t *testing.T) {
	scenarioProcessedFolderAndSent(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestLimits(t *testing.T) {
	scenarioLimits(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestLimitsNotDodged(t *testing.T) {
	scenarioLimitsNotDodged(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

// TestConcurrentPass: a pass runs Concurrency messages through the pipeline
// at once and answers each once; copies of one message in the mailbox do not
// race (one reply, the others already_handled).
func TestConcurrentPass(t *testing.T) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	e.proc.gate = 4
	want := map[string]int{}
	for i := range 8 {
		want[e.deliver(i, fmt.Sprintf("k%d@customer.example", i), "Gwarancja")] = 1
	}
	dup := fmt.Sprintf("From: Klient <dup@customer.example>\r\nTo: support@example.com\r\nSubject: Kopia\r\nMessage-ID: <dup.%d@customer.example>\r\n\r\nSN-0001\r\n", e.now.UnixNano())
	for range 3 {
		e.tgt.Append(t, "INBOX", []byte(dup))
	}
	want[fmt.Sprintf("<dup.%d@customer.example>", e.now.UnixNano())] = 1
	w := e.runOnce(func(c *Config) { c.Concurrency = 4 })
	if diff := cmp.Diff(want, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateReplied: 9, ledger.StateSkipped: 2}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	if got := e.proc.MaxInFlight(); got != 4 {
		t.Errorf("at most %d messages were in the pipeline at once, want 4", got)
	}
	if got := len(summary(e.mailbox("INBOX"), DefaultKeyword)); got != 11 {
		t.Errorf("INBOX has %d messages, want 11 (all flagged, none moved)", got)
	}
	for _, m := range e.mailbox("INBOX") {
		if !m.HasFlag(imap.Flag(DefaultKeyword)) {
			t.Errorf("message %q not flagged", subjectOf(m.Raw))
		}
	}
}

// TestConcurrentLimitsExact: replies written at the same time by several
// workers still respect the limits exactly: the check and the write are one
// ledger transaction.
func TestConcurrentLimitsExact(t *testing.T) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	e.proc.gate = 6
	// Twelve senders; the pipeline mails one address the header does not
	// name, so nothing orders them: only the LedgerSender's check stands.
	for i := range 12 {
		e.deliverHeader(i, fmt.Sprintf("From: <s%d@spam.example>", i), "to:target@bank.example")
	}
	e.limit(Limits{PerSenderLimit: 3, GlobalPerHour: -1})
	w := e.runOnce(func(c *Config) { c.Concurrency = 6 })
	if got := len(e.sink.Messages()); got != 3 {
		t.Errorf("%d replies to target@bank.example, want exactly 3", got)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateReplied: 3, ledger.StateOverLimit: 9}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	if e.proc.MaxInFlight() < 2 {
		t.Errorf("the messages ran one at a time; the test needs them concurrent")
	}

	// The global limit, the same way.
	e2 := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	e2.proc.gate = 6
	for i := range 12 {
		e2.deliver(i, fmt.Sprintf("g%d@customer.example", i), "Gwarancja")
	}
	e2.limit(Limits{PerSenderLimit: -1, GlobalPerHour: 5})
	w = e2.runOnce(func(c *Config) { c.Concurrency = 6 })
	if got := len(e2.sink.Messages()); got != 5 {
		t.Errorf("%d replies under a global limit of 5", got)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateReplied: 5, ledger.StateOverLimit: 7}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
}

func TestIdleWakeup(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	scenarioIdleWakeup(t, s.Target(), s.IdleStarted())
}

func TestPolling(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, s.Target())
	ctx, cancel := context.WithCancel(context.Background())
	w := e.watcher(func(c *Config) { c.NoIdle = true; c.Interval = 10 * time.Millisecond })
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	id := e.deliver(1, "jan@customer.example", "Pierwsze")
	e.sink.WaitFor(t, func() bool { return e.repliesTo()[id] == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestDropMidIdle(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, s.Target())
	ctx, cancel := context.WithCancel(context.Background())
	w := e.watcher(nil)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	<-s.IdleStarted()
	if n := s.DropConnections(); n == 0 {
		t.Fatal("no connection to drop")
	}
	id := e.deliver(1, "jan@customer.example", "Po awarii")
	e.sink.WaitFor(t, func() bool { return e.repliesTo()[id] == 1 })
	<-s.IdleStarted() // idling again on the new connection
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if w.Stats().Reconnects < 1 {
		t.Errorf("Reconnects = %d, want >= 1", w.Stats().Reconnects)
	}
	if diff := cmp.Diff(map[string]int{id: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

// scenarioUIDValidity: after the server renumbers the mailbox (new
// UIDVALIDITY, flags lost), nothing old is answered again.
func scenarioUIDValidity(t *testing.T, tgt mailtest.Target, change func()) {
	e := newEnv(t, tgt)
	id1 := e.deliver(1, "jan@customer.example", "Pierwsze")
	id2 := e.deliver(2, "ola@customer.example", "Drugie")
	e.deliver(3, "bot@customer.example", "auto")
	e.runOnce(nil)
	change()
	for _, m := range e.mailbox("INBOX") {
		if m.HasFlag(DefaultKeyword) {
			t.Fatalf("after the UIDVALIDITY change, uid %d still has %v; want the flags gone", m.UID, m.Flags)
		}
	}
	calls := e.proc.Calls()
	var logs bytes.Buffer
	infoLog := func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	w := e.runOnce(infoLog) // a restart: the previous UIDVALIDITY comes from the ledger
	if !strings.Contains(logs.String(), `level=WARN msg="mailbox UIDVALIDITY changed`) {
		t.Errorf("no WARN about the UIDVALIDITY change:\n%s", logs.String())
	}
	logs.Reset()
	e.runOnce(infoLog) // nothing new: an idle pass logs at DEBUG only
	if strings.Contains(logs.String(), "msg=pass") || strings.Contains(logs.String(), "UIDVALIDITY") {
		t.Errorf("an idle pass logged above DEBUG:\n%s", logs.String())
	}
	if diff := cmp.Diff(map[string]int{id1: 1, id2: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if e.proc.Calls() != calls {
		t.Errorf("processed %d old messages again", e.proc.Calls()-calls)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateSkipped: 3}, w.Stats().ByState); diff != "" {
		t.Errorf("final after change (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Drugie +kw", "Pierwsze +kw", "auto +kw"}, summary(e.mailbox("INBOX"), DefaultKeyword)); diff != "" {
		t.Errorf("INBOX (-want +got):\n%s", diff)
	}
}

func TestUIDValidityChange(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	scenarioUIDValidity(t, s.Target(), func() { s.ChangeUIDValidity(t, "INBOX") })
}

func TestNoKeywords(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{NoKeywords: true})
	e := newEnv(t, s.Target())
	id1 := e.deliver(1, "jan@customer.example", "Pierwsze")
	e.deliver(2, "bot@customer.example", "auto")
	e.runOnce(nil)
	if diff := cmp.Diff([]string{"Pierwsze +seen", "auto +seen"}, summary(e.mailbox("INBOX"), DefaultKeyword)); diff != "" {
		t.Errorf("INBOX (-want +got):\n%s", diff)
	}
	// A person reading new mail marks it \Seen too: it must still be answered.
	id3 := e.deliver(3, "ola@customer.example", "Przeczytane")
	for _, m := range e.mailbox("INBOX") {
		if subjectOf(m.Raw) == "Przeczytane" {
			c := e.tgt.Client(t)
			if _, err := c.Select("INBOX", nil).Wait(); err != nil {
				t.Fatal(err)
			}
			if err := c.Store(imap.UIDSetNum(m.UID), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.runOnce(nil)
	e.runOnce(nil)
	if diff := cmp.Diff(map[string]int{id1: 1, id3: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}
