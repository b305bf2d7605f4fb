package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"triage"
	"triage/internal/agent"
	"triage/internal/clip"
	"triage/internal/dispatcher"
	"triage/internal/processor"
)

// RunResult is one run of one case.
type RunResult struct {
	// Passed: no failure, and something was checked. Skipped: no failure,
	// but nothing was checked (the case's only checks are rubrics and no
	// judge graded them); a skipped run is never passed.
	Passed   bool     `json:"passed"`
	Skipped  bool     `json:"skipped,omitempty"`
	Failures []string `json:"failures"`
	// CallNotes are the failures attached to each actual call (same index as
	// Outcome.FunctionCalls).
	CallNotes [][]string `json:"call_notes,omitempty"`
	Notes     []string   `json:"notes,omitempty"`
	// Error is a problem running the case (setup, replay mismatch) rather
	// than an unmet expectation; it is also in Failures.
	Error      string            `json:"error,omitempty"`
	DurationMS int64             `json:"duration_ms"`
	ModelCalls int               `json:"model_calls"`
	Tokens     agent.Usage       `json:"tokens"`
	Outcome    processor.Outcome `json:"outcome"`
	// Rubric is the judge's verdict per reply_rubric criterion (skipped
	// offline); Turns the outcomes of the case's later messages.
	Rubric []RubricVerdict `json:"rubric,omitempty"`
	// Goal is the judge's verdict on whether the simulated conversation
	// reached the customer's goal (input.simulated_customer.goal; skipped
	// offline), its Criterion the goal.
	Goal *RubricVerdict `json:"goal,omitempty"`
	// Claims are the facts the grounding checks flagged in the case
	// email's replies: the dispatcher's refusals, and the claims of a sent
	// reply that nothing backs; Grounding counts them, turns included.
	Claims    []string     `json:"flagged_claims,omitempty"`
	Grounding Grounding    `json:"grounding"`
	Turns     []TurnResult `json:"turns,omitempty"`
}

// CaseResult is every run of one case.
type CaseResult struct {
	ID          string `json:"scenario_id"`
	Description string `json:"description"`
	Category    string `json:"category,omitempty"`
	File        string `json:"file"`
	// Passed is true when every run passed (pass^N); Skipped when every
	// run was skipped (nothing was checked): neither passed nor failed.
	Passed     bool        `json:"passed"`
	Skipped    bool        `json:"skipped,omitempty"`
	Flaky      bool        `json:"flaky"`
	PassedRuns int         `json:"passed_runs"`
	Runs       []RunResult `json:"runs"`
	Case       *Case       `json:"case"`

	c *Case
}

func (cr *CaseResult) finish() {
	cr.Case = cr.c
	cr.PassedRuns = 0
	skipped := 0
	for _, r := range cr.Runs {
		switch {
		case r.Passed:
			cr.PassedRuns++
		case r.Skipped:
			skipped++
		}
	}
	// A skipped run checked nothing: it neither passes nor fails the case.
	cr.Skipped = len(cr.Runs) > 0 && skipped == len(cr.Runs)
	cr.Passed = !cr.Skipped && cr.PassedRuns+skipped == len(cr.Runs)
	cr.Flaky = cr.PassedRuns > 0 && !cr.Passed
}

// failed reports whether the case failed: not passed, not skipped.
func (cr *CaseResult) failed() bool { return !cr.Passed && !cr.Skipped }

// shown is the run the console and JUnit detail: the first failing one.
func (cr *CaseResult) shown() *RunResult {
	for i := range cr.Runs {
		if !cr.Runs[i].Passed && !cr.Runs[i].Skipped {
			return &cr.Runs[i]
		}
	}
	return &cr.Runs[0]
}

