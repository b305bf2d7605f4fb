package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"triage"
	"triage/internal/clip"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/settings"
	"triage/internal/trace"
)

type replayOptions struct {
	pipelineOptions
	Baseline string
	Ledger   string
	Config   string
	JSON     bool
	K        int
	Verbose  bool
	// Since, Limit and Mailbox bound the inbox read when there are no
	// INPUTS (--config).
	Since   string
	Limit   int
	Mailbox string
	table   settings.Table
	// given reports whether a flag was given on the command line or
	// through its environment variable (not the configuration file).
	given func(flag string) bool
}

// replaySettings are the pipeline's settings (but --dry-run: replay always
// is one) and replay's own.
func replaySettings(o *replayOptions) settings.Table {
	var t settings.Table
	for _, s := range pipelineSettings(&o.pipelineOptions) {
		switch s.Flag {
		case "dry-run": // always
		case "instructions":
			t = append(t, withUsage(s, "the instructions to try (required): a directory with main.md, scenarios/*.md and tools.yaml"))
		default:
			t = append(t, s)
		}
	}
	return append(t,
		&settings.Setting{Flag: "baseline", Usage: "instructions directory to compare against (default: the outcomes the ledger recorded)", Var: settings.String(&o.Baseline, "")},
		withUsage(ledgerSetting(&o.Ledger, ""), "watch ledger (SQLite file, opened read-only) whose recorded outcomes are the baseline when --baseline is not given (or --store URL)"),
		configSetting(&o.Config, "watch configuration: its pipeline settings, its ledger (the baseline without --baseline) and, with no INPUTS, its inbox, read without changing anything"+configFound),
		&settings.Setting{Flag: "since", Usage: "with no INPUTS: only the inbox's messages received on or after this day (YYYY-MM-DD)", Var: settings.String(&o.Since, "", checkDay)},
		&settings.Setting{Flag: "limit", Usage: "with no INPUTS: at most the newest N messages of the inbox", Var: settings.Int(&o.Limit, defaultReplayLimit, settings.AtLeast(1))},
		&settings.Setting{Flag: "mailbox", Usage: "with no INPUTS: the mailbox to read (default: the configuration's imap.mailbox, else INBOX)", Var: settings.String(&o.Mailbox, "")},
		&settings.Setting{Flag: "json", Usage: "print one JSON record per flip, one per line, then a summary record", Var: settings.Bool(&o.JSON, false)},
		&settings.Setting{Flag: "runs", Short: "k", Usage: "run each side N times; report a flip only when every run of each side agrees", Var: settings.Int(&o.K, 1)},
		concurrencySetting(&o.Concurrency, "", "emails replayed in parallel"),
		&settings.Setting{Flag: "verbose", Short: "v", Usage: "log each step to stderr", Var: settings.Bool(&o.Verbose, false)},
	)
}

// defaultReplayLimit bounds an inbox read without --limit.
const defaultReplayLimit = 200

// checkDay accepts "" or a day written YYYY-MM-DD.
func checkDay(s string) error {
	if s == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return fmt.Errorf("%q: want a day as YYYY-MM-DD", s)
	}
	return nil
}

