package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"time"

	"triage/internal/agent"
	"triage/internal/clients/tickets"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/model"
	"triage/internal/processor"
	"triage/internal/serial"
)

// Config configures a Runner; Scenarios and Tools are required.
type Config struct {
	Scenarios *instructions.Scenarios
	// Tools are the bindings and policies (tools.yaml) the dispatcher
	// enforces, exactly as in production; only their implementations are
	// replaced by the case's mocks.
	Tools *instructions.Tools
	// Backends are the real implementations of tools.yaml's http and mcp
	// bindings, by function name (dispatcher.Backends.Routes): a case that
	// gives no mock response for such a function runs it for real, e.g. on
	// the manuals MCP server.
	Backends map[string]dispatcher.Func
	// Bounds bound the work on one email, as in production (zero fields:
	// the agent's and the dispatcher's defaults).
	Bounds processor.Bounds
	// ModelName is the Gemini model id (default model.DefaultModel).
	ModelName string
	// Offline forces the built-in offline model even when credentials are set.
	Offline bool
	// Provider, BaseURL and APIKeyFile choose the live model (model.Options);
	// Gemini by default.
	Provider            model.Provider
	BaseURL, APIKeyFile string
	// Inputs, MaxOutputTokens and ToolChoice are the model options of the
	// same names (the model.* settings).
	Inputs          []string
	MaxOutputTokens int
	ToolChoice      agent.ToolChoice
	// RecordDir stores each case's model HTTP exchanges as a go-vcr
	// cassette; ReplayDir replays them instead of calling a model. At most
	// one may be set.
	RecordDir string
	ReplayDir string
	// Parallel is how many runs execute at once (default 1).
	Parallel int
	// Repeat runs every case this many times (default 1).
	Repeat int
	// Language names the customers' languages (nil: package language's
	// defaults, pl when unsure), as pipeline.languages and
	// pipeline.default_language do in production.
	Language *language.Detector
	// StaffAddresses may receive send_email in scenarios that escalate
	// (as in production's --staff).
	StaffAddresses []string
	// OwnAddress is the support inbox: the To of rendered emails and an own
	// address the guard never answers (default DefaultTo).
	OwnAddress string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Transport carries recorded requests to the real model (default
	// http.DefaultTransport), and, when set, the requests of live and
	// offline runs (the model's own transport otherwise): tests point it
	// elsewhere, benchmarks measure what the model is sent through it.
	Transport http.RoundTripper
	// Judge grades reply_rubric in live runs, and Customer plays
	// input.simulated_customer; without them those are skipped.
	Judge    *Judge
	Customer *Customer
	// OnCase, when set, is called once per case, in case order, as soon as
	// the case and every case before it have finished.
	OnCase func(CaseResult)
	Now    func() time.Time
	Logger *slog.Logger
	// Policy decides check_warranty's mocked registry answers as production
	// does (nil: the built-in policy.yaml).
	Policy *decision.Policy
	// Lexicon reads a reply's words against its commitments, as in
	// production (nil: the built-in commitments.yaml).
	Lexicon *decision.Lexicon
}

// Runner runs cases through the real pipeline with mock clients.
type Runner struct {
	cfg    Config
	mode   string
	desc   string
	ext    *serial.Extractor
	routes []string
}

// Model modes recorded in reports.
const (
	ModeOffline = "offline"
	ModeLive    = "live"
	ModeRecord  = "record"
	ModeReplay  = "replay"
)

// New checks cfg and applies defaults.
func New(cfg Config) (*Runner, error) {
	if cfg.Scenarios == nil {
		return nil, errors.New("eval: Config.Scenarios is required")
	}
	if cfg.Tools == nil {
		return nil, errors.New("eval: Config.Tools is required")
	}
	if cfg.RecordDir != "" && cfg.ReplayDir != "" {
		return nil, errors.New("eval: record and replay are exclusive")
	}
	if cfg.Parallel < 0 || cfg.Repeat < 0 {
		return nil, errors.New("eval: Parallel and Repeat must not be negative")
	}
	if cfg.RecordDir != "" && cfg.Repeat > 1 {
		return nil, errors.New("eval: record once (Repeat 1), then repeat against the replay")
	}
	if cfg.ModelName == "" {
		cfg.ModelName = model.DefaultModel
	}
	if cfg.Parallel == 0 {
		cfg.Parallel = 1
	}
	if cfg.Repeat == 0 {
		cfg.Repeat = 1
	}
	if cfg.OwnAddress == "" {
		cfg.OwnAddress = DefaultTo
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Policy == nil {
		p, err := instructions.LoadPolicy(nil)
		if err != nil {
			return nil, fmt.Errorf("eval: the built-in policy: %w", err)
		}
		cfg.Policy = p
	}
	if cfg.Lexicon == nil {
		l, err := instructions.LoadLexicon(nil)
		if err != nil {
			return nil, fmt.Errorf("eval: the built-in lexicon: %w", err)
		}
		cfg.Lexicon = l
	}
	ext, err := serial.New()
	if err != nil {
		return nil, fmt.Errorf("eval: serial extractor: %w", err)
	}
	r := &Runner{cfg: cfg, ext: ext}
	// Every binding gets a mock, builtin or not: no case reaches a real
	// warranty service, ticket store, mail server, HTTP or MCP tool.
	r.routes = cfg.Tools.Names()
	live := r.modelOptions().Live()
	label := "Gemini model "
	if cfg.Provider == model.ProviderOpenAI {
		label = "OpenAI-compatible model "
	}
	switch {
	case cfg.ReplayDir != "":
		r.mode, r.desc = ModeReplay, fmt.Sprintf("replay of recorded model exchanges from %s (model %s)", cfg.ReplayDir, cfg.ModelName)
	case cfg.RecordDir != "" && live:
		r.mode, r.desc = ModeRecord, fmt.Sprintf("%s%s, recording to %s", label, cfg.ModelName, cfg.RecordDir)
	case cfg.RecordDir != "":
		r.mode, r.desc = ModeRecord, fmt.Sprintf("built-in offline model (deterministic stand-in, not an LLM), recording to %s", cfg.RecordDir)
	case live:
		r.mode, r.desc = ModeLive, label+cfg.ModelName
	default:
		r.mode, r.desc = ModeOffline, "built-in offline model (deterministic stand-in, not an LLM)"
	}
	return r, nil
}

// Mode is offline, live, record or replay.
func (r *Runner) Mode() string { return r.mode }

// Description says which model the runs use, for people.
func (r *Runner) Description() string { return r.desc }

// offlineModel reports whether runs use the built-in offline model server
// (replay uses its client shape too but never reaches it).
func (r *Runner) offlineModel() bool {
	return r.mode == ModeOffline || r.mode == ModeReplay || (r.mode == ModeRecord && !r.modelOptions().Live())
}

// modelOptions are the model options of a live run.
func (r *Runner) modelOptions() model.Options {
	return model.Options{Offline: r.cfg.Offline, Provider: r.cfg.Provider, BaseURL: r.cfg.BaseURL, APIKeyFile: r.cfg.APIKeyFile, Getenv: r.cfg.Getenv,
		Inputs: r.cfg.Inputs, MaxOutputTokens: r.cfg.MaxOutputTokens, ToolChoice: r.cfg.ToolChoice}
}

// Run runs every case Repeat times, Parallel runs at a time, and returns
// the report. Cancelling ctx fails the runs not yet finished.
func (r *Runner) Run(ctx context.Context, cases []*Case) *Report {
	start := r.cfg.Now()
	results := make([]CaseResult, len(cases))
	left := make([]int, len(cases))
	for i, c := range cases {
		results[i] = CaseResult{ID: c.ID, Description: c.Description, Category: c.Category, File: c.File,
			Runs: make([]RunResult, r.cfg.Repeat), c: c}
		left[i] = r.cfg.Repeat
	}

	type job struct{ ci, run int }
	jobs := make(chan job)
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for w := 0; w < r.cfg.Parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				rr := r.RunCase(ctx, cases[j.ci])
				mu.Lock()
				results[j.ci].Runs[j.run] = rr
				left[j.ci]--
				if left[j.ci] == 0 {
					results[j.ci].finish()
				}
				for next < len(results) && left[next] == 0 {
					if r.cfg.OnCase != nil {
						r.cfg.OnCase(results[next])
					}
					next++
				}
				mu.Unlock()
			}
		}()
	}
	for ci := range cases {
		for run := 0; run < r.cfg.Repeat; run++ {
			jobs <- job{ci, run}
		}
	}
	close(jobs)
	wg.Wait()
	return newReport(r, results, start, r.cfg.Now())
}

