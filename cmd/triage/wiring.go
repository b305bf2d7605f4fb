package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"strings"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/instructions"
	"triage/internal/model"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/store"
)

// pipelineOptions are the settings process and watch share, declared in
// pipelineSettings.
type pipelineOptions struct {
	Instructions string // directory; "" uses the embedded defaults
	// instructionsFlag names Instructions in messages ("": --instructions;
	// replay's baseline: --baseline).
	instructionsFlag string
	Model            string
	modelOptions     // --provider, --base-url, --api-key-file
	Offline          bool
	OfflineFaults    string
	WarrantyCSV      string
	WarrantyURL      string
	WarrantyToken    string // bearer token of WarrantyURL ($TRIAGE_WARRANTY_TOKEN)
	TicketsDB        string
	TicketsURL       string
	TicketsToken     string   // bearer token of TicketsURL ($TRIAGE_TICKETS_TOKEN)
	Store            string   // postgres:// URL: the tickets (and watch's ledger) live there
	From             string   // our address, e.g. "Serwis <serwis@example.com>"
	Staff            []string // staff addresses notify_staff mails
	// TrustedAuthservIDs are the receiving servers whose
	// Authentication-Results are believed (pipeline.trusted_authserv_ids).
	TrustedAuthservIDs []string
	SerialPattern      []string
	// Verify chooses the verifier (verify.*; --verify-provider ...).
	Verify verifyOptions
	// Jurisdiction (pipeline.jurisdiction) is the policy's jurisdiction the
	// decisions apply; "" is policy.yaml's default.
	Jurisdiction string
	processor.Bounds
	ReplyMode string // send | draft | auto (a scenario's reply_mode overrides it)
	// AIDisclosure (pipeline.ai_disclosure) adds main.md's AI disclosure
	// to every reply and draft the model writes.
	AIDisclosure bool
	// autonomy resolves reply mode auto (watch sets it from its ledger;
	// nil: auto drafts, as in process).
	autonomy processor.Autonomy
	// budget, when set, is the model budget to share (the inboxes of one
	// watch process share one); else limitModel makes one.
	budget *model.Budget
	// shared, when set, is the open store at Store (the ledger's): the
	// tickets and the model budget use it rather than opening their own,
	// so a process holds one pool of connections to PostgreSQL, however
	// many inboxes it serves.
	shared *store.DB
	DryRun bool // effect tools are answered without running; nothing changes
	// Concurrency is how many emails run at once (process and watch each
	// register their own --concurrency flag); it sizes the model client's
	// idle connections.
	Concurrency int
	// DefaultLanguage (pipeline.default_language) answers a customer whose
	// language cannot be told; Languages (pipeline.languages) are the ones
	// told apart (package language).
	DefaultLanguage string
	Languages       []string
	// Attachments caps what the model is sent of a customer's attachments
	// (pipeline.attachments: types, max_count, max_bytes).
	Attachments processor.AttachConfig
	// Notices bound the staff notices (limits.notices_per_customer,
	// limits.notices_per_hour); ConsoleURL (console.url) is where they
	// link to the conversation.
	Notices    triage.NoticeLimits
	ConsoleURL string
	// Spam is the receiving server's spam score header and its threshold
	// (pipeline.spam.header, pipeline.spam.threshold).
	Spam guard.SpamScore
}

// pipeline is a ready processor and what it was built from.
type pipeline struct {
	Processor *processor.Processor
	Model     *model.Model
	Verifier  *model.Model // nil: replies are not verified
	Scenarios *instructions.Scenarios
	Tools     *instructions.Tools
	Tickets   tickets.Creator // the ticket store the builtins use
	closers   []func() error
	budget    *model.Budget // the model budget, nil when the model has none
}

// Close releases the model server and stores.
func (p *pipeline) Close() error {
	var errs []error
	for i := len(p.closers) - 1; i >= 0; i-- {
		errs = append(errs, p.closers[i]())
	}
	return errors.Join(errs...)
}

// builtinNames lists the builtins tools.yaml may bind (dispatcher.Routes).
var builtinNames = []string{dispatcher.FuncCheckWarranty, dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail, dispatcher.FuncNotifyStaff}

