// The Prometheus metrics of `triage watch`: messages by status and scenario,
// model calls, tokens, errors, latency, and a /healthz endpoint. Callers push
// plain values (Processed, a ledger state's name, DraftCounts): the metrics
// know no pipeline or ledger types.

package trace

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"triage"
)

// Metrics holds the collectors on their own registry. A nil *Metrics is
// valid and records nothing.
type Metrics struct {
	reg        *prometheus.Registry
	processed  *prometheus.CounterVec
	ledger     *prometheus.CounterVec
	modelCalls prometheus.Counter
	tokens     *prometheus.CounterVec
	errors     *prometheus.CounterVec
	latency    prometheus.Histogram
	lastPass   prometheus.Gauge
	drafts     *prometheus.GaugeVec
	oauth2     *prometheus.GaugeVec
	complaints *prometheus.GaugeVec
	healthy    atomic.Bool
	// sendFails counts replies refused (send_failed) in a row; at
	// sendLimit or more, /healthz reports sending as failing.
	sendFails atomic.Int64
	sendLimit atomic.Int64
}

// DefaultSendFailureLimit is how many replies refused in a row make
// /healthz fail.
const DefaultSendFailureLimit = 3

// SetSendFailureLimit sets how many replies refused by the mail server in a
// row make /healthz report sending as failing (0: DefaultSendFailureLimit).
func (m *Metrics) SetSendFailureLimit(n int) {
	if m == nil {
		return
	}
	if n <= 0 {
		n = DefaultSendFailureLimit
	}
	m.sendLimit.Store(int64(n))
}

