package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"triage/internal/trace"
)

// recordSpans installs a tracer provider that keeps every span in memory
// for the test.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	return rec
}

func spanAttr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// One email through triage process is one trace: the email's root span
// with its outcome, under it a `chat <model>` span per model turn and an
// `execute_tool <name>` span per function call, the refused one marked
// blocked with the policy that refused it. The outcome names the trace.
func TestProcessTraceTree(t *testing.T) {
	rec := recordSpans(t)
	stdout := processExample(t, "01-valid-warranty-pl.eml", "--offline-faults", "third_party")
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 1 || outs[0].TraceID == "" {
		t.Fatalf("outcomes %+v; want one with a trace id", outs)
	}
	spans := rec.Ended()
	var root sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == trace.EmailSpanName {
			root = s
		}
	}
	if root == nil {
		t.Fatalf("no %q span among %d", trace.EmailSpanName, len(spans))
	}
	if root.SpanContext().TraceID().String() != outs[0].TraceID || root.Parent().IsValid() {
		t.Errorf("root span: trace %s parent %v; outcome trace %s", root.SpanContext().TraceID(), root.Parent(), outs[0].TraceID)
	}
	if got := spanAttr(root, "triage.status") + " " + spanAttr(root, "triage.reason") + " " + spanAttr(root, "triage.key"); got != "replied  "+string(outs[0].Key) {
		t.Errorf("root attributes %q", got)
	}
	var chats, tools []string
	blocked := ""
	for _, s := range spans {
		if s == root {
			continue
		}
		if s.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("span %s is in another trace", s.Name())
		}
		switch {
		case strings.HasPrefix(s.Name(), "chat "):
			chats = append(chats, s.Name())
			if s.Parent().SpanID() != root.SpanContext().SpanID() {
				t.Errorf("%s is not a child of the root", s.Name())
			}
			if spanAttr(s, "gen_ai.operation.name") != "chat" || spanAttr(s, "gen_ai.provider.name") != trace.ProviderOffline ||
				spanAttr(s, "gen_ai.request.model") == "" || spanAttr(s, "gen_ai.usage.input_tokens") == "" {
				t.Errorf("%s attributes %v", s.Name(), s.Attributes())
			}
		case strings.HasPrefix(s.Name(), "execute_tool "):
			tools = append(tools, s.Name())
			if spanAttr(s, "triage.tool.blocked") == "true" {
				blocked = spanAttr(s, "gen_ai.tool.name") + ":" + spanAttr(s, "triage.tool.refused_by")
			}
		}
	}
	if len(chats) < 2 || outs[0].ModelCalls != len(chats) {
		t.Errorf("%d chat spans %v for %d model calls", len(chats), chats, outs[0].ModelCalls)
	}
	if len(tools) != len(outs[0].FunctionCalls) {
		t.Errorf("tool spans %v for %d function calls", tools, len(outs[0].FunctionCalls))
	}
	if blocked != "send_email:recipient_not_allowed" {
		t.Errorf("blocked call span %q; want send_email refused by recipient_not_allowed", blocked)
	}
}

// TestProcessTraceDetection: the email span says how the scenario was
// chosen, as the outcome does: method model, and first_turn when the model
// chose in the email's first turn.
func TestProcessTraceDetection(t *testing.T) {
	rec := recordSpans(t)
	stdout := processExample(t, "11-job-question.eml")
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 1 || outs[0].Detection.Method != "model" || !outs[0].Detection.FirstTurn {
		t.Fatalf("outcomes %+v; want one chosen by the model in the first turn", outs)
	}
	for _, s := range rec.Ended() {
		if s.Name() != trace.EmailSpanName {
			continue
		}
		if got := spanAttr(s, "triage.detection") + " " + spanAttr(s, "triage.detection.first_turn"); got != "model true" {
			t.Errorf("email span detection %q, want \"model true\"", got)
		}
		return
	}
	t.Errorf("no %q span", trace.EmailSpanName)
}

// processExample runs `triage process --json` on the sample inbox's email
// name, with the sample warranty registry, a fresh ticket store and outbox
// and flags, and returns its standard output; any exit but 0 fails t.
func processExample(t *testing.T, name string, flags ...string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../examples/inbox", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "out")}, flags...)
	code, stdout, stderr := runCLI(t, string(raw), append(args, "-")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return stdout
}
