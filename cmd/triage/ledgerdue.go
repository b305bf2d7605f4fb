package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"triage/internal/clip"
	"triage/internal/ledger"
)

// dueEntry is one line of triage ledger --due --json: the complaint's
// message, its clock, the time left (negative: overdue) and whether it is
// overdue.
type dueEntry struct {
	ledger.Entry
	LeftSeconds int64 `json:"left_seconds"`
	Overdue     bool  `json:"overdue"`
}

// printDue lists the running complaint clocks es, soonest deadline first
// (as ledger.Due returns them), at now.
func printDue(w io.Writer, es []ledger.Entry, now time.Time, asJSON bool) error {
	for i := range es {
		es[i].Subject = displaySubject(es[i].Subject)
	}
	if asJSON {
		out := make([]dueEntry, len(es))
		for i, e := range es {
			left := e.Complaint.Left(now)
			out[i] = dueEntry{Entry: e, LeftSeconds: int64(left / time.Second), Overdue: left <= 0}
		}
		return writeJSONLines(w, out)
	}
	w = clip.NewEscapeWriter(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEFT\tANSWER BY\tRECEIVED\tTICKET\tSTATE\tUID\tFROM\tSUBJECT")
	overdue := 0
	for _, e := range es {
		left := e.Complaint.Left(now)
		if left <= 0 {
			overdue++
		}
		subj := e.Subject
		if len([]rune(subj)) > 40 {
			subj = string([]rune(subj)[:39]) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", timeLeft(left), e.Complaint.AnswerBy.Local().Format("2006-01-02 15:04"),
			e.Complaint.Received.Local().Format("2006-01-02 15:04"), dash(e.Ticket), e.State,
			strconv.FormatUint(uint64(e.UIDValidity), 10)+"/"+strconv.FormatUint(uint64(e.UID), 10), dash(e.Sender), dash(subj))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\ncomplaints not answered on their merits: %d, overdue: %d\n", len(es), overdue)
	return err
}

// timeLeft spells the time left until a deadline in days, hours and
// minutes; a deadline passed is OVERDUE by as much.
func timeLeft(d time.Duration) string {
	s := ""
	if d <= 0 {
		s, d = "OVERDUE ", -d
	}
	d = d.Round(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0:
		return s + fmt.Sprintf("%dd%dh", days, hours)
	case hours > 0:
		return s + fmt.Sprintf("%dh%dm", hours, mins)
	}
	return s + fmt.Sprintf("%dm", mins)
}
