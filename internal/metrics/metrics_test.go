package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"triage/internal/agent"
	"triage/internal/processor"
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

func TestHandler(t *testing.T) {
	m := New()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	if code, _ := get(t, srv, "/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before the first pass = %d, want 503", code)
	}
	m.Observe(processor.Outcome{Status: "replied", Scenario: "valid-warranty", ModelCalls: 3, Tokens: agent.Usage{Prompt: 10, Output: 5}}, 200*time.Millisecond)
	m.Observe(processor.Outcome{Status: "skipped"}, time.Millisecond)
	m.Final("replied")
	m.Error("imap")
	m.PassDone(time.Unix(1700000000, 0))

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
		`triage_messages_final_total{state="replied"} 1`,
		`triage_errors_total{kind="imap"} 1`,
		`triage_message_duration_seconds_count 2`,
		`triage_last_pass_timestamp_seconds 1.7e+09`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestNilMetricsRecordsNothing(t *testing.T) {
	var m *Metrics
	m.Observe(processor.Outcome{}, 0)
	m.Final("x")
	m.Error("x")
	m.PassDone(time.Now())
	m.SetHealthy(true)
}
