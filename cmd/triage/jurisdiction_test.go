package main

import (
	"strings"
	"testing"
	"time"

	"triage/internal/decision"
	"triage/internal/instructions"
)

// pipeline.jurisdiction chooses the policy's jurisdiction the decisions
// apply (triage check says which); an undeclared one stops the start-up,
// naming itself and the declared ones.
func TestJurisdictionSetting(t *testing.T) {
	noDefaultConfig(t)
	cfg := watchConfig(t, t.TempDir(), "  offline: true\n  jurisdiction: uk\n")
	code, out, stderr := runArgs(t, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "decisions under uk (United Kingdom)") {
		t.Errorf("jurisdiction uk: exit %d, want 0 and decisions under uk\n%s%s", code, out, stderr)
	}
	cfg = watchConfig(t, t.TempDir(), "  offline: true\n  jurisdiction: fr\n")
	code, out, stderr = runArgs(t, "watch", "--config", cfg, "--check")
	if code != 2 || !strings.Contains(stderr, `"fr"`) || !strings.Contains(stderr, "de, eu, pl, uk") {
		t.Errorf("jurisdiction fr: exit %d, want 2 naming fr and de, eu, pl, uk\n%s%s", code, out, stderr)
	}
}

// Without complaints.answer_days, the complaint clock's answer period is
// the chosen jurisdiction's answer_days for the decision's buyer (a
// consumer's when unknown; 0, no clock, where the law sets none); given,
// complaints.answer_days wins.
func TestComplaintPeriodFollowsPolicy(t *testing.T) {
	noDefaultConfig(t)
	day := 24 * time.Hour
	policy := func(code string) *decision.Policy {
		p, err := instructions.LoadPolicy(nil)
		if err != nil {
			t.Fatal(err)
		}
		if p, err = p.Select(code); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wo, err := loadWatchFile(watchConfig(t, t.TempDir(), "  offline: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if wo.Complaints.AnswerDaysSet {
		t.Fatal("complaints.answer_days not given, but AnswerDaysSet")
	}
	for _, tc := range []struct {
		code string
		want map[decision.Buyer]time.Duration
	}{
		{"pl", map[decision.Buyer]time.Duration{decision.Consumer: 14 * day, decision.Business: 14 * day, "": 14 * day}},
		{"uk", map[decision.Buyer]time.Duration{decision.Consumer: 0, decision.Business: 0, "": 0}},
		{"eu", map[decision.Buyer]time.Duration{decision.Consumer: 0, decision.Business: 0, "": 0}},
	} {
		c := wo.Complaints.watch(nil, "", "example.com", nil, policy(tc.code))
		if c.AnswerPeriodFor == nil {
			t.Fatalf("%s: no AnswerPeriodFor", tc.code)
		}
		for b, want := range tc.want {
			if got := c.AnswerPeriodFor(b); got != want {
				t.Errorf("%s, buyer %q: %v, want %v", tc.code, b, got, want)
			}
		}
	}
	// A policy whose consumer and business periods differ: unknown is the consumer's.
	p := policy("pl")
	cp := *p.Jurisdictions["pl"]
	cons, bus := *cp.Consumer, *cp.Business
	cons.AnswerDays, bus.AnswerDays = 21, 7
	cp.Consumer, cp.Business = &cons, &bus
	p.Jurisdictions = map[string]*decision.Jurisdiction{"pl": &cp}
	c := wo.Complaints.watch(nil, "", "example.com", nil, p)
	if got := c.AnswerPeriodFor(""); got != 21*day {
		t.Errorf("unknown buyer: %v, want the consumer's 21 days", got)
	}
	if got := c.AnswerPeriodFor(decision.Business); got != 7*day {
		t.Errorf("business: %v, want 7 days", got)
	}

	wo, err = loadWatchFile(watchConfig(t, t.TempDir(), "  offline: true\ncomplaints:\n  answer_days: 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := wo.Complaints.watch(nil, "", "example.com", nil, policy("uk")); c.AnswerPeriodFor != nil || c.AnswerPeriod != 30*day {
		t.Errorf("answer_days 30 given: AnswerPeriodFor set %v, period %v; want the 30 days alone", c.AnswerPeriodFor != nil, c.AnswerPeriod)
	}
}
