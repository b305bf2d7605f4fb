package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"triage/internal/clip"
	"triage/internal/model"
	"triage/internal/review"
	"triage/internal/settings"
)

// newLedgerStatsCmd prints what people did with triage's drafts, per
// scenario and inbox, and whether each is ready to send on its own: how a
// team knows when a scenario has earned it, and what reply mode auto did.
func newLedgerStatsCmd() *cobra.Command {
	var (
		path, config, storeURL string
		asJSON, cost           bool
		bar                    review.Thresholds
		table                  settings.Table
	)
	cmd := &cobra.Command{
		Use:   "stats [--ledger FILE | --store URL | --config FILE] [--json]",
		Short: "Per scenario and inbox: drafts sent as is, edited, rejected, discarded; ready to send on its own",
		Long: `Stats reads the watch ledger and prints, for each scenario in each inbox
(account/mailbox), how many drafts triage made in draft (or auto) mode and
what people did with them, as triage watch learnt it from the Sent folder
(the one the server marks \Sent, or sent_folder) or the console recorded it:

  drafted     drafts triage stored in the Drafts folder
  sent as is  a person sent the draft unchanged (word similarity >= 0.9)
  edited      a person replied in the thread with other text
  rejected    a person rejected the draft in triage console
  discarded   nobody replied in the thread within 7 days
  pending     younger than 7 days, no reply yet

and whether the scenario is READY to send on its own there: at least
--autonomy-min-reviewed reviewed drafts (sent as is, edited, rejected or
discarded; default 30), of the last that many at least
--autonomy-min-sent-as-is percent sent as is (default 90) and none rejected.
The thresholds are autonomy.min_reviewed and autonomy.min_sent_as_is of the
watch configuration when there is one. AUTO is the mode reply_mode: auto is
in there (send or draft, since when); every switch auto made follows, with
its figures. A scenario that is ready can be set to reply_mode: send, or
left to reply_mode: auto, which switches it (and back, should the drafts it
still samples be rejected or edited too often).

The same draft figures, per scenario for the daemon's inbox, are the
Prometheus gauge triage_drafts{scenario,outcome} of --metrics-addr. --json
prints one JSON object per scenario and inbox per line, with its readiness,
the thresholds and its switches. It only reads the ledger.

After the drafts, the model usage per scenario from real traffic: messages,
model calls, prompt tokens (and the share served from a context cache) and
output tokens per email, summed over every attempt, as the model reported
them. --cost turns them into money with the configuration's prices: (per
model, input, cached input and output per 1M tokens), per scenario and
month: the cost, the cost per 1,000 emails and the cost per resolved email
(replied or drafted); --cost --json prints one JSON object per scenario,
month and model. docs/scale.md, "What an answer costs", reads it.`,
		Example: `  triage ledger stats --config /etc/triage/triage.yaml
  triage ledger stats --ledger /var/lib/triage/ledger.db --json
  triage ledger stats --store postgres://triage@db/triage --autonomy-min-reviewed 50
  triage ledger stats --config /etc/triage/triage.yaml --cost`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return usageError(err)
			}
			path, wo, err := ledgerPath(cmd, table, &path, &config, &storeURL)
			if err != nil {
				return err
			}
			wo, err = barOfConfig(cmd, table, config, wo, &bar)
			if err != nil {
				return err
			}
			var prices model.Prices
			if wo != nil {
				prices = wo.Prices
			}
			if cost && len(prices) == 0 {
				return usageErr("ledger stats --cost: no prices: add a prices: section to the configuration (per model id: input, cached_input, output per 1M tokens; deploy/triage.example.yaml)")
			}
			l, err := openLedgerFile(cmd.Context(), path, "ledger stats")
			if err != nil {
				return err
			}
			defer l.Close()
			us, err := l.UsageStats(cmd.Context())
			if err != nil {
				return failure(err)
			}
			if cost {
				if asJSON {
					return writeJSONLines(cmd.OutOrStdout(), costLines(us, prices))
				}
				return printCost(cmd.OutOrStdout(), us, prices)
			}
			rs := review.Of(l)
			st, err := rs.Standings(cmd.Context(), bar)
			if err != nil {
				return failure(err)
			}
			sw, err := rs.Switches(cmd.Context(), maxSwitchesListed)
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return writeJSONLines(cmd.OutOrStdout(), statsLines(st, sw, bar))
			}
			if err := printDraftStats(cmd.OutOrStdout(), st, sw, bar); err != nil {
				return err
			}
			return printUsage(cmd.OutOrStdout(), us)
		},
	}
	table = append(ledgerSettings(&path, &config, &storeURL),
		&settings.Setting{Flag: "json", Usage: "one JSON object per scenario and inbox per line (with --cost: per scenario, month and model)", Var: settings.Bool(&asJSON, false)},
		&settings.Setting{Flag: "cost", Usage: "the cost report: tokens turned into money with the configuration's prices:, per scenario and month", Var: settings.Bool(&cost, false)})
	table = append(table, autonomySettings(&bar)...)
	table.Register(cmd.Flags())
	return cmd
}

