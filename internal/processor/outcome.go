// The Outcome of one email and the lists it carries.

package processor

import (
	"triage"
	"triage/internal/agent"
	"triage/internal/decision"
	"triage/internal/dispatcher"
)

// Outcome is the JSON record for one input: a contract of process --json
// and the watch ledger (fields may be added, never renamed).
type Outcome struct {
	File      string `json:"file"`
	MessageID string `json:"message_id"`
	From      string `json:"from"`
	// FromName is the sender's display name ("" when the From header
	// gives none), for the people who read the outcome.
	FromName      string              `json:"from_name,omitempty"`
	Subject       string              `json:"subject"`
	SerialNumbers []string            `json:"serial_numbers"`
	Scenario      string              `json:"scenario"`
	Detection     Detection           `json:"detection"`
	Status        triage.Status       `json:"status"`
	Reason        triage.Reason       `json:"reason"`
	Detail        string              `json:"detail,omitempty"` // human-readable cause, for failed/skipped; at most triage.MaxDetail bytes
	FunctionCalls []dispatcher.Record `json:"function_calls"`
	ModelCalls    int                 `json:"model_calls"`
	Tokens        agent.Usage         `json:"tokens"`
	DurationMS    int64               `json:"duration_ms"`
	Reply         *triage.Receipt     `json:"reply"`
	Attachments   []AttachmentInfo    `json:"attachments,omitempty"`
	// SerialsOmitted and AttachmentsOmitted count what the capped lists
	// (MaxSerialsListed, MaxAttachmentsListed) left out.
	SerialsOmitted     int `json:"serial_numbers_omitted,omitempty"`
	AttachmentsOmitted int `json:"attachments_omitted,omitempty"`
	// SerialSource is SerialSourceAttachment when a function ran with a
	// serial the model read from an attachment, not from the text.
	SerialSource string     `json:"serial_source,omitempty"`
	Language     string     `json:"language,omitempty"`
	Model        string     `json:"model,omitempty"`
	Key          triage.Key `json:"key,omitempty"`      // idempotency key used for this email
	Problems     []string   `json:"problems,omitempty"` // malformations the parser worked around
	// DryRun: nothing with an effect happened; effect calls were answered
	// {"dry_run": true} (Config.DryRun).
	DryRun bool `json:"dry_run"`
	// TicketID is the ticket this email belongs to, new or existing ("" when
	// none); Followup says it joined an existing conversation; Escalated that
	// staff were notified and a person took the conversation over.
	TicketID  string `json:"ticket_id"`
	Followup  bool   `json:"followup"`
	Escalated bool   `json:"escalated"`
	// NoticeSuppressed: a notice bound (per customer, then overall) refused
	// the staff notice and no other notice of the email went out: staff
	// were not told, so a person must find the email where it waits (the
	// detail starts "notice suppressed: "; the console marks it).
	NoticeSuppressed bool `json:"notice_suppressed,omitempty"`
	// Complaint says the scenario declares the email a consumer complaint
	// (instructions.Scenario.IsComplaint): triage watch keeps its statutory
	// answer deadline (the complaint clock). HandsOff says the scenario's
	// reply hands the customer to a person (instructions.Scenario.HandsOff):
	// such a reply does not answer a complaint on its merits.
	Complaint bool `json:"complaint,omitempty"`
	HandsOff  bool `json:"hands_off,omitempty"`
	// AsksFor lists the facts the scenario's reply asks the customer for
	// because the email lacks them (instructions.Scenario.AsksFor, e.g.
	// serial_number): such a reply does not answer a complaint on its
	// merits either.
	AsksFor []string `json:"asks_for,omitempty"`
	// SendFailure is the delivery that failed when the reason is
	// send_failed: the SMTP step, the server's code and text, and whether
	// it was temporary (a later attempt may succeed).
	SendFailure *dispatcher.SendFailure `json:"send_failure,omitempty"`
	// TraceID is the OpenTelemetry trace of this email, when tracing is on
	// (package trace).
	TraceID string `json:"trace_id,omitempty"`
	// Decision is what the shop owes the claim, as triage computed it from
	// the registry, the policy and the time of receipt (check_warranty);
	// nil when no call reached one.
	Decision *decision.Decision `json:"decision,omitempty"`
	// Commitments are what the reply promised (its send_email commitments,
	// checked against Decision; [none] when it promised nothing), where the
	// scenario declares them.
	Commitments []decision.Commitment `json:"commitments,omitempty"`
	// Verification is the verifier's reading of the reply (its model, the
	// verdict pass, flagged or error, and the statements it flagged or
	// that were ignored because the reply does not contain them): the
	// sent reply's, else the last one read; nil when no verifier is
	// configured or none read a reply.
	Verification *decision.Verification `json:"verification,omitempty"`
}

// AttachmentInfo lists an inbound attachment and whether the model was
// sent it (NotSent says why not: one of the NotSent constants).
type AttachmentInfo struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Size    int    `json:"size"`
	Sent    bool   `json:"sent"`
	NotSent string `json:"not_sent,omitempty"`
}

// Detection records how the scenario was chosen.
type Detection struct {
	Method DetectionMethod `json:"method"` // rules|model|fallback
	Reason string          `json:"reason"`
	// FirstTurn: the model chose (MethodModel) in the email's first turn,
	// through choose_scenario beside the look-ups that turn offered.
	FirstTurn bool `json:"first_turn,omitempty"`
}
