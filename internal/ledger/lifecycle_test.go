package ledger

import (
	"testing"
	"triage/internal/replies"

	"triage"
)

// Resolve: the reply row, when there is one, decides over the outcome (what
// the ledger recorded is what happened); without one, the outcome's status
// and reason do.
func TestResolve(t *testing.T) {
	draft := func(s replies.ReplyState) *replies.Reply { return &replies.Reply{Kind: replies.KindDraft, State: s} }
	reply := func(s replies.ReplyState) *replies.Reply { return &replies.Reply{Kind: replies.KindReply, State: s} }
	const (
		replied = triage.StatusReplied
		drafted = triage.StatusDrafted
		skipped = triage.StatusSkipped
		failed  = triage.StatusFailed
	)
	type p = Processed
	tests := []struct {
		name  string
		p     Processed
		reply *replies.Reply
		want  Settlement
	}{
		{"a draft not yet stored is stored first", p{Status: drafted}, draft(replies.DraftPending), Settlement{State: StateDrafted, Step: StepStoreDraft}},
		{"a stored draft", p{Status: drafted}, draft(replies.DraftStored), Settlement{State: StateDrafted}},
		{"a draft whatever the outcome says", p{Status: failed, Reason: triage.ReasonEmailNotSent}, draft(replies.DraftStored), Settlement{State: StateDrafted}},
		{"a draft, even when the run stops", p{Status: failed, Reason: triage.ReasonCanceled, Stopped: true}, draft(replies.DraftPending), Settlement{State: StateDrafted, Step: StepStoreDraft}},
		{"a sent reply", p{Status: replied}, reply(replies.ReplySent), Settlement{State: StateReplied, Sent: true}},
		{"a sent reply keeps the outcome's reason", p{Status: failed, Reason: triage.ReasonEmailNotSent}, reply(replies.ReplySent),
			Settlement{State: StateReplied, Reason: triage.ReasonEmailNotSent, Sent: true}},
		{"a sent reply of an escalation goes to a person", p{Status: replied, Escalated: true}, reply(replies.ReplySent),
			Settlement{State: StateNeedsHuman, Reason: triage.ReasonEscalated, Sent: true}},
		{"an escalation whose reply is unconfirmed", p{Status: replied, Escalated: true}, reply(replies.ReplyPending),
			Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed, Step: StepMarkUnconfirmed}},
		{"a pending reply is never sent again", p{Status: failed, Reason: triage.ReasonSendFailed}, reply(replies.ReplyPending),
			Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed, Step: StepMarkUnconfirmed}},
		{"a pending reply, the run stopping", p{Status: failed, Reason: triage.ReasonCanceled, Stopped: true}, reply(replies.ReplyPending),
			Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed, Step: StepMarkUnconfirmed}},
		{"a reply already unconfirmed", p{Status: replied}, reply(replies.ReplyNeedsHuman), Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed}},
		{"over the per-sender limit", p{Status: failed, Reason: triage.ReasonPerSenderLimit}, nil, Settlement{State: StateOverLimit, Reason: triage.ReasonPerSenderLimit}},
		{"over the global limit", p{Status: failed, Reason: triage.ReasonGlobalLimit}, nil, Settlement{State: StateOverLimit, Reason: triage.ReasonGlobalLimit}},
		{"a staff notice over its bound", p{Status: failed, Reason: triage.ReasonNoticeLimit}, nil, Settlement{State: StateOverLimit, Reason: triage.ReasonNoticeLimit}},
		{"over a limit while stopping", p{Status: failed, Reason: triage.ReasonNoticeGlobalLimit, Stopped: true}, nil,
			Settlement{State: StateOverLimit, Reason: triage.ReasonNoticeGlobalLimit}},
		{"canceled: abandoned", p{Status: failed, Reason: triage.ReasonCanceled}, nil, Settlement{State: StateProcessing, Step: StepAbandon}},
		{"failed while stopping: abandoned", p{Status: failed, Reason: triage.ReasonEmailNotSent, Stopped: true}, nil, Settlement{State: StateProcessing, Step: StepAbandon}},
		{"refused for now, attempts left: a later pass", p{Status: failed, Reason: triage.ReasonSendFailed, Retry: true}, nil,
			Settlement{State: StateProcessing, Step: StepPostpone}},
		{"refused for now while stopping: abandoned", p{Status: failed, Reason: triage.ReasonSendFailed, Retry: true, Stopped: true}, nil,
			Settlement{State: StateProcessing, Step: StepAbandon}},
		{"refused for good", p{Status: failed, Reason: triage.ReasonSendFailed}, nil, Settlement{State: StateFailed, Reason: triage.ReasonSendFailed}},
		{"failed", p{Status: failed, Reason: triage.ReasonNoScenario}, nil, Settlement{State: StateFailed, Reason: triage.ReasonNoScenario}},
		{"a person's conversation", p{Status: skipped, Reason: triage.ReasonHumanOwner}, nil, Settlement{State: StateNeedsHuman, Reason: triage.ReasonHumanOwner}},
		{"skipped", p{Status: skipped, Reason: triage.ReasonAutoSubmitted}, nil, Settlement{State: StateSkipped, Reason: triage.ReasonAutoSubmitted}},
		{"skipped while stopping", p{Status: skipped, Reason: triage.ReasonList, Stopped: true}, nil, Settlement{State: StateSkipped, Reason: triage.ReasonList}},
		{"replied, but the ledger has no reply", p{Status: replied}, nil, Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed}},
		{"drafted, no row", p{Status: drafted}, nil, Settlement{State: StateDrafted}},
		{"an unknown status is failed", p{Status: "x"}, nil, Settlement{State: StateFailed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Resolve(tt.p, tt.reply); got != tt.want {
				t.Errorf("Resolve(%+v, %+v) = %+v, want %+v", tt.p, tt.reply, got, tt.want)
			}
		})
	}
	for _, tt := range tests {
		if tt.want.Step != StepAbandon && tt.want.Step != StepPostpone && !tt.want.State.Terminal() {
			t.Errorf("%s: %s is not terminal", tt.name, tt.want.State)
		}
	}
}
