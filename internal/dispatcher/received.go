// The email's time of receipt, from which the decision's deadlines count.

package dispatcher

import "time"

// MaxClockSkew is how far past now a time of receipt may lie and still be
// plausible (a sender's clock running a little fast).
const MaxClockSkew = 5 * time.Minute

// earliestReceipt is the earliest plausible time of receipt.
var earliestReceipt = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ReceivedAt is the email's time of receipt: the earlier of the message's
// Date and the time the caller gives (the IMAP INTERNALDATE) that is
// plausible, neither in the future (beyond MaxClockSkew) nor before 2000;
// now when neither is. The earlier one counts: a deadline from receipt
// never runs later than the customer can show.
func ReceivedAt(date, given, now time.Time) time.Time {
	var at time.Time
	for _, t := range []time.Time{date, given} {
		if t.IsZero() || t.Before(earliestReceipt) || t.After(now.Add(MaxClockSkew)) {
			continue
		}
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if at.IsZero() {
		return now
	}
	return at
}

// received is the session's email's time of receipt (ReceivedAt).
func (s *Session) received(now time.Time) time.Time {
	var date time.Time
	if s.msg != nil {
		date = s.msg.Date
	}
	return ReceivedAt(date, s.opts.Received, now)
}
