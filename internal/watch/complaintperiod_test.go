package watch

import (
	"testing"
	"time"

	"triage/internal/decision"
	"triage/internal/ledger"
	"triage/internal/processor"
)

// AnswerPeriodFor, when set, gives a complaint's answer period by the
// decision's buyer ("" without one); a period of 0 starts no clock. A
// message that is no complaint is not asked about.
func TestClockAnswerPeriodFor(t *testing.T) {
	day := 24 * time.Hour
	var asked []decision.Buyer
	w := &Watcher{cfg: Config{Now: time.Now, Complaints: Complaints{AnswerPeriod: 14 * day,
		AnswerPeriodFor: func(b decision.Buyer) time.Duration {
			asked = append(asked, b)
			if b == decision.Business {
				return 0
			}
			return 30 * day
		}}}}
	for _, tc := range []struct {
		name      string
		out       processor.Outcome
		complaint bool
		period    time.Duration
	}{
		{"consumer", processor.Outcome{Complaint: true, Decision: &decision.Decision{Buyer: decision.Consumer}}, true, 30 * day},
		{"no decision", processor.Outcome{Complaint: true}, true, 30 * day},
		{"no deadline", processor.Outcome{Complaint: true, Decision: &decision.Decision{Buyer: decision.Business}}, false, 0},
		{"no complaint", processor.Outcome{}, false, 14 * day},
	} {
		c := w.clock(&peeked{}, tc.out, ledger.Settlement{})
		if c.Complaint != tc.complaint || c.Period != tc.period {
			t.Errorf("%s: complaint %v, period %v; want %v, %v", tc.name, c.Complaint, c.Period, tc.complaint, tc.period)
		}
	}
	if want := []decision.Buyer{decision.Consumer, "", decision.Business}; len(asked) != 3 || asked[0] != want[0] || asked[1] != want[1] || asked[2] != want[2] {
		t.Errorf("asked for %q, want %q", asked, want)
	}
}
