// Package dispatcher is the only way the model's function calls reach the
// outside world. It accepts only the loaded scenario's functions, validates
// arguments against their JSON Schema, enforces the guardrails (who may be
// mailed, which serials may be checked, one reply per email), routes the call
// to a client and records every call, refused ones included.
package dispatcher

import (
	"context"
	"log/slog"
	"time"

	"triage/internal/message"
	"triage/internal/scenario"
)

// Error codes returned to the model in {"ok":false,"error":{...}}.
const (
	CodeUnknownFunction     = "unknown_function"
	CodeInvalidArgs         = "invalid_args"
	CodeRecipientNotAllowed = "recipient_not_allowed"
	CodeCustomerMismatch    = "customer_email_mismatch"
	CodeSerialNotInMessage  = "serial_not_in_message"
	CodeReplyAlreadySent    = "reply_already_sent"
	CodeBodyTooLarge        = "body_too_large"
	CodeBodyNotPlainText    = "body_not_plain_text"
	CodeUnavailable         = "unavailable" // a client failed (temporary)
	CodeClientError         = "client_error"
	CodeInternal            = "internal"
)

// Error is a coded failure a Func may return; other errors become
// CodeClientError (or CodeUnavailable when Temporary).
type Error struct {
	Code      string
	Message   string
	Temporary bool
}

func (e *Error) Error() string { return "dispatcher: " + e.Code + ": " + e.Message }

// Call is what a Func receives: the validated arguments and the inbound email.
type Call struct {
	Name string
	Args map[string]any
	Msg  *message.Message
	// Key is the inbound message's idempotency key (stable across retries of
	// the same email); clients derive ticket idempotency keys and
	// deterministic reply Message-IDs from it.
	Key string
}

// Func executes one call that passed every guardrail and returns its result.
type Func func(ctx context.Context, c *Call) (map[string]any, error)

// Record is one recorded call, as it appears in the outcome JSON.
type Record struct {
	Name       string         `json:"name"`
	Args       map[string]any `json:"args"`
	OK         bool           `json:"ok"`
	Result     map[string]any `json:"result"`
	Error      *RecordError   `json:"error"`
	Blocked    bool           `json:"blocked"`
	DurationMS int64          `json:"duration_ms"`
}

// RecordError is the error half of the envelope.
type RecordError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Config configures a Dispatcher; Routes is required.
type Config struct {
	Routes         map[string]Func
	StaffAddresses []string // allowed send_email.to for scenarios with Escalate
	MaxBodyBytes   int      // send_email body cap, default 20000
	Now            func() time.Time
	Logger         *slog.Logger
}

// Dispatcher holds the routes; build it once, open a Session per email.
type Dispatcher struct{}

// New checks cfg and applies defaults.
func New(cfg Config) (*Dispatcher, error) { panic("TODO") }

// Names returns the routed function names (for scenario validation).
func (d *Dispatcher) Names() []string { panic("TODO") }

// Session is the per-email dispatcher; it implements agent.Tools.
type Session struct{}

// Session starts the per-email state for msg handled under sc.
func (d *Dispatcher) Session(msg *message.Message, sc *scenario.Scenario, key string) *Session {
	panic("TODO")
}

// Call runs one function call through the guardrails and returns the
// response envelope.
func (s *Session) Call(ctx context.Context, name string, args map[string]any) map[string]any {
	panic("TODO")
}

// Records returns a copy of every call so far, in order.
func (s *Session) Records() []Record { panic("TODO") }

// Sent returns the result of the successful send_email call, or nil.
func (s *Session) Sent() map[string]any { panic("TODO") }
