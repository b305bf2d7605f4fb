package replies

import (
	"context"
	"time"

	"triage"
	"triage/internal/clients/mail"
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
// is no limit; window <= 0 is DefaultPerSenderWindow. Set it before the first Send.
func (o *Outbox) SetPerSenderLimit(n int, window time.Duration) {
	if window <= 0 {
		window = DefaultPerSenderWindow
	}
	o.limit = senderLimit{n: n, window: window}
}

// checkLimit returns a *LimitError when a reply dated at, to to, answering
// mail from sender, would pass the limit. Send calls it under o.mu, so the
// count cannot change before the reply that adds to it is remembered.
func (o *Outbox) checkLimit(ctx context.Context, to, sender string, at time.Time) error {
	if o.limit.n <= 0 || sender == "" {
		return nil
	}
	to, sender = normAddr(to), normAddr(mail.BareAddress(sender))
	for i, a := range []string{to, sender} {
		if a == "" || i == 1 && a == to {
			continue
		}
		n, err := o.CountedSince(ctx, a, at.Add(-o.limit.window))
		if err != nil {
			return err
		}
		if n >= o.limit.n {
			return &LimitError{Reason: triage.ReasonPerSenderLimit, Address: a, Count: n, Limit: o.limit.n, Window: o.limit.window, outbox: true}
		}
	}
	return nil
}
