package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"triage/eval"
	"triage/internal/dispatcher"
	"triage/internal/llm"
	"triage/internal/logattr"
)

type evalOptions struct {
	Instructions string
	Model        string
	modelOptions // --provider, --base-url, --api-key-file
	Offline      bool
	Record       string
	Replay       string
	Parallel     int
	Repeat       int
	Filter       []string
	MinPassRate  float64
	JUnit        string
	JSONOut      string
	JSON         bool
	Staff        []string
	Quiet        bool
	Verbose      bool
	MaxTurns     int
	TurnTimeout  time.Duration
	Deadline     time.Duration
	MaxCallsTurn int
	MaxCalls     int
}

func newEvalCmd() *cobra.Command {
	o := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval [flags] [CASES...]",
		Short: "Run the eval suite: scripted cases through the real pipeline with mock clients",
		Long: `Eval runs each case file (YAML; a directory means its *.yaml files, default
eval/cases) through the same processor and dispatcher as production, with
only the clients replaced by the case's mock_function_responses, then checks
the scenario, status, function calls and reply against expected_output.

The model is Gemini when GEMINI_API_KEY (or Vertex settings) is set, the
built-in offline model otherwise or with --offline. --record DIR stores each
case's model HTTP exchanges as a cassette; --replay DIR replays them without
a model, so a recorded live run becomes a hermetic CI check.

Exit status: 0 when the pass rate is at or above --min-pass-rate, 4 below it,
2 for invalid case files or a usage error.

The case format is documented in docs/eval.md.`,
		Example: `  triage eval --offline eval/cases
  triage eval -j 4 --repeat 3 --filter valid-warranty --junit out/eval.xml
  triage eval --record eval/cassettes          # live, once, with a key
  triage eval --replay eval/cassettes --min-pass-rate 100`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEval(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	envString(f, &o.Instructions, "instructions", "TRIAGE_INSTRUCTIONS", "", "instructions directory with main.md, scenarios/*.md and tools.yaml (default: the built-in instructions)")
	envString(f, &o.Model, "model", "TRIAGE_MODEL", llm.DefaultModel, "model id (Gemini's by default; with --provider openai, the endpoint's)")
	o.modelOptions.addFlags(f)
	f.BoolVar(&o.Offline, "offline", false, "force the built-in offline model even when GEMINI_API_KEY is set")
	f.StringVar(&o.Record, "record", "", "record each case's model HTTP exchanges to DIR/<scenario_id>.yaml (API keys stripped)")
	f.StringVar(&o.Replay, "replay", "", "replay model exchanges from DIR instead of calling a model; an unmatched request fails the case")
	f.IntVarP(&o.Parallel, "parallel", "j", 1, "cases run in parallel")
	f.IntVar(&o.Repeat, "repeat", 1, "run each case N times; reports pass^N and flaky cases")
	f.StringSliceVar(&o.Filter, "filter", nil, "run only cases whose scenario_id or category matches (glob; comma-separated or repeated)")
	f.Float64Var(&o.MinPassRate, "min-pass-rate", 99, "lowest passing percentage that exits 0 (else exit 4)")
	f.StringVar(&o.JUnit, "junit", "", "write a JUnit XML report to FILE (its directory is created before the run)")
	f.StringVar(&o.JSONOut, "json-out", "", "write the full JSON report (every case, call and outcome) to FILE (its directory is created before the run)")
	f.BoolVar(&o.JSON, "json", false, "print one JSON object per case on stdout, one per line (as process --json does); the summary goes to stderr")
	f.StringSliceVar(&o.Staff, "staff", nil, "staff addresses that escalating scenarios may mail (repeatable)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print each passing case on one line, without its calls")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "log each pipeline step to stderr")
	f.IntVar(&o.MaxTurns, "max-turns", 10, "maximum model turns per email")
	f.DurationVar(&o.TurnTimeout, "turn-timeout", 30*time.Second, "timeout of one model call")
	f.DurationVar(&o.Deadline, "deadline", 2*time.Minute, "total time budget per email")
	f.IntVar(&o.MaxCallsTurn, "max-calls-per-turn", dispatcher.DefaultMaxCallsPerTurn, "function calls the model may make in one turn")
	f.IntVar(&o.MaxCalls, "max-calls", dispatcher.DefaultMaxCallsPerEmail, "function calls the model may make per email")
	return cmd
}

