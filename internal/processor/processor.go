// Package processor takes one raw email from bytes to an Outcome: parse,
// guard, extract serials, detect the scenario, run the agent loop through the
// dispatcher, and verify that a reply was really sent.
package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/tickets"
	"triage/internal/clip"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/message"
	"triage/internal/replies"
	"triage/internal/serial"
	"triage/internal/trace"
)

// Config wires a Processor; Scenarios, Agent, Detector, Dispatcher and
// Extractor are required.
type Config struct {
	Scenarios  *instructions.Scenarios
	Agent      *agent.Agent
	Detector   *Detector
	Dispatcher *dispatcher.Dispatcher
	Extractor  *serial.Extractor
	// Language names the customer's language (outcome and facts
	// language); default language.New with its defaults (pl).
	Language *language.Detector
	Guard    guard.Config
	// Tickets keeps conversations (optional: without it every email stands
	// alone). Follow-ups join their ticket through it, taken-over
	// conversations are left for their person, escalations are taken over.
	Tickets tickets.Store
	// History, when set, breaks reply loops (see LoopReplies).
	History History
	// Answered, when set, finds the reply an earlier run wrote for the
	// message with this Key (triage process: in its outbox), before any
	// ticket or model call: the same message again is that reply, reported
	// existing; another message reusing the Key is failed/
	// duplicate_message_id. It returns the reply's receipt and the
	// triage.DigestOf the message it answers ("" when not known); nil when
	// there is none.
	Answered func(ctx context.Context, key triage.Key) (*triage.Receipt, string, error)
	// Claim, when set, holds the email with this Key while this run works
	// on it, from before Answered to its reply (triage process: a lock in
	// its outbox, replies.Outbox.Claim): another run claiming the same Key
	// waits, then finds the reply, and asks the model nothing. release
	// ends the claim. An error (the wait outlived the email's deadline)
	// fails the email, left for a person.
	Claim func(ctx context.Context, key triage.Key) (release func(), err error)
	// Staff tells staff when the reply of a hand-off did not go out (the
	// second notice, dispatcher.Notifier); nil sends none.
	Staff StaffNotifier
	// PerSenderLimit, with History, caps the replies to one address (the
	// From or the reply address) within PerSenderWindow (default 24h): a
	// message past it is failed/per_sender_limit, for a person, before any
	// model call (drafts count too when History is a LimitCounter). The
	// check is a saving, not the bound: the sender's own check at send time
	// is exact (the outbox's SetPerSenderLimit, watch's ledger), and its
	// refusal is failed/per_sender_limit as well. 0 is no limit.
	PerSenderLimit  int
	PerSenderWindow time.Duration
	// MaxTextBytes caps the customer text sent to the model (default 16 KiB).
	MaxTextBytes int
	// Attachments caps the attachments sent to the model as inline data
	// (AttachConfig; zero fields get its defaults).
	Attachments AttachConfig
	// HeaderLimits caps the header block and each field (defaults in package
	// message: 256 KiB and 64 KiB); a message over them is failed/parse_error.
	HeaderLimits message.Limits
	// Bounds bound the work on one email; Assemble gives the agent and the
	// dispatcher theirs from them. Bounds.Deadline bounds the whole email,
	// parsing to the sent reply (default agent.DefaultDeadline).
	Bounds    Bounds
	ModelName string // recorded in outcomes
	// ReplyMode is the run's reply mode, triage.ReplySend (default),
	// triage.ReplyDraft or triage.ReplyAuto; a scenario's reply_mode
	// overrides it.
	ReplyMode triage.ReplyMode
	// Autonomy resolves reply mode auto for the message's inbox
	// (Input.Inbox); nil: auto drafts.
	Autonomy Autonomy
	// DryRun: effect functions are answered without running (the
	// dispatcher enforces it) and outcomes say dry_run.
	DryRun bool
	Now    func() time.Time
	Logger *slog.Logger
}

// Input is one message to process.
type Input struct {
	Name string // file name or IMAP key, for the outcome's "file"
	Raw  []byte
	// Key is the idempotency key; "" means triage.KeyOf the message and
	// its raw bytes.
	Key triage.Key
	// MoreAttempts: the caller processes this email again when a temporary
	// delivery failure ends it (watch, before the last of its attempts), so
	// such a failure adds no note to the ticket yet: the reply may still go
	// out. The outcome is failed/send_failed either way.
	MoreAttempts bool
	// Inbox is the watched mailbox the message came from (zero for
	// triage process): reply mode auto is earned per scenario and inbox.
	Inbox triage.Inbox
	// Received is when the message was received as the caller knows it
	// (watch: the IMAP INTERNALDATE; zero when unknown). The decision's
	// deadlines count from the earlier plausible of it and the message's
	// Date (dispatcher.ReceivedAt).
	Received time.Time
}

