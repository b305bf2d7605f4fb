// Package dispatcher is the only way the model's function calls reach the
// outside world. It accepts only the loaded scenario's functions, validates
// arguments against their JSON Schema, enforces the guardrails (who may be
// mailed, which serials may be checked, one reply per email), routes the call
// to a client and records every call, refused ones included.
package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"

	"triage/internal/message"
	"triage/internal/scenario"
	"triage/internal/serial"
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

// Function names the guardrails know about.
const (
	FuncCheckWarranty = "check_warranty"
	FuncCreateTicket  = "create_ticket"
	FuncSendEmail     = "send_email"
)

// DefaultMaxBodyBytes caps a send_email body when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 20000

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
	// Now is the dispatcher's clock (Config.Now).
	Now time.Time
	// Draft asks send_email to leave the reply as a draft a person sends
	// (reply mode draft) instead of sending it.
	Draft bool
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
	// DryRun marks an effect call answered without running (--dry-run).
	DryRun bool `json:"dry_run,omitempty"`
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
	// Effects names the functions that change the world (a ticket, a
	// mail): in a dry run they are answered without running. nil means
	// DefaultEffects.
	Effects []string
	Now     func() time.Time
	Logger  *slog.Logger
}

// Dispatcher holds the routes; build it once, open a Session per email.
type Dispatcher struct {
	routes  map[string]Func
	staff   map[string]bool // lower-cased bare addresses
	maxBody int
	effects map[string]bool
	now     func() time.Time
	log     *slog.Logger
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Dispatcher, error) {
	if len(cfg.Routes) == 0 {
		return nil, errors.New("dispatcher: Config.Routes is required")
	}
	d := &Dispatcher{
		routes:  make(map[string]Func, len(cfg.Routes)),
		staff:   make(map[string]bool),
		maxBody: cfg.MaxBodyBytes,
		effects: map[string]bool{},
		now:     cfg.Now,
		log:     cfg.Logger,
	}
	for name, f := range cfg.Routes {
		if name == "" || f == nil {
			return nil, fmt.Errorf("dispatcher: route %q: empty name or nil func", name)
		}
		d.routes[name] = f
	}
	for i, a := range cfg.StaffAddresses {
		addr, err := bareAddress(a)
		if err != nil {
			return nil, fmt.Errorf("dispatcher: StaffAddresses[%d] %q: %w", i, a, err)
		}
		d.staff[addr] = true
	}
	if cfg.Effects == nil {
		cfg.Effects = DefaultEffects
	}
	for _, name := range cfg.Effects {
		d.effects[name] = true
	}
	if d.maxBody < 0 {
		return nil, fmt.Errorf("dispatcher: MaxBodyBytes %d is negative", d.maxBody)
	}
	if d.maxBody == 0 {
		d.maxBody = DefaultMaxBodyBytes
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// Names returns the routed function names (for scenario validation), sorted.
func (d *Dispatcher) Names() []string {
	return slices.Sorted(maps.Keys(d.routes))
}

// Session is the per-email dispatcher; it implements agent.Tools. It is safe
// for concurrent use; calls are executed one at a time.
type Session struct {
	d   *Dispatcher
	msg *message.Message
	sc  *scenario.Scenario
	key string

	// haystack is subject+text+quoted, normalized like serials.
	haystack string

	mu      sync.Mutex
	opts    Options
	records []Record
	sent    map[string]any
}

// DefaultEffects are the routed functions that change the world.
var DefaultEffects = []string{FuncCreateTicket, FuncSendEmail}

// Options are the per-email settings of a Session.
type Options struct {
	// Draft: send_email leaves the reply as a draft (Call.Draft).
	Draft bool
	// DryRun: a call to an effect function passes every guardrail as usual
	// but is answered {"dry_run": true, ...} without running; nothing
	// changes anywhere.
	DryRun bool
}

// SetOptions sets the session's options; call it before the first Call.
func (s *Session) SetOptions(o Options) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = o
}

// dryRunResult is what an effect function answers in a dry run.
func dryRunResult(name string, draft bool) map[string]any {
	res := map[string]any{
		"dry_run": true,
		"status":  "dry_run",
		"message": "dry run: " + name + " was not executed; nothing was changed",
	}
	if name == FuncSendEmail && draft {
		res["draft"] = true
	}
	return res
}

// Session starts the per-email state for msg handled under sc.
func (d *Dispatcher) Session(msg *message.Message, sc *scenario.Scenario, key string) *Session {
	s := &Session{d: d, msg: msg, sc: sc, key: key}
	if msg != nil {
		s.haystack = serial.Normalize(msg.Subject + "\n" + msg.Text + "\n" + msg.Quoted)
	}
	return s
}

// Call runs one function call through the guardrails and returns the
// response envelope: {"ok":true,"result":{...}} or
// {"ok":false,"error":{"code":"...","message":"..."}}.
func (s *Session) Call(ctx context.Context, name string, args map[string]any) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()

	start := s.d.now()
	rec := Record{Name: name, Args: cloneArgs(args)}
	route, err := s.check(name, rec.Args)
	if err != nil {
		rec.Blocked = true
	} else {
		var res map[string]any
		if s.opts.DryRun && s.d.effects[name] {
			res, rec.DryRun = dryRunResult(name, s.opts.Draft), true
		} else {
			res, err = s.run(ctx, route, &Call{Name: name, Args: rec.Args, Msg: s.msg, Key: s.key, Now: start, Draft: s.opts.Draft})
		}
		if err == nil {
			if res == nil {
				res = map[string]any{}
			}
			rec.OK = true
			rec.Result = res
			if name == FuncSendEmail {
				s.sent = res
			}
		}
	}
	rec.DurationMS = s.d.now().Sub(start).Milliseconds()

	var envelope map[string]any
	if err != nil {
		re := classify(err)
		rec.Error = &re
		envelope = map[string]any{"ok": false, "error": map[string]any{"code": re.Code, "message": re.Message}}
	} else {
		envelope = map[string]any{"ok": true, "result": rec.Result}
	}
	s.records = append(s.records, rec)

	attrs := []any{"name", name, "ok", rec.OK, "blocked", rec.Blocked, "duration_ms", rec.DurationMS}
	if rec.Error != nil {
		attrs = append(attrs, "code", rec.Error.Code)
	}
	s.d.log.InfoContext(ctx, "dispatcher: call", attrs...)
	s.d.log.DebugContext(ctx, "dispatcher: call args", "name", name, "args", rec.Args)
	return envelope
}

