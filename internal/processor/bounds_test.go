package processor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/dispatcher"
)

// The agent's and the dispatcher's loop bounds come from one Bounds: the
// agent refuses unrun what is past twice the dispatcher's per-turn cap (at
// least its own default), whatever the configs said before.
func TestBoundsApply(t *testing.T) {
	type got struct {
		Turns, AgentPerTurn, PerTurn, PerEmail int
		TurnTimeout, Deadline                  time.Duration
	}
	tests := []struct {
		name string
		b    Bounds
		want got
	}{
		{"defaults", Bounds{}, got{AgentPerTurn: agent.DefaultMaxCallsPerTurn}},
		{"the settings' defaults", Bounds{MaxTurns: 10, TurnTimeout: 30 * time.Second, Deadline: 2 * time.Minute,
			MaxCallsPerTurn: dispatcher.DefaultMaxCallsPerTurn, MaxCalls: dispatcher.DefaultMaxCallsPerEmail},
			got{10, 16, 8, 24, 30 * time.Second, 2 * time.Minute}},
		{"a per-turn cap over half the agent's default", Bounds{MaxCallsPerTurn: 12, MaxCalls: 40}, got{AgentPerTurn: 24, PerTurn: 12, PerEmail: 40}},
		{"a small per-turn cap", Bounds{MaxCallsPerTurn: 1}, got{AgentPerTurn: agent.DefaultMaxCallsPerTurn, PerTurn: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// What the configs said of the bounds does not count.
			ac := agent.Config{MaxTurns: 99, MaxCallsPerTurn: 99, TurnTimeout: time.Hour, Deadline: time.Hour}
			dc := dispatcher.Config{MaxCallsPerTurn: 99, MaxCallsPerEmail: 99}
			tt.b.apply(&ac, &dc)
			g := got{ac.MaxTurns, ac.MaxCallsPerTurn, dc.MaxCallsPerTurn, dc.MaxCallsPerEmail, ac.TurnTimeout, ac.Deadline}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