func newReplayCmd() *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay --instructions NEW [--baseline OLD | --ledger FILE] [flags] [INPUTS...]",
		Short: "Run past emails through new instructions and show whose outcome would change",
		Long: `Replay runs past emails through the instructions in --instructions and
through a baseline, always as a dry run (nothing is sent, no ticket or note
is written), and prints every email whose outcome flips: the scenario, the
status, the functions called (a ticket opened or not), the reply mode (sent
or drafted) and escalation.

INPUTS are .eml files or mbox files. With no INPUTS, replay reads the inbox
of the watch configuration (--config FILE, else $TRIAGE_CONFIG, else
/etc/triage/triage.yaml when it exists) without changing anything on the
server: the mailbox is opened read-only (EXAMINE) and each message fetched
with BODY.PEEK (no \Seen, no keyword, no move), the newest --limit N
(default 200), only those received since --since DAY when given.

A configuration also gives replay its pipeline settings (staff, reply_mode,
the warranty registry and ticket store, the model, the languages), below the
flags and the environment as everywhere.

The baseline is --baseline DIR (another instructions directory, run the same
way) or, without it, what the watch ledger recorded for each email
(--ledger FILE, --store URL, or the ledger of the configuration; matched by
Message-ID; a SQLite ledger is opened read-only). An email the ledger has no
outcome for is counted, never reported as a flip.

With a live model, each side may run -k N times: a flip is reported only
when every run of each side agrees (with the counts); an email whose runs
disagree is reported as unstable. The offline model is deterministic.

Exit status: 0 when no outcome flips, 3 when one does, 1 when an input
cannot be read (or the inbox not reached), 2 for a usage or configuration
error.`,
		Example: `  triage replay --offline --warranty-csv examples/warranty.csv \
      --instructions new/ --baseline instructions/ examples/inbox/*.eml
  triage replay --instructions new/ --ledger /var/lib/triage/ledger.db --json last-month.mbox
  triage replay --config /etc/triage/triage.yaml --instructions new/ --since 2026-10-01
  triage replay -k 3 --instructions new/ --baseline old/ --warranty-csv registry.csv mail/*.eml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := resolveReplay(cmd, o)
			if err != nil {
				return err
			}
			return runReplay(cmd.Context(), o, cfg, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.table = replaySettings(o)
	o.table.Register(cmd.Flags())
	return cmd
}

// replayView is what replay compares of an outcome: what the customer
// would see happen.
type replayView struct {
	Scenario string        `json:"scenario"`
	Status   triage.Status `json:"status"`
	Reason   triage.Reason `json:"reason,omitempty"`
	// Calls are the functions that ran (not refused, not failed), in order.
	Calls     []string `json:"calls"`
	ReplyMode string   `json:"reply_mode"` // send, draft, or none
	Escalated bool     `json:"escalated"`
}

func viewOf(o processor.Outcome) replayView {
	v := replayView{Scenario: o.Scenario, Status: o.Status, Reason: o.Reason, Calls: []string{}, Escalated: o.Escalated, ReplyMode: "none"}
	for _, c := range o.FunctionCalls {
		if c.OK && !c.Blocked {
			v.Calls = append(v.Calls, c.Name)
		}
	}
	switch o.Status {
	case triage.StatusReplied:
		v.ReplyMode = string(triage.ReplySend)
	case triage.StatusDrafted:
		v.ReplyMode = string(triage.ReplyDraft)
	}
	return v
}

func (v replayView) key() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Flip kinds, in the order they are reported.
const (
	flipScenario  = "scenario"
	flipStatus    = "status"
	flipTicket    = "ticket"
	flipCalls     = "calls"
	flipReplyMode = "reply_mode"
	flipEscalated = "escalation"
)

// flipKinds names what differs between two views.
func flipKinds(old, new replayView) []string {
	var kinds []string
	if old.Scenario != new.Scenario {
		kinds = append(kinds, flipScenario)
	}
	if old.Status != new.Status || old.Reason != new.Reason {
		kinds = append(kinds, flipStatus)
	}
	ticket := func(v replayView) bool { return slices.Contains(v.Calls, dispatcher.FuncCreateTicket) }
	if ticket(old) != ticket(new) {
		kinds = append(kinds, flipTicket)
	}
	if !slices.Equal(old.Calls, new.Calls) {
		kinds = append(kinds, flipCalls)
	}
	if old.ReplyMode != new.ReplyMode {
		kinds = append(kinds, flipReplyMode)
	}
	if old.Escalated != new.Escalated {
		kinds = append(kinds, flipEscalated)
	}
	return kinds
}

// replaySide is one side's runs of one email.
type replaySide struct {
	View   replayView `json:"outcome"`
	Agreed int        `json:"agreed"` // runs that gave View
	Runs   int        `json:"runs"`
	Detail string     `json:"detail,omitempty"`
}

// replayRecord is one email whose outcome flips (or could not be told).
type replayRecord struct {
	Type      string     `json:"type"` // flip | unstable
	Input     string     `json:"input"`
	MessageID string     `json:"message_id,omitempty"`
	From      string     `json:"from,omitempty"`
	Subject   string     `json:"subject,omitempty"`
	Kinds     []string   `json:"kinds,omitempty"`
	Baseline  replaySide `json:"baseline"`
	New       replaySide `json:"new"`
	stable    bool       // both sides agreed across runs
	hasBase   bool       // a baseline exists for the email
	readError error      // the input could not be read
}

// replaySummary is the last JSON record.
type replaySummary struct {
	Type       string         `json:"type"` // summary
	Emails     int            `json:"emails"`
	Flips      int            `json:"flips"`
	ByKind     map[string]int `json:"flips_by_kind"`
	Unstable   int            `json:"unstable"`
	NoBaseline int            `json:"no_baseline"`
	Unreadable int            `json:"unreadable"`
	Runs       int            `json:"runs_per_side"`
	Baseline   string         `json:"baseline"`
}

func runReplay(ctx context.Context, o *replayOptions, cfg *replayConfig, args []string, stdout, stderr io.Writer) error {
	inbox := len(args) == 0
	switch {
	case o.K < 1:
		return usageErr("replay: -k must be at least 1, got %d", o.K)
	case o.Concurrency < 1:
		return usageErr("replay: --concurrency must be at least 1, got %d", o.Concurrency)
	case !o.given("instructions"):
		return usageErr("replay: --instructions NEW is required (the instructions to try)")
	case o.Baseline != "" && o.given("ledger"):
		return usageErr("replay: --baseline and --ledger are alternatives; give one")
	case inbox && cfg == nil:
		return usageErr("replay: no input: give .eml or mbox files, or --config FILE (or $TRIAGE_CONFIG) to read the watch inbox read-only")
	case !inbox && (o.given("since") || o.given("limit") || o.given("mailbox")):
		return usageErr("replay: --since, --limit and --mailbox bound the inbox read with --config; give them without INPUTS")
	}
	ledgerPath := ""
	if o.Baseline == "" {
		switch {
		case o.given("ledger"):
			ledgerPath = o.Ledger
		case o.Store != "":
			ledgerPath = o.Store
		default:
			ledgerPath = o.Ledger
		}
		if ledgerPath == "" {
			return usageErr("replay: no baseline: give --baseline DIR (instructions) or --ledger FILE / --store URL / --config FILE (what watch recorded)")
		}
	}
	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(trace.LogHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	o.DryRun = true // replay never has an effect
	if cfg != nil && cfg.how != "--config" {
		fmt.Fprintf(stderr, "triage: replay uses the configuration %s (%s)\n", cfg.path, foundText(cfg.how))
	}

	// The ticket store, when it exists, is read (a follow-up still joins its
	// conversation) and never written: a dry run.
	newOpts := o.pipelineOptions
	var probs problems
	probs.addErr(o.table.Check())
	newParts := checkPipeline(newOpts, &probs)
	var baseOpts pipelineOptions
	var baseParts *pipelineParts
	if o.Baseline != "" {
		baseOpts = newOpts
		baseOpts.Instructions = o.Baseline
		baseParts = checkPipeline(baseOpts, &probs)
	}
	var ws *watchSetup
	if inbox {
		ws = &watchSetup{o: cfg.watch}
		var ip problems
		imapSetup(cfg.watch, cfg.path, ws, &ip)
		if err := ip.err(); err != nil {
			var ee *cmdError
			errors.As(err, &ee)
			probs.add("replay: %s: the inbox cannot be read: %v", cfg.path, ee.err)
		}
	}
	if err := probs.err(); err != nil {
		return err
	}
	var led *ledger.Ledger
	if ledgerPath != "" {
		l, err := openLedgerReadOnly(ctx, ledgerPath, "replay: ledger")
		if err != nil {
			return err
		}
		defer l.Close()
		led = l
	}
	var files []replayInput
	if !inbox {
		var err error
		if files, err = readReplayInputs(args); err != nil {
			return err
		}
	}

	newP, err := newPipeline(ctx, newOpts, newParts, dryRunSender{}, log)
	if err != nil {
		return err
	}
	defer newP.Close()
	var baseP *pipeline
	if baseParts != nil {
		baseP, err = newPipeline(ctx, baseOpts, baseParts, dryRunSender{}, log)
		if err != nil {
			return err
		}
		defer baseP.Close()
	}
	if newP.Model.Offline {
		fmt.Fprintf(stderr, "triage: replay uses the %s\n", newP.Model.Description)
	} else {
		fmt.Fprintf(stderr, "triage: replay uses %s, model %s, %d run(s) per side\n", newP.Model.Description, o.Model, o.K)
	}
	source := func(yield func(replayInput) bool) error {
		for _, in := range files {
			if !yield(in) {
				return nil
			}
		}
		return nil
	}
	if inbox {
		if source, err = inboxSource(ctx, o, ws, newP, log, stderr); err != nil {
			return err
		}
	}
	baseName := o.Baseline
	if baseName == "" {
		baseName = "ledger"
	}

	sum := replaySummary{Type: "summary", ByKind: map[string]int{}, Runs: o.K, Baseline: baseName}
	marks := marksFor(stdout)
	var readErrs int
	work := func(in replayInput) replayRecord {
		if in.Err != nil {
			return replayRecord{Input: in.Name, readError: in.Err}
		}
		newSide, first := runSide(ctx, newP.Processor, in, o.K)
		rec := replayRecord{Input: in.Name, MessageID: first.MessageID, From: first.From, Subject: first.Subject, New: newSide}
		if baseP != nil {
			rec.Baseline, _ = runSide(ctx, baseP.Processor, in, o.K)
			rec.hasBase = true
		} else if st, ok := ledgerOutcome(ctx, led, first.MessageID); ok {
			rec.Baseline = replaySide{View: viewOf(st), Agreed: 1, Runs: 1, Detail: "recorded by watch"}
			rec.hasBase = true
		}
		rec.stable = rec.New.Agreed == rec.New.Runs && rec.Baseline.Agreed == rec.Baseline.Runs
		if rec.hasBase {
			rec.Kinds = flipKinds(rec.Baseline.View, rec.New.View)
		}
		return rec
	}
	emit := func(rec replayRecord) {
		sum.Emails++
		switch {
		case rec.readError != nil:
			readErrs++
			sum.Unreadable++
			fmt.Fprintf(stderr, "triage: replay: %v\n", rec.readError)
			return
		case !rec.hasBase:
			sum.NoBaseline++
			return
		case !rec.stable:
			sum.Unstable++
			rec.Type = "unstable"
		case len(rec.Kinds) == 0:
			return
		default:
			sum.Flips++
			rec.Type = "flip"
			for _, k := range rec.Kinds {
				sum.ByKind[k]++
			}
		}
		if o.JSON {
			writeJSONLines(stdout, []replayRecord{rec})
			return
		}
		printFlip(stdout, rec, marks.Warn)
	}
	records, srcErr := replayAll(ctx, source, o.Concurrency, work)
	for _, r := range records {
		emit(r)
	}
	if o.JSON {
		writeJSONLines(stdout, []replaySummary{sum})
	} else {
		printReplaySummary(stdout, sum)
	}
	switch {
	case srcErr != nil: // the replay is incomplete
		return failure(fmt.Errorf("replay: %w", srcErr))
	case sum.Flips > 0:
		return &cmdError{kind: errFlipped}
	case readErrs > 0:
		return failure(nil)
	}
	return nil
}

// runSide processes one email k times and returns the most frequent view
// with how many runs gave it, and the first outcome.
func runSide(ctx context.Context, p *processor.Processor, in replayInput, k int) (replaySide, processor.Outcome) {
	views := make([]replayView, k)
	var first processor.Outcome
	for i := range k {
		out := p.Process(ctx, processor.Input{Name: in.Name, Raw: in.Raw})
		if i == 0 {
			first = out
		}
		views[i] = viewOf(out)
	}
	side := tally(views)
	side.Detail = first.Detail
	return side, first
}

// tally returns the most frequent of views (the earliest on a tie) and how
// many runs gave it.
func tally(views []replayView) replaySide {
	counts := map[string]int{}
	best := 0
	for i, v := range views {
		counts[v.key()]++
		if counts[v.key()] > counts[views[best].key()] {
			best = i
		}
	}
	return replaySide{View: views[best], Agreed: counts[views[best].key()], Runs: len(views)}
}

// ledgerOutcome is the outcome watch recorded for the message.
func ledgerOutcome(ctx context.Context, l *ledger.Ledger, messageID string) (processor.Outcome, bool) {
	if l == nil || messageID == "" {
		return processor.Outcome{}, false
	}
	ids := []string{messageID, strings.Trim(messageID, "<>"), "<" + strings.Trim(messageID, "<>") + ">"}
	es, err := l.ByMessageIDs(ctx, ids)
	if err != nil {
		return processor.Outcome{}, false
	}
	// The latest entry with an outcome is what the customer got.
	for i := len(es) - 1; i >= 0; i-- {
		if len(es[i].Outcome) == 0 {
			continue
		}
		var out processor.Outcome
		if json.Unmarshal(es[i].Outcome, &out) == nil {
			return out, true
		}
	}
	return processor.Outcome{}, false
}

func describeView(v replayView) string {
	s := fmt.Sprintf("%s, %s", v.Scenario, v.Status)
	if v.Scenario == "" {
		s = string(v.Status)
	}
	if v.Reason != "" {
		s += " (" + string(v.Reason) + ")"
	}
	calls := "no calls"
	if len(v.Calls) > 0 {
		calls = strings.Join(v.Calls, ", ")
	}
	s += "; " + calls + "; reply " + v.ReplyMode
	if v.Escalated {
		s += "; escalated"
	}
	return s
}

func printFlip(w io.Writer, r replayRecord, mark string) {
	what := strings.Join(r.Kinds, ", ")
	if r.Type == "unstable" {
		what = "unstable: the runs disagree"
	}
	// The file name and the From are a stranger's (the subject is quoted).
	fmt.Fprintf(w, "%s %s  %s\n", mark, clip.Escape(r.Input), what)
	if r.From != "" || r.Subject != "" {
		fmt.Fprintf(w, "    from %s: %q\n", clip.Escape(r.From), r.Subject)
	}
	side := func(label string, s replaySide) {
		fmt.Fprintf(w, "    %-8s %s", label, clip.Escape(describeView(s.View)))
		if s.Runs > 1 {
			fmt.Fprintf(w, " [%d/%d runs]", s.Agreed, s.Runs)
		}
		fmt.Fprintln(w)
	}
	side("before:", r.Baseline)
	side("after:", r.New)
	if slices.Contains(r.Kinds, flipTicket) {
		if slices.Contains(r.New.View.Calls, dispatcher.FuncCreateTicket) {
			fmt.Fprintln(w, "    a ticket would now be opened")
		} else {
			fmt.Fprintln(w, "    no ticket would be opened any more")
		}
	}
}

func printReplaySummary(w io.Writer, s replaySummary) {
	kinds := make([]string, 0, len(s.ByKind))
	for k, n := range s.ByKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "Replay: %d email(s), %d flipped", s.Emails, s.Flips)
	if len(kinds) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(w, "; %d unstable; %d without a baseline; %d unreadable; baseline %s\n", s.Unstable, s.NoBaseline, s.Unreadable, s.Baseline)
}