// NewMetrics registers the triage collectors (and the Go/process collectors) on a
// fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		processed: counterVec("triage_messages_processed_total",
			"Messages run through the pipeline, by outcome status and scenario.", "status", "scenario"),
		ledger: counterVec("triage_messages_final_total",
			"Messages that reached a final ledger state (replied, skipped, failed, needs_human, over_limit), by state.", "state"),
		modelCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "triage_model_calls_total",
			Help: "Model calls made while processing messages.",
		}),
		tokens: counterVec("triage_model_tokens_total", "Model tokens used, by kind (prompt, cached: the part of prompt served from a context cache, output).", "kind"),
		errors: counterVec("triage_errors_total", "Errors by kind (imap, smtp, ledger, process).", "kind"),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "triage_message_duration_seconds",
			Help:    "Time to process one message through the pipeline.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
		}),
		lastPass: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "triage_last_pass_timestamp_seconds",
			Help: "Unix time of the last completed mailbox pass.",
		}),
	}
	m.drafts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "triage_drafts",
		Help: "Drafts in the ledger (reply mode draft), by scenario and what people did with them: drafted (all), sent_as_is, edited, rejected (in the console), discarded, pending. The figures of 'triage ledger stats' for this inbox.",
	}, []string{"scenario", "outcome"})
	m.oauth2 = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "triage_oauth2_token_expiry_seconds",
		Help: "Unix time at which the OAuth2 access token last obtained expires, by server (imap, smtp; smtp is absent when it shares imap's). Subtract time() for the seconds left.",
	}, []string{"server"})
	m.complaints = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "triage_complaints_due",
		Help: "Consumer complaints on the store not answered on their merits, by state: open (the deadline is ahead) and overdue (it passed: each was logged as an ERROR). The figures of 'triage ledger --due'.",
	}, []string{"state"})
	m.reg.MustRegister(m.processed, m.ledger, m.modelCalls, m.tokens, m.errors, m.latency, m.lastPass, m.drafts, m.oauth2, m.complaints,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// counterVec is a counter with the given name, help and label names.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// Registry is the registry the collectors live on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Processed is one pipeline outcome, as much of it as the metrics count.
type Processed struct {
	Status       triage.Status
	Reason       triage.Reason
	Scenario     string // "" is counted as "none"
	ModelCalls   int
	PromptTokens int
	CachedTokens int // the part of PromptTokens served from a context cache
	OutputTokens int
}

// Observe records one pipeline outcome that took d.
func (m *Metrics) Observe(o Processed, d time.Duration) {
	if m == nil {
		return
	}
	scenario := o.Scenario
	if scenario == "" {
		scenario = "none"
	}
	m.processed.WithLabelValues(string(o.Status), scenario).Inc()
	switch {
	case o.Reason == triage.ReasonSendFailed:
		// The submission error itself was counted as "smtp" where it
		// happened (the watcher's mail sender calls Error).
		m.sendFails.Add(1)
	case o.Status.Answered():
		m.sendFails.Store(0)
	}
	m.modelCalls.Add(float64(o.ModelCalls))
	m.tokens.WithLabelValues("prompt").Add(float64(o.PromptTokens))
	m.tokens.WithLabelValues("cached").Add(float64(o.CachedTokens))
	m.tokens.WithLabelValues("output").Add(float64(o.OutputTokens))
	m.latency.Observe(d.Seconds())
}

// Reached counts a message that reached a terminal ledger state (state is
// the state's name, the label value).
func (m *Metrics) Reached(state string) {
	if m == nil {
		return
	}
	m.ledger.WithLabelValues(state).Inc()
}

// DraftCounts are the draft figures of one scenario, as the ledger counts
// them; each is the gauge of one outcome label (drafted, sent_as_is, edited,
// rejected, discarded, pending).
type DraftCounts struct {
	Drafted, SentAsIs, Edited, Rejected, Discarded, Pending int
}

// Drafts sets the draft figures of one scenario.
func (m *Metrics) Drafts(scenario string, c DraftCounts) {
	if m == nil {
		return
	}
	if scenario == "" {
		scenario = "none"
	}
	for outcome, n := range map[string]int{
		string(triage.StatusDrafted): c.Drafted, "sent_as_is": c.SentAsIs, "edited": c.Edited,
		"rejected": c.Rejected, "discarded": c.Discarded, "pending": c.Pending,
	} {
		m.drafts.WithLabelValues(scenario, outcome).Set(float64(n))
	}
}

// ComplaintsDue sets the complaints not answered on their merits: open
// ones, whose deadline is ahead, and overdue ones.
func (m *Metrics) ComplaintsDue(open, overdue int) {
	if m == nil {
		return
	}
	m.complaints.WithLabelValues("open").Set(float64(open))
	m.complaints.WithLabelValues("overdue").Set(float64(overdue))
}

// Error counts an error of a kind (imap, smtp, ledger, process).
func (m *Metrics) Error(kind string) {
	if m == nil {
		return
	}
	m.errors.WithLabelValues(kind).Inc()
}

// TokenExpiry records when the access token just obtained for server
// (imap, smtp) expires.
func (m *Metrics) TokenExpiry(server string, t time.Time) {
	if m == nil {
		return
	}
	m.oauth2.WithLabelValues(server).Set(float64(t.Unix()))
}

// PassDone records a completed mailbox pass at t and marks the watcher
// healthy.
func (m *Metrics) PassDone(t time.Time) {
	if m == nil {
		return
	}
	m.lastPass.Set(float64(t.Unix()))
	m.healthy.Store(true)
}

// SetHealthy sets what /healthz reports (false while the IMAP connection is
// down).
func (m *Metrics) SetHealthy(ok bool) {
	if m == nil {
		return
	}
	m.healthy.Store(ok)
}

// Handler serves /metrics and /healthz: 200 "ok" when healthy; 503 while the
// IMAP connection is down, or once the send failure limit of replies in a
// row were refused by the mail server (until one goes out).
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if !m.healthy.Load() {
			http.Error(w, "not connected", http.StatusServiceUnavailable)
			return
		}
		limit := m.sendLimit.Load()
		if limit <= 0 {
			limit = DefaultSendFailureLimit
		}
		if n := m.sendFails.Load(); n >= limit {
			http.Error(w, fmt.Sprintf("sending failing: the last %d replies were not sent (send_failed; see the log)", n), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}
