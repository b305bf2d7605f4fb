package processor

import (
	"context"

	"triage"
	"triage/internal/instructions"
)

// Autonomy decides, for a scenario whose reply mode is auto, whether its
// reply to a message of inbox is sent or left as a draft (package
// autonomy: from what people did with the scenario's drafts there). It
// answers draft when it cannot tell.
type Autonomy interface {
	ReplyMode(ctx context.Context, scenario string, inbox triage.Inbox) triage.ReplyMode
}

// replyMode is the reply mode of a message of inbox handled under sc:
// the scenario's or the run's, with auto resolved by Config.Autonomy. Auto
// drafts without one (triage process, eval) or without an inbox.
func (p *Processor) replyMode(ctx context.Context, sc *instructions.Scenario, inbox triage.Inbox) triage.ReplyMode {
	m := instructions.ReplyModeFor(sc, p.cfg.ReplyMode)
	if m != triage.ReplyAuto {
		return m
	}
	if p.cfg.Autonomy == nil || inbox.IsZero() {
		return triage.ReplyDraft
	}
	if m := p.cfg.Autonomy.ReplyMode(ctx, sc.Name, inbox); m == triage.ReplySend {
		return m
	}
	return triage.ReplyDraft
}