// Report is a whole eval run.
type Report struct {
	Mode             string    `json:"mode"`
	Model            string    `json:"model"`
	ModelDescription string    `json:"model_description"`
	Started          time.Time `json:"started"`
	DurationMS       int64     `json:"duration_ms"`
	Repeat           int       `json:"repeat"`
	Parallel         int       `json:"parallel"`
	// Total, Passed and Skipped count cases; a case passes when every run
	// passed, it is skipped when nothing was checked (a rubric-only case
	// without a judge). Failed = Total - Passed - Skipped.
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Skipped int `json:"skipped"`
	// PassRate is the percent of the cases checked (Total - Skipped) that
	// passed; 0 when none was checked.
	PassRate    float64 `json:"pass_rate"`
	Runs        int     `json:"runs"`
	RunsPassed  int     `json:"runs_passed"`
	RunsSkipped int     `json:"runs_skipped"`
	// Flaky lists cases that passed some runs and failed others.
	Flaky      []string    `json:"flaky"`
	ModelCalls int         `json:"model_calls"`
	Tokens     agent.Usage `json:"tokens"`
	// Grounding sums every run's replies, claims checked and flagged
	// claims (the grounding false-positive count of a suite of correct
	// cases).
	Grounding Grounding    `json:"grounding"`
	Cases     []CaseResult `json:"cases"`
}

func newReport(r *Runner, results []CaseResult, start, end time.Time) *Report {
	rep := &Report{
		Mode: r.mode, Model: r.cfg.ModelName, ModelDescription: r.desc,
		Started: start, DurationMS: end.Sub(start).Milliseconds(),
		Repeat: r.cfg.Repeat, Parallel: r.cfg.Parallel,
		Cases: results, Flaky: []string{},
	}
	for _, cr := range results {
		rep.Total++
		switch {
		case cr.Passed:
			rep.Passed++
		case cr.Skipped:
			rep.Skipped++
		}
		if cr.Flaky {
			rep.Flaky = append(rep.Flaky, cr.ID)
		}
		for _, run := range cr.Runs {
			rep.Runs++
			switch {
			case run.Passed:
				rep.RunsPassed++
			case run.Skipped:
				rep.RunsSkipped++
			}
			rep.ModelCalls += run.ModelCalls
			rep.Tokens.Add(run.Tokens)
			rep.Grounding.Add(run.Grounding)
		}
	}
	rep.PassRate = percent(rep.Passed, rep.Checked())
	return rep
}

// Checked is how many cases were checked: those not skipped.
func (rep *Report) Checked() int { return rep.Total - rep.Skipped }

// AllSkipped reports whether there were cases and every one was skipped:
// nothing was checked, whatever the pass rate says.
func (rep *Report) AllSkipped() bool { return rep.Total > 0 && rep.Skipped == rep.Total }

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// WriteHeader prints the report's opening line.
func WriteHeader(w io.Writer, n int, r *Runner) {
	fmt.Fprintf(w, "Running evaluation suite... (%d cases; %s", n, r.desc)
	if r.cfg.Repeat > 1 {
		fmt.Fprintf(w, "; %d runs each", r.cfg.Repeat)
	}
	if j := r.cfg.Judge; j != nil && j.Description != "" && r.mode == ModeLive {
		fmt.Fprintf(w, "; judge %s, model %s", j.Description, j.ModelName)
	}
	fmt.Fprint(w, ")\n\n")
}

// WriteCase prints one case: ✓/✗, the numbered function
// calls with arguments and results, and each failure. With quiet, a passing
// case is one line.
func WriteCase(w io.Writer, cr CaseResult, quiet bool) {
	WriteCaseMarks(w, cr, quiet, Glyphs)
}

// Marks are the pass, fail and skip marks of the human-readable output:
// Glyphs (✓/✗/-) on a terminal, ASCII otherwise, each optionally coloured.
type Marks struct{ Pass, Fail, Warn, Skip string }

var (
	Glyphs = Marks{Pass: "✓", Fail: "✗", Warn: "!", Skip: "-"}
	ASCII  = Marks{Pass: "ok", Fail: "FAIL", Warn: "!", Skip: "SKIP"}
)

