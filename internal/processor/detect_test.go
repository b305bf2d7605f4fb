package processor_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	embedded "triage/instructions"
	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/testkit/geminitest"
)

var routes = []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"}

func loadReal(t testing.TB) *instructions.Scenarios {
	t.Helper()
	set, err := instructions.LoadScenarios(embedded.FS, routes)
	if err != nil {
		t.Fatalf("instructions.LoadScenarios: %v", err)
	}
	return set
}

// got is the comparable part of a DetectResult.
type got struct {
	Scenario   string
	Method     processor.DetectionMethod
	Reason     string
	ModelCalls int
	Usage      agent.Usage
}

func summarizeDetection(r processor.DetectResult) got {
	g := got{Method: r.Method, Reason: r.Reason, ModelCalls: r.ModelCalls, Usage: r.Usage}
	if r.Scenario != nil {
		g.Scenario = r.Scenario.Name
	}
	return g
}

// byRules is what the rules give when they choose scenario sc because of why.
func byRules(sc, why string) got {
	return got{Scenario: sc, Method: "rules", Reason: sc + ": " + why}
}

// outranks is invalid-warranty chosen by serial and keyword over
// valid-warranty.
func outranks(serial, keyword string) got {
	return byRules("invalid-warranty", "serial "+serial+` present; keyword "`+keyword+`"; priority 20 outranks valid-warranty (priority 10)`)
}

// missingInfo is missing-info chosen by keyword with no serial.
func missingInfo(keyword string) got {
	return byRules("missing-info", `no serial; keyword "`+keyword+`"`)
}

// noRuleNoModel is the fallback when no rule matches and there is no model.
var noRuleNoModel = got{Scenario: "graceful-degradation", Method: "fallback",
	Reason: "graceful-degradation: no rule matched; no model available"}

