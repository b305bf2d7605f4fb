package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"triage/internal/clip"
	"triage/internal/ledger"
	"triage/internal/model"
)

// What ledger stats prints of the model usage: per scenario, the calls and
// tokens per email from real traffic; with --cost, their money per scenario
// and month at the configuration's prices.

// usageSum adds the usage of several rows.
func usageSum(rows []ledger.UsageStat) ledger.UsageStat {
	var s ledger.UsageStat
	for _, u := range rows {
		s.Add(u)
	}
	return s
}

// perEmail is n per message of u, 0 without messages.
func perEmail(n int64, u ledger.UsageStat) float64 {
	if u.Messages == 0 {
		return 0
	}
	return float64(n) / float64(u.Messages)
}

// cachedShare is the percentage of u's prompt tokens served from a cache.
func cachedShare(u ledger.UsageStat) string {
	if u.Prompt == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(u.Cached)/float64(u.Prompt))
}

// printUsage prints the calls and tokens per email of each scenario, over
// every month.
func printUsage(w io.Writer, us []ledger.UsageStat) error {
	w = clip.NewEscapeWriter(w)
	if len(us) == 0 {
		_, err := fmt.Fprintln(w, "\nno model usage recorded yet (triage watch records it with each message it handles)")
		return err
	}
	var names []string
	by := map[string][]ledger.UsageStat{}
	for _, u := range us {
		if by[u.Scenario] == nil {
			names = append(names, u.Scenario)
		}
		by[u.Scenario] = append(by[u.Scenario], u)
	}
	fmt.Fprintln(w, "\nModel usage per email, as the model reported it (ledger stats --cost: in money):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SCENARIO\tEMAILS\tMODEL CALLS/EMAIL\tPROMPT TOKENS/EMAIL\tCACHED\tOUTPUT TOKENS/EMAIL\t")
	for _, n := range names {
		s := usageSum(by[n])
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.0f\t%s\t%.0f\t\n", dash(n), s.Messages, perEmail(s.Calls, s), perEmail(s.Prompt, s), cachedShare(s), perEmail(s.Output, s))
	}
	if len(names) > 1 {
		s := usageSum(us)
		fmt.Fprintf(tw, "(all)\t%d\t%.2f\t%.0f\t%s\t%.0f\t\n", s.Messages, perEmail(s.Calls, s), perEmail(s.Prompt, s), cachedShare(s), perEmail(s.Output, s))
	}
	return tw.Flush()
}

// costLine is one line of ledger stats --cost --json: a scenario's
// messages answered by one model in one month, their usage and cost (the
// costs null when the model has no price).
type costLine struct {
	Month           string   `json:"month"`
	Scenario        string   `json:"scenario"`
	Model           string   `json:"model"`
	Emails          int64    `json:"emails"`
	Resolved        int64    `json:"resolved"`
	ModelCalls      int64    `json:"model_calls"`
	PromptTokens    int64    `json:"prompt_tokens"`
	CachedTokens    int64    `json:"cached_tokens"`
	OutputTokens    int64    `json:"output_tokens"`
	Cost            *float64 `json:"cost"`
	CostPer1000     *float64 `json:"cost_per_1000_emails"`
	CostPerResolved *float64 `json:"cost_per_resolved"`
}

// costOf is u's cost at prices, and whether its model has a price.
func costOf(u ledger.UsageStat, prices model.Prices) (float64, bool) {
	return prices.Cost(u.Model, u.Calls, u.Prompt, u.Cached, u.Output)
}

func costLines(us []ledger.UsageStat, prices model.Prices) []costLine {
	out := make([]costLine, 0, len(us))
	for _, u := range byMonth(us) {
		l := costLine{Month: u.Month, Scenario: u.Scenario, Model: u.Model, Emails: u.Messages, Resolved: u.Resolved,
			ModelCalls: u.Calls, PromptTokens: u.Prompt, CachedTokens: u.Cached, OutputTokens: u.Output}
		if c, ok := costOf(u, prices); ok {
			l.Cost = &c
			if u.Messages > 0 {
				per := 1000 * c / float64(u.Messages)
				l.CostPer1000 = &per
			}
			if u.Resolved > 0 {
				per := c / float64(u.Resolved)
				l.CostPerResolved = &per
			}
		}
		out = append(out, l)
	}
	return out
}

// byMonth orders us by month, then scenario and model.
func byMonth(us []ledger.UsageStat) []ledger.UsageStat {
	us = slices.Clone(us)
	slices.SortStableFunc(us, func(a, b ledger.UsageStat) int {
		return strings.Compare(a.Month+"\x00"+a.Scenario+"\x00"+a.Model, b.Month+"\x00"+b.Scenario+"\x00"+b.Model)
	})
	return us
}

// printCost prints the cost report: per month and scenario (and model),
// the usage, the cost, the cost per 1,000 emails and per resolved email,
// and each month's total.
func printCost(w io.Writer, us []ledger.UsageStat, prices model.Prices) error {
	w = clip.NewEscapeWriter(w)
	fmt.Fprintln(w, "Prices (prices: in the configuration):")
	for _, m := range slices.Sorted(maps.Keys(prices)) {
		fmt.Fprintf(w, "  %s: %s\n", m, prices[m])
	}
	if len(us) == 0 {
		_, err := fmt.Fprintln(w, "\nno model usage recorded yet (triage watch records it with each message it handles)")
		return err
	}
	money := func(c float64, ok bool) string {
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%.4f", c)
	}
	unpriced := map[string]bool{}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MONTH\tSCENARIO\tMODEL\tEMAILS\tRESOLVED\tCALLS/EMAIL\tPROMPT/EMAIL\tCACHED\tOUTPUT/EMAIL\tCOST\tPER 1,000 EMAILS\tPER RESOLVED\t")
	row := func(month, scenario, mdl string, u ledger.UsageStat, c float64, ok bool) {
		per1000, perResolved := "-", "-"
		if ok && u.Messages > 0 {
			per1000 = money(1000*c/float64(u.Messages), true)
		}
		if ok && u.Resolved > 0 {
			perResolved = money(c/float64(u.Resolved), true)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.2f\t%.0f\t%s\t%.0f\t%s\t%s\t%s\t\n", month, scenario, mdl, u.Messages, u.Resolved,
			perEmail(u.Calls, u), perEmail(u.Prompt, u), cachedShare(u), perEmail(u.Output, u), money(c, ok), per1000, perResolved)
	}
	sorted := byMonth(us)
	for i := 0; i < len(sorted); {
		j := i
		var month []ledger.UsageStat
		total, allPriced := 0.0, true
		for ; j < len(sorted) && sorted[j].Month == sorted[i].Month; j++ {
			u := sorted[j]
			c, ok := costOf(u, prices)
			if !ok {
				unpriced[u.Model] = true
				allPriced = false
			}
			total += c
			month = append(month, u)
			row(u.Month, dash(u.Scenario), dash(u.Model), u, c, ok)
		}
		if j-i > 1 {
			row(sorted[i].Month, "(month)", "", usageSum(month), total, allPriced)
		}
		i = j
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(unpriced) > 0 {
		names := slices.Sorted(maps.Keys(unpriced))
		fmt.Fprintf(w, "\nNo price for %s: add it to prices: (its rows and months show no cost).\n", strings.Join(names, ", "))
	}
	return nil
}
