package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"triage"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/logattr"
	"triage/internal/mbox"
	"triage/internal/processor"
	"triage/internal/settings"
)

type replayOptions struct {
	pipelineOptions
	Baseline string
	Ledger   string
	Config   string
	JSON     bool
	K        int
	Verbose  bool
	table    settings.Table
}

// replaySettings are the pipeline's settings (but --dry-run: replay always
// is one) and replay's own.
func replaySettings(o *replayOptions) settings.Table {
	var t settings.Table
	for _, s := range pipelineSettings(&o.pipelineOptions) {
		if s.Flag != "dry-run" {
			t = append(t, s)
		}
	}
	return append(t,
		&settings.Setting{Flag: "baseline", Usage: "instructions directory to compare against (default: the outcomes the ledger recorded)", Var: settings.String(&o.Baseline, "")},
		withUsage(ledgerSetting(&o.Ledger, ""), "watch ledger (SQLite file) whose recorded outcomes are the baseline when --baseline is not given (or --store URL)"),
		configSetting(&o.Config, "watch configuration whose ledger (ledger:, or store:) holds the baseline outcomes"),
		&settings.Setting{Flag: "json", Usage: "print one JSON record per flip, one per line, then a summary record", Var: settings.Bool(&o.JSON, false)},
		&settings.Setting{Flag: "runs", Short: "k", Usage: "run each side N times; report a flip only when every run of each side agrees", Var: settings.Int(&o.K, 1)},
		&settings.Setting{Flag: "concurrency", Usage: "emails replayed in parallel", Var: settings.Int(&o.Concurrency, 2)},
		&settings.Setting{Flag: "verbose", Short: "v", Usage: "log each step to stderr", Var: settings.Bool(&o.Verbose, false)},
	)
}

func newReplayCmd() *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay --instructions NEW [--baseline OLD | --ledger FILE] [flags] INPUTS...",
		Short: "Run past emails through new instructions and show whose outcome would change",
		Long: `Replay runs past emails (.eml files, or mbox files) through the instructions
in --instructions and through a baseline, always as a dry run (nothing is
sent, no ticket or note is written), and prints every email whose outcome
flips: the scenario, the status, the functions called (a ticket opened or
not), the reply mode (sent or drafted) and escalation.

The baseline is --baseline DIR (another instructions directory, run the same
way) or, without it, what the watch ledger recorded for each email
(--ledger FILE, --store URL, or the ledger of the watch configuration
--config FILE; matched by Message-ID). An email the ledger
has no outcome for is counted, never reported as a flip.

With Gemini, each side may run -k N times: a flip is reported only when
every run of each side agrees (with the counts); an email whose runs
disagree is reported as unstable. The offline model is deterministic.

Exit status: 0 when no outcome flips, 3 when one does, 1 when an input
cannot be read, 2 for a usage or configuration error.`,
		Example: `  triage replay --offline --warranty-csv examples/warranty.csv \
      --instructions new/ --baseline instructions/ examples/inbox/*.eml
  triage replay --instructions new/ --ledger /var/lib/triage/ledger.db --json last-month.mbox
  triage replay -k 3 --instructions new/ --baseline old/ --warranty-csv registry.csv mail/*.eml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("replay: no input: give .eml or mbox files")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if o.Baseline != "" && !cmd.Flags().Changed("ledger") {
				o.Ledger = "" // $TRIAGE_LEDGER, like $TRIAGE_STORE, is a baseline only without --baseline
			}
			return runReplay(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
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

// replayInput is one email to replay.
type replayInput struct {
	Name string
	Raw  []byte
	Err  error
}

// readReplayInputs reads every .eml file and every message of every mbox.
func readReplayInputs(args []string) ([]replayInput, error) {
	var out []replayInput
	for _, a := range args {
		raw, err := readInput(a, nil)
		if err != nil {
			if a == "-" {
				return nil, usageErr("replay: stdin is not an input; give files")
			}
			out = append(out, replayInput{Name: a, Err: err})
			continue
		}
		if !mbox.IsMbox(raw) {
			out = append(out, replayInput{Name: a, Raw: raw})
			continue
		}
		r := mbox.NewReader(bytes.NewReader(raw), maxInputBytes)
		for {
			msg, n, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			name := fmt.Sprintf("%s#%d", a, n)
			if err != nil {
				out = append(out, replayInput{Name: name, Err: err})
				if errors.Is(err, mbox.ErrTooLarge) {
					continue
				}
				break
			}
			out = append(out, replayInput{Name: name, Raw: msg})
		}
	}
	return out, nil
}

func runReplay(ctx context.Context, o *replayOptions, args []string, stdout, stderr io.Writer) error {
	switch {
	case o.K < 1:
		return usageErr("replay: -k must be at least 1, got %d", o.K)
	case o.Concurrency < 1:
		return usageErr("replay: --concurrency must be at least 1, got %d", o.Concurrency)
	case o.Instructions == "":
		return usageErr("replay: --instructions NEW is required (the instructions to try)")
	case o.Baseline != "" && (o.Ledger != "" || o.Config != ""):
		return usageErr("replay: --baseline and --ledger/--config are alternatives; give one")
	case o.Baseline == "" && o.Ledger == "" && o.Store == "" && o.Config == "":
		return usageErr("replay: no baseline: give --baseline DIR (instructions) or --ledger FILE / --store URL / --config FILE (what watch recorded)")
	}
	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(logattr.Handler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	o.DryRun = true // replay never has an effect

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
	if err := probs.err(); err != nil {
		return err
	}
	var led *ledger.Ledger
	if o.Baseline == "" {
		path := o.Ledger
		if path == "" {
			path = o.Store
		}
		if path == "" {
			wf, err := loadWatchFile(o.Config)
			if err != nil {
				return err
			}
			if path = wf.Store; path == "" {
				path = wf.Ledger
			}
			if path == "" {
				return usageErr("replay: --config %s names no ledger (ledger:) or store (store:)", o.Config)
			}
		}
		l, err := openLedgerFile(ctx, path, "--ledger")
		if err != nil {
			return err
		}
		defer l.Close()
		led = l
	}
	inputs, err := readReplayInputs(args)
	if err != nil {
		return err
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
	baseName := o.Baseline
	if baseName == "" {
		baseName = "ledger"
	}

	sum := replaySummary{Type: "summary", ByKind: map[string]int{}, Runs: o.K, Baseline: baseName}
	marks := marksFor(stdout)
	var readErrs int
	work := func(i int) replayRecord {
		in := inputs[i]
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
	records := make([]replayRecord, len(inputs))
	processAllReplay(len(inputs), o.Concurrency, func(i int) { records[i] = work(i) })
	for _, r := range records {
		emit(r)
	}
	if o.JSON {
		writeJSONLines(stdout, []replaySummary{sum})
	} else {
		printReplaySummary(stdout, sum)
	}
	switch {
	case sum.Flips > 0:
		return &exitError{code: exitFlipped}
	case readErrs > 0:
		return &exitError{code: exitFailed}
	}
	return nil
}

// processAllReplay runs work for 0..count-1 with n workers.
func processAllReplay(count, n int, work func(int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(n, count) {
		wg.Go(func() {
			for i := range jobs {
				work(i)
			}
		})
	}
	for i := range count {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
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
	fmt.Fprintf(w, "%s %s  %s\n", mark, r.Input, what)
	if r.From != "" || r.Subject != "" {
		fmt.Fprintf(w, "    from %s: %q\n", r.From, r.Subject)
	}
	side := func(label string, s replaySide) {
		fmt.Fprintf(w, "    %-8s %s", label, describeView(s.View))
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
