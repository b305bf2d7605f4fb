package processor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/model"
	"triage/internal/serial"
	"triage/internal/trace"
)

// DefaultConcurrency is how many emails a pipeline answers at once unless
// told otherwise (process, watch, replay), and so how many model calls its
// client keeps connections for.
const DefaultConcurrency = 4

// Parts are what a pipeline is built from: the loaded instructions, the
// model's options, and the outside systems the command opened. Every
// command (process, watch, replay, eval) builds its pipeline from them with
// Build; only the parts differ (eval's are mocks).
type Parts struct {
	Instructions *instructions.Set // required
	// Model are the model's options; Build opens the model (its Scenarios
	// are the instructions'). ModelName is the model id the agent asks for.
	Model     model.Options
	ModelName string
	// Budget, when set, bounds every model call (shared by every process
	// on the store).
	Budget *model.Budget
	// Routes run the tools.yaml bindings that are not builtins (http, mcp:
	// dispatcher.Backends.Routes). Mocks replace any route, builtins
	// included, by function name (eval).
	Routes map[string]dispatcher.Func
	Mocks  map[string]dispatcher.Func
	// The clients of the builtin tools. Sender is the mail transport:
	// Build signs the replies it sends; nil only when Mocks answer
	// send_email and notify_staff.
	Warranty warranty.Checker
	Tickets  tickets.Store
	Sender   mail.Sender
	// From is our From address, Address its bare address (never answered)
	// and Domain its domain (of the Message-IDs we make).
	From, Address, Domain string
	Staff                 []string // addresses notify_staff and escalations may mail
	// TrustedAuthservIDs are the receiving servers whose
	// Authentication-Results are believed (dispatcher.Config's field of
	// the same name).
	TrustedAuthservIDs []string
	ConsoleURL         string // staff notices link to the conversation there
	Extractor          *serial.Extractor
	Language           *language.Detector
	Bounds             Bounds
	Attachments        AttachConfig
	// Spam is the spam score header the receiving server writes and its
	// threshold, besides the built-in verdicts (guard.SpamScore).
	Spam      guard.SpamScore
	ReplyMode triage.ReplyMode
	// NoAIDisclosure leaves the AI disclosure of main.md's replies styles
	// out of the replies (pipeline.ai_disclosure: false, for a shop that
	// discloses otherwise); by default every reply and draft the model
	// writes carries it, above the signature.
	NoAIDisclosure bool
	Autonomy       Autonomy
	DryRun         bool
	// The reply memory (Config's fields of the same names).
	History         History
	Answered        func(ctx context.Context, key triage.Key) (*triage.Receipt, string, error)
	Claim           func(ctx context.Context, key triage.Key) (release func(), err error)
	PerSenderLimit  int
	PerSenderWindow time.Duration
	// Verify, when set, is the verifier: a second model that reads every
	// reply against its trusted sources before it leaves
	// (dispatcher.Verifier). It is used only with a live model: with the
	// offline model the lexicon alone decides.
	Verify *VerifyParts
	// Sleep waits between retries of the model (nil: real time).
	Sleep  func(ctx context.Context, d time.Duration) error
	Logger *slog.Logger
}

// VerifyParts choose the verifier's model: its provider's options, its
// model id and the timeout of one call (default
// dispatcher.DefaultVerifyTimeout).
type VerifyParts struct {
	Model     model.Options
	ModelName string
	Timeout   time.Duration
}

// Pipeline is a built Processor and the model it runs; Close releases the
// model.
type Pipeline struct {
	*Processor
	Model *model.Model
	// Verifier is the verifier's model, nil when replies are not verified
	// (Parts.Verify unset, or the offline model).
	Verifier *model.Model
}

// Close releases the model's connections and servers.
func (p *Pipeline) Close() error {
	if p.Verifier != nil {
		p.Verifier.Close()
	}
	return p.Model.Close()
}

