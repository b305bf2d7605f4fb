package replay

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"triage/internal/clip"
	"triage/internal/dispatcher"
)

func describeView(v View) string {
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
	if d := v.Decision; d != nil {
		s += "; decision " + string(d.Basis)
		if len(d.Remedies) > 0 {
			rs := make([]string, len(d.Remedies))
			for i, r := range d.Remedies {
				rs[i] = string(r)
			}
			s += " (" + strings.Join(rs, ", ") + ")"
		}
	}
	if len(v.Commitments) > 0 {
		cs := make([]string, len(v.Commitments))
		for i, c := range v.Commitments {
			cs[i] = string(c)
		}
		s += "; commits " + strings.Join(cs, ", ")
	}
	return s
}

// printFlip writes one record of the human-readable report, mark first.
func printFlip(w io.Writer, r Record, mark string) {
	kinds := make([]string, len(r.Kinds))
	for i, k := range r.Kinds {
		kinds[i] = string(k)
	}
	what := strings.Join(kinds, ", ")
	if r.Type == TypeUnstable {
		what = "unstable: the runs disagree"
	}
	// The file name and the From are a stranger's (the subject is quoted).
	fmt.Fprintf(w, "%s %s  %s\n", mark, clip.Escape(r.Input), what)
	if r.From != "" || r.Subject != "" {
		fmt.Fprintf(w, "    from %s: %q\n", clip.Escape(r.From), r.Subject)
	}
	side := func(label string, s Side) {
		fmt.Fprintf(w, "    %-8s %s", label, clip.Escape(describeView(s.View)))
		if s.Runs > 1 {
			fmt.Fprintf(w, " [%d/%d runs]", s.Agreed, s.Runs)
		}
		fmt.Fprintln(w)
	}
	side("before:", r.Baseline)
	side("after:", r.New)
	if slices.Contains(r.Kinds, KindTicket) {
		if slices.Contains(r.New.View.Calls, dispatcher.FuncCreateTicket) {
			fmt.Fprintln(w, "    a ticket would now be opened")
		} else {
			fmt.Fprintln(w, "    no ticket would be opened any more")
		}
	}
}

// printSummary writes the last line of the human-readable report.
func printSummary(w io.Writer, s Summary) {
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
