// Package processor takes one raw email from bytes to an Outcome: parse,
// guard, extract serials, detect the scenario, run the agent loop through the
// dispatcher, and verify that a reply was really sent.
package processor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/codes"
	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/attach"
	"triage/internal/builtins"
	"triage/internal/clients/tickets"
	"triage/internal/detect"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/language"
	"triage/internal/logattr"
	"triage/internal/message"
	"triage/internal/prompt"
	"triage/internal/scenario"
	"triage/internal/serial"
	"triage/internal/trace"
)

// Loop breaking: a message In-Reply-To one of our replies, from a sender
// already answered LoopReplies times in the last LoopWindow, goes to a person.
const (
	LoopReplies = 2
	LoopWindow  = time.Hour
)

// History is what triage remembers of the replies it sent, for breaking
// reply loops with auto-responders that send no RFC 3834 headers. The watch
// ledger implements it; triage process uses its outbox.
type History interface {
	// SentReply reports whether messageID (with brackets) is the
	// Message-ID of one of our replies.
	SentReply(ctx context.Context, messageID string) (bool, error)
	// RepliesSince counts our replies to addr (or from a message of addr)
	// recorded at or after since.
	RepliesSince(ctx context.Context, addr string, since time.Time) (int, error)
}

// Outcome is the JSON record for one input: a contract of process --json
// and the watch ledger (fields may be added, never renamed).
type Outcome struct {
	File          string              `json:"file"`
	MessageID     string              `json:"message_id"`
	From          string              `json:"from"`
	Subject       string              `json:"subject"`
	SerialNumbers []string            `json:"serial_numbers"`
	Scenario      string              `json:"scenario"`
	Detection     Detection           `json:"detection"`
	Status        triage.Status       `json:"status"`
	Reason        triage.Reason       `json:"reason"`
	Detail        string              `json:"detail,omitempty"` // human-readable cause, for failed/skipped
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
	// SendFailure is the delivery that failed when the reason is
	// send_failed: the SMTP step, the server's code and text, and whether
	// it was temporary (a later attempt may succeed).
	SendFailure *dispatcher.SendFailure `json:"send_failure,omitempty"`
	// TraceID is the OpenTelemetry trace of this email, when tracing is on
	// (package trace).
	TraceID string `json:"trace_id,omitempty"`
}

// AttachmentInfo lists an inbound attachment and whether the model was
// sent it (NotSent says why not; see package attach).
type AttachmentInfo struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Size    int    `json:"size"`
	Sent    bool   `json:"sent"`
	NotSent string `json:"not_sent,omitempty"`
}

// Detection records how the scenario was chosen.
type Detection struct {
	Method string `json:"method"` // rules|model|fallback
	Reason string `json:"reason"`
}

// Config wires a Processor; Scenarios, Agent, Detector, Dispatcher and
// Extractor are required.
type Config struct {
	Scenarios  *scenario.Set
	Agent      *agent.Agent
	Detector   *detect.Detector
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
	// Staff tells staff when the reply of a hand-off did not go out (the
	// second notice, builtins.Notifier); nil sends none.
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
	// (package attach; zero fields get its defaults).
	Attachments attach.Config
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
}

