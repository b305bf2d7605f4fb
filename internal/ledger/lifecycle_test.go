package ledger

import (
	"testing"

	"triage"
)

// Resolve: the reply row, when there is one, decides over the outcome (what
// the ledger recorded is what happened); without one, the outcome's status
// and reason do.
func TestResolve(t *testing.T) {
	draft := func(s ReplyState) *Reply { return &Reply{Kind: KindDraft, State: s} }
	reply := func(s ReplyState) *Reply { return &Reply{Kind: KindReply, State: s} }
	const (
		replied = triage.StatusReplied
		drafted = triage.StatusDrafted
		skipped = triage.StatusSkipped
		failed  = triage.StatusFailed
	)
	tests := []struct {
		name    string
		status  triage.Status
		reason  triage.Reason
		stopped bool
		reply   *Reply
		want    Settlement
	}{
		{"a draft not yet stored is stored first", drafted, "", false, draft(DraftPending), Settlement{State: StateDrafted, Step: StepStoreDraft}},
		{"a stored draft", drafted, "", false, draft(DraftStored), Settlement{State: StateDrafted}},
		{"a draft whatever the outcome says", failed, triage.ReasonEmailNotSent, false, draft(DraftStored), Settlement{State: StateDrafted}},
		{"a draft, even when the run stops", failed, triage.ReasonCanceled, true, draft(DraftPending), Settlement{State: StateDrafted, Step: StepStoreDraft}},
		{"a sent reply", replied, "", false, reply(ReplySent), Settlement{State: StateReplied}},
		{"a sent reply keeps the outcome's reason", failed, triage.ReasonEmailNotSent, false, reply(ReplySent), Settlement{State: StateReplied, Reason: triage.ReasonEmailNotSent}},
		{"a pending reply is never sent again", failed, triage.ReasonSendFailed, false, reply(ReplyPending),
			Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed, Step: StepMarkUnconfirmed}},
		{"a pending reply, the run stopping", failed, triage.ReasonCanceled, true, reply(ReplyPending),
			Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed, Step: StepMarkUnconfirmed}},
		{"a reply already unconfirmed", replied, "", false, reply(ReplyNeedsHuman), Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed}},
		{"over the per-sender limit", failed, triage.ReasonPerSenderLimit, false, nil, Settlement{State: StateOverLimit, Reason: triage.ReasonPerSenderLimit}},
		{"over the global limit", failed, triage.ReasonGlobalLimit, false, nil, Settlement{State: StateOverLimit, Reason: triage.ReasonGlobalLimit}},
		{"over a limit while stopping", failed, triage.ReasonGlobalLimit, true, nil, Settlement{State: StateOverLimit, Reason: triage.ReasonGlobalLimit}},
		{"canceled: abandoned", failed, triage.ReasonCanceled, false, nil, Settlement{State: StateProcessing, Step: StepAbandon}},
		{"failed while stopping: abandoned", failed, triage.ReasonEmailNotSent, true, nil, Settlement{State: StateProcessing, Step: StepAbandon}},
		{"failed", failed, triage.ReasonNoScenario, false, nil, Settlement{State: StateFailed, Reason: triage.ReasonNoScenario}},
		{"a person's conversation", skipped, triage.ReasonHumanOwner, false, nil, Settlement{State: StateNeedsHuman, Reason: triage.ReasonHumanOwner}},
		{"skipped", skipped, triage.ReasonAutoSubmitted, false, nil, Settlement{State: StateSkipped, Reason: triage.ReasonAutoSubmitted}},
		{"skipped while stopping", skipped, triage.ReasonList, true, nil, Settlement{State: StateSkipped, Reason: triage.ReasonList}},
		{"replied, but the ledger has no reply", replied, "", false, nil, Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed}},
		{"drafted, no row", drafted, "", false, nil, Settlement{State: StateDrafted}},
		{"an unknown status is failed", triage.Status("x"), "", false, nil, Settlement{State: StateFailed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Resolve(tt.status, tt.reason, tt.stopped, tt.reply); got != tt.want {
				t.Errorf("Resolve(%s, %s, stopped %v, %+v) = %+v, want %+v", tt.status, tt.reason, tt.stopped, tt.reply, got, tt.want)
			}
		})
	}
	for _, tt := range tests {
		if tt.want.Step != StepAbandon && !tt.want.State.Terminal() {
			t.Errorf("%s: %s is not terminal", tt.name, tt.want.State)
		}
	}
}
