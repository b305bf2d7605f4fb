package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replay"
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
		baseOpts.Instructions, baseOpts.instructionsFlag = o.Baseline, "--baseline"
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
	var files []replay.Input
	if !inbox {
		if slices.Contains(args, "-") {
			return usageErr("replay: stdin is not an input; give files")
		}
		files = replay.ReadInputs(args, func(path string) ([]byte, error) { return readInput(path, nil) }, maxInputBytes)
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
	source := replay.Inputs(files)
	if inbox {
		if source, err = inboxSource(ctx, o, ws, newP, log, stderr); err != nil {
			return err
		}
	}
	baseName := o.Baseline
	if baseName == "" {
		baseName = "ledger"
	}

	var recorded func(context.Context, string) (processor.Outcome, bool)
	if led != nil {
		recorded = replay.LedgerBaseline(led)
	}
	var baseProc *processor.Processor
	if baseP != nil {
		baseProc = baseP.Processor
	}
	sum, srcErr := replay.Run(ctx, replay.Config{
		New: newP.Processor, Baseline: baseProc, Recorded: recorded, BaselineName: baseName,
		Source: source, Runs: o.K, Concurrency: o.Concurrency,
		JSON: o.JSON, Out: stdout, WarnMark: marksFor(stdout).Warn,
		Unreadable: func(err error) { fmt.Fprintf(stderr, "triage: replay: %v\n", err) },
	})
	switch {
	case srcErr != nil: // the replay is incomplete
		return failure(fmt.Errorf("replay: %w", srcErr))
	case sum.Flips > 0:
		return &cmdError{kind: errFlipped}
	case sum.Unreadable > 0:
		return failure(nil)
	}
	return nil
}
