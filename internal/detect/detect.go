// Package detect picks the scenario for one email: the scenarios' own
// deterministic rules first, a structured-output model call (an enum of the
// loaded scenario names) only when the rules are unsure, and the fallback
// scenario when the model is unavailable.
package detect

import (
	"context"

	"triage/internal/agent"
	"triage/internal/prompt"
	"triage/internal/scenario"
)

// Methods recorded in the outcome.
const (
	MethodRules    = "rules"
	MethodModel    = "model"
	MethodFallback = "fallback"
)

// Result is the chosen scenario and why.
type Result struct {
	Scenario   *scenario.Scenario
	Method     string
	Reason     string
	ModelCalls int
	Usage      agent.Usage
}

// Detector is built once per run.
type Detector struct{}

// New builds a Detector over the loaded scenarios. ag may be nil (no model:
// rules, then fallback).
func New(set *scenario.Set, ag *agent.Agent) *Detector { panic("TODO") }

// Detect chooses a scenario. facts.SerialNumbers and the subject/text decide
// the rules; text is the new text only.
func (d *Detector) Detect(ctx context.Context, facts prompt.Facts, text string) Result { panic("TODO") }
