// Package dispatcher is the only way the model's function calls reach the
// outside world: the policies of tools.yaml and the builtin tools
// (check_warranty, create_ticket, send_email, notify_staff and its staff
// notice). It is a small policy engine over the bindings of tools.yaml:
// it accepts only the loaded scenario's functions, validates arguments
// against their JSON Schema, enforces each binding's declared policies (where
// an argument may come from, enum, pattern, length, required earlier calls,
// max_calls, effects) and the per-turn and per-email call caps, routes the
// call to its implementation, caps the result, and records every call,
// refused ones included. It has no guardrail of its own that is not a
// declared policy, size caps and call caps aside.
package dispatcher

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"triage"
	"triage/internal/decision"
	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/message"
	"triage/internal/serial"
)

// Config configures a Dispatcher; Tools is required, and every binding in
// it needs an implementation: Routes[name], else Builtins[binding.Builtin].
type Config struct {
	// Tools are the bindings and policies of tools.yaml.
	Tools *instructions.Tools
	// Builtins implement the builtin bindings, by builtin name (Routes
	// builds the standard ones).
	Builtins map[string]Func
	// Routes implement bindings by function name; they take precedence over
	// Builtins (eval's mocks, HTTP and MCP backends).
	Routes         map[string]Func
	StaffAddresses []string // addresses from: staff accepts
	// TrustedAuthservIDs are the authserv-ids of the receiving servers
	// whose Authentication-Results are believed (message.Authenticated):
	// from: reply_to accepts a Reply-To outside the From domain only when
	// one of them says the From domain passed. None: never.
	TrustedAuthservIDs []string
	Extractor          *serial.Extractor // recognizes serials for from: serials (default serial.New())
	MaxBodyBytes       int               // send_email body cap, default 20000
	MaxResultBytes     int               // result cap, default 16 KiB of JSON
	// Call caps: calls over them have no effect and are recorded blocked.
	MaxCallsPerTurn  int // default 8
	MaxCallsPerEmail int // default 24
	// Lexicon reads a reply's words for what they promise (commitments.yaml;
	// nil: the words are not read, the declared commitments still are).
	Lexicon *decision.Lexicon
	// Verifier, when set, reads every reply (send_email, drafts included)
	// that passed the other checks against its trusted sources, once per
	// call, within VerifyTimeout (default DefaultVerifyTimeout); nil: the
	// lexicon and the grounding check alone decide.
	Verifier      Verifier
	VerifyTimeout time.Duration
	// Language tells the language of a reply's body (nil: not checked):
	// send_email refuses a reply not in one language, the reply's or the
	// default (CodeWrongLanguage).
	Language *language.Detector
	Now      func() time.Time
	Logger   *slog.Logger
}

// Dispatcher holds the bindings and their implementations; build it once,
// open a Session per email.
type Dispatcher struct {
	tools     *instructions.Tools
	routes    map[string]Func // by function name
	staff     map[string]bool // lower-cased bare addresses
	staffList []string        // the keys of staff, sorted once (Staff, Call.Staff)
	trusted   []string        // Config.TrustedAuthservIDs
	ext       *serial.Extractor
	lex       *decision.Lexicon
	lang      *language.Detector
	maxBody   int
	maxResult int
	perTurn   int
	perEmail  int
	now       func() time.Time
	log       *slog.Logger

	// The verifier and its timeout (Config.Verifier).
	verifier      Verifier
	verifyTimeout time.Duration
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
		trusted:   slices.Clone(cfg.TrustedAuthservIDs),
		lex:       cfg.Lexicon,
		lang:      cfg.Language,
		maxBody:   cfg.MaxBodyBytes,
		maxResult: cfg.MaxResultBytes,
		perTurn:   cfg.MaxCallsPerTurn,
		perEmail:  cfg.MaxCallsPerEmail,
		now:       cfg.Now,
		log:       cfg.Logger,
	}
	d.verifier, d.verifyTimeout = cfg.Verifier, cfg.VerifyTimeout
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
	if d.maxBody < 0 || d.maxResult < 0 || d.perTurn < 0 || d.perEmail < 0 || d.verifyTimeout < 0 {
		return nil, errors.New("dispatcher: negative limit in Config")
	}
	if d.maxBody == 0 {
		d.maxBody = DefaultMaxBodyBytes
	}
	if d.verifyTimeout == 0 {
		d.verifyTimeout = DefaultVerifyTimeout
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
func (d *Dispatcher) Tools() *instructions.Tools { return d.tools }

// Staff returns the configured staff addresses (bare, lower-cased, sorted).
func (d *Dispatcher) Staff() []string {
	return slices.Clone(d.staffList)
}

// Authenticated is what the trusted Authentication-Results say of msg's
// From domain (Config.TrustedAuthservIDs).
func (d *Dispatcher) Authenticated(msg *message.Message) message.Authentication {
	return msg.Authenticated(d.trusted)
}

// Authenticates reports whether any authserv-id is trusted: without one no
// message is authenticated.
func (d *Dispatcher) Authenticates() bool { return len(d.trusted) > 0 }

// ReplyAddress is where a reply to msg may go, the address from: reply_to
// accepts (message.ReplyAddress under Authenticated), and why its Reply-To
// was set aside ("" when it was not).
func (d *Dispatcher) ReplyAddress(msg *message.Message) (addr, note string) {
	return msg.ReplyAddress(d.Authenticated(msg))
}

// Session starts the per-email state for msg handled under sc.
func (d *Dispatcher) Session(msg *message.Message, sc *instructions.Scenario, key triage.Key) *Session {
	s := &Session{d: d, msg: msg, sc: sc, key: key, runs: map[string]int{}, running: map[string]int{}}
	if msg != nil {
		s.replyTo, _ = d.ReplyAddress(msg)
	}
	return s
}