// loadInstructions loads and validates the instruction files exactly as
// start-up does (check runs it too; instructions.Load): a problem is a usage
// error naming --instructions.
func loadInstructions(dir string) (*instructions.Set, error) {
	return loadInstructionsFrom("--instructions", dir)
}

// loadInstructionsFrom is loadInstructions for the directory the flag
// names (replay's --baseline names its second one).
func loadInstructionsFrom(flag, dir string) (*instructions.Set, error) {
	ins, err := instructions.Load(dir, builtinNames)
	var de *instructions.DirError
	switch {
	case errors.As(err, &de):
		return nil, usageErr("%s: %v", flag, err)
	case err != nil && dir != "":
		return nil, usageErr("%s %w", flag, err)
	case err != nil:
		return nil, usageError(err)
	}
	return ins, nil
}

// startBackends starts the http and mcp bindings' backends (MCP servers
// once per process). With strict (`triage check`) it starts every MCP
// server now and checks every MCP tool's declared parameters against its
// server's inputSchema: a server it cannot reach is an error. Otherwise
// each MCP server starts on the first call of one of its tools, and that
// first call checks the tool's declaration (a misfit fails the call).
func startBackends(ctx context.Context, ss *instructions.Scenarios, ts *instructions.Tools, strict bool, log *slog.Logger) (*dispatcher.Backends, error) {
	bk, err := dispatcher.StartBackends(ctx, dispatcher.BackendsConfig{Tools: ts, Logger: log, Lazy: !strict, Scenarios: ss})
	if err != nil {
		return nil, usageError(err)
	}
	if !strict {
		return bk, nil
	}
	if err := bk.Check(ctx, ss, strict); err != nil {
		bk.Close()
		return nil, usageError(err)
	}
	return bk, nil
}

// newPipeline builds everything once: scenarios, model, clients, dispatcher,
// processor. parts is what the caller's checkPipeline already loaded (nil:
// newPipeline checks o itself), so start-up reads the instructions and the
// warranty registry once. sender overrides the mail sender (watch passes its
// SMTP+ledger sender); when nil, replies go to outbox.
func newPipeline(ctx context.Context, o pipelineOptions, parts *pipelineParts, sender mail.Sender, log *slog.Logger) (_ *pipeline, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &pipeline{}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if parts == nil {
		var probs problems
		parts = checkPipeline(o, &probs)
		if err := probs.err(); err != nil {
			return nil, err
		}
	}
	p.Scenarios, p.Tools = parts.Scenarios, parts.Tools
	bk, err := startBackends(ctx, p.Scenarios, p.Tools, false, log)
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, bk.Close)
	var creator tickets.Store = parts.TicketsHTTP
	switch {
	case parts.TicketsHTTP != nil:
	case o.DryRun && !store.IsURL(parts.TicketsDB) && !fileExists(parts.TicketsDB):
		creator = dryRunTickets{} // a dry run creates no store
	case o.DryRun:
		// A dry run reads the store and changes nothing in it, not even its
		// schema or journal mode; an older store is not upgraded for it.
		db, err := tickets.OpenReadOnly(ctx, parts.TicketsDB)
		switch {
		case errors.Is(err, tickets.ErrOldSchema):
			log.Warn("dry run: the ticket store is not read (a dry run does not upgrade it); follow-ups are not recognised", "err", err)
			creator = dryRunTickets{}
		case err != nil:
			return nil, usageError(err)
		default:
			p.closers = append(p.closers, db.Close)
			creator = db
		}
	case o.shared != nil: // the store, which holds the tickets too
		db, err := tickets.New(ctx, o.shared) // closed with the ledger
		if err != nil {
			return nil, failure(err)
		}
		creator = db
	default:
		db, err := tickets.OpenSQLite(parts.TicketsDB)
		if err != nil {
			return nil, usageError(err)
		}
		p.closers = append(p.closers, db.Close)
		creator = db
	}
	p.Tickets = creator
	if sender == nil {
		return nil, usageErr("no mail sender configured")
	}
	hist := history(sender) // the outbox or ledger itself, not the signer around it
	perSender := 0
	var answered func(context.Context, triage.Key) (*triage.Receipt, string, error)
	var claim func(context.Context, triage.Key) (func(), error)
	if ob, ok := hist.(*replies.Outbox); ok { // watch's ledger holds its own limits and replies, exactly
		perSender = replies.DefaultPerSenderLimit
		// The outbox's checks at send time are the exact ones: replies and
		// drafts, however many emails are answered at once; notices under
		// their own bounds.
		ob.SetPerSenderLimit(perSender, replies.DefaultPerSenderWindow)
		ob.SetNoticeLimits(o.Notices)
		answered, claim = ob.Answered(parts.Domain), ob.Claim
	}
	mo := o.options()
	mo.Offline, mo.Faults, mo.Concurrency = o.Offline || len(parts.Faults) > 0, parts.Faults, o.Concurrency
	if err := p.limitModel(ctx, o, !mo.Live(), log); err != nil {
		return nil, err
	}
	built, err := processor.Build(ctx, processor.Parts{
		Instructions:       &instructions.Set{Scenarios: p.Scenarios, Tools: p.Tools, Policy: parts.Policy, Lexicon: parts.Lexicon},
		Model:              mo,
		ModelName:          o.Model,
		Verify:             o.Verify.parts(o.modelOptions, o.Concurrency),
		Budget:             p.budget,
		Routes:             bk.Routes(),
		Warranty:           parts.Checker,
		Tickets:            creator,
		Sender:             sender,
		From:               parts.From,
		Address:            parts.Addr,
		Domain:             parts.Domain,
		Staff:              o.Staff,
		TrustedAuthservIDs: o.TrustedAuthservIDs,
		ConsoleURL:         o.ConsoleURL,
		Extractor:          parts.Extractor,
		Language:           parts.Language,
		Bounds:             o.Bounds,
		Attachments:        o.Attachments,
		Spam:               o.Spam,
		ReplyMode:          triage.ReplyMode(o.ReplyMode),
		NoAIDisclosure:     !o.AIDisclosure,
		Autonomy:           o.autonomy,
		DryRun:             o.DryRun,
		History:            hist,
		Answered:           answered,
		Claim:              claim,
		// process answers a sender as often as watch would.
		PerSenderLimit: perSender,
		Logger:         log,
	})
	if err != nil {
		return nil, usageError(err)
	}
	p.closers = append(p.closers, built.Close)
	p.Processor, p.Model, p.Verifier = built.Processor, built.Model, built.Verifier
	return p, nil
}

