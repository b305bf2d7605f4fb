// The per-email Session: the admission and policies of each call, its run
// and its record.

package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"triage"
	"triage/internal/agent"
	"triage/internal/clip"
	"triage/internal/instructions"
	"triage/internal/message"
	"triage/internal/trace"

	oteltrace "go.opentelemetry.io/otel/trace"
)

// Session is the per-email dispatcher; it implements agent.TurnTools. It
// is safe for concurrent use. Calls are admitted, checked and recorded one
// at a time; they run one at a time too, but for the look-ups of a turn
// that asks only for tools declared parallel (CallTurn).
type Session struct {
	d   *Dispatcher
	msg *message.Message
	sc  *instructions.Scenario
	key triage.Key
	// replyTo is where a reply may go (Dispatcher.ReplyAddress): from:
	// reply_to accepts it and nothing else.
	replyTo string

	mu        sync.Mutex
	opts      Options
	records   []Record
	turn      int // model turn of the calls now arriving (StartTurn)
	turnCalls int // calls in this turn, refused ones included
	admitted  int // calls within the per-turn cap, this email
	runs      map[string]int
	// running counts the admitted calls of a tool not recorded yet (a
	// parallel turn's): max_calls counts them with runs.
	running map[string]int
	done    []doneCall // successful runs, in order
	indexed *msgIndex  // the message's serials and tokens, built on first use (index())
	ticket  string     // see Call.TicketID
	// ungrounded counts calls refused for unsupported claims (ground).
	ungrounded int
	// overpromised counts calls refused for their commitments (commit).
	overpromised int
	seen         int  // attachments the model was sent (SetAttachmentsSeen)
	fromAtt      bool // the call being checked took a serial from an attachment
	sendFail     *SendFailure
	halt         error // a refusal that ends the loop (Error.Halt)
	// opening: the calls now arriving are those of the turn that chose
	// the scenario (CallOpening): only look-ups run.
	opening bool
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
	// Sources are the texts the shop controls that the model was given
	// (the system instruction, the trusted facts of the user turn): a
	// grounded tool's claims may come from them and from the function
	// results (see ground). CustomerTexts are the other fields of the user
	// turn the customer wrote; like the message's own texts they back only
	// what a reply quotes as the customer's (grounding.AddCustomerText).
	Sources       []string
	CustomerTexts []string
	// Language is the customer's language (Call.Language).
	Language string
	// Received is when the email was received as the caller knows it (the
	// IMAP INTERNALDATE; zero when unknown): with the message's Date it
	// gives Call.Received (ReceivedAt).
	Received time.Time
	// Complaint: the email is a consumer complaint (the processor's
	// Outcome.Complaint); a reply to it must name the decision reached
	// (decision_missing). The scenario's complaint flag counts too.
	Complaint bool
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
// a reply may rely on, with placeholders (create_ticket's ticket_id,
// notify_staff's notified with no address: staff would be told, as
// Verdict.Notified counts it). It claims no outcome: no status, recipient
// or Message-ID.
func dryRunResult(t *instructions.Tool, draft bool) map[string]any {
	res := map[string]any{
		"dry_run": true,
		"message": "dry run: " + t.Name + " was not executed; nothing was changed",
	}
	switch t.Builtin {
	case FuncCreateTicket:
		res["ticket_id"] = DryRunTicketID
	case FuncNotifyStaff:
		res["notified"] = []string{}
	case FuncSendEmail:
		if draft {
			res["draft"] = true
		}
	}
	return res
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

// Call runs one function call through the policies and returns its
// response: its result, or the coded error that refused or failed it.
func (s *Session) Call(ctx context.Context, name string, args map[string]any) agent.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.begin(ctx, name, args)
	p.exec(s)
	return s.end(p)
}

// pending is one call between its admission and its record: begin decides
// whether it runs (call is set), exec runs it, end records it and builds
// the response. Only exec may run without the session's lock.
type pending struct {
	ctx     context.Context
	span    oteltrace.Span
	start   time.Time
	rec     Record
	tool    *instructions.Tool
	route   Func
	first   *doneCall // an effect's identical earlier success, repeated
	argKey  string
	vouched map[string]any
	err     error
	call    *Call // the call to run; nil when refused, repeated or a dry run
	res     Result
}

// begin admits one call and applies its policies (s.mu held).
func (s *Session) begin(ctx context.Context, name string, args map[string]any) *pending {
	p := &pending{start: s.d.now(), rec: Record{Name: name, Args: cloneArgs(args)}}
	p.ctx, p.span = trace.Tool(ctx, name)
	p.tool, p.route, p.err = s.admit(name, p.rec.Args)
	// The record keeps the model's arguments; the tool receives vouched,
	// where each from policy put the value it vouched for.
	p.vouched = cloneArgs(p.rec.Args)
	if p.err == nil {
		s.fromAtt = false
		p.first, p.argKey, p.err = s.policies(p.tool, p.vouched)
		if s.fromAtt {
			p.rec.SerialSource = SerialSourceAttachment
		}
	}
	tool, vouched := p.tool, p.vouched
	if p.err == nil && p.first == nil && s.checksCommitments(tool) {
		p.err = s.commit(tool, vouched)
	}
	if p.err == nil && p.first == nil && tool.Grounded {
		p.err = s.ground(tool, vouched)
	}
	if p.err == nil && p.first == nil {
		p.err = s.oneLanguage(tool, vouched)
	}
	if p.err == nil && p.first == nil && s.verifies(tool) {
		p.err = s.verify(p.ctx, tool, vouched, &p.rec)
	}
	switch {
	case p.err != nil:
		p.rec.Blocked = true
		if de := (*Error)(nil); errors.As(p.err, &de) {
			p.rec.Reason = de.Reason
		}
	case p.first != nil:
	case s.opts.DryRun && tool.Effect:
		p.res.Value, p.rec.DryRun = dryRunResult(tool, s.opts.Draft), true
	default:
		p.call = &Call{Name: name, Args: vouched, Msg: s.msg, Key: s.key, Now: p.start, Received: s.received(p.start), Draft: s.opts.Draft, Tool: tool, MaxBodyBytes: s.d.maxBody, TicketID: s.ticket, Staff: s.d.Staff(), Language: s.opts.Language, Scenario: s.sc, ReplyTo: s.replyTo}
		s.running[name]++
	}
	return p
}

// exec runs an admitted call. It reads nothing of the session but its
// dispatcher's fixed settings, so the calls of one parallel turn may run
// at once, without s.mu.
func (p *pending) exec(s *Session) {
	if p.call != nil {
		p.res, p.err = s.run(p.ctx, p.route, p.call)
	}
}

// end records one call and returns its response (s.mu held).
func (s *Session) end(p *pending) agent.Response {
	name, rec, err, res := p.rec.Name, &p.rec, p.err, p.res
	switch {
	case p.first != nil:
		first := p.first
		rec.OK, rec.Result, rec.Repeated = true, first.result.Value, true
		rec.Receipt, rec.TicketID, rec.Decision = first.result.Receipt, first.result.TicketID, first.result.Decision
	case p.call == nil && !rec.DryRun: // refused before it ran
	default:
		if p.call != nil {
			s.running[name]--
			var de *Error
			if errors.As(err, &de) && de.Refused {
				rec.Blocked, rec.Reason = true, de.Reason
			}
			if de != nil && (de.Halt || s.settles(name, de)) && s.halt == nil {
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
			rec.OK, rec.Result, rec.Receipt, rec.TicketID, rec.Decision = true, res.Value, res.Receipt, res.TicketID, res.Decision
			s.runs[name]++
			s.done = append(s.done, doneCall{name: name, args: p.vouched, argKey: p.argKey, result: res, turn: s.turn})
			if res.TicketID != "" && s.ticket == "" {
				s.ticket = res.TicketID
			}
		}
	}
	rec.DurationMS = s.d.now().Sub(p.start).Milliseconds()
	ctx := p.ctx

	var resp agent.Response
	if err != nil {
		re := classify(err)
		// An error's text is capped like a result: an MCP server's isError
		// content or a JSON-RPC message can be as long as the server likes.
		if len(re.Message) > s.d.maxResult {
			re.Message = clip.Bytes(re.Message, s.d.maxResult-len(truncMark), truncMark)
		}
		rec.Error = &re
		// A refused call's arguments are kept bounded: a model may send
		// megabytes, and the record goes to the outcome, the ledger and
		// the console.
		rec.Args, _ = agent.CutArgs(rec.Args)
		resp = agent.Response{Err: &agent.ToolError{Code: re.Code, Message: re.Message}}
	} else {
		resp = agent.Succeeded(rec.Result)
	}
	s.records = append(s.records, *rec)
	code := ""
	if rec.Error != nil {
		code = string(rec.Error.Code)
	}
	trace.EndTool(p.span, rec.Blocked, code, rec.Args, rec.Result)

	attrs := []any{"name", name, "ok", rec.OK, "blocked", rec.Blocked, "duration_ms", rec.DurationMS}
	if rec.Error != nil {
		attrs = append(attrs, "code", string(rec.Error.Code))
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
	return resp
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
func (s *Session) admit(name string, args map[string]any) (*instructions.Tool, Func, error) {
	s.turnCalls++
	if s.turnCalls > s.d.perTurn {
		return nil, nil, refuse(CodeTooManyCalls, "more than %d calls in one turn: this call was not run; ask for fewer calls at once", s.d.perTurn)
	}
	s.admitted++
	if s.admitted > s.d.perEmail {
		return nil, nil, refuse(CodeTooManyCalls, "more than %d calls for this email: this call was not run", s.d.perEmail)
	}
	var fn *instructions.Function
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
	if s.opening && (tool.Effect || tool.Final) {
		return nil, nil, refuse(CodeNotInOpening, "%s was called in the turn that chose the scenario, before its instructions were read: only look-ups run there; this call was not run, call it again now if the instructions ask for it", name)
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
			name, strings.Join(extra, ", "), strings.Join(instructions.Parameters(fn), ", "))
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
func (s *Session) policies(t *instructions.Tool, args map[string]any) (*doneCall, string, error) {
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
	if limit := t.Limit(s.d.perEmail); s.runs[t.Name]+s.running[t.Name] >= limit {
		if n := s.running[t.Name]; n > 0 { // earlier calls of this parallel turn
			return nil, argKey, refuse(CodeMaxCalls, "%s already ran %d time(s) for this email and %d more run in this turn, the limit (max_calls) is %d", t.Name, s.runs[t.Name], n, limit)
		}
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
