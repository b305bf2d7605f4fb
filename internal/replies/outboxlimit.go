package mail

import (
	"context"
	"fmt"
	"time"

	"triage"
)

// senderLimit is an Outbox's per-sender limit (SetPerSenderLimit).
type senderLimit struct {
	n      int
	window time.Duration
}

// SetPerSenderLimit makes Send refuse a new reply or draft to a customer
// (one that answers a message: Reply.InboundFrom is set, Notice is not)
// when n replies and drafts dated within window before it already count
// against its recipient or against the sender of the message it answers.
// Mail that answers no message (a notice to staff) is never refused. n <= 0
// is no limit; window <= 0 is 24 hours. Set it before the first Send.
func (o *Outbox) SetPerSenderLimit(n int, window time.Duration) {
	if window <= 0 {
		window = 24 * time.Hour
	}
	o.limit = senderLimit{n: n, window: window}
}

// LimitError is Send's refusal of a reply over the per-sender limit:
// nothing was written.
type LimitError struct {
	Address string // the address at its limit
	Count   int    // replies and drafts already counting against it
	Limit   int
	Window  time.Duration
}

// LimitReason is triage.ReasonPerSenderLimit (triage.Limited).
func (e *LimitError) LimitReason() triage.Reason { return triage.ReasonPerSenderLimit }

func (e *LimitError) Error() string {
	return fmt.Sprintf("mail: outbox: %s was already answered %d times in the last %v (limit %d; drafts count); not written, left for a person",
		e.Address, e.Count, e.Window, e.Limit)
}

// checkLimit returns a *LimitError when a reply dated at, to to, answering
// mail from sender, would pass the limit. Send calls it under o.mu, so the
// count cannot change before the reply that adds to it is remembered.
func (o *Outbox) checkLimit(ctx context.Context, to, sender string, at time.Time) error {
	if o.limit.n <= 0 || sender == "" {
		return nil
	}
	to, sender = normAddr(to), normAddr(bareOrEmpty(sender))
	for i, a := range []string{to, sender} {
		if a == "" || i == 1 && a == to {
			continue
		}
		n, err := o.CountedSince(ctx, a, at.Add(-o.limit.window))
		if err != nil {
			return err
		}
		if n >= o.limit.n {
			return &LimitError{Address: a, Count: n, Limit: o.limit.n, Window: o.limit.window}
		}
	}
	return nil
}

// bareOrEmpty is the bare address of s, or "" when s is not one address.
func bareOrEmpty(s string) string {
	a, err := bareAddress("From", s)
	if err != nil {
		return ""
	}
	return a
}
