package eval

import (
	"fmt"
	"io"

	"triage/internal/clip"
)

// writeReplyDetail prints a run's rubric verdicts, flagged claims and later
// turns (each with its own), and the case's pass^k when it ran more than
// once.
func writeReplyDetail(w io.Writer, cr CaseResult, run *RunResult, m Marks) {
	writeRubric(w, "  ", run.Rubric, m)
	writeClaims(w, "  ", run.Claims)
	for i, t := range run.Turns {
		mark := m.Pass
		if len(t.Failures) > 0 {
			mark = m.Fail
		}
		fmt.Fprintf(w, "  Turn %d %s %q: %s", i+2, mark, clip.Runes(t.Body, 50), describeOutcome(t.Outcome))
		if t.Outcome.Followup {
			fmt.Fprint(w, ", follow-up of "+t.Outcome.TicketID)
		}
		if t.Outcome.Escalated {
			fmt.Fprint(w, ", escalated")
		}
		fmt.Fprintln(w)
		writeRubric(w, "    ", t.Rubric, m)
		writeClaims(w, "    ", t.Claims)
	}
	if g := run.Goal; g != nil {
		writeVerdict(w, "  Goal:", *g, m)
	}
	if len(cr.Runs) > 1 {
		fmt.Fprintf(w, "  pass^%d: %v (%d/%d runs passed)\n", len(cr.Runs), cr.PassedRuns == len(cr.Runs), cr.PassedRuns, len(cr.Runs))
	}
}

func writeRubric(w io.Writer, indent string, verdicts []RubricVerdict, m Marks) {
	if len(verdicts) == 0 {
		return
	}
	fmt.Fprintln(w, indent+"Rubric:")
	for _, v := range verdicts {
		writeVerdict(w, indent+" ", v, m)
	}
}

// writeVerdict prints one verdict on a line after prefix: its mark, what
// was graded, the verdict, the judge's quote and reason.
func writeVerdict(w io.Writer, prefix string, v RubricVerdict, m Marks) {
	mark := map[string]string{VerdictPass: m.Pass, VerdictFail: m.Fail, VerdictSkipped: "-", VerdictError: m.Warn}[v.Verdict]
	fmt.Fprintf(w, "%s %s %s: %s", prefix, mark, v.Criterion, v.Verdict)
	if v.Quote != "" {
		fmt.Fprintf(w, " (%q)", clip.Runes(v.Quote, 80))
	}
	if v.Reason != "" {
		fmt.Fprintf(w, " - %s", clip.Runes(v.Reason, 160))
	}
	fmt.Fprintln(w)
}

func writeClaims(w io.Writer, indent string, claims []string) {
	for _, c := range claims {
		fmt.Fprintf(w, "%sFlagged claim: %s\n", indent, clip.Runes(c, 240))
	}
}
