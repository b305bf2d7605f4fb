package watch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"triage/internal/decision"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
	"triage/internal/trace"
)

// A complaint answered on its merits stops its clock; one left as a draft
// keeps it running: staff are warned once, notify_days before the
// deadline, and the deadline passing is one ERROR line, counted in the
// metrics. On SQLite and on PostgreSQL.
func TestComplaintClock(t *testing.T) {
	pgtest.Each(t, testComplaintClock)
}

func testComplaintClock(t *testing.T, target string) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: target})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	e.ledger = l
	e.proc.sender = e.sender(e.smtp)
	e.deliver(1, "ola@customer.example", "complaint ticket:T-2")
	e.runOnce(nil) // replied: on its merits
	e.proc.draft = true
	e.deliver(2, "jan@customer.example", "complaint ticket:T-1")
	e.deliver(3, "ewa@customer.example", "question") // no complaint
	e.runOnce(nil)

	due, err := e.ledger.Due(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].Ticket != "T-1" || due[0].Complaint == nil {
		t.Fatalf("Due = %+v, want the drafted complaint of T-1 alone", due)
	}
	c := due[0].Complaint
	if d := c.AnswerBy.Sub(c.Received); d != ledger.DefaultAnswerPeriod {
		t.Errorf("AnswerBy - Received = %v, want %v", d, ledger.DefaultAnswerPeriod)
	}
	if c.Received.Before(e.now.Add(-time.Second)) || c.Received.After(time.Now()) {
		t.Errorf("Received = %v, want the message's receipt (about %v)", c.Received, e.now)
	}

	var notified []ledger.Entry
	var logs lockedBuffer
	met := trace.NewMetrics()
	at := func(now time.Time) func(*Config) {
		return func(cfg *Config) {
			cfg.Now = func() time.Time { return now }
			cfg.Logger = logs.logger()
			cfg.Metrics = met
			cfg.Complaints.Notify = func(_ context.Context, e ledger.Entry, _ time.Time) error {
				notified = append(notified, e)
				return nil
			}
		}
	}
	day := 24 * time.Hour
	e.runOnce(at(c.AnswerBy.Add(-4 * day)))
	if len(notified) != 0 {
		t.Errorf("4 days before the deadline: %d warnings, want 0", len(notified))
	}
	e.runOnce(at(c.AnswerBy.Add(-3 * day)))
	e.runOnce(at(c.AnswerBy.Add(-2 * day)))
	if len(notified) != 1 || notified[0].Ticket != "T-1" {
		t.Fatalf("warnings = %+v, want one, for T-1", notified)
	}
	const lapsed = "level=ERROR msg=\"complaint deadline passed"
	if n := strings.Count(logs.String(), lapsed); n != 0 {
		t.Errorf("before the deadline: %d ERROR lines, want 0", n)
	}
	e.runOnce(at(c.AnswerBy.Add(time.Minute)))
	e.runOnce(at(c.AnswerBy.Add(time.Hour)))
	if n := strings.Count(logs.String(), lapsed); n != 1 {
		t.Errorf("after the deadline: %d ERROR lines, want 1:\n%s", n, logs.String())
	}
	if len(notified) != 1 {
		t.Errorf("warnings = %d, want still 1", len(notified))
	}
	var b strings.Builder
	if mfs, err := met.Registry().Gather(); err == nil {
		for _, mf := range mfs {
			if mf.GetName() == "triage_complaints_due" {
				for _, m := range mf.GetMetric() {
					fmt.Fprintf(&b, "%s=%g ", m.GetLabel()[0].GetValue(), m.GetGauge().GetValue())
				}
			}
		}
	}
	if got := b.String(); !strings.Contains(got, "open=0") || !strings.Contains(got, "overdue=1") {
		t.Errorf("triage_complaints_due = %q, want open 0, overdue 1", got)
	}

	// The customer's follow-up in the same conversation, answered on its
	// merits, joins the running clock (its deadline is the first
	// complaint's) and stops it.
	e.proc.draft = false
	e.deliver(4, "jan@customer.example", "complaint ticket:T-1 the serial")
	e.runOnce(at(c.AnswerBy.Add(2 * time.Hour)))
	if due, err := e.ledger.Due(ctx, 0); err != nil || len(due) != 0 {
		t.Errorf("Due after the answer on the merits = %+v, %v; want none", due, err)
	}
	es, err := e.ledger.Recent(ctx, 10, ledger.StateReplied)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, en := range es {
		if en.Subject == "complaint ticket:T-1 the serial" {
			found = true
			if en.Complaint == nil || !en.Complaint.Joined || !en.Complaint.AnswerBy.Equal(c.AnswerBy) {
				t.Errorf("follow-up's clock = %+v, want the first complaint's, joined", en.Complaint)
			}
		}
	}
	if !found {
		t.Errorf("the follow-up is not replied: %+v", es)
	}
}

// What answers a complaint on its merits: a reply sent, which neither
// hands the customer to a person, nor asks for what the claim lacks, nor
// rests on a decision that still needs information or proof.
func TestOnTheMerits(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  processor.Outcome
		sent bool
		want bool
	}{
		{"a reply sent", processor.Outcome{}, true, true},
		{"a draft, a skip, a failure", processor.Outcome{}, false, false},
		{"a consultant will reply", processor.Outcome{HandsOff: true}, true, false},
		{"escalated", processor.Outcome{Escalated: true}, true, false},
		{"asks for the serial", processor.Outcome{AsksFor: []string{"serial_number"}}, true, false},
		{"a decision on the merits", processor.Outcome{Decision: &decision.Decision{Basis: decision.Statutory}}, true, true},
		{"a refusal is an answer", processor.Outcome{Decision: &decision.Decision{Basis: decision.None}}, true, true},
		{"needs proof", processor.Outcome{Decision: &decision.Decision{Basis: decision.NeedsProof}}, true, false},
		{"needs information", processor.Outcome{Decision: &decision.Decision{Basis: decision.NeedsInfo}}, true, false},
	} {
		if got := OnTheMerits(tc.out, tc.sent); got != tc.want {
			t.Errorf("%s: OnTheMerits = %v, want %v", tc.name, got, tc.want)
		}
	}
}
