package instructions_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"triage/internal/decision"
	"triage/internal/instructions"
)

func TestLoadPolicyBuiltIn(t *testing.T) {
	set, err := instructions.Load("", builtinNames)
	if err != nil {
		t.Fatal(err)
	}
	code, j := set.Policy.Jurisdiction()
	if code != "pl" || j == nil || j.Consumer == nil || j.Consumer.AnswerDays != 14 || !j.Consumer.SilenceAccepts {
		t.Fatalf("default jurisdiction %q: %+v", code, j)
	}
	for _, c := range []string{"pl", "eu", "de", "uk"} {
		if set.Policy.Jurisdictions[c] == nil {
			t.Errorf("no %s jurisdiction", c)
		}
	}
}

// A directory without policy.yaml gets the built-in policy.
func TestLoadPolicyDefault(t *testing.T) {
	set, err := instructions.Load("testdata/basic", builtinNames)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := set.Policy.Jurisdiction(); code != "pl" {
		t.Errorf("default jurisdiction %q, want the built-in pl", code)
	}
}

const goodPolicy = `default: pl
jurisdictions:
  pl:
    consumer:
      liability_months: 24
      liability_from: delivery
      remedies: [[repair, replacement], [price_reduction, refund]]
`

func TestParsePolicyErrors(t *testing.T) {
	if _, err := instructions.ParsePolicy("policy.yaml", []byte(goodPolicy)); err != nil {
		t.Fatalf("good policy: %v", err)
	}
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "  \n", []string{"policy: policy.yaml: empty"}},
		{"unknown key and wrong kind", "default: pl\nfallback: eu\njurisdictions:\n  pl:\n    consumer:\n      liability_months: two\n",
			[]string{`policy: policy.yaml: line 2: unknown field "fallback"`, `line 6: jurisdictions.pl.consumer.liability_months: "two" is not a whole number`}},
		{"undeclared default", strings.Replace(goodPolicy, "default: pl", "default: fr", 1),
			[]string{`policy: policy.yaml: line 1: default: "fr" is not a declared jurisdiction (one of pl)`}},
		{"bad remedy, start and presumption", `default: pl
jurisdictions:
  pl:
    consumer:
      liability_months: 24
      liability_from: shipment
      presumption_months: 36
      remedies:
        - [repair, fix]
        - [paid_repair_quote]
      silence_accepts: true
`, []string{
			`line 6: jurisdictions.pl.consumer.liability_from: "shipment": want delivery or purchase`,
			`line 7: jurisdictions.pl.consumer.presumption_months: must be between 0 and liability_months (24)`,
			`line 9: jurisdictions.pl.consumer.remedies[0][1]: "fix" is not a remedy`,
			`line 10: jurisdictions.pl.consumer.remedies[1][0]: a paid repair is not a remedy the shop owes`,
			`line 11: jurisdictions.pl.consumer.silence_accepts: needs answer_days`,
		}},
		{"remedies out of their legal order", `default: pl
jurisdictions:
  pl:
    guarantee:
      remedies: [[refund, repair]]
    consumer:
      liability_months: 24
      liability_from: delivery
      remedies:
        - [price_reduction]
        - [repair, replacement]
`, []string{
			`line 5: jurisdictions.pl.guarantee.remedies[0][1]: repair after refund: the legal order is repair or replacement first`,
			`line 11: jurisdictions.pl.consumer.remedies[1][0]: repair after price_reduction`,
			`line 11: jurisdictions.pl.consumer.remedies[1][1]: replacement after price_reduction`,
		}},
		{"no buyer terms", "default: pl\njurisdictions:\n  pl:\n    name: Poland\n",
			[]string{`line 4: jurisdictions.pl: declare consumer or business terms`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := instructions.ParsePolicy("policy.yaml", []byte(tt.text))
			if err == nil {
				t.Fatal("parsed")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// A broken policy.yaml is a Load error naming the directory, file and line.
func TestLoadBrokenPolicy(t *testing.T) {
	dir := basicDirWith(t, "policy.yaml", "default: pl\njurisdictions: {}\n")
	_, err := instructions.Load(dir, builtinNames)
	if err == nil || !strings.Contains(err.Error(), dir+":\n") || !strings.Contains(err.Error(), "policy: policy.yaml: line 2: jurisdictions: declare at least one jurisdiction") {
		t.Errorf("Load = %v", err)
	}
}

func TestLoadPolicyFS(t *testing.T) {
	p, err := instructions.LoadPolicy(fstest.MapFS{"policy.yaml": {Data: []byte(goodPolicy)}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Jurisdictions["pl"].Consumer.Remedies[0][0] != decision.Repair {
		t.Errorf("remedies %v", p.Jurisdictions["pl"].Consumer.Remedies)
	}
}
