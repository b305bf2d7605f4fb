package watch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage"
	tmail "triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/message"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/testkit/mailtest"
	"triage/internal/trace"
)

func TestMemDrafts(t *testing.T) {
	scenarioDrafts(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestDovecotDrafts(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioDrafts(t, tgt)
}

func TestMemDraftCrashRecovery(t *testing.T) {
	scenarioDraftCrash(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestDovecotDraftCrashRecovery(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioDraftCrash(t, tgt)
}

func TestMemDryRun(t *testing.T) {
	scenarioDryRun(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestDovecotDryRun(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioDryRun(t, tgt)
}

// hookLog collects OnPersonReply events.
type hookLog struct {
	mu  sync.Mutex
	got []PersonReply
}

func (h *hookLog) hook(_ context.Context, r PersonReply) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r)
	return nil
}

func (h *hookLog) summary() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.got {
		out = append(out, fmt.Sprintf("%s %s %s", r.Thread.MessageID, r.MessageID, r.DraftOutcome))
	}
	return out
}

// personReply is a reply a person sent from their mail client: a new
// Message-ID, threaded under inbound, the text, then the quoted original.
func personReply(n int, to, inbound, text string) []byte {
	return []byte(fmt.Sprintf("From: Anna Serwis <support@example.com>\r\nTo: %s\r\nSubject: Re: x\r\n"+
		"Message-ID: <person-%d@example.com>\r\nIn-Reply-To: %s\r\nReferences: %s\r\nDate: Mon, 2 Nov 2026 10:00:00 +0100\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n\r\nW dniu 1.11.2026 klient napisał:\r\n> Mój numer seryjny.\r\n", to, n, inbound, inbound, text))
}

// scenarioDrafts: in draft mode every reply lands in Drafts flagged \Draft,
// complete and threaded, and nothing goes out over SMTP; a rerun drafts
// nothing twice. Then people act: one draft is sent as is (the client's own
// Message-ID, rewrapped, with a signature and the quoted original), one is
// rewritten, one is left alone; the Sent folder scan resolves them (the last
// after 7 days, with the injected clock), reports each person's reply to
// the hook, and ignores triage's own replies there.
func scenarioDrafts(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	clock := time.Now()
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	hooks := &hookLog{}
	met := trace.NewMetrics()
	mod := func(c *Config) { c.SentFolder = "Sent"; c.Now = now; c.OnPersonReply = hooks.hook; c.Metrics = met }

	// One message answered in send mode first: its reply is stored in Sent
	// and must never count as a person's.
	id0 := e.deliver(0, "jan@customer.example", "Wysłane")
	e.runOnce(mod)

	e.proc.draft = true
	id1 := e.deliver(1, "ola@customer.example", "Gwarancja")
	id2 := e.deliver(2, "ewa@customer.example", "Naprawa")
	id3 := e.deliver(3, "iza@customer.example", "Pytanie")
	e.deliver(4, "bot@customer.example", "auto: out of office")
	w := e.runOnce(mod)
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateDrafted: 3, ledger.StateSkipped: 1}, w.Stats().ByState); diff != "" {
		t.Errorf("final states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{id0: 1}, e.repliesTo()); diff != "" {
		t.Errorf("SMTP submissions by In-Reply-To (-want +got):\n%s", diff)
	}
	drafts := e.mailbox(DefaultDraftsFolder)
	byReply := map[string][]byte{}
	for _, m := range drafts {
		if !m.HasFlag(imap.FlagDraft) {
			t.Errorf("draft without \\Draft: %s", subjectOf(m.Raw))
		}
		irt := headerOf(m.Raw, "In-Reply-To")
		byReply[irt] = m.Raw
		if !strings.Contains(string(m.Raw), "References: "+irt) || !strings.Contains(string(m.Raw), "Message-Id: <triage-") {
			t.Errorf("draft is not threaded:\n%s", m.Raw)
		}
	}
	if len(drafts) != 3 || byReply[id1] == nil || byReply[id2] == nil || byReply[id3] == nil {
		t.Fatalf("Drafts holds %d messages (%v), want one per message", len(drafts), summary(drafts, DefaultKeyword))
	}
	// Drafted mail is marked and stays in the inbox for the person.
	if diff := cmp.Diff([]string{"Gwarancja +kw", "Naprawa +kw", "Pytanie +kw", "Wysłane +kw", "auto: out of office +kw"}, summary(e.mailbox("INBOX"), DefaultKeyword)); diff != "" {
		t.Errorf("INBOX (-want +got):\n%s", diff)
	}
	calls := e.proc.Calls()
	e.runOnce(mod)
	if n := len(e.mailbox(DefaultDraftsFolder)); n != 3 || e.proc.Calls() != calls {
		t.Errorf("rerun: %d drafts, %d more pipeline calls; want 3 and none", n, e.proc.Calls()-calls)
	}

	// People act. Ola's draft goes out as is (the client gives it its own
	// Message-ID, rewraps it, adds a signature and the quoted original);
	// Ewa's is rewritten; Iza's is never touched; Jan gets a follow-up.
	draftText := func(raw []byte) string {
		m, err := message.Parse(raw)
		if err != nil || strings.TrimSpace(m.Text) == "" {
			t.Fatalf("draft text: %v\n%s", err, raw)
		}
		return m.Text
	}
	// Iza's thread is only forwarded to a colleague: not a reply to her.
	e.tgt.Append(t, "Sent", personReply(5, "kolega@example.com", id3, "Zerknij na to, proszę."))
	e.tgt.Append(t, "Sent", personReply(1, "Ola <OLA@customer.example>", id1, strings.ReplaceAll(draftText(byReply[id1]), "\r\n", " ")+"\r\n-- \r\nAnna"))
	e.tgt.Append(t, "Sent", personReply(2, "ewa@customer.example", id2, "Dzień dobry, proszę przynieść urządzenie do punktu serwisowego w piątek."))
	e.tgt.Append(t, "Sent", personReply(3, "jan@customer.example", id0, "Dzień dobry, jeszcze jedna informacja od nas."))
	e.tgt.Append(t, "Sent", personReply(4, "jan@customer.example", "<unrelated@elsewhere.example>", "Nie w wątku."))
	e.runOnce(mod)
	want := []string{id1 + " <person-1@example.com> " + replies.DraftSentAsIs, id2 + " <person-2@example.com> " + replies.DraftEdited, id0 + " <person-3@example.com> "}
	if diff := cmp.Diff(want, hooks.summary()); diff != "" {
		t.Errorf("person's replies reported (-want +got):\n%s", diff)
	}
	stats, err := review.Of(e.ledger).DraftStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	inbox := triage.Inbox{Account: w.Account(), Mailbox: "INBOX"}
	if diff := cmp.Diff([]review.DraftStat{{Scenario: "fake", Inbox: inbox, Drafted: 3, SentAsIs: 1, Edited: 1, Pending: 1}}, stats); diff != "" {
		t.Errorf("draft stats after the replies (-want +got):\n%s", diff)
	}

	// A rerun reports nothing again; seven days later Iza's draft is discarded.
	e.runOnce(mod)
	mu.Lock()
	clock = clock.Add(DefaultDraftWindow + time.Minute)
	mu.Unlock()
	e.runOnce(mod)
	if n := len(hooks.summary()); n != 3 {
		t.Errorf("hook called %d times, want 3 (each reply once)", n)
	}
	stats, _ = review.Of(e.ledger).DraftStats(context.Background())
	if diff := cmp.Diff([]review.DraftStat{{Scenario: "fake", Inbox: inbox, Drafted: 3, SentAsIs: 1, Edited: 1, Discarded: 1}}, stats); diff != "" {
		t.Errorf("draft stats after 7 days (-want +got):\n%s", diff)
	}
	// The same figures are the triage_drafts gauge.
	wantGauge := map[string]float64{"drafted": 3, "sent_as_is": 1, "edited": 1, "rejected": 0, "discarded": 1, "pending": 0}
	if diff := cmp.Diff(wantGauge, draftGauge(t, met, "fake")); diff != "" {
		t.Errorf("triage_drafts{scenario=fake} (-want +got):\n%s", diff)
	}
}

// draftGauge reads triage_drafts{scenario} by outcome.
func draftGauge(t *testing.T, m *trace.Metrics, scenario string) map[string]float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "triage_drafts" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["scenario"] == scenario {
				out[labels["outcome"]] = mt.GetGauge().GetValue()
			}
		}
	}
	return out
}

