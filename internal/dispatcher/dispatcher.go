// Package dispatcher is the only way the model's function calls reach the
// outside world. It is a small policy engine over the bindings of tools.yaml:
// it accepts only the loaded scenario's functions, validates arguments
// against their JSON Schema, enforces each binding's declared policies (where
// an argument may come from, enum, pattern, length, required earlier calls,
// max_calls, effects) and the per-turn and per-email call caps, routes the
// call to its implementation, caps the result, and records every call,
// refused ones included. It has no guardrail of its own that is not a
// declared policy, size caps and call caps aside.
package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"

	"triage"
	"triage/internal/message"
	"triage/internal/scenario"
	"triage/internal/serial"
	"triage/internal/tools"
	"triage/internal/trace"
)

// Error codes returned to the model in {"ok":false,"error":{...}}.
const (
	CodeUnknownFunction     = "unknown_function"
	CodeInvalidArgs         = "invalid_args"          // schema, enum, pattern, max_length
	CodeRecipientNotAllowed = "recipient_not_allowed" // from: reply_to | staff
	CodeSenderMismatch      = "sender_mismatch"       // from: sender
	CodeSerialNotInMessage  = "serial_not_in_message" // from: serials
	CodeNotInMessage        = "not_in_message"        // from: message
	CodeRequirementNotMet   = "requirement_not_met"   // requires
	CodeMaxCalls            = "max_calls_reached"     // max_calls (effects: once per email)
	CodeTooManyCalls        = "too_many_calls"        // per-turn and per-email caps
	CodeBodyTooLarge        = "body_too_large"
	CodeBodyNotPlainText    = "body_not_plain_text"
	CodeUnavailable         = "unavailable" // a client failed (temporary)
	CodeClientError         = "client_error"
	CodeInternal            = "internal"
	CodeNoStaff             = string(triage.ReasonNoStaff) // notify_staff without configured staff addresses
	// CodeDuplicateKey: the reply exists already for another message with
	// the same Key; the email is left for a person (triage.ReasonDuplicateKey).
	CodeDuplicateKey = string(triage.ReasonDuplicateKey)
	// CodePerSenderLimit: the sender refused the reply, which would pass
	// its per-sender limit; the email is left for a person
	// (triage.ReasonPerSenderLimit) and the loop ends.
	CodePerSenderLimit = string(triage.ReasonPerSenderLimit)
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
	Code      string
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

func (e *Error) Error() string { return "dispatcher: " + e.Code + ": " + e.Message }

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
	// Draft asks send_email to leave the reply as a draft a person sends
	// (reply mode draft) instead of sending it.
	Draft bool
	// Tool is the call's binding.
	Tool *tools.Tool
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
	Scenario *scenario.Scenario
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
	Name       string         `json:"name"`
	Args       map[string]any `json:"args"`
	OK         bool           `json:"ok"`
	Result     map[string]any `json:"result"`
	Error      *RecordError   `json:"error"`
	Blocked    bool           `json:"blocked"`
	DurationMS int64          `json:"duration_ms"`
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
	// SerialSource is "attachment" when a from: serials_or_attachments
	// argument held a serial the model read from an attachment, not one the
	// customer wrote.
	SerialSource string `json:"serial_source,omitempty"`
	// Reason is the Error.Reason of a refused call: why the email is left
	// for a person if no later call succeeds.
	Reason triage.Reason `json:"-"`
}

// SerialSourceAttachment is Record.SerialSource for a serial the model read
// from an attachment.
const SerialSourceAttachment = "attachment"

// RecordError is the error half of the envelope.
type RecordError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Config configures a Dispatcher; Tools is required, and every binding in
// it needs an implementation: Routes[name], else Builtins[binding.Builtin].
type Config struct {
	// Tools are the bindings and policies of tools.yaml.
	Tools *tools.Set
	// Builtins implement the builtin bindings, by builtin name (Routes
	// builds the standard ones).
	Builtins map[string]Func
	// Routes implement bindings by function name; they take precedence over
	// Builtins (eval's mocks, HTTP and MCP backends).
	Routes         map[string]Func
	StaffAddresses []string          // addresses from: staff accepts
	Extractor      *serial.Extractor // recognizes serials for from: serials (default serial.New())
	MaxBodyBytes   int               // send_email body cap, default 20000
	MaxResultBytes int               // result cap, default 16 KiB of JSON
	// Call caps: calls over them have no effect and are recorded blocked.
	MaxCallsPerTurn  int // default 8
	MaxCallsPerEmail int // default 24
	Now              func() time.Time
	Logger           *slog.Logger
}

