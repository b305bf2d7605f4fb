// Package processor takes one raw email from bytes to an Outcome: parse,
// guard, extract serials, detect the scenario, run the agent loop through the
// dispatcher, and verify that a reply was really sent.
package processor

import (
	"context"
	"log/slog"
	"time"

	"triage/internal/agent"
	"triage/internal/detect"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/scenario"
	"triage/internal/serial"
)

// Status values of an Outcome.
const (
	StatusReplied = "replied"
	StatusSkipped = "skipped"
	StatusFailed  = "failed"
)

// Failure reasons (skip reasons come from package guard).
const (
	ReasonParseError   = "parse_error"
	ReasonNoSender     = "no_sender"
	ReasonEmailNotSent = "email_not_sent"
	ReasonNoScenario   = "no_scenario"
	ReasonCanceled     = "canceled"
)

// Outcome is the JSON record for one input (DESIGN.md contract; fields may be
// added, never renamed).
type Outcome struct {
	File          string              `json:"file"`
	MessageID     string              `json:"message_id"`
	From          string              `json:"from"`
	Subject       string              `json:"subject"`
	SerialNumbers []string            `json:"serial_numbers"`
	Scenario      string              `json:"scenario"`
	Detection     Detection           `json:"detection"`
	Status        string              `json:"status"`
	Reason        string              `json:"reason"`
	Detail        string              `json:"detail,omitempty"` // human-readable cause, for failed/skipped
	FunctionCalls []dispatcher.Record `json:"function_calls"`
	ModelCalls    int                 `json:"model_calls"`
	Tokens        agent.Usage         `json:"tokens"`
	DurationMS    int64               `json:"duration_ms"`
	Reply         *Reply              `json:"reply"`
	Attachments   []AttachmentInfo    `json:"attachments,omitempty"`
	Language      string              `json:"language,omitempty"`
	Model         string              `json:"model,omitempty"`
}

// AttachmentInfo lists an inbound attachment.
type AttachmentInfo struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int    `json:"size"`
}

// Detection records how the scenario was chosen.
type Detection struct {
	Method string `json:"method"` // rules|model|fallback
	Reason string `json:"reason"`
}

// Reply describes the reply that went out.
type Reply struct {
	To        string `json:"to"`
	Subject   string `json:"subject"`
	MessageID string `json:"message_id"`
	Path      string `json:"path,omitempty"`
}

// Config wires a Processor; Scenarios, Agent, Detector, Dispatcher and
// Extractor are required.
type Config struct {
	Scenarios  *scenario.Set
	Agent      *agent.Agent
	Detector   *detect.Detector
	Dispatcher *dispatcher.Dispatcher
	Extractor  *serial.Extractor
	Guard      guard.Config
	// MaxTextBytes caps the customer text sent to the model (default 16 KiB).
	MaxTextBytes int
	ModelName    string // recorded in outcomes
	Now          func() time.Time
	Logger       *slog.Logger
}

// Input is one message to process.
type Input struct {
	Name string // file name or IMAP key, for the outcome's "file"
	Raw  []byte
	// Key is the idempotency key; "" means derive it from the Message-ID (or
	// a hash of the raw bytes when there is none).
	Key string
}

// Processor handles emails; safe for concurrent use.
type Processor struct{}

// New checks cfg and applies defaults.
func New(cfg Config) (*Processor, error) { panic("TODO") }

// Process handles one email and always returns an Outcome (never an error):
// every problem becomes status failed with a reason.
func (p *Processor) Process(ctx context.Context, in Input) Outcome { panic("TODO") }