// RunCase runs one case once through a freshly built pipeline.
func (r *Runner) RunCase(ctx context.Context, c *Case) RunResult {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	rr := r.runCase(ctx, cancel, c)
	rr.DurationMS = time.Since(start).Milliseconds()
	rr.Passed = len(rr.Failures) == 0
	if rr.Passed && onlyRubrics(c) && !graded(rr) {
		rr.Passed, rr.Skipped = false, true // nothing was checked
	}
	return rr
}

// onlyRubrics reports whether the case's only checks are reply_rubric
// criteria: its expected_output and every follow-up's check nothing else,
// and at least one has a rubric.
func onlyRubrics(c *Case) bool {
	xs := []*Expected{&c.Expected}
	for _, f := range c.Input.FollowUps {
		if f.Expected != nil {
			xs = append(xs, f.Expected)
		}
	}
	rubric := false
	for _, x := range xs {
		rest := *x
		rest.ReplyRubric, rest.Match = nil, "" // match is how calls are compared, not a check
		if !reflect.ValueOf(rest).IsZero() {
			return false
		}
		rubric = rubric || len(x.ReplyRubric) > 0
	}
	return rubric
}

// graded reports whether a judge graded any rubric criterion of the run,
// its turns included, or its customer's goal.
func graded(rr RunResult) bool {
	vs := slices.Clone(rr.Rubric)
	if rr.Goal != nil {
		vs = append(vs, *rr.Goal)
	}
	for _, t := range rr.Turns {
		vs = append(vs, t.Rubric...)
	}
	for _, v := range vs {
		if v.Verdict != VerdictSkipped {
			return true
		}
	}
	return false
}

