package decision_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	embedded "triage/instructions"
	"triage/internal/clients/warranty"
	"triage/internal/decision"
	"triage/internal/instructions"
)

// shipped is the built-in policy with jurisdiction code as its default.
func shipped(t *testing.T, code string) *decision.Policy {
	t.Helper()
	p, err := instructions.LoadPolicy(embedded.FS)
	if err != nil {
		t.Fatal(err)
	}
	cp := *p
	cp.Default = code
	return &cp
}

func day(s string) decision.Date {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return decision.Date{Time: t}
}

// received is the email's time of receipt in every case.
var received = time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)

func TestDecide(t *testing.T) {
	const (
		repair, replacement = decision.Repair, decision.Replacement
		reduce, refund      = decision.PriceReduction, decision.Refund
		paid                = decision.PaidRepairQuote
	)
	expired := func(buyer, bought string) warranty.Result {
		return warranty.Result{SerialNumber: "SN-1", Status: warranty.StatusExpired, ExpirationDate: "2025-01-31", Buyer: buyer, PurchaseDate: bought}
	}
	type want struct {
		basis     decision.Basis
		remedies  []decision.Remedy
		answerBy  string
		silence   bool
		performBy string
		presumed  bool
		evidence  []decision.Evidence
	}
	tests := []struct {
		name, jurisdiction string
		res                warranty.Result
		want               want
	}{
		{"valid guarantee", "pl", warranty.Result{SerialNumber: "SN-1", Status: warranty.StatusValid, ExpirationDate: "2027-05-31"},
			want{basis: decision.Guarantee, remedies: []decision.Remedy{repair, replacement}, answerBy: "2026-12-12", silence: true, performBy: "2026-12-12"}},
		{"valid guarantee, business", "pl", warranty.Result{SerialNumber: "SN-1", Status: warranty.StatusValid, Buyer: "business"},
			want{basis: decision.Guarantee, remedies: []decision.Remedy{repair, replacement}, answerBy: "2026-12-12", performBy: "2026-12-12"}},
		{"pl consumer within the presumption", "pl", expired("consumer", "2025-06-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}, answerBy: "2026-12-12", silence: true, presumed: true}},
		{"pl consumer on the last day", "pl", expired("consumer", "2024-11-28"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}, answerBy: "2026-12-12", silence: true, presumed: true}},
		{"pl consumer: delivery may still be within", "pl", expired("consumer", "2024-11-10"),
			want{basis: decision.NeedsProof, remedies: []decision.Remedy{}, answerBy: "2026-12-12", silence: true, evidence: []decision.Evidence{decision.ProofOfDelivery}}},
		{"pl consumer beyond", "pl", expired("consumer", "2024-06-01"),
			want{basis: decision.None, remedies: []decision.Remedy{paid}, answerBy: "2026-12-12", silence: true}},
		{"pl business within: no presumption, no deemed acceptance", "pl", expired("business", "2025-06-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}, answerBy: "2026-12-12"}},
		{"buyer unknown", "pl", expired("", "2025-06-01"),
			want{basis: decision.NeedsInfo, remedies: []decision.Remedy{}, answerBy: "2026-12-12", silence: true}},
		{"buyer value unknown", "pl", expired("government", "2025-06-01"),
			want{basis: decision.NeedsInfo, remedies: []decision.Remedy{}, answerBy: "2026-12-12", silence: true}},
		{"purchase date unknown", "pl", expired("consumer", ""),
			want{basis: decision.NeedsProof, remedies: []decision.Remedy{}, answerBy: "2026-12-12", silence: true, evidence: []decision.Evidence{decision.ProofOfPurchase}}},
		{"purchase after the receipt", "pl", expired("consumer", "2027-01-01"),
			want{basis: decision.NeedsInfo, remedies: []decision.Remedy{}, answerBy: "2026-12-12", silence: true}},
		{"serial not found", "pl", warranty.Result{SerialNumber: "SN-9", Status: warranty.StatusNotFound},
			want{basis: decision.NeedsProof, remedies: []decision.Remedy{}, answerBy: "2026-12-12", silence: true, evidence: []decision.Evidence{decision.ProofOfPurchase}}},
		{"unknown status", "pl", warranty.Result{SerialNumber: "SN-1", Status: "pending"},
			want{basis: decision.NeedsInfo, remedies: []decision.Remedy{}, answerBy: "2026-12-12", silence: true}},
		{"eu consumer after the 1-year presumption", "eu", expired("consumer", "2025-06-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}}},
		{"eu consumer within a year", "eu", expired("consumer", "2026-02-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}, presumed: true}},
		{"eu business: not covered", "eu", expired("business", "2026-02-01"),
			want{basis: decision.None, remedies: []decision.Remedy{paid}}},
		{"de consumer beyond", "de", expired("consumer", "2024-01-15"),
			want{basis: decision.None, remedies: []decision.Remedy{paid}}},
		{"de business within", "de", expired("business", "2025-12-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}}},
		{"uk consumer within six years", "uk", expired("consumer", "2021-03-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}}},
		{"uk consumer within six months", "uk", expired("consumer", "2026-07-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{repair, replacement, reduce, refund}, presumed: true}},
		{"uk business: refund first", "uk", expired("business", "2021-03-01"),
			want{basis: decision.Statutory, remedies: []decision.Remedy{refund, reduce}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decision.Decide(shipped(t, tt.jurisdiction), tt.res, received)
			got := want{basis: d.Basis, remedies: d.Remedies, answerBy: d.AnswerBy.String(), silence: d.SilenceAccepts,
				performBy: d.PerformBy.String(), presumed: d.Presumed, evidence: d.Evidence}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\nreasons: %q", diff, d.Reasons)
			}
			if d.Jurisdiction != tt.jurisdiction || len(d.Reasons) == 0 {
				t.Errorf("jurisdiction %q, reasons %q", d.Jurisdiction, d.Reasons)
			}
			if d.Basis == decision.Statutory && d.Offers(paid) {
				t.Errorf("a statutory claim offers a paid repair: %v", d.Remedies)
			}
		})
	}
}

// Never "none" for what the shop does not know.
func TestDecideUnknownIsNeverNone(t *testing.T) {
	p := shipped(t, "pl")
	for _, res := range []warranty.Result{
		{SerialNumber: "X", Status: warranty.StatusNotFound},
		{SerialNumber: "X", Status: warranty.StatusExpired},
		{SerialNumber: "X", Status: warranty.StatusExpired, Buyer: "consumer"},
		{SerialNumber: "X", Status: warranty.StatusExpired, PurchaseDate: "2020-01-01"},
		{SerialNumber: "X", Status: warranty.StatusExpired, Buyer: "consumer", PurchaseDate: "not a date"},
		{SerialNumber: "X", Status: ""},
	} {
		if d := decision.Decide(p, res, received); d.Basis == decision.None || d.Basis == decision.Statutory {
			t.Errorf("%+v: basis %s", res, d.Basis)
		}
	}
	if d := decision.Decide(nil, warranty.Result{Status: warranty.StatusExpired, Buyer: "consumer", PurchaseDate: "2020-01-01"}, received); d.Basis != decision.NeedsInfo {
		t.Errorf("no policy: basis %s", d.Basis)
	}
	if d := decision.Decide(p, warranty.Result{Status: warranty.StatusExpired, Buyer: "consumer", PurchaseDate: "2020-01-01"}, time.Time{}); d.Basis != decision.NeedsInfo {
		t.Errorf("no time of receipt: basis %s", d.Basis)
	}
}

func TestDecisionJSON(t *testing.T) {
	d := decision.Decide(shipped(t, "pl"), warranty.Result{SerialNumber: "SN-1", Status: warranty.StatusExpired, Buyer: "consumer", PurchaseDate: "2025-06-01"}, received)
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"basis": "statutory", "answer_by": "2026-12-12", "silence_accepts": true, "presumed": true,
		"jurisdiction": "pl", "buyer": "consumer",
		"remedies": []any{"repair", "replacement", "price_reduction", "refund"},
	} {
		if diff := cmp.Diff(want, got[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	if _, ok := got["perform_by"]; ok {
		t.Errorf("perform_by without a deadline: %s", b)
	}
	var back decision.Decision
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.AnswerBy != day("2026-12-12") {
		t.Errorf("answer_by round trip: %v", back.AnswerBy)
	}
}

// Select chooses the jurisdiction Decide applies; an unknown code names
// itself and the declared ones; "" keeps the policy's default.
func TestSelect(t *testing.T) {
	p := shipped(t, "pl")
	uk, err := p.Select("uk")
	if err != nil {
		t.Fatal(err)
	}
	if code, j := uk.Jurisdiction(); code != "uk" || j == nil || j.Consumer.LiabilityMonths != 72 {
		t.Errorf("Select(uk).Jurisdiction() = %q, %+v", code, j)
	}
	if code, _ := p.Jurisdiction(); code != "pl" {
		t.Errorf("Select changed the policy it was called on: default %q", code)
	}
	// Four years after purchase: statutory in the UK, none in Poland.
	r := warranty.Result{SerialNumber: "SN-1", Status: warranty.StatusExpired, ExpirationDate: "2024-11-01", PurchaseDate: "2022-11-01", Buyer: "consumer"}
	if d := decision.Decide(uk, r, received); d.Basis != decision.Statutory || d.Jurisdiction != "uk" {
		t.Errorf("under uk: %s (%s), want statutory (uk)", d.Basis, d.Jurisdiction)
	}
	if d := decision.Decide(p, r, received); d.Basis != decision.None {
		t.Errorf("under pl: %s, want none", d.Basis)
	}
	if same, err := p.Select(""); err != nil || same != p {
		t.Errorf("Select(\"\") = %p, %v; want the policy itself", same, err)
	}
	_, err = p.Select("fr")
	if err == nil || !strings.Contains(err.Error(), `"fr"`) || !strings.Contains(err.Error(), "de, eu, pl, uk") {
		t.Errorf("Select(fr) = %v, want an error naming fr and de, eu, pl, uk", err)
	}
}