func runEval(ctx context.Context, o *evalOptions, args []string, stdout, stderr io.Writer) error {
	if msg := o.modelOptions.check(o.Model); msg != "" && !o.Offline {
		return usageErr("eval: %s", msg)
	}
	switch {
	case o.Parallel < 1:
		return usageErr("eval: -j must be at least 1, got %d", o.Parallel)
	case o.Repeat < 1:
		return usageErr("eval: --repeat must be at least 1, got %d", o.Repeat)
	case o.MinPassRate < 0 || o.MinPassRate > 100:
		return usageErr("eval: --min-pass-rate must be between 0 and 100, got %g", o.MinPassRate)
	case o.Record != "" && o.Replay != "":
		return usageErr("eval: --record and --replay are exclusive")
	case o.Record != "" && o.Repeat > 1:
		return usageErr("eval: --record runs each case once; replay the recording with --repeat")
	}
	if o.Replay != "" {
		if st, err := os.Stat(o.Replay); err != nil || !st.IsDir() {
			return usageErr("eval: --replay %s: not a directory of cassettes (record one with --record)", o.Replay)
		}
	}
	for _, p := range o.Filter {
		if _, err := path.Match(p, ""); err != nil {
			return usageErr("eval: --filter %q: %v", p, err)
		}
	}
	for _, f := range []struct{ flag, file string }{{"--junit", o.JUnit}, {"--json-out", o.JSONOut}} {
		if f.file == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.file), 0o755); err != nil {
			return usageErr("eval: %s %s: %v", f.flag, f.file, err)
		}
		if st, err := os.Stat(f.file); err == nil && st.IsDir() {
			return usageErr("eval: %s %s: is a directory", f.flag, f.file)
		}
	}
	if o.MaxTurns < 1 {
		return usageErr("eval: --max-turns must be at least 1, got %d", o.MaxTurns)
	}
	if o.TurnTimeout <= 0 || o.Deadline <= 0 {
		return usageErr("eval: --turn-timeout and --deadline must be positive")
	}
	if len(args) == 0 {
		args = []string{"eval/cases"}
	}
	ins, err := loadInstructions(o.Instructions)
	if err != nil {
		return err
	}
	cases, err := eval.Load(args, ins.Scenarios)
	if err != nil {
		var le *eval.LoadError
		if errors.As(err, &le) && o.JUnit != "" {
			if werr := writeFile(o.JUnit, func(w io.Writer) error { return eval.WriteJUnitLoadError(w, le) }); werr != nil {
				fmt.Fprintln(stderr, "triage:", werr)
			}
		}
		return &exitError{code: exitUsage, err: err}
	}
	if len(o.Filter) > 0 {
		cases = filterCases(cases, o.Filter)
		if len(cases) == 0 {
			return usageErr("eval: no case matches --filter %s", strings.Join(o.Filter, ","))
		}
	}

	level := slog.LevelError
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(logattr.Handler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	quiet, marks := o.Quiet, marksFor(stdout)
	// http and mcp tools a case does not mock run for real (MCP servers
	// started once for the whole run).
	bk, err := startBackends(ctx, ins.Scenarios, ins.Tools, false, log)
	if err != nil {
		return err
	}
	defer bk.Close()
	runner, err := eval.New(eval.Config{
		Scenarios:      ins.Scenarios,
		Tools:          ins.Tools,
		Backends:       bk.Routes(),
		MaxCallsTurn:   o.MaxCallsTurn,
		MaxCalls:       o.MaxCalls,
		ModelName:      o.Model,
		Offline:        o.Offline,
		Provider:       o.Provider,
		BaseURL:        o.BaseURL,
		APIKeyFile:     o.APIKeyFile,
		RecordDir:      o.Record,
		ReplayDir:      o.Replay,
		Parallel:       o.Parallel,
		StaffAddresses: o.Staff,
		Repeat:         o.Repeat,
		MaxTurns:       o.MaxTurns,
		TurnTimeout:    o.TurnTimeout,
		Deadline:       o.Deadline,
		Logger:         log,
		OnCase: func(cr eval.CaseResult) {
			if o.JSON {
				writeJSONLines(stdout, []eval.CaseResult{cr})
				return
			}
			eval.WriteCaseMarks(stdout, cr, quiet, marks)
		},
	})
	if err != nil {
		return usageErr("%v", err)
	}
	if runner.Mode() == eval.ModeOffline && !o.Offline {
		fmt.Fprintln(stderr, "triage: no GEMINI_API_KEY (or Vertex settings): eval uses the built-in offline model")
	}
	human := stdout
	if o.JSON {
		human = stderr // stdout carries JSON lines only
	}
	eval.WriteHeader(human, len(cases), runner)
	rep := runner.Run(ctx, cases)
	if quiet && !o.JSON {
		fmt.Fprintln(human)
	}
	rep.WriteSummary(human)

	if o.JUnit != "" {
		if err := writeFile(o.JUnit, rep.WriteJUnit); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	if o.JSONOut != "" {
		if err := writeFile(o.JSONOut, rep.WriteJSON); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	if msg := setupFailure(rep); msg != "" {
		return &exitError{code: exitUsage, err: fmt.Errorf("eval: the pipeline cannot start, no case ran: %s", msg)}
	}
	if err := ctx.Err(); err != nil {
		return &exitError{code: exitBelowGate, err: fmt.Errorf("eval: interrupted: %w", err)}
	}
	if rep.PassRate < o.MinPassRate {
		return &exitError{code: exitBelowGate, err: fmt.Errorf("eval: pass rate %.1f%% is below --min-pass-rate %g%%", rep.PassRate, o.MinPassRate)}
	}
	return nil
}

// setupFailure returns the setup error when every run of every case failed
// to start (the same configuration error each time), else "".
func setupFailure(rep *eval.Report) string {
	first := ""
	for _, c := range rep.Cases {
		for _, r := range c.Runs {
			if len(r.Failures) == 0 || !strings.HasPrefix(r.Failures[0], "Setup: ") {
				return ""
			}
			if first == "" {
				first = strings.TrimPrefix(r.Failures[0], "Setup: ")
			}
		}
	}
	return first
}

// filterCases keeps cases whose id or category matches one of the globs.
func filterCases(cases []*eval.Case, globs []string) []*eval.Case {
	var out []*eval.Case
	for _, c := range cases {
		for _, g := range globs {
			if ok, _ := path.Match(g, c.ID); ok {
				out = append(out, c)
				break
			}
			if ok, _ := path.Match(g, c.Category); ok && c.Category != "" {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// writeFile writes a report through a temporary file and renames it.
func writeFile(name string, write func(io.Writer) error) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, name)
}
