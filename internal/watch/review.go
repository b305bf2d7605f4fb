package watch

import (
	"context"
	"encoding/json"

	"triage/internal/ledger"
	"triage/internal/processor"
)

// keepOutcome keeps the pipeline's outcome and the customer's text (body)
// with the ledger entry, for the people who review triage's work (triage
// console), and what its model calls cost (ledger stats). Losing it loses nothing the pipeline needs: a failure is logged.
func (w *Watcher) keepOutcome(ctx context.Context, loc ledger.Loc, out processor.Outcome, body string) {
	js, err := json.Marshal(out)
	if err == nil {
		err = w.cfg.Ledger.SetOutcome(context.WithoutCancel(ctx), loc, js, body, ledger.Usage{
			Model: out.Model, Calls: out.ModelCalls, Prompt: out.Tokens.Prompt, Cached: out.Tokens.Cached,
			Output: out.Tokens.Output + out.Tokens.Thoughts})
	}
	if err != nil {
		w.log.WarnContext(ctx, "could not keep the outcome for review", "err", err)
	}
}
