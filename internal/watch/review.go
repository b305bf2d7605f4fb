package watch

import (
	"context"
	"encoding/json"

	"triage/internal/ledger"
	"triage/internal/processor"
)

// kept is what the ledger keeps of the pipeline's outcome for the people
// who review triage's work (triage console): the outcome, the customer's
// text (body) and what its model calls cost (ledger stats). The message's
// terminal state is recorded with it, in one commit (ledger.Entry.Kept);
// keepOutcome keeps it apart when the message ends in no terminal state.
// nil when the outcome cannot be encoded (logged): losing it loses
// nothing the pipeline needs.
func (w *Watcher) kept(ctx context.Context, out processor.Outcome, body string) *ledger.Kept {
	js, err := json.Marshal(out)
	if err != nil {
		w.log.WarnContext(ctx, "could not keep the outcome for review", "err", err)
		return nil
	}
	return &ledger.Kept{Outcome: js, Body: body, Usage: ledger.Usage{
		Model: out.Model, Calls: out.ModelCalls, Prompt: out.Tokens.Prompt, Cached: out.Tokens.Cached,
		Output: out.Tokens.Output + out.Tokens.Thoughts}}
}

// keepOutcome keeps k with the ledger entry at loc on its own, for a
// message that is left without a terminal state (postponed, handed back,
// or stopped by an error); a failure is logged.
func (w *Watcher) keepOutcome(ctx context.Context, loc ledger.Loc, k *ledger.Kept) {
	if k == nil {
		return
	}
	if err := w.cfg.Ledger.SetOutcome(context.WithoutCancel(ctx), loc, k.Outcome, k.Body, k.Usage); err != nil {
		w.log.WarnContext(ctx, "could not keep the outcome for review", "err", err)
	}
}
