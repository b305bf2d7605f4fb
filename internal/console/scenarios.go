package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"triage/internal/ledger"
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
	Rows      []*scenarioRow
	Bar       review.Thresholds
	Standings []review.Standing
	Switches  []review.Switch
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
