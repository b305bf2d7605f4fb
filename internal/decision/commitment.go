// Commitments: what a reply promises, checked against the decision.

package decision

import (
	"fmt"
	"slices"
	"strings"
)

// Commitment is something a reply promises the customer. The remedies are
// commitments under their own names; tools.yaml declares the list a reply
// may choose from (commitments: under the final function's binding).
type Commitment string

// The commitments the rules know. A commitment tools.yaml declares beyond
// these is recorded with the reply but checked against nothing.
const (
	CommitRepair          = Commitment(Repair)
	CommitReplacement     = Commitment(Replacement)
	CommitRefund          = Commitment(Refund)
	CommitPriceReduction  = Commitment(PriceReduction)
	CommitPaidRepairQuote = Commitment(PaidRepairQuote)
	// CourierPickup: the shop collects the device; only with a decision
	// that offers a remedy.
	CourierPickup Commitment = "courier_pickup"
	// Callback: a person will call or write back; always allowed.
	Callback Commitment = "callback"
	// Ticket: the reply names a ticket; only when the email has one.
	Ticket Commitment = "ticket"
	// NoCommitment promises nothing; it stands alone.
	NoCommitment Commitment = "none"
)

// Known are the commitments the rules know, in documentation order.
var Known = []Commitment{CommitRepair, CommitReplacement, CommitRefund, CommitPriceReduction, CommitPaidRepairQuote, CourierPickup, Callback, Ticket, NoCommitment}

// Commitments reads a list of names as commitments.
func Commitments(names []string) []Commitment {
	out := make([]Commitment, len(names))
	for i, n := range names {
		out[i] = Commitment(n)
	}
	return out
}

// remedy is c as a remedy, if it is one.
func (c Commitment) remedy() (Remedy, bool) {
	r := Remedy(c)
	return r, slices.Contains(Remedies, r)
}

// Refusal is a commitment a decision does not allow, and why.
type Refusal struct {
	Commitment Commitment
	Why        string
}

func (r Refusal) String() string { return fmt.Sprintf("%s (%s)", r.Commitment, r.Why) }

// Allows checks the commitments cs of a reply written on decision d (nil:
// no decision was reached) for an email that has a ticket or not: a remedy
// only when d offers it; a courier pickup only when d offers a remedy; a
// ticket only when there is one; none only alone; a callback always. The
// remedies keep their legal order: on a statutory or guarantee basis
// whose remedies include the first tier (repair, replacement), a
// second-tier one (price reduction, refund) only when d says the first
// is exhausted or impossible (FirstTierExhausted). It returns every
// commitment not allowed, in order.
func Allows(d *Decision, cs []Commitment, ticket bool) []Refusal {
	var bad []Refusal
	for _, c := range cs {
		if why := allows(d, c, len(cs), ticket); why != "" {
			bad = append(bad, Refusal{c, why})
		}
	}
	return bad
}

func allows(d *Decision, c Commitment, n int, ticket bool) string {
	if r, ok := c.remedy(); ok {
		switch {
		case d == nil:
			return "no decision was reached for this email"
		case !d.Offers(r):
			return fmt.Sprintf("the decision (%s) offers %s", d.Basis, offered(d.Remedies))
		case r.SecondTier() && (d.Basis == Statutory || d.Basis == Guarantee) && d.offersFirstTier() && !d.FirstTierExhausted:
			return fmt.Sprintf("in the legal order, %s comes only once repair or replacement is exhausted or impossible, and the decision (%s) does not say so: offer %s first", r, d.Basis, offered(d.firstTier()))
		}
		return ""
	}
	switch c {
	case NoCommitment:
		if n > 1 {
			return "none stands alone"
		}
	case Ticket:
		if !ticket {
			return "this email has no ticket"
		}
	case CourierPickup:
		if d == nil || len(d.Remedies) == 0 || (len(d.Remedies) == 1 && d.Remedies[0] == PaidRepairQuote) {
			return "only with a decision that offers a free remedy"
		}
	}
	return ""
}

// firstTier is d's first-tier remedies, in order.
func (d *Decision) firstTier() []Remedy {
	var out []Remedy
	for _, r := range d.Remedies {
		if r.FirstTier() {
			out = append(out, r)
		}
	}
	return out
}

func (d *Decision) offersFirstTier() bool { return len(d.firstTier()) > 0 }

func offered(rs []Remedy) string {
	if len(rs) == 0 {
		return "no remedy"
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}
