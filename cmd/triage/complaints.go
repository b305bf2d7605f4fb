package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"triage/internal/clients/mail"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/settings"
	"triage/internal/store"
	"triage/internal/watch"
)

// complaintOptions are the settings of the complaint clock (complaints.*).
// AnswerDays is the one value a jurisdiction's answer deadline sets: when
// it is not given (AnswerDaysSet false), the policy's answer_days decide.
type complaintOptions struct {
	AnswerDays    int  // complaints.answer_days
	AnswerDaysSet bool // complaints.answer_days was given (file, flag or variable)
	NotifyDays    int  // complaints.notify_days; 0: no warnings
}

// answerDaysGiven reports whether t's complaints.answer_days was given
// rather than left at its default.
func answerDaysGiven(t settings.Table) bool {
	for _, s := range t {
		if s.Key == "complaints.answer_days" {
			return s.Source() != ""
		}
	}
	return false
}

// Defaults of the complaint clock, in days.
const (
	defaultAnswerDays = int(ledger.DefaultAnswerPeriod / (24 * time.Hour))
	defaultNotifyDays = int(watch.DefaultNotifyBefore / (24 * time.Hour))
)

// complaintSettings are the settings of the complaint clock (watch).
func complaintSettings(c *complaintOptions) settings.Table {
	return settings.Table{
		{Key: "complaints.answer_days",
			Usage: "days from a consumer complaint's receipt within which it must be answered on its merits (a scenario with complaint: true); default: the answer_days of policy.yaml's jurisdiction (pipeline.jurisdiction) for the decision's buyer, a consumer when unknown (Poland: 14, Consumer Rights Act art. 7a)",
			Var:   settings.Int(&c.AnswerDays, defaultAnswerDays, settings.AtLeast(1))},
		{Key: "complaints.notify_days",
			Usage: "warn the staff addresses this many days before a complaint's deadline when nobody has answered it on its merits, once per complaint (0: no warnings)",
			Var:   settings.Int(&c.NotifyDays, defaultNotifyDays, settings.AtLeast(0))},
	}
}

// watch is the watcher's complaint clock: staff are warned through the
// staff notices (dispatcher.Notifier) over sender, from our address; none
// are when staff is empty (the watcher logs the warning instead). Without
// complaints.answer_days, the answer period is policy's (answerPeriods).
func (c complaintOptions) watch(sender mail.Sender, from, domain string, staff []string, policy *decision.Policy) watch.Complaints {
	day := 24 * time.Hour
	out := watch.Complaints{AnswerPeriod: time.Duration(c.AnswerDays) * day, NotifyBefore: time.Duration(c.NotifyDays) * day}
	if !c.AnswerDaysSet {
		out.AnswerPeriodFor = answerPeriods(policy)
	}
	if c.NotifyDays == 0 {
		out.NotifyBefore = -1
	}
	if len(staff) == 0 || sender == nil {
		return out
	}
	nf := &dispatcher.Notifier{Sender: sender, From: from, Domain: domain}
	out.Notify = func(ctx context.Context, e ledger.Entry, now time.Time) error {
		return nf.ComplaintDue(ctx, dispatcher.ComplaintDue{Key: e.Key, InboundFrom: e.Sender, Subject: e.Subject, TicketID: e.Ticket,
			Received: e.Complaint.Received, AnswerBy: e.Complaint.AnswerBy, Staff: staff, Now: now})
	}
	return out
}

// answerPeriods is the answer period of a complaint under policy's
// jurisdiction: its answer_days for the decision's buyer, a consumer's when
// the buyer is unknown; 0 when they set none (no clock). Nil without a
// policy: the configured period applies.
func answerPeriods(policy *decision.Policy) func(decision.Buyer) time.Duration {
	_, j := policy.Jurisdiction()
	if j == nil {
		return nil
	}
	return func(b decision.Buyer) time.Duration {
		if b == "" {
			b = decision.Consumer
		}
		t := j.TermsFor(b)
		if t == nil {
			return 0
		}
		return time.Duration(t.AnswerDays) * 24 * time.Hour
	}
}

// checkComplaintClocks reads the complaint clocks of wo's ledger, when it
// exists, read only, for triage check: it prints the figures and returns a
// warning when a deadline passed without an answer on its merits (or the
// ledger could not be read); "" otherwise. r, when set, gets the figures.
func checkComplaintClocks(ctx context.Context, out io.Writer, wo *watchOptions, r *checkReport) string {
	path := cmp.Or(wo.Store, wo.Ledger)
	if path == "" {
		return ""
	}
	if _, err := os.Stat(path); err != nil && !store.IsURL(path) {
		return "" // no ledger yet
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := ledger.Open(ctx, ledger.Config{Path: path, ReadOnly: true})
	if err != nil {
		return "the complaint clocks could not be read: " + err.Error()
	}
	defer l.Close()
	open, overdue, err := l.DueCounts(ctx, time.Now())
	if err != nil {
		return "the complaint clocks could not be read: " + err.Error()
	}
	if r != nil {
		r.Complaints = &checkComplaints{Open: open, Overdue: overdue}
	}
	fmt.Fprintf(out, "complaints not answered on their merits: %d open, %d overdue\n", open, overdue)
	if overdue == 0 {
		return ""
	}
	return fmt.Sprintf("%d consumer complaint(s) passed their deadline without an answer on their merits: they may be deemed accepted (triage ledger --due lists them)", overdue)
}