// Build assembles one pipeline from its parts: the model (every call a
// trace span, inside the budget), the builtin tools on the clients, the
// dispatcher with the tools.yaml policies, the agent and the processor.
// Every error is a configuration error: nothing was sent or changed.
func Build(ctx context.Context, p Parts) (*Pipeline, error) {
	if p.Instructions == nil {
		return nil, errors.New("processor: Build needs the instructions")
	}
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc := p.Instructions.Scenarios
	builtins := map[string]dispatcher.Func{}
	var staff StaffNotifier
	if p.Sender != nil {
		notices := dispatcher.Notices{ConsoleURL: p.ConsoleURL}
		if conv, ok := p.Tickets.(tickets.Conversations); ok {
			notices.Case = noticeCase{tickets: conv, replies: archiveOf(p.Sender)}
		}
		// Notices go unsigned: they are not replies.
		staff = &dispatcher.Notifier{Sender: p.Sender, From: p.From, Domain: p.Domain}
		builtins = dispatcher.Routes(p.Warranty, p.Instructions.Policy, p.Tickets, replySigner(p.Sender, sc, p.Language, !p.NoAIDisclosure), p.From, p.Domain, notices)
	}
	routes := make(map[string]dispatcher.Func, len(p.Routes)+len(p.Mocks))
	for name, f := range p.Routes {
		routes[name] = f
	}
	for name, f := range p.Mocks {
		routes[name] = f
		delete(builtins, name)
	}

	// The instructions' lexicon, else the built-in one: a reply's words are
	// always read.
	lex := p.Instructions.Lexicon
	if lex == nil {
		l, err := instructions.LoadLexicon(nil)
		if err != nil {
			return nil, err
		}
		lex = l
	}

	mo := p.Model
	mo.Scenarios = sc
	mo.Concurrency = cmp.Or(mo.Concurrency, DefaultConcurrency)
	if mo.Logger == nil {
		mo.Logger = p.Logger
	}
	m, err := model.New(ctx, mo)
	if err != nil {
		return nil, err
	}
	// Every model call is a span (a no-op unless tracing is on), inside the
	// budget: a wait for the budget is not the model's time.
	m.Model = &trace.Model{Next: m.Model, Provider: m.Provider}
	if p.Budget != nil {
		m.Model = &model.Budgeted{Next: m.Model, Budget: p.Budget}
	}
	attach := p.Attachments
	attach.ModelReads = m.Reads
	label := p.ModelName
	if m.Offline {
		label = "offline"
	}
	var verifier dispatcher.Verifier
	var vm *model.Model
	if p.Verify != nil && !m.Offline {
		if vm, err = openVerifier(ctx, p.Verify); err != nil {
			m.Close()
			return nil, err
		}
		verifier = &model.Verifier{Model: vm, ModelName: p.Verify.ModelName}
	}
	proc, err := Assemble(
		agent.Config{Model: m, ModelName: p.ModelName, MaxOutputTokens: int32(mo.MaxOutputTokens), ToolChoice: mo.ToolChoice, Sleep: p.Sleep, Logger: log},
		dispatcher.Config{
			Tools:              p.Instructions.Tools,
			Builtins:           builtins,
			Routes:             routes,
			StaffAddresses:     p.Staff,
			TrustedAuthservIDs: p.TrustedAuthservIDs,
			Extractor:          p.Extractor,
			Lexicon:            lex,
			Verifier:           verifier,
			VerifyTimeout:      p.Verify.timeout(),
			Language:           p.Language,
			Logger:             log,
		},
		Config{
			Bounds:          p.Bounds,
			Scenarios:       sc,
			Extractor:       p.Extractor,
			Language:        p.Language,
			Attachments:     attach,
			Guard:           guard.Config{OwnAddresses: []string{p.Address}, Spam: p.Spam},
			Tickets:         p.Tickets,
			History:         p.History,
			Answered:        p.Answered,
			Claim:           p.Claim,
			Staff:           staff,
			ModelName:       label,
			PerSenderLimit:  p.PerSenderLimit,
			PerSenderWindow: p.PerSenderWindow,
			ReplyMode:       p.ReplyMode,
			Autonomy:        p.Autonomy,
			DryRun:          p.DryRun,
			Logger:          log,
		})
	if err != nil {
		m.Close()
		if vm != nil {
			vm.Close()
		}
		return nil, fmt.Errorf("processor: %w", err)
	}
	return &Pipeline{Processor: proc, Model: m, Verifier: vm}, nil
}

// openVerifier opens the verifier's model, a span for every call. It is
// never the offline model: a provider without credentials is an error.
func openVerifier(ctx context.Context, v *VerifyParts) (*model.Model, error) {
	if !v.Model.Live() {
		return nil, fmt.Errorf("processor: verify: provider %s has no credentials (Gemini: GEMINI_API_KEY or GOOGLE_API_KEY; openai: a base URL or a key)", cmp.Or(string(v.Model.Provider), string(model.ProviderGemini)))
	}
	vm, err := model.New(ctx, v.Model)
	if err != nil {
		return nil, fmt.Errorf("processor: verify: %w", err)
	}
	vm.Model = &trace.Model{Next: vm.Model, Provider: vm.Provider}
	return vm, nil
}

// timeout is the verifier's timeout (0: the dispatcher's default).
func (v *VerifyParts) timeout() time.Duration {
	if v == nil {
		return 0
	}
	return v.Timeout
}

// replyArchive finds the raw message of one of triage's replies or drafts
// by its Message-ID: the ledger in watch, the outbox directory in process.
type replyArchive interface {
	ReplyRaw(ctx context.Context, messageID string) ([]byte, bool, error)
}

// archiveOf is the sender's reply archive, or nil (a dry run).
func archiveOf(sender mail.Sender) replyArchive {
	a, _ := sender.(replyArchive)
	return a
}

// noticeCase is what a staff notice reads of the case (dispatcher.Case):
// the ticket store, and the archive of triage's replies.
type noticeCase struct {
	tickets tickets.Conversations
	replies replyArchive // nil: earlier replies are listed without their text
}

var _ dispatcher.Case = noticeCase{}

func (c noticeCase) Ticket(ctx context.Context, id string) (*tickets.State, error) {
	return c.tickets.Get(ctx, id)
}

func (c noticeCase) Reply(ctx context.Context, messageID string) ([]byte, bool, error) {
	if c.replies == nil {
		return nil, false, nil
	}
	return c.replies.ReplyRaw(ctx, messageID)
}

// replySigner signs every reply in the language its body is written in
// with the styles of main.md (replies:): the pipeline signs, never the
// model. A body whose language cannot be told is signed in the language
// the reply was to be written in; one in a language without a style in
// main.md's replies_fallback, else in the inbox's default language. With disclose, the style's disclosure goes
// above the signature.
func replySigner(next mail.Sender, set *instructions.Scenarios, lang *language.Detector, disclose bool) mail.Sender {
	if len(set.Replies) == 0 {
		return next
	}
	styles := make(map[string]mail.Style, len(set.Replies))
	for lang, st := range set.Replies {
		style := mail.Style{FromName: st.FromName, Signature: st.Signature}
		if disclose {
			style.Disclosure = st.Disclosure
		}
		styles[lang] = style
	}
	told := func(body string) (string, bool) {
		r := lang.Judge(body)
		return r.Code, r.Sure
	}
	return &mail.Signer{Next: next, Styles: styles, Language: told, Default: cmp.Or(set.RepliesFallback, lang.Default())}
}