// Dispatcher holds the bindings and their implementations; build it once,
// open a Session per email.
type Dispatcher struct {
	tools     *tools.Set
	routes    map[string]Func // by function name
	staff     map[string]bool // lower-cased bare addresses
	staffList []string        // the keys of staff, sorted once (Staff, Call.Staff)
	ext       *serial.Extractor
	maxBody   int
	maxResult int
	perTurn   int
	perEmail  int
	now       func() time.Time
	log       *slog.Logger
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Tools == nil {
		return nil, errors.New("dispatcher: Config.Tools is required")
	}
	d := &Dispatcher{
		tools:     cfg.Tools,
		routes:    make(map[string]Func, len(cfg.Tools.Tools)),
		staff:     make(map[string]bool),
		ext:       cfg.Extractor,
		maxBody:   cfg.MaxBodyBytes,
		maxResult: cfg.MaxResultBytes,
		perTurn:   cfg.MaxCallsPerTurn,
		perEmail:  cfg.MaxCallsPerEmail,
		now:       cfg.Now,
		log:       cfg.Logger,
	}
	for name := range cfg.Routes {
		if cfg.Tools.Get(name) == nil {
			return nil, fmt.Errorf("dispatcher: route %q has no binding in %s", name, cfg.Tools.File)
		}
	}
	for _, name := range cfg.Tools.Names() {
		t := cfg.Tools.Get(name)
		f := cfg.Routes[name]
		if f == nil && t.Builtin != "" {
			f = cfg.Builtins[t.Builtin]
		}
		if f == nil {
			return nil, fmt.Errorf("dispatcher: %s: %s: no implementation for %s", cfg.Tools.File, name, t.Spec)
		}
		d.routes[name] = f
	}
	for i, a := range cfg.StaffAddresses {
		addr, err := BareAddress(a)
		if err != nil {
			return nil, fmt.Errorf("dispatcher: StaffAddresses[%d] %q: %w", i, a, err)
		}
		d.staff[addr] = true
	}
	d.staffList = slices.Sorted(maps.Keys(d.staff))
	if d.maxBody < 0 || d.maxResult < 0 || d.perTurn < 0 || d.perEmail < 0 {
		return nil, errors.New("dispatcher: negative limit in Config")
	}
	if d.maxBody == 0 {
		d.maxBody = DefaultMaxBodyBytes
	}
	if d.maxResult == 0 {
		d.maxResult = DefaultMaxResultBytes
	}
	if d.perTurn == 0 {
		d.perTurn = DefaultMaxCallsPerTurn
	}
	if d.perEmail == 0 {
		d.perEmail = DefaultMaxCallsPerEmail
	}
	if d.ext == nil {
		ext, err := serial.New()
		if err != nil {
			return nil, fmt.Errorf("dispatcher: %w", err)
		}
		d.ext = ext
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// Names returns the bound function names, sorted.
func (d *Dispatcher) Names() []string {
	return slices.Sorted(maps.Keys(d.routes))
}

// Tools returns the bindings the dispatcher enforces.
func (d *Dispatcher) Tools() *tools.Set { return d.tools }

// Session is the per-email dispatcher; it implements agent.Tools (and the
// agent's turn notification). It is safe for concurrent use; calls are
// executed one at a time.
type Session struct {
	d   *Dispatcher
	msg *message.Message
	sc  *scenario.Scenario
	key triage.Key

	mu        sync.Mutex
	opts      Options
	records   []Record
	turn      int // model turn of the calls now arriving (StartTurn)
	turnCalls int // calls in this turn, refused ones included
	admitted  int // calls within the per-turn cap, this email
	runs      map[string]int
	done      []doneCall // successful runs, in order
	indexed   *msgIndex  // the message's serials and tokens, built on first use (index())
	ticket    string     // see Call.TicketID
	// ungrounded counts calls refused for unsupported claims (ground).
	ungrounded int
	seen       int  // attachments the model was sent (SetAttachmentsSeen)
	fromAtt    bool // the call being checked took a serial from an attachment
	sendFail   *SendFailure
	halt       error // a refusal that ends the loop (Error.Halt)
}

// SetAttachmentsSeen tells the session how many attachments the model was
// sent: from: serials_or_attachments accepts a serial read from one only
// when there is one.
func (s *Session) SetAttachmentsSeen(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = n
}

// SetTicket tells the session which ticket the email belongs to (a
// follow-up's conversation, or a ticket the pipeline opened).
func (s *Session) SetTicket(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ticket = id
}

// Ticket is the ticket the email belongs to so far ("" when none).
func (s *Session) Ticket() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ticket
}

// Staff returns the configured staff addresses (bare, lower-cased, sorted).
func (d *Dispatcher) Staff() []string {
	return slices.Clone(d.staffList)
}

// doneCall is one successful run, for requires and repeats.
type doneCall struct {
	name   string
	args   map[string]any
	argKey string
	result Result
	turn   int
}

// Options are the per-email settings of a Session.
type Options struct {
	// Draft: send_email leaves the reply as a draft (Call.Draft).
	Draft bool
	// DryRun: a call to an effect function passes every guardrail as usual
	// but is answered {"dry_run": true, ...} without running (see
	// dryRunResult); nothing changes anywhere.
	DryRun bool
	// Sources are the texts the model was given (system instruction, user
	// turn): a grounded tool's claims may come from them (see ground).
	Sources []string
	// Language is the customer's language (Call.Language).
	Language string
}

// SetOptions sets the session's options; call it before the first Call.
func (s *Session) SetOptions(o Options) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = o
}

