package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"triage"
)

// Reply mode auto decides, per scenario and inbox, whether triage has
// earned the right to send a scenario's replies on its own (reply_mode:
// auto), from what people did with the scenario's drafts there as the
// review records them, and records every switch between drafting and
// sending with the figures behind it.
//
// A scenario is ready in an inbox when its last MinReviewed reviewed
// drafts (the window: drafts whose fate is known, newest first: sent as
// is, edited, rejected in the console, or discarded because nobody
// answered within the draft window) are all there, at least MinSentAsIs
// percent of them went out as is, and none was rejected. Auto drafts
// until the scenario is ready and sends while it stays ready. Sending
// produces no new reviews, so while it sends, every SampleEvery-th message
// of the scenario in the inbox is still drafted: people's verdict on those
// samples moves the window, and a rejection, or a share below the bar,
// sends the scenario back to drafting.

// Defaults of Thresholds.
const (
	DefaultMinReviewed = 30
	DefaultMinSentAsIs = 90.0 // percent
	DefaultSampleEvery = 10
)

// Thresholds are the bar a scenario clears to send on its own.
type Thresholds struct {
	// MinReviewed is the size of the window: the reviewed drafts a
	// scenario needs, and how many of the latest count.
	MinReviewed int
	// MinSentAsIs is the percentage of the window that must have been sent
	// as is (0-100).
	MinSentAsIs float64
	// SampleEvery drafts every SampleEvery-th message while auto sends,
	// so that the window keeps moving; 0 drafts none (auto then never
	// falls back on its own).
	SampleEvery int
}

// DefaultThresholds are the thresholds with every default.
var DefaultThresholds = Thresholds{MinReviewed: DefaultMinReviewed, MinSentAsIs: DefaultMinSentAsIs, SampleEvery: DefaultSampleEvery}

// Check says what is wrong with t, naming the configuration keys.
func (t Thresholds) Check() error {
	var errs []error
	if t.MinReviewed < 1 {
		errs = append(errs, fmt.Errorf("autonomy.min_reviewed must be at least 1, got %d", t.MinReviewed))
	}
	if t.MinSentAsIs <= 0 || t.MinSentAsIs > 100 {
		errs = append(errs, fmt.Errorf("autonomy.min_sent_as_is must be a percentage above 0 and at most 100, got %g", t.MinSentAsIs))
	}
	if t.SampleEvery < 0 {
		errs = append(errs, fmt.Errorf("autonomy.sample_every must not be negative, got %d", t.SampleEvery))
	}
	return errors.Join(errs...)
}

// String says the bar in words.
func (t Thresholds) String() string {
	return fmt.Sprintf("at least %d reviewed drafts; of the last %d, at least %g%% sent as is and none rejected", t.MinReviewed, t.MinReviewed, t.MinSentAsIs)
}

// Readiness is where a scenario stands in an inbox.
type Readiness struct {
	Window        // the last MinReviewed reviewed drafts
	Ready  bool   `json:"ready"`
	Why    string `json:"why"` // in words, with the figures
}

// Assess says whether the window w clears the bar.
func (t Thresholds) Assess(w Window) Readiness {
	r := Readiness{Window: w}
	share := 100 * w.Share()
	switch {
	case w.Reviewed < t.MinReviewed:
		r.Why = fmt.Sprintf("%d of %d reviewed drafts needed", w.Reviewed, t.MinReviewed)
	case w.Rejected > 0:
		r.Why = fmt.Sprintf("%d rejected among the last %d reviewed drafts", w.Rejected, w.Reviewed)
	case share < t.MinSentAsIs:
		r.Why = fmt.Sprintf("%d of the last %d sent as is (%.0f%%), below %g%%", w.SentAsIs, w.Reviewed, share, t.MinSentAsIs)
	default:
		r.Ready = true
		r.Why = fmt.Sprintf("%d of the last %d sent as is (%.0f%%), none rejected", w.SentAsIs, w.Reviewed, share)
	}
	return r
}

// ResolverConfig configures NewResolver; Store is required.
type ResolverConfig struct {
	Store *Store
	// Thresholds are the bar; the zero Thresholds are DefaultThresholds.
	Thresholds Thresholds
	// DryRun decides without writing: no switch is recorded and no
	// message counted (and so none drafted as a sample).
	DryRun bool
	Logger *slog.Logger
}

// Resolver answers reply mode auto per scenario and inbox; it is the
// processor's Autonomy. Safe for concurrent use, also by several
// processes on one store.
type Resolver struct {
	cfg ResolverConfig
	log *slog.Logger
}

