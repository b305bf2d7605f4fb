package processor_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/processor"
)

// The outcome says which emails are consumer complaints (the shipped
// warranty claims), and that a reply asking for the missing serial asks
// for it: the complaint clock does not count it as an answer on the merits.
func TestOutcomeComplaint(t *testing.T) {
	for _, tc := range []struct {
		name, scenario string
		raw            []byte
		asks           []string
	}{
		{"a claim with its serial", "valid-warranty", eml("Anna <anna@example.pl>", "Reklamacja", validText), nil},
		{"a claim without its serial", "missing-info",
			eml("jan@example.pl", "Pytanie", "Dzień dobry, ekspres nie działa, proszę o naprawę gwarancyjną."), []string{"serial_number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newModeEnv(t, &scripted{}, instructionsWith(t, nil), nil)
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: tc.raw})
			if out.Scenario != tc.scenario || !out.Complaint || out.HandsOff {
				t.Errorf("scenario %s, complaint %v, hands_off %v; want %s, a complaint, not handed off", out.Scenario, out.Complaint, out.HandsOff, tc.scenario)
			}
			if diff := cmp.Diff(tc.asks, out.AsksFor); diff != "" {
				t.Errorf("asks_for (-want +got):\n%s", diff)
			}
		})
	}
}