// Coloured returns m with ANSI colours (green pass, red fail, yellow warn
// and skip).
func (m Marks) Coloured() Marks {
	return Marks{Pass: "\x1b[32m" + m.Pass + "\x1b[0m", Fail: "\x1b[31m" + m.Fail + "\x1b[0m", Warn: "\x1b[33m" + m.Warn + "\x1b[0m", Skip: "\x1b[33m" + m.Skip + "\x1b[0m"}
}

// WriteCaseMarks is WriteCase with the given marks. With quiet, a passing
// case is one line.
func WriteCaseMarks(w io.Writer, cr CaseResult, quiet bool, m Marks) {
	run := cr.shown()
	o := run.Outcome
	if quiet && (cr.Passed || cr.Skipped) {
		mark, skipped := m.Pass, ""
		if cr.Skipped {
			mark, skipped = m.Skip, " - SKIPPED"
		}
		fmt.Fprintf(w, "%s %s: %s%s (%s; %s; %d model call(s))\n", mark, cr.ID, cr.Description, skipped, describeOutcome(o), formatMS(run.DurationMS), run.ModelCalls)
		for _, n := range run.Notes { // what did not run (a simulated customer offline) is never hidden
			fmt.Fprintf(w, "  Note: %s\n", n)
		}
		return
	}
	mark := m.Pass
	switch {
	case cr.Skipped:
		mark = m.Skip
	case !cr.Passed:
		mark = m.Fail
	}
	fmt.Fprintf(w, "%s %s: %s", mark, cr.ID, cr.Description)
	switch {
	case cr.Skipped:
		fmt.Fprint(w, " - SKIPPED (nothing checked: its only checks are rubrics, graded only by a model judge in live runs)")
	case cr.Flaky:
		fmt.Fprintf(w, " - FLAKY (%d/%d runs passed)", cr.PassedRuns, len(cr.Runs))
	case !cr.Passed && len(cr.Runs) > 1:
		fmt.Fprintf(w, " - FAILED (0/%d runs passed)", len(cr.Runs))
	case !cr.Passed:
		fmt.Fprint(w, " - FAILED")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %s; %s; %d model call(s), %s tokens\n", describeOutcome(o), formatMS(run.DurationMS), run.ModelCalls, thousands(run.Tokens.Total))
	for _, n := range run.Notes {
		fmt.Fprintf(w, "  Note: %s\n", n)
	}
	if len(o.FunctionCalls) > 0 {
		fmt.Fprintln(w, "  Function calls:")
		for i, c := range o.FunctionCalls {
			var notes []string
			if i < len(run.CallNotes) {
				notes = run.CallNotes[i]
			}
			cm := m.Pass
			switch {
			case len(notes) > 0:
				cm = m.Fail // an expectation points at this call
			case c.Blocked || !c.OK:
				cm = m.Warn // refused or failed, as the case allows
			}
			fmt.Fprintf(w, "    %d. %s %s(%s)", i+1, cm, c.Name, formatArgs(c.Args))
			if len(notes) > 0 {
				fmt.Fprintf(w, " - %s", strings.Join(notes, "; "))
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "       → %s\n", formatResult(c))
		}
	} else if len(run.Failures) > 0 || o.Status != triage.StatusSkipped {
		fmt.Fprintln(w, "  Function calls: none")
	}
	writeReplyDetail(w, cr, run, m)
	if len(run.Failures) > 0 {
		fmt.Fprintln(w, "  Failures:")
		for _, f := range run.Failures {
			if strings.HasPrefix(f, "  ") {
				fmt.Fprintf(w, "    %s\n", f) // continuation of the previous failure
				continue
			}
			fmt.Fprintf(w, "    - %s\n", f)
		}
	}
	fmt.Fprintln(w)
}

func describeOutcome(o processor.Outcome) string {
	s := string(o.Status)
	if o.Reason != "" {
		s += " (" + string(o.Reason) + ")"
	}
	if o.Scenario != "" {
		s = o.Scenario + ", " + s
	}
	if s == "" {
		s = "no outcome"
	}
	return s
}

// WriteSummary prints the pass rate and the totals.
func (rep *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "Pass rate: %d/%d (%.1f%%)", rep.Passed, rep.Checked(), rep.PassRate)
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "; %d skipped (not counted)", rep.Skipped)
	}
	fmt.Fprintln(w)
	if rep.AllSkipped() {
		fmt.Fprintf(w, "Nothing was checked: every case was skipped\n")
	}
	g := rep.Grounding
	fmt.Fprintf(w, "Grounding: %d flagged claim(s); %d replies, %d claims checked\n", g.Flagged, g.Replies, g.Claims)
	if rep.Repeat > 1 {
		fmt.Fprintf(w, "pass^%d: %d/%d cases passed every run; runs: %d/%d (%.1f%%)\n",
			rep.Repeat, rep.Passed, rep.Checked(), rep.RunsPassed, rep.Runs-rep.RunsSkipped, percent(rep.RunsPassed, rep.Runs-rep.RunsSkipped))
		if len(rep.Flaky) > 0 {
			var parts []string
			for _, cr := range rep.Cases {
				if cr.Flaky {
					parts = append(parts, fmt.Sprintf("%s (%d/%d)", cr.ID, cr.PassedRuns, len(cr.Runs)))
				}
			}
			fmt.Fprintf(w, "Flaky: %s\n", strings.Join(parts, ", "))
		} else {
			fmt.Fprintln(w, "Flaky: none")
		}
	}
	var failed, skipped []string
	for _, cr := range rep.Cases {
		switch {
		case cr.Skipped:
			skipped = append(skipped, cr.ID)
		case !cr.Passed && !cr.Flaky:
			failed = append(failed, cr.ID)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "Failed: %s\n", strings.Join(failed, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "Skipped: %s\n", strings.Join(skipped, ", "))
	}
	if rep.Runs > 0 {
		type slow struct {
			id string
			ms int64
		}
		var all []slow
		for _, cr := range rep.Cases {
			for _, r := range cr.Runs {
				all = append(all, slow{cr.ID, r.DurationMS})
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].ms > all[j].ms })
		fmt.Fprintf(w, "Time: %s wall, slowest case %s (%s); model calls: %d (%.1f per run); tokens: %s (prompt %s, output %s)\n",
			formatMS(rep.DurationMS), all[0].id, formatMS(all[0].ms), rep.ModelCalls, float64(rep.ModelCalls)/float64(rep.Runs),
			thousands(rep.Tokens.Total), thousands(rep.Tokens.Prompt), thousands(rep.Tokens.Output))
	}
	fmt.Fprintf(w, "Model: %s\n", rep.ModelDescription)
}

// WriteConsole prints the whole report: every case, then the summary.
func (rep *Report) WriteConsole(w io.Writer, quiet bool) {
	for _, cr := range rep.Cases {
		WriteCase(w, cr, quiet)
	}
	if quiet {
		fmt.Fprintln(w)
	}
	rep.WriteSummary(w)
}

// WriteJSON writes everything, indented, for diffing runs.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

func formatMS(ms int64) string {
	if ms >= 10000 {
		return fmt.Sprintf("%.1f s", float64(ms)/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// formatArgs renders arguments as k="v", sorted, long strings shortened.
func formatArgs(args map[string]any) string {
	keys := slices.Sorted(maps.Keys(args))
	parts := make([]string, len(keys))
	for i, k := range keys {
		var v string
		if s, ok := args[k].(string); ok {
			v = fmt.Sprintf("%q", clip.Runes(s, 60))
		} else {
			v = clip.Runes(show(args[k]), 60)
		}
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, ", ")
}

func formatResult(c dispatcher.Record) string {
	switch {
	case c.Blocked:
		return "blocked: " + errText(c.Error)
	case !c.OK:
		return "error: " + errText(c.Error)
	}
	return clip.Runes(show(c.Result), 160)
}
