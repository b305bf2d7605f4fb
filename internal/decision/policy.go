// The policy: what the law and the shop owe a claim, per jurisdiction and
// buyer type, as instructions/policy.yaml declares it.

package decision

import (
	"fmt"
	"slices"
	"strings"
)

// PolicyFile is the policy's file name in an instructions directory.
const PolicyFile = "policy.yaml"

// Policy is the decoded policy file: the jurisdictions the shop answers
// under and the one it applies (Default).
type Policy struct {
	// Default is the code of the jurisdiction Decide applies.
	Default string `yaml:"default"`
	// DeliveryWithinDays is the latest a delivery follows its purchase in
	// this shop: a period that runs from delivery, known only by the
	// purchase date, may still run this many days past purchase + period,
	// so such a claim needs proof of the delivery date, not a refusal.
	DeliveryWithinDays int `yaml:"delivery_within_days"`
	// Jurisdictions by code (pl, eu, de, uk, ...).
	Jurisdictions map[string]*Jurisdiction `yaml:"jurisdictions"`
}

// Jurisdiction is one legal system: the shop's guarantee terms and the
// statutory terms per buyer type. A buyer type without terms has no
// statutory claim under it.
type Jurisdiction struct {
	Name      string         `yaml:"name"`
	Guarantee GuaranteeTerms `yaml:"guarantee"`
	Consumer  *Terms         `yaml:"consumer"`
	Business  *Terms         `yaml:"business"`
}

// GuaranteeTerms are what the shop's guarantee (a registry status of
// valid) gives: its remedies in their order and the days to perform them.
type GuaranteeTerms struct {
	Remedies    [][]Remedy `yaml:"remedies"`
	PerformDays int        `yaml:"perform_days"`
}

// Terms are the statutory terms for one buyer type.
type Terms struct {
	// Law names the statute, for the decision's reasons.
	Law string `yaml:"law"`
	// LiabilityMonths is the seller's statutory liability, counted from
	// LiabilityFrom; 0: none (e.g. excluded by contract between businesses).
	LiabilityMonths int   `yaml:"liability_months"`
	LiabilityFrom   Start `yaml:"liability_from"`
	// PresumptionMonths: a non-conformity that shows within this many
	// months (from the same start) is presumed to have existed at delivery.
	PresumptionMonths int `yaml:"presumption_months"`
	// Remedies in their legal order: each tier is offered before the next
	// (repair or replacement, then price reduction or refund).
	Remedies [][]Remedy `yaml:"remedies"`
	// Evidence the customer must show when the registry cannot.
	Evidence []Evidence `yaml:"evidence"`
	// AnswerDays: the complaint is answered within this many days of its
	// receipt; SilenceAccepts: a complaint not answered in time is deemed
	// accepted.
	AnswerDays     int  `yaml:"answer_days"`
	SilenceAccepts bool `yaml:"silence_accepts"`
	// PerformDays: the remedy is performed within this many days of the
	// receipt (0: no fixed deadline).
	PerformDays int `yaml:"perform_days"`
}

// Start is where a statutory period starts.
type Start string

const (
	FromDelivery Start = "delivery"
	FromPurchase Start = "purchase"
)

// Evidence is something the customer may be asked to show.
type Evidence string

const (
	ProofOfPurchase Evidence = "proof_of_purchase"
	ProofOfDelivery Evidence = "proof_of_delivery"
)

