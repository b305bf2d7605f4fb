package replies

// Kind says what a reply row is: a reply triage sent, a draft it left for
// a person (reply mode draft), or a staff notice (notify_staff). A draft
// and a notice share the replies table, and so the guarantees of a reply:
// one per key, recorded before it is submitted or stored on the server.
// Replies, drafts and a person's replies count against the reply limits;
// notices have their own (Limits.Notices).
type Kind string

// Reply kinds.
const (
	KindReply  Kind = "reply"
	KindDraft  Kind = "draft"
	KindNotice Kind = "notice"
	// KindPerson is a reply a person wrote and sent from the console: it
	// goes through the reply memory and limits like triage's, under a key
	// of its own (PersonKey), names the email it answers (Reply.Answers)
	// and its author, and never counts as triage's reply or draft in the
	// review figures.
	KindPerson Kind = "person"
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