// TestRules runs the shipped scenarios' rules with no model: what the rules
// cannot decide goes to the fallback scenario.
func TestRules(t *testing.T) {
	d := processor.NewDetector(loadReal(t), nil)
	tests := []struct {
		name, subject, text string
		serials             []string
		want                got
	}{
		{"pl serial, fault, no keyword", "Ekspres nie grzeje", "Dzień dobry, mój ekspres SN12345 przestał grzać wodę.",
			[]string{"SN12345"}, byRules("valid-warranty", "serial SN12345 present")},
		{"pl serial, po gwarancji", "Naprawa", "Urządzenie SN12345 jest już po gwarancji, ile kosztuje naprawa?",
			[]string{"SN12345"}, outranks("SN12345", "po gwarancji")},
		{"pl serial, keyword without diacritics and upper case", "", "GWARANCJA WYGASLA w marcu, numer SN-48213-PL.",
			[]string{"SN-48213-PL"}, outranks("SN-48213-PL", "gwarancja wygasła")},
		{"pl serial, inflected paid repair", "", "Proszę o płatną naprawę drukarki SN777.",
			[]string{"SN777"}, outranks("SN777", "płatną naprawę")},
		{"en serial, keyword in subject only", "Paid repair request", "Hello, my device SN555 does not start.",
			[]string{"SN555"}, outranks("SN555", "paid repair")},
		{"en serial, hyphen variant", "", "I know it is post warranty, serial SN9.",
			[]string{"SN9"}, outranks("SN9", "post-warranty")},
		{"two serials", "", "Two devices: SN1 and SN2 are faulty.",
			[]string{"SN1", "SN2"}, byRules("valid-warranty", "serial SN1, SN2 present")},
		{"pl no serial, reklamacja", "Reklamacja", "Chcę złożyć reklamację pralki.", nil, missingInfo("reklamacj")},
		{"pl no serial, nie dziala without diacritics", "", "Telefon nie dziala od wczoraj", nil, missingInfo("nie działa")},
		{"pl no serial, customer says po gwarancji", "", "Sprzęt jest po gwarancji, czy go naprawicie?", nil, missingInfo("gwarancj")},
		{"en no serial, stopped working", "", "My kettle stopped working yesterday.", nil, missingInfo("stopped working")},
		{"en no serial, apostrophe", "", "The blender doesn't work.", nil, missingInfo("doesn't work")},
		{"de serial, Garantie ist abgelaufen", "Reparatur", "Guten Tag, die Garantie ist schon abgelaufen, Seriennummer SN12345.",
			[]string{"SN12345"}, outranks("SN12345", "Garantie ist schon abgelaufen")},
		{"de serial, kostenpflichtige Reparatur, upper case", "", "BITTE EIN ANGEBOT FÜR EINE KOSTENPFLICHTIGE REPARATUR, GERÄT SN777.",
			[]string{"SN777"}, outranks("SN777", "kostenpflichtige Reparatur")},
		{"de serial, außerhalb written ausserhalb", "", "Das Gerät SN9 ist ausserhalb der Garantie.",
			[]string{"SN9"}, outranks("SN9", "außerhalb der Garantie")},
		{"de serial, fault, no keyword", "Kaffeemaschine", "Guten Tag, meine Kaffeemaschine SN12345 heizt nicht mehr.",
			[]string{"SN12345"}, byRules("valid-warranty", "serial SN12345 present")},
		{"de no serial, funktioniert nicht", "", "Meine Waschmaschine funktioniert nicht mehr.", nil, missingInfo("funktioniert nicht")},
		{"de no serial, kaputt", "Toaster", "Der Toaster ist seit gestern kaputt.", nil, missingInfo("kaputt")},
		{"de no serial, Umtausch with umlaut folded", "", "Ich moechte einen Umtausch, bitte um Rueckmeldung.", nil, missingInfo("Umtausch")},
		{"de no serial, no keyword", "Angebot", "Guten Tag, wir möchten Ihnen eine Zusammenarbeit anbieten.", nil, noRuleNoModel},
		{"en serial, warranty has expired", "", "Hello, the warranty has expired on my kettle SN12345, what now?",
			[]string{"SN12345"}, outranks("SN12345", "warranty has expired")},
		{"en serial, fault, no keyword", "Kettle", "Hello, my kettle SN12345 leaks.",
			[]string{"SN12345"}, byRules("valid-warranty", "serial SN12345 present")},
		{"en no serial, broken", "Screen", "The screen of my tablet is broken.", nil, missingInfo("broken")},
		{"en no serial, no keyword", "Partnership", "Hello, we would like to propose a partnership.", nil, noRuleNoModel},
		{"stem inside a word does not match", "", "Proszę o informacje o nowych produktach.", nil, noRuleNoModel},
		{"pl no serial, no keyword", "Oferta współpracy", "Dzień dobry, chcielibyśmy zaproponować współpracę marketingową.", nil, noRuleNoModel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			facts := prompt.Facts{From: "jan@example.com", ReplyTo: "jan@example.com", Subject: tc.subject, Language: "pl", SerialNumbers: tc.serials}
			res, _, _ := d.Detect(facts, tc.text)
			if diff := cmp.Diff(tc.want, summarizeDetection(res)); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
		})
	}
}

// tieSet has two rule scenarios at the given priorities and a fallback.
func tieSet(t *testing.T, pa, pb int) *instructions.Scenarios {
	t.Helper()
	sc := func(name, rules string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(fmt.Sprintf(`---
name: %s
description: %s scenario.
%s
available_functions:
  - name: send_email
    description: Send the reply.
    parameters: {type: object, properties: {to: {type: string}}, required: [to]}
---
Instructions.
`, name, name, rules))}
	}
	set, err := instructions.LoadScenarios(fstest.MapFS{
		"main.md":          {Data: []byte("Rules.")},
		"scenarios/a.md":   sc("a", fmt.Sprintf("rules: {serial: required, priority: %d}", pa)),
		"scenarios/b.md":   sc("b", fmt.Sprintf("rules: {keywords: [ŻÓŁW], priority: %d}", pb)),
		"scenarios/fb.md":  sc("fb", "fallback: true"),
		"scenarios/off.md": sc("off", ""),
	}, routes)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return set
}