// DryRunTicketID stands in, in a dry run, for the ticket number
// create_ticket would have given: a placeholder a reply may show (the
// preview reads like the real reply), which no ticket store issues.
const DryRunTicketID = "TKT-(dry run)"

// dryRunResult is what an effect function answers in a dry run: dry_run
// true and a message, plus, for a builtin, the keys of its real result that
// a reply may show, with placeholders (create_ticket's ticket_id). It
// claims no outcome: no status, recipient or Message-ID.
func dryRunResult(t *tools.Tool, draft bool) map[string]any {
	res := map[string]any{
		"dry_run": true,
		"message": "dry run: " + t.Name + " was not executed; nothing was changed",
	}
	switch t.Builtin {
	case FuncCreateTicket:
		res["ticket_id"] = DryRunTicketID
	case FuncSendEmail:
		if draft {
			res["draft"] = true
		}
	}
	return res
}

// Session starts the per-email state for msg handled under sc.
func (d *Dispatcher) Session(msg *message.Message, sc *scenario.Scenario, key triage.Key) *Session {
	return &Session{d: d, msg: msg, sc: sc, key: key, runs: map[string]int{}}
}

// StartTurn tells the session that the calls that follow belong to a new
// model turn: the per-turn cap starts again, and calls that succeeded
// before now count for requires.
func (s *Session) StartTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turn++
	s.turnCalls = 0
}

