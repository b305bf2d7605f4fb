package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"triage/internal/ledger"
)

// scenarioRow is one scenario's figures.
type scenarioRow struct {
	Name                                      string
	Volume, Replied, Drafted, Failed, Skipped int
	Other                                     int // needs_human, over_limit, processing
	SentAsIs, Edited, Discarded, Pending      int
	Reviewed                                  int     // drafts with a fate: sent as is, edited, discarded
	AsIsShare                                 float64 // SentAsIs / Reviewed
	Weeks                                     []weekPoint
}

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
// edited, discarded) and how close the sent drafts were to triage's text,
// week by week.
func (s *Server) scenarios(w http.ResponseWriter, r *http.Request) {
	rows, err := s.scenarioRows(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "scenarios", rows)
}

func (s *Server) scenarioRows(ctx context.Context) ([]*scenarioRow, error) {
	l := s.cfg.Ledger
	counts, err := l.ScenarioCounts(ctx)
	if err != nil {
		return nil, err
	}
	stats, err := l.DraftStats(ctx)
	if err != nil {
		return nil, err
	}
	fates, err := l.DraftFates(ctx)
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
	for _, d := range stats {
		sr := row(d.Scenario)
		sr.SentAsIs, sr.Edited, sr.Discarded, sr.Pending = d.SentAsIs, d.Edited, d.Discarded, d.Pending
		sr.Reviewed = d.SentAsIs + d.Edited + d.Discarded
		if sr.Reviewed > 0 {
			sr.AsIsShare = float64(d.SentAsIs) / float64(sr.Reviewed)
		}
	}
	type acc struct {
		n   int
		sum float64
	}
	weeks := map[string]map[string]*acc{}
	for _, f := range fates {
		if f.Outcome == ledger.DraftDiscarded {
			continue
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
