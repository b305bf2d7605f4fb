package ledger

import "triage"

// Kind says what a reply row is: a reply triage sent, a draft it left for
// a person (reply mode draft), or a staff notice (notify_staff). A draft
// and a notice share the replies table, and so the guarantees of a reply:
// one per key, recorded before it is submitted or stored on the server.
// Only replies and drafts count against the reply limits; notices have
// their own (Limits.Notices).
type Kind string

// Reply kinds.
const (
	KindReply  Kind = "reply"
	KindDraft  Kind = "draft"
	KindNotice Kind = "notice"
)

// ReplyState is where a reply row is in its lifecycle. A reply (KindReply)
// is recorded, fully rendered, before it is submitted, and then:
//
//	ReplyPending -> ReplySent        the mail server accepted it (MarkSent)
//	ReplyPending -> (dropped)        the server certainly did not take it: the
//	                                 row is deleted, a later attempt may send it
//	                                 (DropPending)
//	ReplyPending -> ReplyNeedsHuman  the submission ended ambiguously (or a crash
//	                                 came between): never submitted again, a
//	                                 person decides (MarkReplyNeedsHuman)
//
// A draft (KindDraft) is recorded before it is stored in the Drafts folder:
//
//	DraftPending -> DraftStored                appended to the Drafts folder (MarkDraftStored)
//	DraftPending | DraftStored -> DraftSending a person approved it in the console
//	                                           (ClaimDraft; UnclaimDraft puts it back)
//	DraftSending -> DraftSentByPerson          the console sent it (DraftSent)
//	DraftSentByPerson -> ReplySent             watch removed the Drafts folder copy and
//	                                           filed the sent message (SettleSentDraft)
type ReplyState string

// Reply states.
const (
	ReplyPending    ReplyState = "reply_pending"
	ReplySent       ReplyState = "sent"
	ReplyNeedsHuman ReplyState = "needs_human"

	DraftPending ReplyState = "draft_pending" // recorded; perhaps not yet in the Drafts folder
	DraftStored  ReplyState = "draft_stored"  // appended to the Drafts folder
	// DraftSending is the state of a draft a person approved in the console
	// while it is being sent.
	DraftSending ReplyState = "draft_sending"
	// DraftSentByPerson is the state of a draft a person sent from the
	// console while its copy may still sit in the Drafts folder: watch
	// removes that copy (nobody must send it a second time from a mail
	// client), files the sent message in the Sent folder, and records it
	// ReplySent (SettleSentDraft).
	DraftSentByPerson ReplyState = "draft_sent"
)

// ReplyStates lists every reply state: a reply's, then a draft's.
var ReplyStates = []ReplyState{ReplyPending, ReplySent, ReplyNeedsHuman, DraftPending, DraftStored, DraftSending, DraftSentByPerson}

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
	// Sent: the message's reply went out (its row is ReplySent), whatever
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
func Resolve(p Processed, r *Reply) Settlement {
	switch {
	case r != nil && r.Kind == KindDraft:
		// Draft mode: the draft is recorded; it is stored before the
		// message counts as handled.
		s := Settlement{State: StateDrafted}
		if r.State != DraftStored {
			s.Step = StepStoreDraft
		}
		return s
	case r != nil && r.State == ReplySent && p.Escalated:
		// Staff were told and a person owns the conversation: the email
		// goes where people work, not left in the inbox as answered.
		return Settlement{State: StateNeedsHuman, Reason: triage.ReasonEscalated, Sent: true}
	case r != nil && r.State == ReplySent:
		return Settlement{State: StateReplied, Reason: p.Reason, Sent: true}
	case r != nil:
		// Submitted ambiguously: never again, a person decides.
		s := Settlement{State: StateNeedsHuman, Reason: triage.ReasonReplyUnconfirmed}
		if r.State == ReplyPending {
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
