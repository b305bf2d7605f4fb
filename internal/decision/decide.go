// Decide: the rules from the registry's answer, the policy and the time of
// receipt to the decision.

package decision

import (
	"fmt"
	"time"

	"triage/internal/clients/warranty"
)

// Decide is what the shop owes the claim on the registry's answer r,
// received at received, under p's default jurisdiction:
//   - a valid guarantee: guarantee, with the guarantee's remedies;
//   - an expired guarantee within the statutory period for the buyer type
//     (counted from delivery or purchase as the terms say): statutory, with
//     the statutory remedies in their legal order, never a paid repair;
//   - beyond it, or no statutory terms for the buyer type: none, a paid
//     repair quote;
//   - a serial the registry does not know, or a period from delivery the
//     purchase date alone cannot settle: needs_proof;
//   - an unknown buyer type or purchase date where they decide, an
//     inconsistent purchase date, no policy: needs_info, never none.
//
// AnswerBy counts from received for the buyer's terms (for an unknown
// buyer the earliest of the declared ones).
func Decide(p *Policy, r warranty.Result, received time.Time) Decision {
	code, j := p.Jurisdiction()
	d := Decision{Jurisdiction: code, Buyer: BuyerOf(r.Buyer), Remedies: []Remedy{}}
	if j == nil {
		d.Basis = NeedsInfo
		d.Reasons = append(d.Reasons, "no policy: a person decides")
		return d
	}
	if received.IsZero() {
		d.Basis = NeedsInfo
		d.Reasons = append(d.Reasons, "the time of receipt is unknown: a person decides")
		return d
	}
	day := DateOf(received)
	terms := j.TermsFor(d.Buyer)
	d.answerBy(j, terms, day)

	switch r.Status {
	case warranty.StatusValid:
		d.Basis = Guarantee
		d.Remedies = flatten(j.Guarantee.Remedies)
		d.Reasons = append(d.Reasons, "guarantee valid"+until(r.ExpirationDate)+" (registry)")
		d.PerformBy = after(day, j.Guarantee.PerformDays)
		return d
	case warranty.StatusNotFound:
		d.Basis = NeedsProof
		d.Evidence = []Evidence{ProofOfPurchase}
		d.Reasons = append(d.Reasons, fmt.Sprintf("serial %s is not in the registry: the customer shows a proof of purchase", r.SerialNumber))
		return d
	case warranty.StatusExpired:
		d.Reasons = append(d.Reasons, "guarantee expired"+on(r.ExpirationDate)+" (registry)")
	default:
		d.Basis = NeedsInfo
		d.Reasons = append(d.Reasons, fmt.Sprintf("registry status %q is unknown: a person decides", r.Status))
		return d
	}

	// The guarantee expired: the seller's statutory liability.
	if d.Buyer == "" {
		d.Basis = NeedsInfo
		d.Reasons = append(d.Reasons, "the buyer type (consumer or business) is not in the registry: it decides the statutory period")
		return d
	}
	if terms == nil || terms.LiabilityMonths == 0 {
		d.Basis = None
		d.Remedies = []Remedy{PaidRepairQuote}
		d.Reasons = append(d.Reasons, fmt.Sprintf("%s declares no statutory liability to a %s buyer", j.label(code), d.Buyer))
		return d
	}
	if r.PurchaseDate == "" {
		d.Basis = NeedsProof
		d.Evidence = evidence(terms, ProofOfPurchase)
		d.Reasons = append(d.Reasons, "the purchase date is not in the registry: the customer shows a proof of purchase")
		return d
	}
	bought, err := time.Parse(time.DateOnly, r.PurchaseDate)
	if err != nil || bought.After(day.Time) {
		d.Basis = NeedsInfo
		d.Reasons = append(d.Reasons, fmt.Sprintf("the registry's purchase date %q is not a day before the receipt: a person decides", r.PurchaseDate))
		return d
	}
	law := terms.Law
	if law == "" {
		law = j.label(code)
	}
	end := bought.AddDate(0, terms.LiabilityMonths, 0)
	period := fmt.Sprintf("%s: %d months from %s", law, terms.LiabilityMonths, terms.LiabilityFrom)
	switch {
	case !day.After(end):
		d.Basis = Statutory
		d.Remedies = flatten(terms.Remedies)
		d.PerformBy = after(day, terms.PerformDays)
		d.Presumed = !day.After(bought.AddDate(0, terms.PresumptionMonths, 0))
		d.Reasons = append(d.Reasons, fmt.Sprintf("purchased %s by a %s: the seller's statutory liability runs (%s)", r.PurchaseDate, d.Buyer, period))
		if d.Presumed {
			d.Reasons = append(d.Reasons, fmt.Sprintf("within %d months: the non-conformity is presumed to have existed at delivery", terms.PresumptionMonths))
		}
	case terms.LiabilityFrom == FromDelivery && !day.After(end.AddDate(0, 0, p.DeliveryWithinDays)):
		d.Basis = NeedsProof
		d.Evidence = []Evidence{ProofOfDelivery}
		d.Reasons = append(d.Reasons, fmt.Sprintf("purchased %s by a %s: past %s counted from the purchase, but the period runs from delivery: the customer shows the delivery date", r.PurchaseDate, d.Buyer, period))
	default:
		d.Basis = None
		d.Remedies = []Remedy{PaidRepairQuote}
		d.Reasons = append(d.Reasons, fmt.Sprintf("purchased %s by a %s: the statutory period has run out (%s)", r.PurchaseDate, d.Buyer, period))
	}
	return d
}

// answerBy sets the answer deadline: the buyer's terms, or for an unknown
// buyer the earliest declared one (silence accepting if any does).
func (d *Decision) answerBy(j *Jurisdiction, t *Terms, day Date) {
	cands := []*Terms{t}
	if t == nil && d.Buyer == "" {
		cands = []*Terms{j.Consumer, j.Business}
	}
	days := 0
	for _, c := range cands {
		if c == nil || c.AnswerDays == 0 {
			continue
		}
		if days == 0 || c.AnswerDays < days {
			days = c.AnswerDays
		}
		d.SilenceAccepts = d.SilenceAccepts || c.SilenceAccepts
	}
	d.AnswerBy = after(day, days)
}

// after is n days after day (zero when n is 0: no deadline).
func after(day Date, n int) Date {
	if n <= 0 {
		return Date{}
	}
	return Date{day.AddDate(0, 0, n)}
}

func flatten(tiers [][]Remedy) []Remedy {
	out := []Remedy{}
	for _, t := range tiers {
		out = append(out, t...)
	}
	return out
}

// evidence is the terms' evidence, or def when they declare none.
func evidence(t *Terms, def Evidence) []Evidence {
	if len(t.Evidence) > 0 {
		return append([]Evidence(nil), t.Evidence...)
	}
	return []Evidence{def}
}

func (j *Jurisdiction) label(code string) string {
	if j.Name != "" {
		return j.Name
	}
	return code
}

func until(date string) string {
	if date == "" {
		return ""
	}
	return " until " + date
}

func on(date string) string {
	if date == "" {
		return ""
	}
	return " on " + date
}
