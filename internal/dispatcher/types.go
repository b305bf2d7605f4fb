// The values a call crosses the dispatcher with: the Call a Func gets, its
// Result, the Record of every call, and the coded Error the model sees.

package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"triage"
	"triage/internal/agent"
	"triage/internal/decision"
	"triage/internal/instructions"
	"triage/internal/message"
)

// Error codes returned to the model in {"ok":false,"error":{...}}.
const (
	CodeUnknownFunction     agent.ErrorCode = "unknown_function"
	CodeInvalidArgs         agent.ErrorCode = "invalid_args"          // schema, enum, pattern, max_length
	CodeRecipientNotAllowed agent.ErrorCode = "recipient_not_allowed" // from: reply_to | staff
	CodeSenderMismatch      agent.ErrorCode = "sender_mismatch"       // from: sender
	CodeSerialNotInMessage  agent.ErrorCode = "serial_not_in_message" // from: serials
	CodeNotInMessage        agent.ErrorCode = "not_in_message"        // from: message
	CodeRequirementNotMet   agent.ErrorCode = "requirement_not_met"   // requires
	CodeMaxCalls            agent.ErrorCode = "max_calls_reached"     // max_calls (effects: once per email)
	CodeTooManyCalls        agent.ErrorCode = "too_many_calls"        // per-turn and per-email caps
	CodeBodyTooLarge        agent.ErrorCode = "body_too_large"
	CodeBodyNotPlainText    agent.ErrorCode = "body_not_plain_text"
	CodeUnavailable         agent.ErrorCode = "unavailable" // a client failed (temporary)
	CodeClientError         agent.ErrorCode = "client_error"
	CodeInternal            agent.ErrorCode = "internal"
	CodeNotInOpening        agent.ErrorCode = "not_in_opening_turn"                 // an effect or the reply in the turn that chose the scenario
	CodeNoStaff                             = agent.ErrorCode(triage.ReasonNoStaff) // notify_staff without configured staff addresses
	// CodeDuplicateKey: the reply exists already for another message with
	// the same Key; the email is left for a person (triage.ReasonDuplicateKey).
	CodeDuplicateKey = agent.ErrorCode(triage.ReasonDuplicateKey)
	// A reply or a staff notice over a limit is refused with the limit's
	// reason as its code (triage.Limited).
	CodePerSenderLimit    = agent.ErrorCode(triage.ReasonPerSenderLimit)
	CodeGlobalLimit       = agent.ErrorCode(triage.ReasonGlobalLimit)
	CodeNoticeLimit       = agent.ErrorCode(triage.ReasonNoticeLimit)
	CodeNoticeGlobalLimit = agent.ErrorCode(triage.ReasonNoticeGlobalLimit)
)

// Builtin function names (tools.yaml "builtin:").
const (
	FuncCheckWarranty = "check_warranty"
	FuncCreateTicket  = "create_ticket"
	FuncSendEmail     = "send_email"
	FuncNotifyStaff   = "notify_staff"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes     = 20000    // send_email body
	DefaultMaxResultBytes   = 16 << 10 // a result as JSON, before it goes back to the model
	DefaultMaxCallsPerTurn  = 8
	DefaultMaxCallsPerEmail = 24
)

// Error is a coded failure a Func may return; other errors become
// CodeClientError (or CodeUnavailable when Temporary). Refused marks a call
// the Func turned down before it had any effect: it is recorded blocked.
type Error struct {
	Code      agent.ErrorCode
	Message   string
	Temporary bool
	Refused   bool
	// Reason, on a refusal no later call can overcome (the reply is over a
	// limit, or exists already for another message), is why the email is
	// left for a person: the pipeline fails it with this reason unless a
	// later call of the function succeeded (Record.Reason).
	Reason triage.Reason
	// Halt ends the model loop after this call's turn: no later call can
	// change the outcome (a limit reached).
	Halt bool
}

func (e *Error) Error() string { return "dispatcher: " + string(e.Code) + ": " + e.Message }