func (r *Runner) runCase(ctx context.Context, cancel context.CancelCauseFunc, c *Case) (rr RunResult) {
	setupFail := func(format string, a ...any) RunResult {
		rr.Error = fmt.Sprintf(format, a...)
		rr.Failures = append(rr.Failures, "Setup: "+rr.Error)
		return rr
	}
	log := r.cfg.Logger.With("case", c.ID)

	var tape *vcr
	var httpClient *http.Client
	var err error
	switch r.mode {
	case ModeRecord:
		tape, err = newVCR(r.cfg.RecordDir, c.ID, false, r.cfg.Transport)
	case ModeReplay:
		tape, err = newVCR(r.cfg.ReplayDir, c.ID, true, nil)
	}
	if err != nil {
		return setupFail("%v", err)
	}
	if tape != nil {
		tape.onMiss = func() { cancel(ErrReplayMismatch) }
		httpClient = tape.Client()
	} else if r.cfg.Transport != nil {
		httpClient = &http.Client{Transport: r.cfg.Transport}
	}

	offline := r.offlineModel()
	faults := c.Faults
	switch {
	case len(faults) > 0 && r.mode == ModeReplay:
		faults = nil // the faults are in the recorded exchanges
	case len(faults) > 0 && !offline:
		rr.Notes = append(rr.Notes, "input.model_faults ignored: faults are injected only into the offline model")
		faults = nil
	}
	mo := r.modelOptions()
	mo.Offline, mo.Faults, mo.HTTPClient = offline, faults, httpClient
	var sleep func(context.Context, time.Duration) error
	if offline {
		// The offline model gains nothing from backoff: retry at once (the
		// retry policy itself is unchanged).
		sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	}
	policy, err := r.cfg.Policy.Select(c.Input.Jurisdiction)
	if err != nil {
		return setupFail("input.jurisdiction: %v", err)
	}
	store, err := caseTickets(ctx, c)
	if err != nil {
		return setupFail("%v", err)
	}
	defer store.Close()

	// The pipeline every command builds, with the case's mocks for every
	// tool (and the real http and mcp bindings it gives no response for).
	built, err := processor.Build(ctx, processor.Parts{
		Instructions: &instructions.Set{Scenarios: r.cfg.Scenarios, Tools: r.cfg.Tools, Lexicon: r.cfg.Lexicon},
		Model:        mo,
		ModelName:    r.cfg.ModelName,
		Mocks:        r.routesFor(c, policy),
		Tickets:      store,
		Address:      r.cfg.OwnAddress,
		Staff:        append(slices.Clone(r.cfg.StaffAddresses), c.Input.Staff...),
		Extractor:    r.ext,
		Language:     r.cfg.Language,
		Bounds:       r.cfg.Bounds,
		ReplyMode:    c.Input.ReplyMode,
		Sleep:        sleep,
		Logger:       log,
	})
	if err != nil {
		return setupFail("%v", err)
	}
	defer built.Close()
	proc := built.Processor

	name := c.File
	if c.Input.EML != "" {
		name = c.Input.EML
	}
	rr.Outcome = proc.Process(ctx, processor.Input{Name: name, Raw: c.Raw})
	rr.ModelCalls = rr.Outcome.ModelCalls
	rr.Tokens = rr.Outcome.Tokens

	if tape != nil {
		if m := tape.Mismatch(); m != "" {
			rr.Error = m
			rr.Failures = append(rr.Failures, m)
			return rr // the outcome is an artefact of the missing exchange
		}
		if r.mode == ModeRecord {
			if err := tape.Stop(); err != nil {
				rr.Failures = append(rr.Failures, "Record: "+err.Error())
			}
		}
	}
	v := Validate(c, rr.Outcome)
	rr.Failures = append(rr.Failures, v.Failures...)
	rr.Failures = append(rr.Failures, ReplyChecks(c.Expected, rr.Outcome, r.cfg.Language)...)
	rr.CallNotes = v.CallNotes
	g, claims, fails := r.replyClaims(ctx, c.Raw, rr.Outcome, store)
	rr.Grounding, rr.Claims = g, claims
	rr.Failures = append(rr.Failures, fails...)
	r.gradeRubric(ctx, c, &rr)
	r.runTurns(ctx, c, proc, store, &rr)
	return rr
}

