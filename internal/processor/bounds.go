// The bounds of one email's work, and the one place the pipeline is assembled.

package processor

import (
	"cmp"
	"time"

	"triage/internal/agent"
	"triage/internal/dispatcher"
)

// Bounds bound the work on one email: the agent loop's turns and time,
// and the function calls the dispatcher accepts (calls over them have no
// effect). Zero fields take the agent's and the dispatcher's defaults.
type Bounds struct {
	MaxTurns        int
	TurnTimeout     time.Duration
	Deadline        time.Duration // the whole email, parsing to the sent reply
	MaxCallsPerTurn int           // calls the dispatcher runs in one turn
	MaxCalls        int           // calls the dispatcher runs per email
}

// apply sets the loop bounds of the agent's and the dispatcher's configs.
// Calls in one turn past twice the dispatcher's per-turn cap (at least
// agent.DefaultMaxCallsPerTurn) are refused by the loop unrun, never
// materialised as records or responses.
func (b Bounds) apply(ac *agent.Config, dc *dispatcher.Config) {
	ac.MaxTurns, ac.TurnTimeout, ac.Deadline = b.MaxTurns, b.TurnTimeout, b.Deadline
	ac.MaxCallsPerTurn = max(agent.DefaultMaxCallsPerTurn, 2*cmp.Or(b.MaxCallsPerTurn, dispatcher.DefaultMaxCallsPerTurn))
	dc.MaxCallsPerTurn, dc.MaxCallsPerEmail = b.MaxCallsPerTurn, b.MaxCalls
}

// Assemble builds the agent and the dispatcher from their configs, with
// the loop bounds of cfg.Bounds (whatever ac and dc say of them), the
// detector over cfg.Scenarios, and wires them into a Processor: the one
// place where process, watch and eval put the pipeline together.
func Assemble(ac agent.Config, dc dispatcher.Config, cfg Config) (*Processor, error) {
	cfg.Bounds.apply(&ac, &dc)
	ag, err := agent.New(ac)
	if err != nil {
		return nil, err
	}
	d, err := dispatcher.New(dc)
	if err != nil {
		return nil, err
	}
	cfg.Agent, cfg.Dispatcher = ag, d
	cfg.Detector = NewDetector(cfg.Scenarios, ag)
	return New(cfg)
}