func TestRulesPriority(t *testing.T) {
	facts := prompt.Facts{Subject: "zolw", SerialNumbers: []string{"X1"}}
	tests := []struct {
		name   string
		pa, pb int
		want   got
	}{
		{"a wins", 7, 3, got{Scenario: "a", Method: "rules", Reason: "a: serial X1 present; priority 7 outranks b (priority 3)"}},
		{"b wins", 3, 7, got{Scenario: "b", Method: "rules", Reason: `b: keyword "ŻÓŁW"; priority 7 outranks a (priority 3)`}},
		{"tie goes to the model", 5, 5, got{Scenario: "fb", Method: "fallback", Reason: "fb: rules tied at priority 5: a, b; no model available"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := processor.NewDetector(tieSet(t, tc.pa, tc.pb), nil)
			res, _, _ := d.Detect(facts, "")
			if diff := cmp.Diff(tc.want, summarizeDetection(res)); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoFallbackScenario(t *testing.T) {
	set, err := instructions.LoadScenarios(fstest.MapFS{
		"main.md": {Data: []byte("Rules.")},
		"scenarios/only.md": {Data: []byte("---\nname: only\ndescription: d\nrules: {serial: required}\n" +
			"available_functions: []\n---\nBody\n")},
	}, routes)
	if err != nil {
		t.Fatal(err)
	}
	res, _, _ := processor.NewDetector(set, nil).Detect(prompt.Facts{}, "hello")
	want := got{Method: "fallback", Reason: "no rule matched; no model available; no fallback scenario"}
	if diff := cmp.Diff(want, summarizeDetection(res)); diff != "" {
		t.Errorf("Detect (-want +got):\n%s", diff)
	}
}

var unavailable = geminitest.Step{Status: http.StatusServiceUnavailable,
	Body: `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`}

// TestDetectLeavesUnsureToModel: with a model, what the rules decide is
// decided; what they cannot is left to the email's first turn, with why,
// and never taken for the fallback scenario.
func TestDetectLeavesUnsureToModel(t *testing.T) {
	ag, err := agent.New(agent.Config{Model: &agent.Gemini{Client: geminitest.New(t).Client()}})
	if err != nil {
		t.Fatal(err)
	}
	d := processor.NewDetector(loadReal(t), ag)
	res, _, decided := d.Detect(prompt.Facts{SerialNumbers: []string{"SN1"}}, "Zepsuł się.")
	want := got{Scenario: "valid-warranty", Method: "rules", Reason: "valid-warranty: serial SN1 present"}
	if diff := cmp.Diff(want, summarizeDetection(res)); diff != "" || !decided {
		t.Errorf("Detect (-want +got):\n%s; decided %v", diff, decided)
	}
	res, unsure, decided := d.Detect(prompt.Facts{Subject: "Oferta"}, "Dzień dobry, oferujemy pozycjonowanie stron.")
	if decided || res.Scenario != nil || unsure != "no rule matched" {
		t.Errorf("Detect = %+v, %q, decided %v; want undecided, no rule matched", summarizeDetection(res), unsure, decided)
	}
}

func BenchmarkRules(b *testing.B) {
	d := processor.NewDetector(loadReal(b), nil)
	facts := prompt.Facts{Subject: "Re: Reklamacja ekspresu", SerialNumbers: []string{"SN12345"}}
	text := strings.Repeat("Dzień dobry, ekspres przestał działać i cieknie woda spod spodu. ", 40) +
		"Wiem, że gwarancja już wygasła, proszę o wycenę."
	b.ReportAllocs()
	for b.Loop() {
		if res, _, _ := d.Detect(facts, text); res.Method != processor.MethodRules {
			b.Fatalf("method %s", res.Method)
		}
	}
}
