package watch

import (
	"context"

	"triage/internal/ledger"
	"triage/internal/processor"
)

// sendLater reports whether a message whose pipeline ended with out, at
// attempt of maxAttempts, waits for a later pass: its reply was refused for now (a
// 4xx reply or a network error before the server took it, so nothing went
// out) and it has attempts left. A permanent refusal (5xx), or a temporary
// one at the last attempt, is final: failed/send_failed.
func sendLater(out processor.Outcome, attempt, maxAttempts int) bool {
	f := out.SendFailure
	return f != nil && f.Temporary && attempt < maxAttempts
}

// postponeSend leaves the message for a later pass: unflagged, its ledger
// entry processing with the reason and the server's answer (triage ledger
// shows them), its attempts kept, so the pass after the last attempt ends
// it. The ticket is noted by that last attempt only (processor.Input's
// MoreAttempts).
func (w *Watcher) postponeSend(ctx context.Context, e ledger.Entry, out processor.Outcome) error {
	w.mu.Lock()
	w.st.SendRetries++
	w.mu.Unlock()
	w.log.WarnContext(ctx, "reply refused for now; the message is tried again on a later pass",
		"uid", e.UID, "message_id", e.MessageID, "attempt", e.Attempts, "max_attempts", w.cfg.MaxAttempts, "detail", out.Detail)
	return w.ledgerErr(w.cfg.Ledger.Postpone(context.WithoutCancel(ctx), e.Loc, out.Reason, out.Detail))
}
