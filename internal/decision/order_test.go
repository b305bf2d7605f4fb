package decision_test

import (
	"strings"
	"testing"

	"triage/internal/clients/warranty"
	"triage/internal/decision"
)

// Every shipped jurisdiction's decisions list their remedies in legal
// order: no repair or replacement after a price reduction or refund.
func TestDecideRemediesInLegalOrder(t *testing.T) {
	for _, code := range []string{"pl", "eu", "de", "uk"} {
		p := shipped(t, code)
		for _, r := range []warranty.Result{
			{Status: warranty.StatusValid, ExpirationDate: "2027-01-01"},
			{Status: warranty.StatusExpired, ExpirationDate: "2026-03-31", PurchaseDate: "2025-06-01", Buyer: "consumer"},
			{Status: warranty.StatusExpired, ExpirationDate: "2026-03-31", PurchaseDate: "2025-06-01", Buyer: "business"},
		} {
			d := decision.Decide(p, r, received)
			second := false
			for _, x := range d.Remedies {
				second = second || x.SecondTier()
				if x.FirstTier() && second {
					t.Errorf("%s, %s %s: remedies %v out of legal order", code, r.Status, r.Buyer, d.Remedies)
				}
			}
			if d.FirstTierExhausted {
				t.Errorf("%s: Decide set FirstTierExhausted", code)
			}
		}
	}
}

// Allows keeps the legal order: on a statutory or guarantee basis a price
// reduction or refund only once the decision says the first tier is
// exhausted or impossible; a decision without a first tier (a UK
// business: refund or damages) offers its remedies as they are.
func TestAllowsLegalOrder(t *testing.T) {
	statutory := decision.Decision{Basis: decision.Statutory, Remedies: []decision.Remedy{decision.Repair, decision.Replacement, decision.PriceReduction, decision.Refund}}
	exhausted := statutory
	exhausted.FirstTierExhausted = true
	guarantee := decision.Decision{Basis: decision.Guarantee, Remedies: []decision.Remedy{decision.Repair, decision.Replacement, decision.Refund}}
	ukBusiness := decision.Decision{Basis: decision.Statutory, Remedies: []decision.Remedy{decision.Refund, decision.PriceReduction}}
	cs := decision.Commitments
	for _, tt := range []struct {
		name string
		d    decision.Decision
		cs   []decision.Commitment
		bad  []decision.Commitment
	}{
		{"statutory: repair", statutory, cs([]string{"repair", "replacement"}), nil},
		{"statutory: refund first", statutory, cs([]string{"refund"}), cs([]string{"refund"})},
		{"statutory: price reduction beside a repair", statutory, cs([]string{"repair", "price_reduction"}), cs([]string{"price_reduction"})},
		{"statutory, first tier exhausted: refund", exhausted, cs([]string{"refund", "price_reduction"}), nil},
		{"guarantee: refund", guarantee, cs([]string{"refund"}), cs([]string{"refund"})},
		{"no first tier: refund", ukBusiness, cs([]string{"refund"}), nil},
	} {
		var bad []decision.Commitment
		for _, r := range decision.Allows(&tt.d, tt.cs, false) {
			bad = append(bad, r.Commitment)
			if !strings.Contains(r.Why, "legal order") || !strings.Contains(r.Why, "repair") {
				t.Errorf("%s: %s: %q does not name the legal order and the first tier", tt.name, r.Commitment, r.Why)
			}
		}
		if len(bad) != len(tt.bad) || (len(bad) > 0 && bad[0] != tt.bad[0]) {
			t.Errorf("%s: refused %v, want %v", tt.name, bad, tt.bad)
		}
	}
}