// Call runs one function call through the policies and returns the response
// envelope: {"ok":true,"result":{...}} or
// {"ok":false,"error":{"code":"...","message":"..."}}.
func (s *Session) Call(ctx context.Context, name string, args map[string]any) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()

	ctx, span := trace.Tool(ctx, name)
	start := s.d.now()
	rec := Record{Name: name, Args: cloneArgs(args)}
	tool, route, err := s.admit(name, rec.Args)
	var first *doneCall
	argKey := ""
	// The record keeps the model's arguments; the tool receives vouched,
	// where each from policy put the value it vouched for.
	vouched := cloneArgs(rec.Args)
	if err == nil {
		s.fromAtt = false
		first, argKey, err = s.policies(tool, vouched)
		if s.fromAtt {
			rec.SerialSource = SerialSourceAttachment
		}
	}
	if err == nil && first == nil && tool.Grounded {
		err = s.ground(tool, vouched)
	}
	switch {
	case err != nil:
		rec.Blocked = true
	case first != nil:
		rec.OK, rec.Result, rec.Repeated = true, first.result.Value, true
		rec.Receipt, rec.TicketID = first.result.Receipt, first.result.TicketID
	default:
		var res Result
		if s.opts.DryRun && tool.Effect {
			res.Value, rec.DryRun = dryRunResult(tool, s.opts.Draft), true
		} else {
			res, err = s.run(ctx, route, &Call{Name: name, Args: vouched, Msg: s.msg, Key: s.key, Now: start, Draft: s.opts.Draft, Tool: tool, MaxBodyBytes: s.d.maxBody, TicketID: s.ticket, Staff: s.d.Staff(), Language: s.opts.Language, Scenario: s.sc})
			var de *Error
			if errors.As(err, &de) && de.Refused {
				rec.Blocked, rec.Reason = true, de.Reason
			}
			if de != nil && de.Halt && s.halt == nil {
				s.halt = errors.New("dispatcher: " + name + ": " + de.Message)
			}
			if f := sendFailure(name, err); f != nil {
				s.sendFail = f
				if !f.Temporary {
					err = &Error{Code: CodeSendFailed, Message: f.Detail() + "; nothing was sent, and the email is left for a person"}
				}
			}
		}
		if err == nil {
			if res.Value == nil {
				res.Value = map[string]any{}
			}
			res.Value, rec.Truncated = capResult(res.Value, s.d.maxResult)
			rec.OK, rec.Result, rec.Receipt, rec.TicketID = true, res.Value, res.Receipt, res.TicketID
			s.runs[name]++
			s.done = append(s.done, doneCall{name: name, args: vouched, argKey: argKey, result: res, turn: s.turn})
			if res.TicketID != "" && s.ticket == "" {
				s.ticket = res.TicketID
			}
		}
	}
	rec.DurationMS = s.d.now().Sub(start).Milliseconds()

	var envelope map[string]any
	if err != nil {
		re := classify(err)
		// An error's text is capped like a result: an MCP server's isError
		// content or a JSON-RPC message can be as long as the server likes.
		if len(re.Message) > s.d.maxResult {
			re.Message = cutString(re.Message, s.d.maxResult-len(truncMark)) + truncMark
		}
		rec.Error = &re
		envelope = map[string]any{"ok": false, "error": map[string]any{"code": re.Code, "message": re.Message}}
	} else {
		envelope = map[string]any{"ok": true, "result": rec.Result}
	}
	s.records = append(s.records, rec)
	code := ""
	if rec.Error != nil {
		code = rec.Error.Code
	}
	trace.EndTool(span, rec.Blocked, code, rec.Args, rec.Result)

	attrs := []any{"name", name, "ok", rec.OK, "blocked", rec.Blocked, "duration_ms", rec.DurationMS}
	if rec.Error != nil {
		attrs = append(attrs, "code", rec.Error.Code)
	}
	if rec.Repeated {
		attrs = append(attrs, "repeated", true)
	}
	s.d.log.InfoContext(ctx, "dispatcher: call", attrs...)
	if s.d.log.Enabled(ctx, slog.LevelDebug) {
		if b, err := json.Marshal(rec.Args); err == nil { // JSON, not Go map syntax
			s.d.log.DebugContext(ctx, "dispatcher: call args", "name", name, "args", string(b))
		}
	}
	return envelope
}

// run calls the route, turning a panic into CodeInternal.
func (s *Session) run(ctx context.Context, f Func, c *Call) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{}, &Error{Code: CodeInternal, Message: fmt.Sprintf("panic in %s: %v", c.Name, p)}
		}
	}()
	return f(ctx, c)
}