// NewResolver checks cfg and applies defaults.
func NewResolver(cfg ResolverConfig) (*Resolver, error) {
	if cfg.Store == nil {
		return nil, errors.New("review: Store is required")
	}
	if cfg.Thresholds == (Thresholds{}) {
		cfg.Thresholds = DefaultThresholds
	}
	if err := cfg.Thresholds.Check(); err != nil {
		return nil, fmt.Errorf("autonomy: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Resolver{cfg: cfg, log: cfg.Logger}, nil
}

// ReplyMode decides a message of scenario in inbox: send when the
// scenario is ready there (but draft every SampleEvery-th message), draft
// otherwise. A change from the mode in force is recorded with its
// figures. When the store cannot be read it drafts.
func (r *Resolver) ReplyMode(ctx context.Context, scenario string, inbox triage.Inbox) triage.ReplyMode {
	mode, err := r.decide(ctx, scenario, inbox)
	if err != nil {
		r.log.ErrorContext(ctx, "autonomy: cannot tell whether the scenario may send on its own; drafting", "scenario", scenario, "inbox", inbox.String(), "err", err)
		return triage.ReplyDraft
	}
	return mode
}

func (r *Resolver) decide(ctx context.Context, scenario string, inbox triage.Inbox) (triage.ReplyMode, error) {
	t, l := r.cfg.Thresholds, r.cfg.Store
	w, err := l.ReviewWindow(ctx, scenario, inbox, t.MinReviewed)
	if err != nil {
		return "", err
	}
	rd := t.Assess(w)
	want := triage.ReplyDraft
	if rd.Ready {
		want = triage.ReplySend
	}
	cur := triage.ReplyDraft
	switch m, err := l.GetAutoMode(ctx, scenario, inbox); {
	case err == nil:
		cur = m.Mode
	case !errors.Is(err, ErrNotFound):
		return "", err
	}
	if want != cur && !r.cfg.DryRun {
		switched, err := l.SwitchAutoMode(ctx, Switch{Scenario: scenario, Inbox: inbox, Mode: want, Window: w,
			MinReviewed: t.MinReviewed, MinSentAsIs: t.MinSentAsIs, Why: rd.Why})
		if err != nil {
			return "", err
		}
		if switched {
			level := slog.LevelInfo
			if want == triage.ReplyDraft {
				level = slog.LevelWarn
			}
			r.log.Log(ctx, level, "autonomy: reply mode auto switched", "scenario", scenario, "inbox", inbox.String(), "mode", want,
				"reviewed", w.Reviewed, "sent_as_is", w.SentAsIs, "edited", w.Edited, "rejected", w.Rejected, "discarded", w.Discarded, "why", rd.Why)
		}
	}
	if want != triage.ReplySend || r.cfg.DryRun || t.SampleEvery == 0 {
		return want, nil
	}
	n, err := l.CountAutoSend(ctx, scenario, inbox)
	if err != nil {
		return "", err
	}
	if n > 0 && n%t.SampleEvery == 0 {
		r.log.InfoContext(ctx, "autonomy: drafting a sample for review", "scenario", scenario, "inbox", inbox.String(), "message", n, "every", t.SampleEvery)
		return triage.ReplyDraft, nil
	}
	return want, nil
}

// Standing is a scenario's record in one inbox: its drafts, its readiness
// and the mode auto chose there.
type Standing struct {
	DraftStat
	Readiness Readiness `json:"readiness"`
	// Mode is the mode auto is in there: send or draft ("" before auto
	// first switched there, which is draft).
	Mode  triage.ReplyMode `json:"mode,omitempty"`
	Since time.Time        `json:"since,omitzero"` // when Mode began
}

// Standings lists every scenario and inbox with drafts, or where auto
// switched, with its readiness under t (sorted by scenario, account and
// mailbox).
func (s *Store) Standings(ctx context.Context, t Thresholds) ([]Standing, error) {
	stats, err := s.DraftStats(ctx)
	if err != nil {
		return nil, err
	}
	return s.StandingsOf(ctx, stats, t)
}

// StandingsOf is Standings over the draft figures the caller read already
// (DraftStats).
func (s *Store) StandingsOf(ctx context.Context, stats []DraftStat, t Thresholds) ([]Standing, error) {
	modes, err := s.AutoModes(ctx)
	if err != nil {
		return nil, err
	}
	type id struct {
		scenario string
		inbox    triage.Inbox
	}
	idx := map[id]int{}
	out := make([]Standing, 0, len(stats))
	for _, d := range stats {
		idx[id{d.Scenario, d.Inbox}] = len(out)
		out = append(out, Standing{DraftStat: d})
	}
	for _, m := range modes {
		i, ok := idx[id{m.Scenario, m.Inbox}]
		if !ok {
			i = len(out)
			out = append(out, Standing{DraftStat: DraftStat{Scenario: m.Scenario, Inbox: m.Inbox}})
		}
		out[i].Mode, out[i].Since = m.Mode, m.Since
	}
	for i := range out {
		sd := &out[i]
		w, err := s.ReviewWindow(ctx, sd.Scenario, sd.Inbox, t.MinReviewed)
		if err != nil {
			return nil, err
		}
		sd.Readiness = t.Assess(w)
	}
	sortStandings(out)
	return out, nil
}

func sortStandings(s []Standing) {
	slices.SortFunc(s, func(a, b Standing) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Account, b.Account), strings.Compare(a.Mailbox, b.Mailbox))
	})
}
