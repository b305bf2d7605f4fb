package console

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"triage/internal/ledger"
	"triage/internal/model"
	"triage/internal/replies"
	"triage/internal/review"
)

// scenarioRow is one scenario's figures.
type scenarioRow struct {
	Name                                           string
	Volume, Replied, Drafted, Failed, Skipped      int
	Other                                          int // needs_human, over_limit, processing
	SentAsIs, Edited, Rejected, Discarded, Pending int
	Reviewed                                       int     // drafts with a fate: sent as is, edited, rejected, discarded
	AsIsShare                                      float64 // SentAsIs / Reviewed
	Weeks                                          []weekPoint
}

// scenariosView is the scenarios page: the figures per scenario, and per
// scenario and inbox the readiness to send on its own and the switches of
// reply mode auto.
type scenariosView struct {
	Rows []*scenarioRow
	// Usage is the model usage per month and scenario, newest month
	// first; Priced says prices are configured.
	Usage     []usageRow
	Priced    bool
	Unpriced  []string // models used without a price
	Bar       review.Thresholds
	Standings []review.Standing
	Switches  []review.Switch
}

// usageRow is what the messages of one scenario cost in one month, as the
// model reported it: per email, and in money at the configured prices.
type usageRow struct {
	Month, Scenario                               string
	Emails, Resolved                              int64
	CallsPerEmail, PromptPerEmail, OutputPerEmail float64
	CachedShare                                   float64 // of the prompt tokens
	// HasCost says every model of the row has a price.
	HasCost                            bool
	Cost, CostPer1000, CostPerResolved float64
}