// admit applies the call caps, the allowlist and the schema. It returns the
// binding and route, or a *Error saying why the call is refused.
func (s *Session) admit(name string, args map[string]any) (*tools.Tool, Func, error) {
	s.turnCalls++
	if s.turnCalls > s.d.perTurn {
		return nil, nil, refuse(CodeTooManyCalls, "more than %d calls in one turn: this call was not run; ask for fewer calls at once", s.d.perTurn)
	}
	s.admitted++
	if s.admitted > s.d.perEmail {
		return nil, nil, refuse(CodeTooManyCalls, "more than %d calls for this email: this call was not run", s.d.perEmail)
	}
	var fn *scenario.Function
	if s.sc != nil {
		fn = s.sc.Function(name)
	}
	if fn == nil {
		scName := ""
		if s.sc != nil {
			scName = s.sc.Name
		}
		return nil, nil, refuse(CodeUnknownFunction, "function %q is not available in scenario %q", name, scName)
	}
	tool, route := s.d.tools.Get(name), s.d.routes[name]
	if tool == nil || route == nil {
		return nil, nil, refuse(CodeInternal, "function %q has no binding", name)
	}
	if fn.Schema != nil {
		if err := fn.Schema.Validate(map[string]any(args)); err != nil {
			return nil, nil, refuse(CodeInvalidArgs, "%s", schemaMessage(err))
		}
	}
	// Only declared parameters: policies are declared per parameter, and an
	// HTTP tool sends every argument on (GET: in the query string, POST: in
	// the body), so an undeclared one would reach the service unchecked.
	props, _ := fn.Parameters["properties"].(map[string]any)
	var extra []string
	for k := range args {
		if _, ok := props[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return nil, nil, refuse(CodeInvalidArgs, "%s has no parameter %s (its parameters: %s)",
			name, strings.Join(extra, ", "), strings.Join(tools.Parameters(fn), ", "))
	}
	if s.msg == nil {
		return nil, nil, refuse(CodeInternal, "no inbound message in session")
	}
	return tool, route, nil
}

// policies applies the binding's declared policies: args (replacing each
// value with the one its policy vouched for, see checkArg), then (for an
// effect) an identical earlier success, then max_calls, then requires. It
// returns the earlier call to repeat, or nil to run this one, and the
// arguments' canonical key (an effect's only: "" otherwise).
func (s *Session) policies(t *tools.Tool, args map[string]any) (*doneCall, string, error) {
	for _, a := range slices.Sorted(maps.Keys(t.Args)) {
		v, present := args[a]
		if !present {
			continue // the schema says whether it is required
		}
		v, err := s.checkArg(a, t.Args[a], v)
		if err != nil {
			return nil, "", err
		}
		args[a] = v
	}
	argKey := "" // only an effect's calls are compared (repeats)
	if t.Effect {
		argKey = canonical(args)
		for i := range s.done {
			if c := &s.done[i]; c.name == t.Name && c.argKey == argKey {
				return c, argKey, nil
			}
		}
	}
	if limit := t.Limit(s.d.perEmail); s.runs[t.Name] >= limit {
		return nil, argKey, refuse(CodeMaxCalls, "%s already ran %d time(s) for this email, the limit (max_calls) is %d", t.Name, s.runs[t.Name], limit)
	}
	for _, r := range t.Requires {
		if err := s.checkRequirement(t, r, args); err != nil {
			return nil, argKey, err
		}
	}
	return nil, argKey, nil
}

// Records returns a copy of every call so far, in order.
func (s *Session) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

func refuse(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// classify maps an error to the code the model sees.
func classify(err error) RecordError {
	var de *Error
	if errors.As(err, &de) {
		code := de.Code
		if code == "" {
			code = CodeClientError
			if de.Temporary {
				code = CodeUnavailable
			}
		}
		return RecordError{Code: code, Message: de.Message}
	}
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) && tmp.Temporary() {
		return RecordError{Code: CodeUnavailable, Message: err.Error()}
	}
	return RecordError{Code: CodeClientError, Message: err.Error()}
}

// BareAddress parses "Name <a@b>" or "a@b" and returns the lower-cased bare
// address; it refuses lists.
func BareAddress(s string) (string, error) {
	list, err := mail.ParseAddressList(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	if len(list) != 1 {
		return "", fmt.Errorf("%d addresses", len(list))
	}
	return strings.ToLower(list[0].Address), nil
}

func sameAddress(bare, other string) bool {
	return other != "" && strings.EqualFold(bare, strings.TrimSpace(other))
}

// PlainBody refuses a reply body over max bytes (default
// DefaultMaxBodyBytes) or one that looks like HTML: replies are plain text.
func PlainBody(body string, max int) error {
	if max <= 0 {
		max = DefaultMaxBodyBytes
	}
	if len(body) > max {
		return &Error{Code: CodeBodyTooLarge, Message: fmt.Sprintf("body is %d bytes, the limit is %d", len(body), max), Refused: true}
	}
	if looksLikeHTML(body) {
		return &Error{Code: CodeBodyNotPlainText, Message: "body must be plain text, not HTML", Refused: true}
	}
	return nil
}

var htmlMarkers = []string{"<html", "<body", "<div", "<p>", "<p ", "</p>", "<br", "<a href"}

func looksLikeHTML(body string) bool {
	lower := strings.ToLower(body)
	for _, m := range htmlMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// schemaMessage turns the validator's error into one line for the model,
// without the schema URL preamble: "at '/priority': value must be one of ...".
func schemaMessage(err error) string {
	var parts []string
	for i, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 && strings.HasPrefix(line, "jsonschema validation failed") {
			_, rest, found := strings.Cut(line, "' - ")
			if !found {
				continue
			}
			line = rest
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "- "))
		if line != "" {
			parts = append(parts, line)
		}
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return "arguments do not match the schema: " + strings.Join(parts, "; ")
}

func cloneArgs(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	return maps.Clone(args)
}
