package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"triage/eval"
	"triage/internal/agent"
	"triage/internal/atomicfile"
	"triage/internal/processor"
	"triage/internal/settings"
	"triage/internal/trace"
)

type evalOptions struct {
	Instructions string
	Model        string
	modelOptions              // --provider, --base-url, --api-key-file
	Judge        judgeOptions // --judge-*
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
	processor.Bounds
	table settings.Table
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

In live runs a model judge grades reply_rubric criteria and a simulated
customer's goal, its quotes checked against the replies: the model under
test, or the one --judge-provider / --judge-model choose.

A case whose only checks are reply_rubric criteria is skipped when no judge
grades them (offline, --replay): it is neither passed nor failed, and the
pass rate counts only the cases checked.

Exit status: 0 when the pass rate is at or above --min-pass-rate, 4 below it
or when every case was skipped, 2 for invalid case files or a usage error.

The case format is documented in docs/eval.md.`,
		Example: `  triage eval --offline eval/cases
  triage eval -j 4 --repeat 3 --filter valid-warranty --junit out/eval.xml
  triage eval --record eval/cassettes          # live, once, with a key
  triage eval --replay eval/cassettes --min-pass-rate 100
  triage eval --judge-provider openai --judge-model gpt-4o-mini   # another judge`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return usageError(err)
			}
			if err := o.table.Check(); err != nil {
				return usageError(fmt.Errorf("eval: the pipeline cannot start, no case ran: %w", err))
			}
			return runEval(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.table = evalSettings(o)
	o.table.Register(cmd.Flags())
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
		return usageError(err)
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
	log := slog.New(trace.LogHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	quiet, marks := o.Quiet, marksFor(stdout)
	// http and mcp tools a case does not mock run for real (MCP servers
	// started once for the whole run).
	bk, err := startBackends(ctx, ins.Scenarios, ins.Tools, false, log)
	if err != nil {
		return err
	}
	defer bk.Close()
	// In live runs a model judges reply_rubric and the simulated
	// customers' goals (its own when --judge-* choose one), and the model
	// under test plays input.simulated_customer; offline those are
	// skipped, never passed.
	judge, customer, closeModels, err := evalModels(ctx, o)
	if err != nil {
		return usageError(err)
	}
	defer closeModels()
	runner, err := eval.New(eval.Config{
		Judge:           judge,
		Customer:        customer,
		Scenarios:       ins.Scenarios,
		Tools:           ins.Tools,
		Policy:          ins.Policy,
		Lexicon:         ins.Lexicon,
		Backends:        bk.Routes(),
		Bounds:          o.Bounds,
		ModelName:       o.Model,
		Offline:         o.Offline,
		Provider:        o.Provider,
		BaseURL:         o.BaseURL,
		APIKeyFile:      o.APIKeyFile,
		Inputs:          o.Attachments,
		MaxOutputTokens: o.MaxOutputTokens,
		ToolChoice:      agent.ToolChoice(o.ToolChoice),
		RecordDir:       o.Record,
		ReplayDir:       o.Replay,
		Parallel:        o.Parallel,
		StaffAddresses:  o.Staff,
		Repeat:          o.Repeat,
		Logger:          log,
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
			return usageError(err)
		}
	}
	if o.JSONOut != "" {
		if err := writeFile(o.JSONOut, rep.WriteJSON); err != nil {
			return usageError(err)
		}
	}
	if msg := setupFailure(rep); msg != "" {
		return usageError(fmt.Errorf("eval: the pipeline cannot start, no case ran: %s", msg))
	}
	if err := ctx.Err(); err != nil {
		return &cmdError{kind: errBelowGate, err: fmt.Errorf("eval: interrupted: %w", err)}
	}
	if rep.AllSkipped() {
		return &cmdError{kind: errBelowGate, err: fmt.Errorf("eval: every case (%d) was skipped, nothing was checked: their only checks are reply_rubric criteria, which a model judge grades only in live runs", rep.Total)}
	}
	if rep.PassRate < o.MinPassRate {
		return &cmdError{kind: errBelowGate, err: fmt.Errorf("eval: pass rate %.1f%% is below --min-pass-rate %g%%", rep.PassRate, o.MinPassRate)}
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

// writeFile writes a report all or nothing (atomicfile).
func writeFile(name string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return atomicfile.Write(name, b.Bytes(), 0o644)
}
