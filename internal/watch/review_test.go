package watch

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
)

// outage fails its first calls (a model outage), then hands over to next.
type outage struct {
	next  Processor
	mu    sync.Mutex
	fails int
}

func (o *outage) Process(ctx context.Context, in processor.Input) processor.Outcome {
	o.mu.Lock()
	fail := o.fails > 0
	o.fails--
	o.mu.Unlock()
	if fail {
		return processor.Outcome{File: in.Name, Status: triage.StatusFailed, Reason: "model_unavailable", Scenario: "fake"}
	}
	return o.next.Process(ctx, in)
}

// TestOutcomeKeptForReview: every handled message keeps its outcome JSON
// and the customer's text in the ledger, for triage console.
func TestOutcomeKeptForReview(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, s.Target())
	id := e.deliver(7, "jan@customer.example", "Gwarancja")
	e.runOnce(nil)
	es, err := e.ledger.ByMessageIDs(context.Background(), []string{id})
	if err != nil || len(es) != 1 {
		t.Fatalf("entries %v, %v", es, err)
	}
	var out processor.Outcome
	if err := json.Unmarshal(es[0].Outcome, &out); err != nil {
		t.Fatalf("outcome %q: %v", es[0].Outcome, err)
	}
	if out.Status != triage.StatusReplied || out.MessageID != id || !strings.Contains(es[0].Body, "Mój numer seryjny SN-0007") {
		t.Errorf("kept outcome %s/%s, body %q", out.Status, out.MessageID, es[0].Body)
	}
}

// TestRetryMovesBack: a failed message a person asked to retry goes back
// from the failed folder to INBOX without the keyword and is handled again
// under its new UID; one no longer in the failed folder is failed again.
func TestRetryMovesBack(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, s.Target())
	ctx := context.Background()
	id := e.deliver(1, "jan@customer.example", "Gwarancja")
	gone := e.deliver(2, "ola@customer.example", "Gwarancja")
	flaky := &outage{next: e.proc, fails: 2}
	w := e.runOnce(func(c *Config) { c.Processor = flaky })
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateFailed: 2}, w.Stats().ByState); diff != "" {
		t.Fatalf("first pass (-want +got):\n%s", diff)
	}
	if err := e.ledger.RequestRetry(ctx, keyOf(id, "jan@customer.example")); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.RequestRetry(ctx, keyOf(gone, "ola@customer.example")); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.RequestRetry(ctx, keyOf(id, "jan@customer.example")); err == nil {
		t.Error("a second retry request was accepted")
	}
	// A person deletes one of them from Needs-Human before the next pass.
	c := e.tgt.Client(t)
	if _, err := c.Select(DefaultFailedFolder, nil).Wait(); err != nil {
		t.Fatal(err)
	}
	data, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: gone}}}, nil).Wait()
	if err != nil || len(data.AllUIDs()) != 1 {
		t.Fatalf("search %s: %v %v", gone, data, err)
	}
	if err := c.Store(imap.UIDSetNum(data.AllUIDs()...), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Expunge().Close(); err != nil {
		t.Fatal(err)
	}

	w = e.runOnce(func(c *Config) { c.Processor = flaky })
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateReplied: 1}, w.Stats().ByState); diff != "" {
		t.Errorf("second pass (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{id: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	states := map[string][]string{}
	for _, mid := range []string{id, gone} {
		es, err := e.ledger.ByMessageIDs(ctx, []string{mid})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range es {
			states[mid] = append(states[mid], x.Mailbox+" "+string(x.State))
		}
	}
	want := map[string][]string{id: {"INBOX retried", "INBOX replied"}, gone: {"INBOX failed"}}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
}

// TestConsoleSentDraftSettled: a draft a person sent from the console
// leaves the Drafts folder and is filed in the Sent folder at the next
// pass, and the Sent folder scan does not mistake it for a person's own
// reply (no takeover).
func TestConsoleSentDraftSettled(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, s.Target())
	e.proc.draft = true
	ctx := context.Background()
	hooks := &hookLog{}
	mod := func(c *Config) { c.SentFolder = "Sent"; c.OnPersonReply = hooks.hook }
	id := e.deliver(1, "jan@customer.example", "Gwarancja")
	e.runOnce(mod)
	if n := len(e.mailbox(DefaultDraftsFolder)); n != 1 {
		t.Fatalf("Drafts holds %d messages, want 1", n)
	}
	key := keyOf(id, "jan@customer.example")
	d, _, err := e.ledger.Replies().ClaimDraft(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.Replies().DraftSent(ctx, key, replies.DraftSentAsIs, 1, d.Raw); err != nil {
		t.Fatal(err)
	}
	e.runOnce(mod)
	e.runOnce(mod) // the Sent folder scan now sees the filed copy
	if n := len(e.mailbox(DefaultDraftsFolder)); n != 0 {
		t.Errorf("Drafts holds %d messages after the console sent the draft, want 0", n)
	}
	var sent []string
	for _, m := range e.mailbox("Sent") {
		sent = append(sent, headerOf(m.Raw, "Message-Id"))
	}
	if diff := cmp.Diff([]string{d.MessageID}, sent); diff != "" {
		t.Errorf("Sent (-want +got):\n%s", diff)
	}
	r, err := e.ledger.Replies().GetReply(ctx, key)
	if err != nil || r.State != replies.ReplySent || r.Outcome != replies.DraftSentAsIs {
		t.Errorf("reply %s/%s, %v; want sent/sent_as_is", r.State, r.Outcome, err)
	}
	if got := hooks.summary(); len(got) != 0 {
		t.Errorf("person replies seen: %v, want none", got)
	}
}

// A draft a person rejected in the console leaves the Drafts folder at the
// next pass (nobody can send it from a mail client), on the in-memory
// server and on Dovecot; other drafts stay.
func TestMemRejectedDraftRemoved(t *testing.T) {
	scenarioRejectedDraftRemoved(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestDovecotRejectedDraftRemoved(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioRejectedDraftRemoved(t, tgt)
}

func scenarioRejectedDraftRemoved(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	e.proc.draft = true
	ctx := context.Background()
	rejected := e.deliver(1, "jan@customer.example", "Gwarancja")
	kept := e.deliver(2, "eva@customer.example", "Kettle")
	e.runOnce(nil)
	if n := len(e.mailbox(DefaultDraftsFolder)); n != 2 {
		t.Fatalf("Drafts holds %d messages, want 2", n)
	}
	key := keyOf(rejected, "jan@customer.example")
	if err := e.ledger.Replies().RejectDraft(ctx, key); err != nil {
		t.Fatal(err)
	}
	e.runOnce(nil)
	var left []string
	for _, m := range e.mailbox(DefaultDraftsFolder) {
		left = append(left, headerOf(m.Raw, "In-Reply-To"))
	}
	if diff := cmp.Diff([]string{kept}, left); diff != "" {
		t.Errorf("Drafts answer (-want +got):\n%s", diff)
	}
	r, err := e.ledger.Replies().GetReply(ctx, key)
	if err != nil || r.Appended || r.Outcome != replies.DraftRejected {
		t.Errorf("rejected draft: appended %v, outcome %q, %v; want removed, rejected", r.Appended, r.Outcome, err)
	}
	if rs, err := e.ledger.Replies().RejectedInDrafts(ctx, tgt.User, "INBOX"); err != nil || len(rs) != 0 {
		t.Errorf("rejected drafts still to remove: %v, %v", rs, err)
	}
}
