// The look-ups the pipeline runs before the model's first turn.

package processor

import (
	"context"

	"triage/internal/dispatcher"
	"triage/internal/prompt"
)

// prefetch runs the scenario's prefetched look-ups (tools.yaml prefetch:
// true) through the session and puts their responses in the facts, for
// the first user turn's look-ups block. It returns the functions that
// answered ok.
func prefetch(ctx context.Context, session *dispatcher.Session, facts *prompt.Facts) []string {
	var answered []string
	for _, p := range session.Prefetch(ctx) {
		facts.Lookups = append(facts.Lookups, prompt.Lookup{Function: p.Name, Args: p.Args, Response: p.Response.Envelope()})
		if p.Response.OK {
			answered = append(answered, p.Name)
		}
	}
	return answered
}
