package watch

import (
	"context"
	"time"

	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/processor"
)

// The complaint clock (package ledger): every message is recorded with
// what its clock needs (clock); before every pass, the clocks of this
// inbox whose deadline nears are warned about to staff, once each, those
// whose deadline passed unanswered are an ERROR line, once each, and the
// running clocks of the store go to the metrics (sweepComplaints).

// DefaultNotifyBefore is how long before a complaint's deadline staff are
// warned when nobody has answered it on its merits.
const DefaultNotifyBefore = 3 * 24 * time.Hour

// Complaints configures the complaint clock.
type Complaints struct {
	// AnswerPeriod is the answer period of a complaint, from its receipt
	// (default ledger.DefaultAnswerPeriod).
	AnswerPeriod time.Duration
	// AnswerPeriodFor, when set, replaces AnswerPeriod: the answer period
	// of a complaint whose decision names buyer b ("" when it names none);
	// 0 when the law sets no deadline: such a complaint starts no clock
	// (it still joins its conversation's running one).
	AnswerPeriodFor func(b decision.Buyer) time.Duration
	// NotifyBefore is how long before the deadline staff are warned
	// (default DefaultNotifyBefore; negative: never).
	NotifyBefore time.Duration
	// Notify warns staff, at now, of the complaint e (its Complaint set)
	// whose deadline nears or passed; nil: the warning is only logged. An
	// error leaves the warning to a later pass.
	Notify func(ctx context.Context, e ledger.Entry, now time.Time) error
}

// clock is what the ledger needs to keep the complaint clock of the
// message m, handled with outcome out and settled as end. Its time of
// receipt is the decision's (dispatcher.ReceivedAt): the earlier plausible
// of the INTERNALDATE and the Date header.
func (w *Watcher) clock(m *peeked, out processor.Outcome, end ledger.Settlement) ledger.Clock {
	complaint, period := out.Complaint, w.cfg.Complaints.AnswerPeriod
	if f := w.cfg.Complaints.AnswerPeriodFor; f != nil && complaint {
		var b decision.Buyer
		if out.Decision != nil {
			b = out.Decision.Buyer
		}
		if period = f(b); period <= 0 {
			complaint = false
		}
	}
	return ledger.Clock{
		Complaint:   complaint,
		Received:    dispatcher.ReceivedAt(m.id.Date, m.internal, w.cfg.Now()),
		Period:      period,
		OnTheMerits: OnTheMerits(out, end.Sent),
	}
}

// OnTheMerits reports whether the outcome out answered a complaint on its
// merits, which stops its clock; sent says its reply went out to the
// customer (ledger.Settlement.Sent: not a draft waiting for a person, not a
// skip or a failure). It is the one place that decides it: a reply that
// hands the customer to a person (an escalation, a promise that a
// consultant follows up), that asks for what the claim lacks (asks_for),
// or whose decision still needs information or proof is no answer yet.
func OnTheMerits(out processor.Outcome, sent bool) bool {
	switch {
	case !sent, out.HandsOff, out.Escalated, len(out.AsksFor) > 0:
		return false
	case out.Decision != nil && (out.Decision.Basis == decision.NeedsInfo || out.Decision.Basis == decision.NeedsProof):
		return false
	}
	return true
}

// sweepComplaints warns about the complaints of this inbox whose deadline
// nears, logs those whose deadline passed, each once (of several daemons
// on the store one does), and sets the metrics' figures.
func (w *Watcher) sweepComplaints(ctx context.Context) error {
	l, c, now := w.cfg.Ledger, w.cfg.Complaints, w.cfg.Now()
	lapsed, err := l.Pending(ctx, ledger.ClockLapsed, now, 0)
	if err != nil {
		return w.ledgerErr(err)
	}
	for _, e := range w.ours(lapsed) {
		ok, err := l.MarkClock(ctx, e.Loc, ledger.ClockLapsed)
		if err != nil {
			return w.ledgerErr(err)
		}
		if ok {
			w.log.ErrorContext(ctx, "complaint deadline passed without an answer on its merits: it may be deemed accepted",
				"uid", e.UID, "uidvalidity", e.UIDValidity, "message_id", e.MessageID, "from", e.Sender, "ticket", e.Ticket,
				"received", e.Complaint.Received, "answer_by", e.Complaint.AnswerBy)
		}
	}
	if c.NotifyBefore >= 0 {
		due, err := l.Pending(ctx, ledger.ClockNotified, now, c.NotifyBefore)
		if err != nil {
			return w.ledgerErr(err)
		}
		for _, e := range w.ours(due) {
			if err := w.warnDue(ctx, e); err != nil {
				return err
			}
		}
	}
	open, overdue, err := l.DueCounts(ctx, now)
	if err != nil {
		return w.ledgerErr(err)
	}
	w.cfg.Metrics.ComplaintsDue(open, overdue)
	return nil
}

// warnDue warns staff, once, that the complaint e must be answered soon.
func (w *Watcher) warnDue(ctx context.Context, e ledger.Entry) error {
	l := w.cfg.Ledger
	ok, err := l.MarkClock(ctx, e.Loc, ledger.ClockNotified)
	if err != nil || !ok {
		return w.ledgerErr(err)
	}
	attrs := []any{"uid", e.UID, "uidvalidity", e.UIDValidity, "message_id", e.MessageID, "from", e.Sender, "ticket", e.Ticket,
		"answer_by", e.Complaint.AnswerBy, "left", e.Complaint.Left(w.cfg.Now()).Round(time.Minute).String()}
	if w.cfg.Complaints.Notify == nil {
		w.log.WarnContext(ctx, "complaint deadline nears and nobody answered it on its merits; no staff address to warn", attrs...)
		return nil
	}
	if err := w.cfg.Complaints.Notify(ctx, e, w.cfg.Now()); err != nil {
		w.cfg.Metrics.Error("smtp")
		w.log.WarnContext(ctx, "could not warn staff that a complaint's deadline nears; trying again next pass", append(attrs, "err", err)...)
		return w.ledgerErr(l.UnmarkClock(context.WithoutCancel(ctx), e.Loc, ledger.ClockNotified))
	}
	w.log.InfoContext(ctx, "staff warned: a complaint's deadline nears", attrs...)
	return nil
}

// ours keeps the entries of this watcher's inbox.
func (w *Watcher) ours(es []ledger.Entry) []ledger.Entry {
	out := es[:0]
	for _, e := range es {
		if e.Account == w.cfg.Account && e.Mailbox == w.cfg.Mailbox {
			out = append(out, e)
		}
	}
	return out
}