// history is the sender's memory of our replies, for breaking reply loops:
// the ledger in watch, the outbox directory in process; nil for a sender
// without one (a dry run).
func history(sender mail.Sender) processor.History {
	if h, ok := sender.(processor.History); ok {
		return h
	}
	return nil
}

// parseFrom validates our From address ("Name <a@b>" or "a@b") and returns
// it with its bare address (lower-cased) and domain.
func parseFrom(from string) (full, addr, domain string, err error) {
	a, err := netmail.ParseAddress(from)
	if err != nil {
		return "", "", "", usageErr("--from %q: not an email address: %v", from, err)
	}
	addr = strings.ToLower(a.Address)
	return from, addr, addr[strings.LastIndexByte(addr, '@')+1:], nil
}

// limitModel chooses the model budget (model.Budget) the pipeline's model
// runs under: the one shared by every process on the store when there is
// one, else one for this process. A live model is always under it (a 429
// backs every email off); the offline model only when a limit is set.
func (p *pipeline) limitModel(ctx context.Context, o pipelineOptions, offline bool, log *slog.Logger) error {
	limited := o.RequestsPerMinute > 0 || o.TokensPerMinute > 0
	if offline && !limited {
		return nil
	}
	if o.budget != nil {
		p.budget = o.budget
		return nil
	}
	cfg := model.BudgetConfig{RequestsPerMinute: o.RequestsPerMinute, TokensPerMinute: o.TokensPerMinute, Logger: log}
	switch {
	case o.DryRun: // a dry run writes nothing, not even the budget
	case o.shared != nil:
		cfg.DB = o.shared
	case o.Store != "":
		db, err := store.Open(ctx, o.Store, store.Options{})
		if err != nil {
			return failure(fmt.Errorf("model budget: %w", err))
		}
		p.closers = append(p.closers, db.Close)
		cfg.DB = db
	}
	b, err := model.NewBudget(ctx, cfg)
	if err != nil {
		return failure(err)
	}
	p.budget = b
	return nil
}