// caseStore is a run's own ticket store: a SQLite file in a temporary
// directory, removed by Close.
type caseStore struct {
	*tickets.SQLite
	dir string
}

func (s *caseStore) Close() error {
	err := s.SQLite.Close()
	return errors.Join(err, os.RemoveAll(s.dir))
}

// caseTickets opens a fresh ticket store for one run and writes the case's
// conversation into it: the ticket under its own ID, its messages, and the
// customer's earlier texts as notes.
func caseTickets(ctx context.Context, c *Case) (*caseStore, error) {
	dir, err := os.MkdirTemp("", "triage-eval-tickets-")
	if err != nil {
		return nil, fmt.Errorf("eval: ticket store: %w", err)
	}
	db, err := tickets.OpenSQLite(filepath.Join(dir, "tickets.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &caseStore{SQLite: db, dir: dir}
	cv := c.Input.Conversation
	if cv == nil {
		return s, nil
	}
	customer := cv.CustomerEmail
	if customer == "" && c.Input.Email != nil {
		customer = c.Input.Email.From
	}
	customer = bareOr(customer)
	st := tickets.State{TicketID: cv.TicketID, Status: cv.Status, CustomerEmail: customer,
		SerialNumber: cv.SerialNumber, Summary: cv.Summary, AgentDisabled: cv.TakenOver, Owner: cv.Owner}
	at := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i, m := range cv.Messages {
		dir := cmp.Or(m.Direction, tickets.Inbound)
		from := m.From
		if from == "" && dir == tickets.Inbound {
			from = customer
		}
		when := at.Add(time.Duration(i) * time.Hour)
		st.Messages = append(st.Messages, tickets.Message{MessageID: m.MessageID, Direction: dir, From: from, Subject: m.Subject, At: when})
		if dir == tickets.Inbound && m.Text != "" {
			st.Notes = append(st.Notes, tickets.Note{MessageID: m.MessageID, From: from, Subject: m.Subject, Text: m.Text, At: when})
		}
	}
	if st.Summary == "" && len(cv.Messages) > 0 {
		st.Summary = cv.Messages[0].Subject
	}
	if err := db.Restore(ctx, st); err != nil {
		s.Close()
		return nil, fmt.Errorf("eval: %s: input.conversation: %w", c.ID, err)
	}
	return s, nil
}

// routesFor is the case's mocks, with the real backend of every http or mcp
// binding the case gives no mock response for; check_warranty's mocked
// registry answers are decided under policy.
func (r *Runner) routesFor(c *Case, policy *decision.Policy) map[string]dispatcher.Func {
	routes := MockRoutes(c, r.routes)
	if f, ok := routes[dispatcher.FuncCheckWarranty]; ok && r.cfg.Tools != nil && r.cfg.Tools.Get(dispatcher.FuncCheckWarranty) != nil &&
		r.cfg.Tools.Get(dispatcher.FuncCheckWarranty).Builtin == dispatcher.FuncCheckWarranty {
		routes[dispatcher.FuncCheckWarranty] = decided(policy, f)
	}
	for name, f := range r.cfg.Backends {
		if _, ok := routes[name]; ok && len(c.Mocks[name]) == 0 {
			routes[name] = f
		}
	}
	return routes
}
