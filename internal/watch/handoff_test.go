package watch

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
)

// withNotices gives e a LedgerSender that bounds staff notices by lim.
func (e *env) withNotices(t *testing.T, lim triage.NoticeLimits) {
	t.Helper()
	e.bounds = lim
	e.proc.sender = e.sender(e.smtp)
}

// notices counts the staff notices the sink accepted.
func (e *env) notices() int {
	n := 0
	for _, m := range e.sink.Messages() {
		if strings.Contains(m.Header("Subject"), "[triage escalation]") {
			n++
		}
	}
	return n
}

// Attack: staff notices counted against the staff address's per-sender
// reply limit, so after five escalations in a day none reached staff. A
// notice has its own bound: escalations from many customers all reach
// staff under the reply limits; one customer's flood is bounded per hour
// (the rest waits in Needs-Human, over_limit/notice_limit); and the flood
// does not exhaust the notices for everyone else.
func TestStaffNoticesHaveTheirOwnBound(t *testing.T) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	e.withNotices(t, triage.NoticeLimits{PerCustomer: triage.DefaultNoticesPerCustomer, PerHour: triage.DefaultNoticesPerHour})
	mod := func(c *Config) { c.PerSenderLimit = 5; c.GlobalPerHour = 100; c.Concurrency = 1 }
	for i := range 7 {
		e.deliver(i, fmt.Sprintf("klient%d@customer.example", i), fmt.Sprintf("escalate %d", i))
	}
	for i := range 5 {
		e.deliver(100+i, "flood@stranger.example", fmt.Sprintf("escalate flood %d", i))
	}
	w := e.runOnce(mod)
	if got, want := e.notices(), 7+triage.DefaultNoticesPerCustomer; got != want {
		t.Errorf("staff got %d notices, want %d (every customer's, and the flood's first %d)", got, want, triage.DefaultNoticesPerCustomer)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateNeedsHuman: 10, ledger.StateOverLimit: 2}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	over, err := e.ledger.Recent(context.Background(), 20, ledger.StateOverLimit)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, o := range over {
		reasons = append(reasons, o.Sender+" "+string(o.Reason))
	}
	if diff := cmp.Diff([]string{"flood@stranger.example notice_limit", "flood@stranger.example notice_limit"}, reasons); diff != "" {
		t.Errorf("over-limit (-want +got):\n%s", diff)
	}
	// The stranger's flood did not use up the notices of everyone else.
	e.deliver(200, "late@customer.example", "escalate late")
	e.runOnce(mod)
	if got, want := e.notices(), 7+triage.DefaultNoticesPerCustomer+1; got != want {
		t.Errorf("after the flood staff got %d notices, want %d", got, want)
	}
	// Notices are no replies: none counts against the staff address.
	if n, err := e.ledger.Replies().RepliesSince(context.Background(), fakeStaff, e.now.Add(-24*time.Hour)); err != nil || n != 0 {
		t.Errorf("replies counted against the staff address: %d, %v", n, err)
	}
}

// The escalated email moves to Needs-Human (the failed folder) with the
// reason escalated, instead of staying in INBOX as replied; its reply is
// still filed in the Sent folder.
func TestEscalatedMessageMovesToNeedsHuman(t *testing.T) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	id := e.deliver(1, "jan@customer.example", "escalate please")
	e.deliver(2, "ola@customer.example", "Gwarancja")
	mod := func(c *Config) { c.SentFolder = "Sent" }
	w := e.runOnce(mod)
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateNeedsHuman: 1, ledger.StateReplied: 1}, w.Stats().ByState); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"escalate please +kw"}, summary(e.mailbox(DefaultFailedFolder), DefaultKeyword)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", DefaultFailedFolder, diff)
	}
	if diff := cmp.Diff([]string{"Gwarancja +kw"}, summary(e.mailbox("INBOX"), DefaultKeyword)); diff != "" {
		t.Errorf("INBOX (-want +got):\n%s", diff)
	}
	var sent []string
	for _, m := range e.mailbox("Sent") {
		sent = append(sent, subjectOf(m.Raw))
	}
	sort.Strings(sent)
	if diff := cmp.Diff([]string{"Re: Gwarancja", "Re: escalate please"}, sent); diff != "" {
		t.Errorf("Sent (-want +got):\n%s", diff)
	}
	es, err := e.ledger.Recent(context.Background(), 10, ledger.StateNeedsHuman)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].MessageID != id || es[0].Reason != triage.ReasonEscalated || !strings.Contains(es[0].Detail, "reply=") {
		t.Errorf("needs_human entries %+v, want %s escalated with its reply", es, id)
	}
	// A rerun changes nothing: the reply and the notice went once.
	e.runOnce(mod)
	if n := e.notices(); n != 1 {
		t.Errorf("staff got %d notices, want 1", n)
	}
	if n := e.repliesTo()[id]; n != 1 {
		t.Errorf("%d replies to %s, want 1", n, id)
	}
}
