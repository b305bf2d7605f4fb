package trace

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"triage"
)

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMetricsHandler(t *testing.T) {
	m := NewMetrics()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	if code, _ := get(t, srv, "/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before the first pass = %d, want 503", code)
	}
	m.Observe(Processed{Status: "replied", Scenario: "valid-warranty", ModelCalls: 3, PromptTokens: 10, CachedTokens: 4, OutputTokens: 5}, 200*time.Millisecond)
	m.Observe(Processed{Status: "skipped"}, time.Millisecond)
	m.Reached("replied")
	m.Error("imap")
	m.PassDone(time.Unix(1700000000, 0))
	m.ComplaintsDue(4, 1)

	if code, body := get(t, srv, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
	_, body := get(t, srv, "/metrics")
	for _, want := range []string{
		`triage_messages_processed_total{scenario="valid-warranty",status="replied"} 1`,
		`triage_messages_processed_total{scenario="none",status="skipped"} 1`,
		`triage_model_calls_total 3`,
		`triage_model_tokens_total{kind="prompt"} 10`,
		`triage_model_tokens_total{kind="output"} 5`,
		`triage_model_tokens_total{kind="cached"} 4`,
		`triage_messages_final_total{state="replied"} 1`,
		`triage_errors_total{kind="imap"} 1`,
		`triage_message_duration_seconds_count 2`,
		`triage_last_pass_timestamp_seconds 1.7e+09`,
		`triage_complaints_due{state="open"} 4`,
		`triage_complaints_due{state="overdue"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestNilMetricsRecordsNothing(t *testing.T) {
	var m *Metrics
	m.Observe(Processed{}, 0)
	m.Reached("x")
	m.Error("x")
	m.PassDone(time.Now())
	m.SetHealthy(true)
}

// /healthz reports sending as failing once the limit of replies in a row
// were refused by the mail server, and recovers with the next reply that
// goes out; skipped mail and other failures change nothing.
func TestHealthzSendFailures(t *testing.T) {
	refused := Processed{Status: triage.StatusFailed, Reason: triage.ReasonSendFailed}
	replied := Processed{Status: triage.StatusReplied}
	other := Processed{Status: triage.StatusFailed, Reason: triage.ReasonNoScenario}
	skipped := Processed{Status: triage.StatusSkipped, Reason: triage.ReasonList}
	tests := []struct {
		name  string
		limit int
		seq   []Processed
		want  int
	}{
		{"below the default", 0, []Processed{refused, refused}, http.StatusOK},
		{"at the default", 0, []Processed{refused, refused, refused}, http.StatusServiceUnavailable},
		{"interleaved with skips and other failures", 0, []Processed{refused, skipped, refused, other, refused}, http.StatusServiceUnavailable},
		{"a reply resets", 0, []Processed{refused, refused, replied, refused}, http.StatusOK},
		{"recovers", 0, []Processed{refused, refused, refused, replied}, http.StatusOK},
		{"configured 1", 1, []Processed{refused}, http.StatusServiceUnavailable},
		{"configured 5", 5, []Processed{refused, refused, refused, refused}, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMetrics()
			m.SetSendFailureLimit(tc.limit)
			m.PassDone(time.Now())
			srv := httptest.NewServer(m.Handler())
			defer srv.Close()
			for _, o := range tc.seq {
				m.Observe(o, time.Millisecond)
			}
			code, body := get(t, srv, "/healthz")
			if code != tc.want {
				t.Errorf("/healthz = %d %q, want %d", code, body, tc.want)
			}
			if code != http.StatusOK && !strings.Contains(body, "sending failing") {
				t.Errorf("/healthz body %q does not say sending is failing", body)
			}
		})
	}
}