// Problem is one thing wrong with a policy: Path is the dotted key path
// of the value (jurisdictions.pl.consumer.remedies[1][0]), "" for the file.
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Jurisdiction is the jurisdiction Decide applies (nil when p is nil or
// its default is not declared).
func (p *Policy) Jurisdiction() (string, *Jurisdiction) {
	if p == nil {
		return "", nil
	}
	return p.Default, p.Jurisdictions[p.Default]
}

// Select is a copy of p whose default (the jurisdiction Decide applies)
// is code; "" keeps p's own. A code p does not declare is an error naming
// it and the declared ones.
func (p *Policy) Select(code string) (*Policy, error) {
	if code == "" || p == nil {
		return p, nil
	}
	if p.Jurisdictions[code] == nil {
		return nil, fmt.Errorf("jurisdiction %q is not declared in %s (declared: %s)", code, PolicyFile, strings.Join(p.codes(), ", "))
	}
	cp := *p
	cp.Default = code
	return &cp, nil
}

// TermsFor is j's statutory terms for buyer b (nil when it declares none).
func (j *Jurisdiction) TermsFor(b Buyer) *Terms {
	switch b {
	case Consumer:
		return j.Consumer
	case Business:
		return j.Business
	}
	return nil
}

// Validate returns every problem of p, in a stable order.
func (p *Policy) Validate() []Problem {
	var out []Problem
	add := func(path, format string, a ...any) {
		out = append(out, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	switch {
	case len(p.Jurisdictions) == 0:
		add("jurisdictions", "declare at least one jurisdiction")
	case p.Default == "":
		add("default", "missing: name the jurisdiction that applies (one of %s)", strings.Join(p.codes(), ", "))
	case p.Jurisdictions[p.Default] == nil:
		add("default", "%q is not a declared jurisdiction (one of %s)", p.Default, strings.Join(p.codes(), ", "))
	}
	if p.DeliveryWithinDays < 0 {
		add("delivery_within_days", "must not be negative")
	}
	for _, code := range p.codes() {
		j := p.Jurisdictions[code]
		path := "jurisdictions." + code
		if j == nil {
			add(path, "empty: declare its guarantee and buyer terms")
			continue
		}
		if code != strings.ToLower(code) || strings.ContainsAny(code, " .") {
			add(path, "a jurisdiction code is lower case, without spaces or dots (pl, eu, de, uk)")
		}
		if j.Consumer == nil && j.Business == nil {
			add(path, "declare consumer or business terms (or both)")
		}
		checkRemedies(add, path+".guarantee.remedies", j.Guarantee.Remedies, false)
		if j.Guarantee.PerformDays < 0 {
			add(path+".guarantee.perform_days", "must not be negative")
		}
		for _, b := range []Buyer{Consumer, Business} {
			if t := j.TermsFor(b); t != nil {
				t.validate(add, path+"."+string(b))
			}
		}
	}
	return out
}

func (t *Terms) validate(add func(path, format string, a ...any), path string) {
	if t.LiabilityMonths < 0 {
		add(path+".liability_months", "must not be negative")
	}
	if t.PresumptionMonths < 0 || t.PresumptionMonths > t.LiabilityMonths {
		add(path+".presumption_months", "must be between 0 and liability_months (%d)", t.LiabilityMonths)
	}
	if t.LiabilityMonths > 0 {
		switch t.LiabilityFrom {
		case FromDelivery, FromPurchase:
		case "":
			add(path+".liability_from", "missing: delivery or purchase")
		default:
			add(path+".liability_from", "%q: want delivery or purchase", t.LiabilityFrom)
		}
		checkRemedies(add, path+".remedies", t.Remedies, true)
	}
	for i, e := range t.Evidence {
		if e != ProofOfPurchase && e != ProofOfDelivery {
			add(fmt.Sprintf("%s.evidence[%d]", path, i), "%q: want proof_of_purchase or proof_of_delivery", e)
		}
	}
	if t.AnswerDays < 0 {
		add(path+".answer_days", "must not be negative")
	}
	if t.SilenceAccepts && t.AnswerDays == 0 {
		add(path+".silence_accepts", "needs answer_days: silence accepts a complaint only after a deadline")
	}
	if t.PerformDays < 0 {
		add(path+".perform_days", "must not be negative")
	}
}

// checkRemedies checks tiers of remedies: in their legal order (a repair
// or replacement never in or after a tier with a price reduction or
// refund); statutory ones may not include a paid repair.
func checkRemedies(add func(path, format string, a ...any), path string, tiers [][]Remedy, statutory bool) {
	if statutory && len(tiers) == 0 {
		add(path, "missing: the remedies in their legal order, e.g. [[repair, replacement], [price_reduction, refund]]")
	}
	var second Remedy // the first second-tier remedy listed so far
	for i, tier := range tiers {
		for _, r := range tier {
			if r.SecondTier() && second == "" {
				second = r
			}
		}
		for k, r := range tier {
			if r.FirstTier() && second != "" {
				add(fmt.Sprintf("%s[%d][%d]", path, i, k), "%s after %s: the legal order is repair or replacement first, then price reduction or refund, each tier its own list", r, second)
			}
		}
		if len(tier) == 0 {
			add(fmt.Sprintf("%s[%d]", path, i), "an empty tier")
		}
		for k, r := range tier {
			p := fmt.Sprintf("%s[%d][%d]", path, i, k)
			switch {
			case !slices.Contains(Remedies, r):
				add(p, "%q is not a remedy (one of %s)", r, remedyList())
			case r == PaidRepairQuote:
				add(p, "a paid repair is not a remedy the shop owes")
			}
		}
	}
}

func (p *Policy) codes() []string {
	codes := make([]string, 0, len(p.Jurisdictions))
	for c := range p.Jurisdictions {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

func remedyList() string {
	s := make([]string, len(Remedies))
	for i, r := range Remedies {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}
