// Package triage is the vocabulary every part of the pipeline shares: the
// Status and Reason of an email's outcome, the ReplyMode, the Inbox, the
// Receipt of a reply and the idempotency Key of an inbound message. It is the only place these values are spelled.
package triage

// Status is what happened to one inbound email.
type Status string

// Statuses of an outcome.
const (
	StatusReplied Status = "replied" // a reply went out
	StatusDrafted Status = "drafted" // reply mode draft: the reply exists, a person sends it
	StatusSkipped Status = "skipped" // deliberately not answered (a machine, a person's conversation)
	StatusFailed  Status = "failed"  // not handled: left for a person, Reason says why
)

// Statuses lists every Status, in the order they are documented.
var Statuses = []Status{StatusReplied, StatusDrafted, StatusSkipped, StatusFailed}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Answered reports whether the email got a reply (sent or drafted).
func (s Status) Answered() bool { return s == StatusReplied || s == StatusDrafted }

// Reason says why an email was skipped or failed.
type Reason string

// MaxDetail bounds, in bytes, the detail beside a Reason (in an outcome
// and in the ledger): it may quote what a stranger sent, such as a header
// or a mail server's reply.
const MaxDetail = 2000

// Skip reasons: messages that must never be answered (RFC 3834 and friends).
const (
	ReasonBounce               Reason = "bounce"                 // Return-Path <> or MAILER-DAEMON, From <>, a delivery status report
	ReasonAutoSubmitted        Reason = "auto_submitted"         // Auto-Submitted other than "no"
	ReasonList                 Reason = "list"                   // List-Id / List-Unsubscribe / any List-*
	ReasonPrecedence           Reason = "precedence"             // Precedence: bulk|list|junk
	ReasonAutoResponseSuppress Reason = "auto_response_suppress" // X-Auto-Response-Suppress: All or OOF
	ReasonAutoreplyHeader      Reason = "autoreply_header"       // X-Autoreply / X-Autorespond
	ReasonNoReplySender        Reason = "no_reply_sender"        // mailer-daemon, no-reply, noreply, do-not-reply, *-request, owner-*, bounces
	ReasonOwnAddress           Reason = "own_address"            // sent by one of our own addresses
	ReasonAutoreplySubject     Reason = "autoreply_subject"      // an auto-reply subject without RFC 3834 headers
	ReasonHumanOwner           Reason = "human_owner"            // a person owns the conversation
	ReasonAlreadyHandled       Reason = "already_handled"        // a copy of a message that already has a final outcome
	ReasonFeedbackReport       Reason = "feedback_report"        // an abuse complaint (ARF, multipart/report; report-type=feedback-report)
	ReasonReadReceipt          Reason = "read_receipt"           // a read receipt (multipart/report; report-type=disposition-notification)
	ReasonReport               Reason = "report"                 // any other multipart/report (TLS, DMARC reports)
	ReasonChallenge            Reason = "challenge_response"     // a challenge/response verification ("confirm you are human")
	ReasonListManager          Reason = "list_manager"           // a mailing-list manager's notice (subscription, moderation)
	ReasonSpam                 Reason = "spam"                   // the receiving server's spam verdict (X-Spam-Flag: YES, rspamd's action, the configured score)
	ReasonTicketSystem         Reason = "ticket_system"          // another help desk's notice (Request Tracker's RT-Ticket, AutoReply:, Resolved:)
	ReasonFeed                 Reason = "feed"                   // a news feed item put into the mailbox (feed2imap, rss2email)
	ReasonCalendar             Reason = "calendar"               // a calendar invitation or cancellation (a text/calendar part with a METHOD)
)

