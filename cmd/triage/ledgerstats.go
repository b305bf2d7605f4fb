package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"triage/internal/ledger"
	"triage/internal/settings"
	"triage/internal/termsafe"
)

// newLedgerStatsCmd prints what people did with triage's drafts, per
// scenario: how a team knows when a scenario is ready to send on its own.
func newLedgerStatsCmd() *cobra.Command {
	var (
		path, config, storeURL string
		asJSON                 bool
		table                  settings.Table
	)
	cmd := &cobra.Command{
		Use:   "stats [--ledger FILE | --store URL | --config FILE] [--json]",
		Short: "Per scenario: drafts made, sent as is, edited, discarded",
		Long: `Stats reads the watch ledger and prints, for each scenario, how many drafts
triage made in draft mode and what people did with them, as triage watch
learnt it from the Sent folder (the one the server marks \Sent, or sent_folder):

  drafted     drafts triage stored in the Drafts folder
  sent as is  a person sent the draft unchanged (word similarity >= 0.9)
  edited      a person replied in the thread with other text
  discarded   nobody replied in the thread within 7 days
  pending     younger than 7 days, no reply yet

A scenario whose drafts go out as is, week after week, is ready to send on
its own: set reply_mode: send in its frontmatter. The same figures are the
Prometheus gauge triage_drafts{scenario,outcome} of --metrics-addr. --json
prints one JSON object per scenario per line. It only reads the ledger.`,
		Example: `  triage ledger stats --config /etc/triage/triage.yaml
  triage ledger stats --ledger /var/lib/triage/ledger.db --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			path, err := ledgerPath(cmd, table, &path, &config, &storeURL)
			if err != nil {
				return err
			}
			l, err := openLedgerFile(cmd.Context(), path, "ledger stats")
			if err != nil {
				return err
			}
			defer l.Close()
			stats, err := l.DraftStats(cmd.Context())
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if asJSON {
				return writeJSONLines(cmd.OutOrStdout(), stats)
			}
			return printDraftStats(cmd.OutOrStdout(), stats)
		},
	}
	table = append(ledgerSettings(&path, &config, &storeURL),
		&settings.Setting{Flag: "json", Usage: "one JSON object per scenario per line", Var: settings.Bool(&asJSON, false)})
	table.Register(cmd.Flags())
	return cmd
}

func printDraftStats(w io.Writer, stats []ledger.DraftStat) error {
	w = termsafe.NewWriter(w) // scenario names come from files, but never trust a terminal
	if len(stats) == 0 {
		_, err := fmt.Fprintln(w, "no drafts yet (triage watch makes them in draft mode: reply_mode: draft)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tDRAFTED\tSENT AS IS\tEDITED\tDISCARDED\tPENDING\tSENT AS IS (OF RESOLVED)")
	var all ledger.DraftStat
	row := func(s ledger.DraftStat) {
		rate := "-"
		if n := s.SentAsIs + s.Edited + s.Discarded; n > 0 {
			rate = fmt.Sprintf("%.0f%%", 100*float64(s.SentAsIs)/float64(n))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", dash(s.Scenario), s.Drafted, s.SentAsIs, s.Edited, s.Discarded, s.Pending, rate)
	}
	for _, s := range stats {
		row(s)
		all.Drafted += s.Drafted
		all.SentAsIs += s.SentAsIs
		all.Edited += s.Edited
		all.Discarded += s.Discarded
		all.Pending += s.Pending
	}
	if len(stats) > 1 {
		all.Scenario = "(all)"
		row(all)
	}
	return tw.Flush()
}