// maxSwitchesListed bounds the switches ledger stats lists.
const maxSwitchesListed = 100

// barOfConfig takes the autonomy thresholds not given as flags from the
// watch configuration, when one is found as watch finds it: wo, when the
// caller has loaded it already (ledgerPath), else loaded here. It returns
// the configuration (nil when none was found), its prices checked.
func barOfConfig(cmd *cobra.Command, table settings.Table, config string, wo *watchOptions, bar *review.Thresholds) (*watchOptions, error) {
	cfg, _ := findConfig(cmd.Flags(), config)
	if cfg == "" {
		return nil, nil
	}
	if wo == nil {
		var err error
		if wo, err = loadWatchFile(cfg); err != nil {
			return nil, err
		}
	}
	if err := wo.Prices.Check(); err != nil {
		return nil, usageErr("ledger stats: %s: %v", cfg, err)
	}
	for flag, set := range map[string]func(){
		"autonomy-min-reviewed":   func() { bar.MinReviewed = wo.Autonomy.MinReviewed },
		"autonomy-min-sent-as-is": func() { bar.MinSentAsIs = wo.Autonomy.MinSentAsIs },
		"autonomy-sample-every":   func() { bar.SampleEvery = wo.Autonomy.SampleEvery },
	} {
		if !table.Given(cmd.Flags(), flag, os.Getenv) {
			set()
		}
	}
	if err := bar.Check(); err != nil {
		return nil, usageErr("ledger stats: %s: %v", cfg, err)
	}
	return wo, nil
}

// statsLine is one line of ledger stats --json: a scenario in an inbox,
// its drafts, readiness and mode, the bar it was judged by, and the
// switches auto made there, newest first.
type statsLine struct {
	review.Standing
	MinReviewed int             `json:"min_reviewed"`
	MinSentAsIs float64         `json:"min_sent_as_is"`
	Switches    []review.Switch `json:"switches"`
}

func statsLines(st []review.Standing, sw []review.Switch, bar review.Thresholds) []statsLine {
	out := make([]statsLine, 0, len(st))
	for _, s := range st {
		l := statsLine{Standing: s, MinReviewed: bar.MinReviewed, MinSentAsIs: bar.MinSentAsIs, Switches: []review.Switch{}}
		for _, x := range sw {
			if x.Scenario == s.Scenario && x.Inbox == s.Inbox {
				l.Switches = append(l.Switches, x)
			}
		}
		out = append(out, l)
	}
	return out
}

func printDraftStats(w io.Writer, st []review.Standing, sw []review.Switch, bar review.Thresholds) error {
	w = clip.NewEscapeWriter(w) // scenario names come from files, mailbox names from the server: never trust a terminal
	if len(st) == 0 {
		_, err := fmt.Fprintln(w, "no drafts yet (triage watch makes them in draft mode: reply_mode: draft or auto)")
		return err
	}
	fmt.Fprintf(w, "Ready to send on its own: %s.\n\n", bar)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "SCENARIO\tINBOX\tDRAFTED\tSENT AS IS\tEDITED\tREJECTED\tDISCARDED\tPENDING\tLAST %d: AS IS\tREADY\tAUTO\tWHY\n", bar.MinReviewed)
	var all review.DraftStat
	for _, s := range st {
		r := s.Readiness
		window, ready, mode := "-", "no", "-"
		if r.Reviewed > 0 {
			window = fmt.Sprintf("%d/%d %.0f%%", r.SentAsIs, r.Reviewed, 100*r.Share())
		}
		if r.Ready {
			ready = "yes"
		}
		if s.Mode != "" {
			mode = string(s.Mode) + " since " + s.Since.UTC().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", dash(s.Scenario), dash(inboxName(s.DraftStat)),
			s.Drafted, s.SentAsIs, s.Edited, s.Rejected, s.Discarded, s.Pending, window, ready, mode, r.Why)
		all.Add(s.DraftStat)
	}
	if len(st) > 1 {
		fmt.Fprintf(tw, "(all)\t\t%d\t%d\t%d\t%d\t%d\t%d\t\t\t\t\n", all.Drafted, all.SentAsIs, all.Edited, all.Rejected, all.Discarded, all.Pending)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(sw) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nSwitches of reply_mode: auto, newest first:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tSCENARIO\tINBOX\tTO\tREVIEWED\tSENT AS IS\tEDITED\tREJECTED\tDISCARDED\tAS IS\tBAR\tWHY")
	for _, x := range sw {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t%d / %g%%\t%s\n", x.At.UTC().Format("2006-01-02 15:04"), x.Scenario, x.Inbox,
			x.Mode, x.Reviewed, x.SentAsIs, x.Edited, x.Rejected, x.Discarded, 100*x.Share(), x.MinReviewed, x.MinSentAsIs, x.Why)
	}
	return tw.Flush()
}

// inboxName is account/mailbox, or "" for drafts that name no inbox.
func inboxName(s review.DraftStat) string {
	if s.Account == "" && s.Mailbox == "" {
		return ""
	}
	return s.Inbox.String()
}
