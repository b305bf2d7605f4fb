package eval

import (
	"fmt"
	"io"
)

// writeReplyDetail prints a run's rubric verdicts and later turns, and the
// case's pass^k when it ran more than once.
func writeReplyDetail(w io.Writer, cr CaseResult, run *RunResult, m Marks) {
	if len(run.Rubric) > 0 {
		fmt.Fprintln(w, "  Rubric:")
		for _, v := range run.Rubric {
			mark := map[string]string{VerdictPass: m.Pass, VerdictFail: m.Fail, VerdictSkipped: "-", VerdictError: m.Warn}[v.Verdict]
			fmt.Fprintf(w, "    %s %s: %s", mark, v.Criterion, v.Verdict)
			if v.Quote != "" {
				fmt.Fprintf(w, " (%q)", shorten(v.Quote, 80))
			}
			if v.Reason != "" {
				fmt.Fprintf(w, " - %s", shorten(v.Reason, 160))
			}
			fmt.Fprintln(w)
		}
	}
	for _, c := range run.Claims {
		fmt.Fprintf(w, "  Flagged claim: %s\n", shorten(c, 240))
	}
	for i, t := range run.Turns {
		mark := m.Pass
		if len(t.Failures) > 0 {
			mark = m.Fail
		}
		fmt.Fprintf(w, "  Turn %d %s %q: %s", i+2, mark, shorten(t.Body, 50), describeOutcome(t.Outcome))
		if t.Outcome.Followup {
			fmt.Fprint(w, ", follow-up of "+t.Outcome.TicketID)
		}
		if t.Outcome.Escalated {
			fmt.Fprint(w, ", escalated")
		}
		fmt.Fprintln(w)
	}
	if len(cr.Runs) > 1 {
		fmt.Fprintf(w, "  pass^%d: %v (%d/%d runs passed)\n", len(cr.Runs), cr.PassedRuns == len(cr.Runs), cr.PassedRuns, len(cr.Runs))
	}
}