// Failure reasons: the email was not handled and is left for a person.
const (
	ReasonReadError  Reason = "read_error"  // the input could not be read
	ReasonParseError Reason = "parse_error" // the message could not be parsed
	ReasonNoSender   Reason = "no_sender"   // no usable From address
	// ReasonAmbiguousSender: more than one From field, or a From naming
	// more than one mailbox: who wrote it cannot be told (RFC 5322 allows
	// one From field; servers check DMARC against one of them).
	ReasonAmbiguousSender Reason = "ambiguous_sender"
	// ReasonUnauthenticated: the message would join an existing
	// conversation, but the trusted Authentication-Results do not say its
	// From domain passed (pipeline.trusted_authserv_ids set).
	ReasonUnauthenticated  Reason = "unauthenticated"
	ReasonEmailNotSent     Reason = "email_not_sent"      // no successful reply
	ReasonNoScenario       Reason = "no_scenario"         // no scenario matched and there is no fallback
	ReasonCanceled         Reason = "canceled"            // the run stopped before the email was handled
	ReasonReplyLoop        Reason = "reply_loop"          // a likely loop with an auto-responder
	ReasonHistoryError     Reason = "history_error"       // the reply history could not be read
	ReasonNoStaff          Reason = "no_staff"            // a hand-off (escalation, a reply promising a person) without staff addresses
	ReasonTicketStore      Reason = "tickets_unavailable" // the ticket store could not be read or written
	ReasonRecovered        Reason = "recovered"           // the reply was recorded sent before a crash
	ReasonReplyUnconfirmed Reason = "reply_unconfirmed"   // a reply may or may not have gone out
	ReasonPerSenderLimit   Reason = "per_sender_limit"    // a reply would pass the limit of its sender or recipient
	ReasonGlobalLimit      Reason = "global_limit"        // a reply would pass the hourly limit of the inbox
	ReasonTooManyAttempts  Reason = "too_many_attempts"   // the message failed too often
	ReasonTooLarge         Reason = "too_large"           // the message is over the size cap
	ReasonPanic            Reason = "panic"               // the pipeline panicked on this message
	ReasonSendFailed       Reason = "send_failed"         // the mail server refused or could not take the reply
	ReasonUngroundedClaim  Reason = "ungrounded_claim"    // the reply stated a fact triage could not back
	// ReasonCommitmentNotAllowed: the reply promised more than the email's
	// decision allows, or named another decision or none (tools.yaml
	// commitments), and the model did not correct it.
	ReasonCommitmentNotAllowed Reason = "commitment_not_allowed"
	// ReasonVerifierUnavailable: the verifier model (verify:) could not
	// read the reply (an error, a timeout, an answer that is not the
	// requested JSON); no reply goes out unverified.
	ReasonVerifierUnavailable Reason = "verifier_unavailable"
	// ReasonEscalated: staff were told and a person owns the conversation;
	// watch moves the email to the Needs-Human folder (state needs_human).
	ReasonEscalated Reason = "escalated"
	// ReasonNoticeLimit: the staff notice about this email would pass the
	// bound on notices about one customer's mail per hour; ReasonNoticeGlobalLimit:
	// the bound on notices per hour overall (NoticeLimits).
	ReasonNoticeLimit       Reason = "notice_limit"
	ReasonNoticeGlobalLimit Reason = "notice_global_limit"
	// ReasonDuplicateKey: another message with the same Key (Message-ID and
	// sender) but other content was already handled; a reply to this one
	// would reuse that one's reply, so a person decides.
	ReasonDuplicateKey Reason = "duplicate_message_id"
)

// NoticeLimits bound the staff notices (notify_staff), apart from the
// limits on replies: a notice never counts against a customer's or the
// staff address's reply limit. A zero or negative field is no limit.
type NoticeLimits struct {
	// PerCustomer caps the notices about one customer's mail (its From
	// address) in the last hour: one customer's flood reaches staff this
	// often, the rest waits in the Needs-Human folder.
	PerCustomer int
	// PerHour caps the notices in the last hour overall.
	PerHour int
}

// Default notice bounds (settings limits.notices_per_customer and
// limits.notices_per_hour).
const (
	DefaultNoticesPerCustomer = 3
	DefaultNoticesPerHour     = 30
)