// run calls the route, turning a panic into CodeInternal.
func (s *Session) run(ctx context.Context, f Func, c *Call) (res map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &Error{Code: CodeInternal, Message: fmt.Sprintf("panic in %s: %v", c.Name, p)}
		}
	}()
	return f(ctx, c)
}

// check applies the allowlist, the schema and the guardrails. It returns the
// route to run, or a *Error saying why the call is refused.
func (s *Session) check(name string, args map[string]any) (Func, error) {
	var fn *scenario.Function
	if s.sc != nil {
		for i := range s.sc.Functions {
			if s.sc.Functions[i].Name == name {
				fn = &s.sc.Functions[i]
				break
			}
		}
	}
	if fn == nil {
		scName := ""
		if s.sc != nil {
			scName = s.sc.Name
		}
		return nil, refuse(CodeUnknownFunction, "function %q is not available in scenario %q", name, scName)
	}
	route := s.d.routes[name]
	if route == nil {
		return nil, refuse(CodeInternal, "function %q has no route", name)
	}
	if fn.Schema != nil {
		if err := fn.Schema.Validate(map[string]any(args)); err != nil {
			return nil, refuse(CodeInvalidArgs, "%s", schemaMessage(err))
		}
	}
	if s.msg == nil {
		return nil, refuse(CodeInternal, "no inbound message in session")
	}
	var err error
	switch name {
	case FuncCheckWarranty:
		err = s.checkSerial(args, true)
	case FuncCreateTicket:
		err = s.checkTicket(args)
	case FuncSendEmail:
		err = s.checkEmail(args)
	}
	if err != nil {
		return nil, err
	}
	return route, nil
}

func (s *Session) checkSerial(args map[string]any, required bool) error {
	v, present := args["serial_number"]
	if !present && !required {
		return nil
	}
	sn, ok := v.(string)
	if !ok {
		return refuse(CodeInvalidArgs, "serial_number must be a string")
	}
	norm := serial.Normalize(sn)
	if norm == "" {
		if !required {
			return nil
		}
		return refuse(CodeInvalidArgs, "serial_number is empty")
	}
	// A very short "serial" would occur in almost any text by chance.
	if len(norm) < minSerialLen {
		return refuse(CodeInvalidArgs, "serial_number %q is too short to be a serial number", sn)
	}
	if !strings.Contains(s.haystack, norm) {
		return refuse(CodeSerialNotInMessage, "serial %q does not occur in the customer's message", sn)
	}
	return nil
}

func (s *Session) checkTicket(args map[string]any) error {
	ce, ok := args["customer_email"].(string)
	if !ok {
		return refuse(CodeInvalidArgs, "customer_email must be a string")
	}
	addr, err := bareAddress(ce)
	if err != nil {
		return refuse(CodeCustomerMismatch, "customer_email %q is not a single address: %v", ce, err)
	}
	if !sameAddress(addr, s.msg.From.Address) && !sameAddress(addr, s.msg.ReplyTo) {
		return refuse(CodeCustomerMismatch, "customer_email must be the sender of the message")
	}
	return s.checkSerial(args, false)
}

func (s *Session) checkEmail(args map[string]any) error {
	if s.sent != nil {
		return refuse(CodeReplyAlreadySent, "a reply was already sent for this message")
	}
	to, ok := args["to"].(string)
	if !ok {
		return refuse(CodeInvalidArgs, "to must be a string")
	}
	subject, ok := args["subject"].(string)
	if !ok {
		return refuse(CodeInvalidArgs, "subject must be a string")
	}
	body, ok := args["body"].(string)
	if !ok {
		return refuse(CodeInvalidArgs, "body must be a string")
	}
	addr, err := bareAddress(to) // a list ("a@x, b@y") is refused here

	if err != nil {
		return refuse(CodeRecipientNotAllowed, "exactly one recipient is allowed; %q is not a single address: %v", to, err)
	}
	allowed := sameAddress(addr, s.msg.ReplyTo)
	if !allowed && s.sc.Escalate {
		allowed = s.d.staff[addr]
	}
	if !allowed {
		return refuse(CodeRecipientNotAllowed, "replies may only go to the customer's reply address")
	}
	if strings.ContainsAny(subject, "\r\n") {
		return refuse(CodeInvalidArgs, "subject must be a single line")
	}
	if len(body) > s.d.maxBody {
		return refuse(CodeBodyTooLarge, "body is %d bytes, the limit is %d", len(body), s.d.maxBody)
	}
	if looksLikeHTML(body) {
		return refuse(CodeBodyNotPlainText, "body must be plain text, not HTML")
	}
	return nil
}

// Records returns a copy of every call so far, in order.
func (s *Session) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// Sent returns the result of the successful send_email call, or nil.
func (s *Session) Sent() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// minSerialLen is the shortest normalized serial the dispatcher accepts.
const minSerialLen = 4

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

// bareAddress parses "Name <a@b>" or "a@b" and returns the lower-cased bare
// address; it refuses lists.
func bareAddress(s string) (string, error) {
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