// Processor handles emails; safe for concurrent use.
type Processor struct {
	cfg Config
	// noStaff warns, once per Processor, that an escalation was left for a
	// person for want of a staff address.
	noStaff sync.Once
	// opener is what the opening turn offers when the rules are unsure.
	opener opener
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Processor, error) {
	switch {
	case cfg.Scenarios == nil:
		return nil, errors.New("processor: Config.Scenarios is required")
	case cfg.Agent == nil:
		return nil, errors.New("processor: Config.Agent is required")
	case cfg.Detector == nil:
		return nil, errors.New("processor: Config.Detector is required")
	case cfg.Dispatcher == nil:
		return nil, errors.New("processor: Config.Dispatcher is required")
	case cfg.Extractor == nil:
		return nil, errors.New("processor: Config.Extractor is required")
	}
	// The final function (its success means handled) comes from the
	// bindings (tools.yaml final: true), one per scenario.
	for _, sc := range cfg.Scenarios.Scenarios {
		if cfg.Dispatcher.Tools().FinalOf(sc) == "" {
			return nil, fmt.Errorf("processor: %s: available_functions: declares no final function (tools.yaml final: true); every email ends with a reply", sc.File)
		}
	}
	if !cfg.ReplyMode.Valid() {
		return nil, fmt.Errorf("processor: ReplyMode %q: want %q, %q or %q", cfg.ReplyMode, triage.ReplySend, triage.ReplyDraft, triage.ReplyAuto)
	}
	if cfg.Bounds.Deadline <= 0 {
		cfg.Bounds.Deadline = agent.DefaultDeadline
	}
	if cfg.MaxTextBytes <= 0 {
		cfg.MaxTextBytes = 16 << 10
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Language == nil {
		d, err := language.New(language.Config{})
		if err != nil {
			return nil, fmt.Errorf("processor: %w", err)
		}
		cfg.Language = d
	}
	if cfg.PerSenderWindow <= 0 {
		cfg.PerSenderWindow = replies.DefaultPerSenderWindow
	}
	cfg.HeaderLimits.SniffTypes = sniffTypes(cfg.Attachments)
	if cfg.Guard.HasSerial == nil {
		ex := cfg.Extractor
		cfg.Guard.HasSerial = func(text string) bool { return len(ex.Extract(text, "")) > 0 }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Processor{cfg: cfg, opener: newOpener(cfg.Scenarios, cfg.Dispatcher.Tools())}, nil
}

// Process handles one email and always returns an Outcome (never an error):
// every problem becomes status failed with a reason.
//
// The deadline (Config.Bounds.Deadline) starts here and bounds everything:
// parsing, detection (model included), the agent loop and the reply's
// rendering and delivery.
func (p *Processor) Process(ctx context.Context, in Input) Outcome {
	ctx, span, started := trace.Email(ctx, trace.FileKey.String(in.Name))
	if started {
		defer span.End()
	}
	ctx, cancel := context.WithTimeoutCause(ctx, p.cfg.Bounds.Deadline, agent.ErrDeadline)
	defer cancel()
	start := p.cfg.Now()
	e := &email{in: in}
	out := p.process(ctx, e)
	p.handedOff(ctx, &out, e.verdict.Notified)
	if len(out.Detail) > triage.MaxDetail { // it may quote a header or a server's reply
		out.Detail = clip.Bytes(out.Detail, triage.MaxDetail-len(clip.Ellipsis), clip.Ellipsis)
	}
	out.TraceID = trace.ID(ctx)
	span.SetAttributes(trace.KeyKey.String(string(out.Key)), trace.StatusKey.String(string(out.Status)),
		trace.ReasonKey.String(string(out.Reason)), trace.ScenarioKey.String(out.Scenario),
		trace.DetectionKey.String(string(out.Detection.Method)))
	if out.Detection.FirstTurn {
		span.SetAttributes(trace.DetectionFirstTurnKey.Bool(true))
	}
	if out.Status == triage.StatusFailed {
		span.SetStatus(codes.Error, string(out.Reason))
	}
	out.DurationMS = p.cfg.Now().Sub(start).Milliseconds()
	if out.SerialNumbers == nil {
		out.SerialNumbers = []string{}
	}
	if out.FunctionCalls == nil {
		out.FunctionCalls = []dispatcher.Record{}
	}
	// Debug: the caller writes the one summary line per message (process
	// prints it, watch logs it with the ledger state).
	p.cfg.Logger.Log(ctx, slog.LevelDebug, "email processed",
		"file", out.File, "key", out.Key, "message_id", out.MessageID, "status", out.Status,
		"reason", out.Reason, "scenario", out.Scenario, "calls", len(out.FunctionCalls),
		"model_calls", out.ModelCalls, "duration_ms", out.DurationMS)
	return out
}