// scenarioDraftCrash: a crash after the draft was recorded and before it
// was stored (or after it was stored and before that was recorded) leaves
// exactly one draft after the restart, and the message is not processed
// again.
func scenarioDraftCrash(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	e.proc.draft = true
	for i, alreadyStored := range []bool{false, true} {
		from := fmt.Sprintf("c%d@customer.example", i)
		id := e.deliver(10+i, from, fmt.Sprintf("Crash %d", i))
		key := triage.Key("msgid:" + id + "|" + from)
		r := &tmail.Reply{From: "Support <support@example.com>", To: from, Subject: "Re: crash", Body: "Szkic.\n",
			InReplyTo: id, References: []string{id}, Key: key, MessageID: tmail.MessageIDFor(key, "example.com"), Date: time.Now(), Draft: true}
		raw, err := tmail.Render(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ledger.Replies().PutPending(context.Background(), replies.Reply{Key: key, MessageID: r.MessageID, To: from, Raw: raw, Kind: replies.KindDraft}); err != nil {
			t.Fatal(err)
		}
		if alreadyStored {
			e.tgt.Client(t).Create(DefaultDraftsFolder, nil).Wait()
			e.tgt.Append(t, DefaultDraftsFolder, raw, imap.FlagDraft)
		}
		w := e.runOnce(nil)
		if diff := cmp.Diff(map[ledger.State]int{ledger.StateDrafted: 1}, w.Stats().ByState); diff != "" {
			t.Errorf("case %d: final (-want +got):\n%s", i, diff)
		}
		n := 0
		for _, m := range e.mailbox(DefaultDraftsFolder) {
			if headerOf(m.Raw, "In-Reply-To") == id {
				n++
			}
		}
		if n != 1 {
			t.Errorf("case %d (stored before the crash: %v): %d drafts for the message, want 1", i, alreadyStored, n)
		}
		if rep, _ := e.ledger.Replies().GetReply(context.Background(), key); rep.State != replies.DraftStored {
			t.Errorf("case %d: draft state %q, want %q", i, rep.State, replies.DraftStored)
		}
	}
	if e.proc.Calls() != 0 {
		t.Errorf("the pipeline ran %d times, want 0 (the drafts were recorded)", e.proc.Calls())
	}
	if len(e.sink.Messages()) != 0 {
		t.Errorf("%d SMTP submissions, want 0", len(e.sink.Messages()))
	}
}

// procFunc is a Processor made of a function.
type procFunc func(ctx context.Context, in processor.Input) processor.Outcome

func (f procFunc) Process(ctx context.Context, in processor.Input) processor.Outcome {
	return f(ctx, in)
}

// scenarioDryRun: a dry run processes every new message and changes
// nothing: no flag, no move, no folder, no ledger entry, no mail.
func scenarioDryRun(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	e.deliver(1, "jan@customer.example", "Gwarancja")
	e.deliver(2, "ewa@customer.example", "please fail")
	before := summary(e.mailbox("INBOX"), DefaultKeyword)
	var seen []string
	// The pipeline in dry run: it says what it would have done.
	proc := procFunc(func(ctx context.Context, in processor.Input) processor.Outcome {
		seen = append(seen, string(in.Key))
		return processor.Outcome{File: in.Name, Status: triage.StatusReplied, DryRun: true, Reply: &triage.Receipt{To: "x@customer.example"}}
	})
	for _, l := range []*ledger.Ledger{e.ledger, nil} { // with a ledger to consult, and without
		seen = nil
		w := e.runOnce(func(c *Config) {
			c.DryRun, c.Ledger, c.Processor = true, l, proc
			c.SentFolder, c.ProcessedFolder = "Sent", "Processed"
		})
		if len(seen) != 2 {
			t.Errorf("dry run processed %d messages, want 2", len(seen))
		}
		if diff := cmp.Diff(map[ledger.State]int{"replied": 2}, w.Stats().ByState); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(before, summary(e.mailbox("INBOX"), DefaultKeyword)); diff != "" {
		t.Errorf("INBOX changed (-before +after):\n%s", diff)
	}
	for _, f := range []string{"Sent", "Processed", DefaultFailedFolder, DefaultDraftsFolder} {
		if msgs := e.mailbox(f); len(msgs) != 0 {
			t.Errorf("folder %s holds %d messages after a dry run", f, len(msgs))
		}
	}
	if counts, _ := e.ledger.Counts(context.Background()); len(counts) != 0 {
		t.Errorf("ledger entries %v after a dry run", counts)
	}
	if len(e.sink.Messages()) != 0 {
		t.Errorf("%d SMTP submissions in a dry run", len(e.sink.Messages()))
	}
}
