package ledger

import (
	"triage"
	"triage/internal/replies"
)

// Step is what the watcher does before it records a Settlement.
type Step int

// Steps of a Settlement.
const (
	StepNone Step = iota
	// StepStoreDraft: the draft is recorded but not yet in the Drafts
	// folder; it is stored before the message counts as handled.
	StepStoreDraft
	// StepMarkUnconfirmed: the reply was recorded pending and its
	// submission may or may not have happened: it is marked
	// ReplyNeedsHuman, never submitted again.
	StepMarkUnconfirmed
	// StepAbandon: nothing was sent and the run is stopping: the claim is
	// given back (Unclaim, the attempt not counted) and the next run, or
	// another daemon, handles the message afresh. No state is recorded.
	StepAbandon
	// StepPostpone: the mail server refused the reply for now and the
	// message has attempts left: the entry stays processing (Postpone) and
	// a later pass tries again. No terminal state is recorded.
	StepPostpone
)

// Settlement is how a message the pipeline handled ends in the ledger.
type Settlement struct {
	State  State
	Reason triage.Reason
	Step   Step
	// Sent: the message's reply went out (its row is replies.ReplySent), whatever
	// State says; the watcher files it in the Sent folder.
	Sent bool
}

// Processed is what Resolve reads of the pipeline's outcome for a message.
type Processed struct {
	Status triage.Status
	Reason triage.Reason
	// Escalated: staff were told and a person owns the conversation.
	Escalated bool
	// Stopped: the run is stopping (its context is done).
	Stopped bool
	// Retry: the mail server refused the reply for now and the message has
	// attempts left.
	Retry bool
}

// Resolve decides how a message ends once the pipeline returned. r is the
// message's reply row (nil when it has none). The reply row wins over the
// outcome: what the ledger recorded is what happened.
func Resolve(p Processed, r *replies.Reply) Settlement {
	switch {
	case r != nil && r.Kind == replies.KindDraft:
		// Draft mode: the draft is recorded; it is stored before the
		// message counts as handled.
		s := Settlement{State: StateDrafted}
		if r.State != replies.DraftStored {
			s.Step = StepStoreDraft
		}
		return s
	case r != nil && r.State == replies.ReplySent && p.Escalated:
		// Staff were told and a person owns the conversation: the email
		// goes where people work, not left in the inbox as answered.
		return Settlement{State: StateNeedsHuman, Reason: triage.ReasonEscalated, Sent: true}
	case r != nil && r.State == replies.ReplySent:
		return Settlement{State: StateReplied, Reason: p.Reason, Sent: true}
	case r != nil:
		// Submitted ambiguously: never again, a person decides.
		s := Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed}
		if r.State == replies.ReplyPending {
			s.Step = StepMarkUnconfirmed
		}
		return s
	case p.Status == triage.StatusFailed && p.Reason.Limit():
		// The reply (or the staff notice) was refused at a limit: the
		// address it would have gone to, the From, or the inbox is at its
		// limit. Nothing was sent.
		return Settlement{State: StateOverLimit, Reason: p.Reason}
	case p.Status == triage.StatusFailed && (p.Reason == triage.ReasonCanceled || p.Stopped):
		// Nothing was sent: leave the message for the next run.
		return Settlement{State: StateProcessing, Step: StepAbandon}
	case p.Retry:
		// Refused for now: a later pass sends it.
		return Settlement{State: StateProcessing, Step: StepPostpone}
	case p.Status == triage.StatusSkipped && p.Reason == triage.ReasonHumanOwner:
		// A person owns the conversation (taken over, or escalated): the
		// follow-up, already appended to the ticket, goes where people
		// work, with the reason human_owner.
		return Settlement{State: StateNeedsHuman, Reason: p.Reason}
	case p.Status == triage.StatusReplied:
		// A reply the ledger does not know cannot be confirmed.
		return Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed}
	}
	return Settlement{State: StateOf(p.Status), Reason: p.Reason}
}