// Limit reports whether r says a reply limit or a staff notice bound
// refused the mail (ReasonPerSenderLimit, ReasonGlobalLimit,
// ReasonNoticeLimit, ReasonNoticeGlobalLimit).
func (r Reason) Limit() bool {
	switch r {
	case ReasonPerSenderLimit, ReasonGlobalLimit, ReasonNoticeLimit, ReasonNoticeGlobalLimit:
		return true
	}
	return false
}

// Limited is an error that refused a reply or a staff notice because a
// limit was reached; LimitReason says which (ReasonPerSenderLimit,
// ReasonGlobalLimit, ReasonNoticeLimit, ReasonNoticeGlobalLimit).
type Limited interface {
	error
	LimitReason() Reason
}

// Undelivered is an error of a reply or a staff notice that the mail
// server refused or that could not be handed to it (the mail transport's
// errors). Undelivered describes the failure; ok is false when delivery
// was never tried (the message could not be rendered).
type Undelivered interface {
	error
	Undelivered() (f DeliveryFailure, ok bool)
}

// DeliveryFailure is how a message failed to reach the mail server.
type DeliveryFailure struct {
	Step string // the SMTP step: dial, tls, starttls, auth, mail, rcpt, data
	Code int    // the server's reply code, 0 when it gave none
	Text string // the server's reply text, or the transport error
	// Temporary: a later attempt may succeed (a 4xx reply, a network
	// error); otherwise the server refused for good (5xx).
	Temporary bool
}

// ReplyMode says whether replies go out or wait as drafts for a person.
type ReplyMode string

// Reply modes. Auto is not a mode an email is handled in but a choice
// between the other two: a scenario drafts until people's reviews of its
// drafts in the inbox qualify it to send on its own (package review).
const (
	ReplySend  ReplyMode = "send"
	ReplyDraft ReplyMode = "draft"
	ReplyAuto  ReplyMode = "auto"
)

// ReplyModes lists the reply modes a configuration or a scenario may name.
var ReplyModes = []ReplyMode{ReplySend, ReplyDraft, ReplyAuto}

// Valid reports whether m is a reply mode ("" means "not set").
func (m ReplyMode) Valid() bool {
	return m == "" || m == ReplySend || m == ReplyDraft || m == ReplyAuto
}

// Inbox names a watched mailbox: the account and the mailbox, as the
// ledger records them. The zero Inbox is none (triage process).
type Inbox struct {
	Account string `json:"account"`
	Mailbox string `json:"mailbox"`
}

// IsZero reports whether i names no inbox.
func (i Inbox) IsZero() bool { return i == Inbox{} }

// String is account/mailbox, as people read it.
func (i Inbox) String() string { return i.Account + "/" + i.Mailbox }

// Or is m when set, else fallback.
func (m ReplyMode) Or(fallback ReplyMode) ReplyMode {
	if m == "" {
		return fallback
	}
	return m
}

// Receipt is what happened to one reply: where it went and how.
type Receipt struct {
	To        string `json:"to"` // the bare address the reply went to
	Subject   string `json:"subject"`
	MessageID string `json:"message_id"`     // with angle brackets
	Path      string `json:"path,omitempty"` // the outbox file, when written to disk
	// Existing: an earlier run had already written or sent this reply (same
	// Message-ID); it was not written again.
	Existing bool `json:"existing,omitempty"`
	// Drafted: the reply was left as a draft for a person to send.
	Drafted bool `json:"-"`
}

// Delivery is what became of a reply, as the function that sent it reports
// it to the model.
type Delivery string

// Deliveries of a reply.
const (
	DeliverySent    Delivery = "sent"
	DeliveryDrafted Delivery = "drafted"
)

// Delivery says whether the reply was sent or left as a draft.
func (r Receipt) Delivery() Delivery {
	if r.Drafted {
		return DeliveryDrafted
	}
	return DeliverySent
}