// Call is what a Func receives: the validated arguments and the inbound email.
type Call struct {
	Name string
	Args map[string]any
	Msg  *message.Message
	// Key is the inbound message's idempotency key (stable across retries of
	// the same email); clients derive ticket idempotency keys and
	// deterministic reply Message-IDs from it.
	Key triage.Key
	// Now is the dispatcher's clock (Config.Now).
	Now time.Time
	// Received is the email's time of receipt (ReceivedAt): deadlines
	// count from it.
	Received time.Time
	// Draft asks send_email to leave the reply as a draft a person sends
	// (reply mode draft) instead of sending it.
	Draft bool
	// Tool is the call's binding.
	Tool *instructions.Tool
	// MaxBodyBytes is the send_email body cap (Config.MaxBodyBytes).
	MaxBodyBytes int
	// TicketID is the ticket the email belongs to ("" when none yet): the
	// conversation's ticket, or the one create_ticket opened earlier in the
	// session. Replies carry its tag in the subject.
	TicketID string
	// Staff are the configured staff addresses (bare, sorted): notify_staff
	// mails them.
	Staff []string
	// Language is the customer's language as the pipeline detected it
	// (Options.Language; ISO 639-1, "" when unknown): send_email signs the
	// reply in it.
	Language string
	// Scenario is the scenario the email is handled under (nil outside a
	// session): a staff notice says what it hands over.
	Scenario *instructions.Scenario
	// ReplyTo is where a reply to the customer may go
	// (Dispatcher.ReplyAddress; "" outside a session): a staff notice's
	// Reply-To.
	ReplyTo string
}

// Func executes one call that passed every policy and returns its result.
type Func func(ctx context.Context, c *Call) (Result, error)

// Result is what a Func returns: the value the model sees, and the typed
// receipt and ticket the pipeline reads.
type Result struct {
	// Value is the result as the model sees it (and the outcome JSON shows
	// it); nil is an empty object.
	Value map[string]any
	// Receipt is set by a function that sent or drafted a reply.
	Receipt *triage.Receipt
	// TicketID is set by a function that opened or found a ticket.
	TicketID string
	// Decision is set by a function that decided what the shop owes
	// (check_warranty under a policy).
	Decision *decision.Decision
}

// Untyped adapts a function that returns only a model-facing value (HTTP and
// MCP backends, test doubles) to a Func.
func Untyped(f func(ctx context.Context, c *Call) (map[string]any, error)) Func {
	return func(ctx context.Context, c *Call) (Result, error) {
		v, err := f(ctx, c)
		return Result{Value: v}, err
	}
}

// Record is one recorded call, as it appears in the outcome JSON.
type Record struct {
	Name       string           `json:"name"`
	Args       map[string]any   `json:"args"`
	OK         bool             `json:"ok"`
	Result     map[string]any   `json:"result"`
	Error      *agent.ToolError `json:"error"`
	Blocked    bool             `json:"blocked"`
	DurationMS int64            `json:"duration_ms"`
	// DryRun marks an effect call answered without running (--dry-run).
	DryRun bool `json:"dry_run,omitempty"`
	// Repeated marks an effect call identical to an earlier successful one:
	// it did not run again and returned the first result.
	Repeated bool `json:"repeated,omitempty"`
	// Truncated marks a result cut to Config.MaxResultBytes.
	Truncated bool `json:"truncated,omitempty"`
	// Receipt is the reply a successful call sent or drafted, and TicketID
	// the ticket it opened or found (Result); the outcome JSON shows them
	// elsewhere.
	Receipt  *triage.Receipt `json:"-"`
	TicketID string          `json:"-"`
	// Decision is the decision a successful call reached (Result); the
	// outcome JSON shows it in its result and as the outcome's decision.
	Decision *decision.Decision `json:"-"`
	// Prefetched marks a look-up the pipeline ran before the first model
	// turn (tools.yaml prefetch: true), not one the model asked for.
	Prefetched bool `json:"prefetched,omitempty"`
	// SerialSource is "attachment" when a from: serials_or_attachments
	// argument held a serial the model read from an attachment, not one the
	// customer wrote.
	SerialSource string `json:"serial_source,omitempty"`
	// Reason is the Error.Reason of a refused call: why the email is left
	// for a person if no later call succeeds.
	Reason triage.Reason `json:"-"`
	// Verification is the verifier's reading of a reply (Config.Verifier):
	// nil when none read it.
	Verification *decision.Verification `json:"verification,omitempty"`
}

// SerialSourceAttachment is Record.SerialSource for a serial the model read
// from an attachment.
const SerialSourceAttachment = "attachment"

func refuse(code agent.ErrorCode, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// classify maps an error to the code the model sees.
func classify(err error) agent.ToolError {
	var de *Error
	if errors.As(err, &de) {
		code := de.Code
		if code == "" {
			code = CodeClientError
			if de.Temporary {
				code = CodeUnavailable
			}
		}
		return agent.ToolError{Code: code, Message: de.Message}
	}
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) && tmp.Temporary() {
		return agent.ToolError{Code: CodeUnavailable, Message: err.Error()}
	}
	return agent.ToolError{Code: CodeClientError, Message: err.Error()}
}