// Processor handles emails; safe for concurrent use.
type Processor struct {
	cfg Config
	// noStaff warns, once per Processor, that an escalation was left for a
	// person for want of a staff address.
	noStaff sync.Once
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
		cfg.PerSenderWindow = 24 * time.Hour
	}
	cfg.HeaderLimits.SniffTypes = sniffTypes(cfg.Attachments)
	if cfg.Guard.HasSerial == nil {
		ex := cfg.Extractor
		cfg.Guard.HasSerial = func(text string) bool { return len(ex.Extract(text, "")) > 0 }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Processor{cfg: cfg}, nil
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
	out := p.process(ctx, in)
	p.handedOff(ctx, &out)
	out.TraceID = trace.ID(ctx)
	span.SetAttributes(trace.KeyKey.String(string(out.Key)), trace.StatusKey.String(string(out.Status)),
		trace.ReasonKey.String(string(out.Reason)), trace.ScenarioKey.String(out.Scenario))
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

func (p *Processor) process(ctx context.Context, in Input) Outcome {
	out := Outcome{File: in.Name, Model: p.cfg.ModelName, DryRun: p.cfg.DryRun}
	fail := func(reason triage.Reason, detail string) Outcome {
		out.Status, out.Reason, out.Detail = triage.StatusFailed, reason, detail
		return out
	}

	msg, err := message.ParseLimits(in.Raw, p.cfg.HeaderLimits)
	if err != nil {
		return fail(triage.ReasonParseError, err.Error())
	}
	out.MessageID = msg.MessageID
	out.From = msg.From.Address
	out.Subject = msg.Subject
	out.Problems = msg.Problems
	listed, attOmitted := capList(msg.Attachments, MaxAttachmentsListed)
	out.AttachmentsOmitted = attOmitted + msg.PartsNotRead
	for _, a := range listed {
		out.Attachments = append(out.Attachments, AttachmentInfo{Name: a.Name, Type: a.Type, Size: a.Size})
	}
	out.Key = in.Key
	if out.Key == "" {
		out.Key = triage.KeyOf(msg, in.Raw)
	}
	// Every line logged about this email from here on names it.
	ctx = logattr.With(ctx, "key", out.Key, "message_id", out.MessageID)
	// Machines first: a bounce with an unusable From is skipped, not failed.
	if v := guard.Check(p.cfg.Guard, msg); v.Skip {
		out.Status, out.Reason, out.Detail = triage.StatusSkipped, v.Reason, v.Detail
		return out
	}
	if msg.From.Address == "" {
		return fail(triage.ReasonNoSender, "no usable From address; left for a person")
	}
	if err := ctx.Err(); err != nil {
		return fail(triage.ReasonCanceled, err.Error())
	}
	if p.cfg.Answered != nil {
		rc, inbound, err := p.cfg.Answered(ctx, out.Key)
		switch {
		case err != nil:
			return fail(triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; whether this message was answered cannot be told, left for a person", err))
		case rc != nil && inbound != "" && inbound != triage.DigestOf(msg):
			return fail(triage.ReasonDuplicateKey, fmt.Sprintf("the reply %s answers another message with the same Message-ID and sender; a person answers this one", cmp.Or(rc.Path, rc.MessageID)))
		case rc != nil:
			// Answered by an earlier run: nothing runs again.
			out.Status, out.Reply, out.TicketID = triage.StatusReplied, rc, tickets.TagInSubject(rc.Subject)
			if rc.Drafted {
				out.Status = triage.StatusDrafted
			}
			return out
		}
	}

	out.SerialNumbers, out.SerialsOmitted = capList(p.cfg.Extractor.Extract(msg.Subject+"\n"+msg.Text, msg.Quoted), MaxSerialsListed)
	out.Language = p.cfg.Language.Detect(msg.Subject + "\n" + msg.Text)
	text := truncate(msg.Text, p.cfg.MaxTextBytes)
	quoted := truncate(msg.Quoted, p.cfg.MaxTextBytes/2)
	facts := prompt.Facts{
		From:            msg.From.Address,
		ReplyTo:         msg.ReplyTo,
		Subject:         msg.Subject,
		Language:        out.Language,
		DefaultLanguage: p.cfg.Language.Default(),
		SerialNumbers:   out.SerialNumbers,

		SerialsOmitted:     out.SerialsOmitted,
		AttachmentsOmitted: out.AttachmentsOmitted,
	}
	if !msg.Date.IsZero() {
		facts.Received = msg.Date.UTC().Format(time.RFC3339)
	}
	for _, a := range listed {
		facts.Attachments = append(facts.Attachments, prompt.Attachment(a))
	}
	inline, err := p.attachments(in.Raw, listed, msg.Heads, &out, &facts)
	if err != nil {
		return fail(triage.ReasonParseError, err.Error())
	}

	// Conversations: a follow-up joins its ticket (its text appended as a
	// note, idempotently), a conversation a person owns is left to them.
	var conv *tickets.State
	var convWhy string
	if p.cfg.Tickets != nil {
		conv, convWhy, err = p.conversation(ctx, msg)
		var stranger *strangerInOwnedThread
		if errors.As(err, &stranger) {
			out.Status, out.Reason, out.Detail = triage.StatusSkipped, triage.ReasonHumanOwner, err.Error()
			out.TicketID = stranger.ticket
			return out
		}
		if err != nil {
			return fail(triage.ReasonTicketStore, err.Error())
		}
	}
	earlier := 0
	if conv != nil {
		out.TicketID, out.Followup = conv.TicketID, true
		id := noteID(msg, out.Key)
		earlier = earlierInbound(conv, id)
		facts.Ticket = ticketFacts(conv, id)
		if !p.cfg.DryRun { // a dry run adds no note
			_, err := p.cfg.Tickets.AddNote(ctx, conv.TicketID, tickets.Note{
				MessageID: id, From: msg.From.Address, Subject: msg.Subject, Text: text,
			})
			if err != nil {
				return fail(triage.ReasonTicketStore, err.Error())
			}
		}
		if conv.AgentDisabled {
			owner := cmp.Or(conv.Owner, "a person")
			out.Status, out.Reason = triage.StatusSkipped, triage.ReasonHumanOwner
			out.Detail = fmt.Sprintf("%s is taken over by %s; the follow-up was appended to the ticket", conv.TicketID, owner)
			return out
		}
	}

	// Reply loops: a conversation the ticket store knows has its own bound
	// when an escalation scenario exists (its third inbound message goes to
	// a person, who then owns it); every other message is checked here, and
	// so are a conversation's messages after its third (a person released
	// it, or the escalation could not reach staff).
	if conv == nil || p.cfg.Scenarios.Flagged(isEscalation) == nil || earlier > EscalateAfter {
		if reason, detail := p.loop(ctx, msg); reason != "" {
			return fail(reason, detail)
		}
	}
	if reason, detail := p.overLimit(ctx, msg); reason != "" {
		return fail(reason, detail)
	}

	det := p.detect(ctx, facts, text, conv, convWhy, earlier)
	out.ModelCalls += det.ModelCalls
	addUsage(&out.Tokens, det.Usage)
	out.Detection = Detection{Method: det.Method, Reason: det.Reason}
	if det.Scenario == nil {
		return fail(triage.ReasonNoScenario, "no scenario matched and no fallback scenario is configured: "+det.Reason)
	}
	sc := det.Scenario
	out.Scenario = sc.Name
	facts.Scenario = sc.Name

	if sc.HandsOff() && len(p.cfg.Dispatcher.Staff()) == 0 {
		p.noStaff.Do(func() {
			p.cfg.Logger.WarnContext(ctx, "no staff address configured (--staff, staff:): escalations, and replies that promise a person, are left for a person (failed, no_staff)", "scenario", sc.Name)
		})
		return fail(triage.ReasonNoStaff, sc.Name+" hands the customer to a person, which needs a staff address to tell (--staff, or staff: in the config); left for a person")
	}
	if sc.Escalate {
		if out.TicketID == "" && p.cfg.Tickets != nil && !p.cfg.DryRun {
			if out.TicketID, err = p.openForEscalation(ctx, msg, out.Key, out.SerialNumbers); err != nil {
				return fail(triage.ReasonTicketStore, err.Error())
			}
		}
	}

	final := p.cfg.Dispatcher.Tools().FinalOf(sc)
	session := p.cfg.Dispatcher.Session(msg, sc, out.Key)
	draft := p.replyMode(ctx, sc, in.Inbox) == triage.ReplyDraft
	system, user := prompt.System(p.cfg.Scenarios.Main, sc.Body), prompt.User(facts, text, quoted)
	session.SetOptions(dispatcher.Options{Draft: draft, DryRun: p.cfg.DryRun, Sources: []string{system, user}, Language: out.Language})
	session.SetTicket(out.TicketID)
	session.SetAttachmentsSeen(len(inline))
	res, err := p.cfg.Agent.Run(ctx, agent.Request{
		System:        system,
		Prompt:        user,
		Parts:         inline,
		Functions:     declarations(sc),
		FinalFunction: final,
	}, session)
	out.FunctionCalls = session.Records()
	out.TicketID = session.Ticket()
	for _, r := range out.FunctionCalls {
		if r.SerialSource == SerialSourceAttachment {
			out.SerialSource = SerialSourceAttachment
		}
	}
	out.ModelCalls += res.ModelCalls
	addUsage(&out.Tokens, res.Usage)
	if rec := refusedFor(out.FunctionCalls, final); rec != nil && okRecord(out.FunctionCalls, final) == nil {
		// The reply cannot go out for this message: the sender refused it at
		// a reply limit (exact, at send time), or it exists already for
		// another message with this Key.
		return fail(rec.Reason, rec.Error.Message)
	}

	// Verify: only a successful final call (send_email) makes an email
	// handled. A reply the mail server refused is send_failed even when the
	// model then failed too: the refusal is what a person must know.
	sent := okRecord(out.FunctionCalls, final)
	if f := session.SendFailure(); sent == nil && f != nil {
		p.sendFailed(ctx, &out, f, in.MoreAttempts)
		return out
	}
	if err != nil {
		return fail(triage.ReasonEmailNotSent, err.Error())
	}
	if sent == nil {
		detail := "the model ended without a successful " + final
		if res.Stop != nil {
			detail = res.Stop.Error()
		}
		if n := blocked(out.FunctionCalls); n > 0 {
			detail += fmt.Sprintf(" (%d call(s) refused by the dispatcher)", n)
		}
		if res.RefusedCalls > 0 {
			detail += fmt.Sprintf(" (%d call(s) over the per-turn cap refused unrun)", res.RefusedCalls)
		}
		if e := lastError(out.FunctionCalls, final); e != nil && e.Code == dispatcher.CodeUngroundedClaim {
			return fail(triage.ReasonUngroundedClaim, e.Message)
		}
		if reason, msg := noticeRefused(out.FunctionCalls); reason != "" {
			return fail(reason, msg)
		}
		return fail(triage.ReasonEmailNotSent, detail)
	}
	out.Status = triage.StatusReplied
	switch {
	case sent.DryRun: // nothing went anywhere: the reply that would have gone out
		rc := builtins.Intended(sent.Args)
		out.Reply = &rc
		if draft {
			out.Status = triage.StatusDrafted
		}
		// Staff would have their notice and a person the conversation
		// (the takeover itself is an effect: not done).
		out.Escalated = sc.Escalate && p.cfg.Tickets != nil && okRecord(out.FunctionCalls, dispatcher.FuncNotifyStaff) != nil
		return out
	case sent.Receipt != nil:
		// The receipt says where the mail went; the model's argument may
		// differ in form (a display name, letter case).
		rc := *sent.Receipt
		out.Reply = &rc
		if rc.Drafted {
			out.Status = triage.StatusDrafted
		}
	default: // a final function that gives no receipt (an http or mcp binding)
		out.Reply = &triage.Receipt{Subject: builtins.Intended(sent.Args).Subject}
	}
	p.recordReply(ctx, out.TicketID, out.Reply, p.cfg.Now())
	if sc.Escalate && okRecord(out.FunctionCalls, dispatcher.FuncNotifyStaff) != nil && out.TicketID != "" {
		// The customer has their acknowledgement and staff their notice:
		// from now on a person owns the conversation.
		if err := p.cfg.Tickets.Takeover(context.WithoutCancel(ctx), out.TicketID, OwnerEscalated); err != nil {
			out.Detail = "escalated, but the takeover was not recorded: " + err.Error()
			p.cfg.Logger.ErrorContext(ctx, "escalation takeover failed", "ticket", out.TicketID, "err", err)
		} else {
			out.Escalated = true
		}
	}
	return out
}

// detect chooses the scenario. A follow-up is answered by the follow-up
// scenario unless it escalates: the customer's third message on the
// conversation, or the escalation scenario's rules match its text.
func (p *Processor) detect(ctx context.Context, facts prompt.Facts, text string, conv *tickets.State, why string, earlier int) detect.Result {
	if conv != nil {
		if esc := p.cfg.Scenarios.Flagged(isEscalation); esc != nil {
			if earlier == EscalateAfter {
				return detect.Result{Scenario: esc, Method: detect.MethodRules,
					Reason: fmt.Sprintf("%s: message %d from the customer on %s", esc.Name, earlier+1, conv.TicketID)}
			}
			if r, ok := p.cfg.Detector.Rule(esc.Name, facts, text); ok {
				return detect.Result{Scenario: esc, Method: detect.MethodRules, Reason: esc.Name + ": " + r + " (follow-up of " + conv.TicketID + ")"}
			}
		}
		if fu := p.cfg.Scenarios.Flagged(isFollowUp); fu != nil {
			return detect.Result{Scenario: fu, Method: detect.MethodRules, Reason: fu.Name + ": " + why}
		}
	}
	return p.cfg.Detector.Detect(ctx, facts, text)
}

// loop reports a reply loop: msg answers one of our replies and its sender
// (From or the reply address) was already answered LoopReplies times within
// LoopWindow. It returns the failure reason and detail, or "".
func (p *Processor) loop(ctx context.Context, msg *message.Message) (reason triage.Reason, detail string) {
	if p.cfg.History == nil {
		return "", ""
	}
	// What the message answers: its In-Reply-To, and the last of its
	// References (clients and autoresponders that omit In-Reply-To still
	// name the message they answer there).
	var ours string
	answers := []string{msg.InReplyTo}
	if n := len(msg.References); n > 0 {
		answers = append(answers, msg.References[n-1])
	}
	for _, id := range answers {
		if id == "" || ours != "" {
			continue
		}
		ok, err := p.cfg.History.SentReply(ctx, id)
		if err != nil {
			return triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; a reply loop cannot be ruled out, left for a person", err)
		}
		if ok {
			ours = id
		}
	}
	if ours == "" {
		return "", ""
	}
	since := p.cfg.Now().Add(-LoopWindow)
	most, who := 0, msg.From.Address
	for _, addr := range []string{msg.From.Address, msg.ReplyTo} {
		if addr == "" {
			continue
		}
		n, err := p.cfg.History.RepliesSince(ctx, addr, since)
		if err != nil {
			return triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; a reply loop cannot be ruled out, left for a person", err)
		}
		if n > most {
			most, who = n, addr
		}
	}
	if most < LoopReplies {
		return "", ""
	}
	return triage.ReasonReplyLoop, fmt.Sprintf("In-Reply-To %s is one of our replies, and %s was already answered %d times in the last %v; a possible auto-reply loop, left for a person",
		ours, who, most, LoopWindow)
}

// overLimit reports a sender past Config.PerSenderLimit: its From or reply
// address already has that many replies within PerSenderWindow. It returns
// the failure reason and detail, or "".
func (p *Processor) overLimit(ctx context.Context, msg *message.Message) (reason triage.Reason, detail string) {
	if p.cfg.History == nil || p.cfg.PerSenderLimit <= 0 {
		return "", ""
	}
	since := p.cfg.Now().Add(-p.cfg.PerSenderWindow)
	for i, addr := range []string{msg.From.Address, msg.ReplyTo} {
		if addr == "" || i == 1 && strings.EqualFold(addr, msg.From.Address) {
			continue
		}
		n, err := p.limitCount(ctx, addr, since)
		if err != nil {
			return triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; the per-sender limit cannot be checked, left for a person", err)
		}
		if n >= p.cfg.PerSenderLimit {
			return triage.ReasonPerSenderLimit, fmt.Sprintf("%s was already answered %d times in the last %v (limit %d); left for a person",
				addr, n, p.cfg.PerSenderWindow, p.cfg.PerSenderLimit)
		}
	}
	return "", ""
}

// declarations turns a scenario's functions into Gemini declarations. They are
// built per email: the SDK may touch what it is given.
func declarations(sc *scenario.Scenario) []*genai.FunctionDeclaration {
	decls := make([]*genai.FunctionDeclaration, 0, len(sc.Functions))
	for _, f := range sc.Functions {
		decls = append(decls, &genai.FunctionDeclaration{
			Name:                 f.Name,
			Description:          f.Description,
			ParametersJsonSchema: f.Parameters,
		})
	}
	return decls
}

// okRecord is the first successful call of name, or nil.
func okRecord(recs []dispatcher.Record, name string) *dispatcher.Record {
	for i := range recs {
		if recs[i].Name == name && recs[i].OK {
			return &recs[i]
		}
	}
	return nil
}

// refusedFor is the first call of name refused for a reason that leaves
// the email to a person (dispatcher.Error.Reason), or nil.
func refusedFor(recs []dispatcher.Record, name string) *dispatcher.Record {
	for i := range recs {
		if recs[i].Name == name && recs[i].Reason != "" && recs[i].Error != nil {
			return &recs[i]
		}
	}
	return nil
}

// lastError is the error of the last call to name, or nil.
func lastError(recs []dispatcher.Record, name string) *dispatcher.RecordError {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Name == name {
			return recs[i].Error
		}
	}
	return nil
}

func blocked(recs []dispatcher.Record) int {
	n := 0
	for _, r := range recs {
		if r.Blocked {
			n++
		}
	}
	return n
}

func addUsage(dst *agent.Usage, u agent.Usage) {
	dst.Prompt += u.Prompt
	dst.Output += u.Output
	dst.Total += u.Total
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[... truncated ...]"
}

// Bounds bound the work on one email: the agent loop's turns and time,
// and the function calls the dispatcher accepts (calls over them have no
// effect). Zero fields take the agent's and the dispatcher's defaults.
type Bounds struct {
	MaxTurns        int
	TurnTimeout     time.Duration
	Deadline        time.Duration // the whole email, parsing to the sent reply
	MaxCallsPerTurn int           // calls the dispatcher runs in one turn
	MaxCalls        int           // calls the dispatcher runs per email
}

// apply sets the loop bounds of the agent's and the dispatcher's configs.
// Calls in one turn past twice the dispatcher's per-turn cap (at least
// agent.DefaultMaxCallsPerTurn) are refused by the loop unrun, never
// materialised as records or responses.
func (b Bounds) apply(ac *agent.Config, dc *dispatcher.Config) {
	ac.MaxTurns, ac.TurnTimeout, ac.Deadline = b.MaxTurns, b.TurnTimeout, b.Deadline
	ac.MaxCallsPerTurn = max(agent.DefaultMaxCallsPerTurn, 2*cmp.Or(b.MaxCallsPerTurn, dispatcher.DefaultMaxCallsPerTurn))
	dc.MaxCallsPerTurn, dc.MaxCallsPerEmail = b.MaxCallsPerTurn, b.MaxCalls
}

// Assemble builds the agent and the dispatcher from their configs, with
// the loop bounds of cfg.Bounds (whatever ac and dc say of them), the
// detector over cfg.Scenarios, and wires them into a Processor: the one
// place where process, watch and eval put the pipeline together.
func Assemble(ac agent.Config, dc dispatcher.Config, cfg Config) (*Processor, error) {
	cfg.Bounds.apply(&ac, &dc)
	ag, err := agent.New(ac)
	if err != nil {
		return nil, err
	}
	d, err := dispatcher.New(dc)
	if err != nil {
		return nil, err
	}
	cfg.Agent, cfg.Dispatcher = ag, d
	cfg.Detector = detect.New(cfg.Scenarios, ag)
	return New(cfg)
}