// usageRows sums the ledger's usage per month and scenario (over the
// models), newest month first, with its cost at prices.
func usageRows(us []ledger.UsageStat, prices model.Prices) (rows []usageRow, unpriced []string) {
	type key struct{ month, scenario string }
	sums := map[key]*ledger.UsageStat{}
	priced := map[key]bool{}
	cost := map[key]float64{}
	var keys []key
	for _, u := range us {
		k := key{u.Month, u.Scenario}
		s := sums[k]
		if s == nil {
			s = &ledger.UsageStat{Month: u.Month, Scenario: u.Scenario}
			sums[k], priced[k] = s, true
			keys = append(keys, k)
		}
		s.Add(u)
		if c, ok := prices.Cost(u.Model, u.Calls, u.Prompt, u.Cached, u.Output); ok {
			cost[k] += c
		} else {
			priced[k] = false
			if m := cmp.Or(u.Model, "(none)"); !slices.Contains(unpriced, m) {
				unpriced = append(unpriced, m)
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(b.month, a.month); c != 0 {
			return c
		}
		return strings.Compare(a.scenario, b.scenario)
	})
	for _, k := range keys {
		s := sums[k]
		r := usageRow{Month: k.month, Scenario: cmp.Or(k.scenario, "(none)"), Emails: s.Messages, Resolved: s.Resolved}
		if s.Messages > 0 {
			n := float64(s.Messages)
			r.CallsPerEmail, r.PromptPerEmail, r.OutputPerEmail = float64(s.Calls)/n, float64(s.Prompt)/n, float64(s.Output)/n
		}
		if s.Prompt > 0 {
			r.CachedShare = float64(s.Cached) / float64(s.Prompt)
		}
		if r.HasCost = len(prices) > 0 && priced[k]; r.HasCost {
			r.Cost = cost[k]
			if s.Messages > 0 {
				r.CostPer1000 = 1000 * r.Cost / float64(s.Messages)
			}
			if s.Resolved > 0 {
				r.CostPerResolved = r.Cost / float64(s.Resolved)
			}
		}
		rows = append(rows, r)
	}
	slices.Sort(unpriced)
	return rows, unpriced
}

// MaxSwitchesShown bounds the switches the scenarios page lists.
const MaxSwitchesShown = 50

// weekPoint is the mean similarity of the drafts a person sent in one week
// (ISO week, by the day they were sent) to what triage drafted.
type weekPoint struct {
	Week       string // 2026-W47
	Sent       int
	Similarity float64
	// Bar geometry for the small chart (SVG units, 0-40 high).
	X, Y, H int
}

// scenarios shows, per scenario: volume and what became of the mail
// (replied, drafted, failed, skipped), the fate of its drafts (sent as is,
// edited, rejected, discarded) and how close the sent drafts were to
// triage's text, week by week; per scenario and inbox, whether it is ready
// to send on its own and the mode reply mode auto is in; and the switches
// auto made, newest first, with their figures.
func (s *Server) scenarios(w http.ResponseWriter, r *http.Request) {
	v, err := s.scenariosOf(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "scenarios", v)
}

// scenariosOf reads the scenarios page, the draft figures once for both
// its parts.
func (s *Server) scenariosOf(ctx context.Context) (scenariosView, error) {
	rs := s.review
	v := scenariosView{Bar: s.cfg.Autonomy}
	stats, err := rs.DraftStats(ctx)
	if err != nil {
		return v, err
	}
	if v.Rows, err = s.scenarioRows(ctx, stats); err != nil {
		return v, err
	}
	us, err := s.cfg.Ledger.UsageStats(ctx)
	if err != nil {
		return v, err
	}
	v.Usage, v.Unpriced = usageRows(us, s.cfg.Prices)
	v.Priced = len(s.cfg.Prices) > 0
	if v.Standings, err = rs.StandingsOf(ctx, stats, s.cfg.Autonomy); err != nil {
		return v, err
	}
	v.Switches, err = rs.Switches(ctx, MaxSwitchesShown)
	return v, err
}

// scenarioRows are the figures per scenario, its drafts' from stats
// (DraftStats).
func (s *Server) scenarioRows(ctx context.Context, stats []review.DraftStat) ([]*scenarioRow, error) {
	l := s.cfg.Ledger
	counts, err := l.ScenarioCounts(ctx)
	if err != nil {
		return nil, err
	}
	fates, err := s.review.DraftFates(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*scenarioRow{}
	row := func(name string) *scenarioRow {
		if name == "" {
			name = "(none)"
		}
		if byName[name] == nil {
			byName[name] = &scenarioRow{Name: name}
		}
		return byName[name]
	}
	for _, c := range counts {
		sr := row(c.Scenario)
		sr.Volume += c.Count
		switch c.State {
		case ledger.StateReplied:
			sr.Replied += c.Count
		case ledger.StateDrafted:
			sr.Drafted += c.Count
		case ledger.StateFailed:
			sr.Failed += c.Count
		case ledger.StateSkipped:
			sr.Skipped += c.Count
		default:
			sr.Other += c.Count
		}
	}
	for _, d := range stats { // per scenario and inbox: summed per scenario
		sr := row(d.Scenario)
		sr.SentAsIs += d.SentAsIs
		sr.Edited += d.Edited
		sr.Rejected += d.Rejected
		sr.Discarded += d.Discarded
		sr.Pending += d.Pending
		sr.Reviewed += d.Reviewed()
		if sr.Reviewed > 0 {
			sr.AsIsShare = float64(sr.SentAsIs) / float64(sr.Reviewed)
		}
	}
	type acc struct {
		n   int
		sum float64
	}
	weeks := map[string]map[string]*acc{}
	for _, f := range fates {
		if f.Outcome != replies.DraftSentAsIs && f.Outcome != replies.DraftEdited {
			continue // nothing was sent: no similarity
		}
		name := row(f.Scenario).Name
		if weeks[name] == nil {
			weeks[name] = map[string]*acc{}
		}
		wk := isoWeek(f.ResolvedAt)
		if weeks[name][wk] == nil {
			weeks[name][wk] = &acc{}
		}
		weeks[name][wk].n++
		weeks[name][wk].sum += f.Similarity
	}
	for name, m := range weeks {
		sr := byName[name]
		for wk, a := range m {
			sr.Weeks = append(sr.Weeks, weekPoint{Week: wk, Sent: a.n, Similarity: a.sum / float64(a.n)})
		}
		slices.SortFunc(sr.Weeks, func(a, b weekPoint) int { return strings.Compare(a.Week, b.Week) })
		if len(sr.Weeks) > 26 {
			sr.Weeks = sr.Weeks[len(sr.Weeks)-26:]
		}
		for i := range sr.Weeks {
			p := &sr.Weeks[i]
			p.H = max(1, int(p.Similarity*40+0.5))
			p.X, p.Y = i*8, 40-p.H
		}
	}
	var out []*scenarioRow
	for _, sr := range byName {
		out = append(out, sr)
	}
	slices.SortFunc(out, func(a, b *scenarioRow) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func isoWeek(t time.Time) string {
	y, w := t.UTC().ISOWeek()
	return fmt.Sprintf("%d-W%02d", y, w)
}
