// Package decision is the warranty decision: what the shop owes a claim,
// computed from the registry, the policy and the email's time of receipt,
// never by the model. The model words the decision; it does not make it.
// The commitments a reply may make follow from it (Allows), and its
// lexicon holds the reply's own words to them.
package decision

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Basis is why the shop owes what it owes.
type Basis string

const (
	// Guarantee: the registry's guarantee is valid.
	Guarantee Basis = "guarantee"
	// Statutory: the guarantee expired (or there is none) but the seller's
	// statutory liability still runs for this buyer.
	Statutory Basis = "statutory"
	// None: neither the guarantee nor the statutory period covers the
	// claim; a paid repair may be quoted.
	None Basis = "none"
	// NeedsProof: the customer must show something first (a proof of
	// purchase for a serial the registry does not know, of the delivery
	// date when it decides).
	NeedsProof Basis = "needs_proof"
	// NeedsInfo: the shop's own data is missing something (the buyer type,
	// the purchase date's consistency, the policy): a person decides.
	NeedsInfo Basis = "needs_info"
)

// Remedy is something the shop may offer.
type Remedy string

const (
	Repair          Remedy = "repair"
	Replacement     Remedy = "replacement"
	PriceReduction  Remedy = "price_reduction"
	Refund          Remedy = "refund"
	PaidRepairQuote Remedy = "paid_repair_quote"
)

// Remedies are the known remedies.
var Remedies = []Remedy{Repair, Replacement, PriceReduction, Refund, PaidRepairQuote}

// Buyer is the buyer type; "" is unknown.
type Buyer string

const (
	Consumer Buyer = "consumer"
	Business Buyer = "business"
)

// BuyerOf is the registry's buyer value as a Buyer ("" when unknown).
func BuyerOf(s string) Buyer {
	switch b := Buyer(strings.TrimSpace(s)); b {
	case Consumer, Business:
		return b
	}
	return ""
}

// Date is a calendar day; it is JSON "YYYY-MM-DD" (an RFC 3339 full-date).
type Date struct{ time.Time }

// DateOf is t's calendar day in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.Format(time.DateOnly)
}

func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		*d = Date{}
		return nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return fmt.Errorf("decision: date %q is not YYYY-MM-DD", s)
	}
	*d = Date{t}
	return nil
}

// Decision is what the shop owes one claim.
type Decision struct {
	Basis Basis `json:"basis"`
	// Remedies the shop may offer, in their legal order (the first ones
	// first: repair or replacement before price reduction or refund);
	// empty when the basis is needs_proof or needs_info.
	Remedies []Remedy `json:"remedies"`
	// FirstTierExhausted: the first tier of remedies (repair, replacement)
	// is exhausted or impossible (it failed, cannot be done, or is refused
	// as disproportionate), so a reply may commit to a later one (price
	// reduction, refund). False by default: Decide never sets it (the
	// registry cannot know); a decision a tool returns may, with its
	// reason among Reasons.
	FirstTierExhausted bool `json:"first_tier_exhausted,omitempty"`
	// AnswerBy is the day the complaint must be answered by (from its
	// receipt); SilenceAccepts: if it is not, it is deemed accepted.
	AnswerBy       Date `json:"answer_by,omitzero"`
	SilenceAccepts bool `json:"silence_accepts,omitempty"`
	// PerformBy is the day the remedy must be performed by (zero: no fixed
	// deadline).
	PerformBy Date `json:"perform_by,omitzero"`
	// Presumed: a statutory claim within the presumption period (the
	// non-conformity is presumed to have existed at delivery).
	Presumed bool `json:"presumed,omitempty"`
	// Evidence the customer must show (needs_proof).
	Evidence     []Evidence `json:"evidence,omitempty"`
	Jurisdiction string     `json:"jurisdiction,omitempty"`
	Buyer        Buyer      `json:"buyer,omitempty"`
	// Reasons say, in order, how the decision was reached.
	Reasons []string `json:"reasons"`
}

// FirstTier reports whether r is a first-tier remedy (repair,
// replacement): the law owes them before a price reduction or a refund.
func (r Remedy) FirstTier() bool { return r == Repair || r == Replacement }

// SecondTier reports whether r is a second-tier remedy (price reduction,
// refund): owed only once the first tier is exhausted or impossible.
func (r Remedy) SecondTier() bool { return r == PriceReduction || r == Refund }

// Offers reports whether r is among d's remedies.
func (d *Decision) Offers(r Remedy) bool {
	for _, x := range d.Remedies {
		if x == r {
			return true
		}
	}
	return false
}
