package trace

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genai"
	"google.golang.org/protobuf/proto"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "triage"}, false},
	} {
		if got := Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// A protocol other than OTLP/HTTP is a clear error, not silence.
func TestSetupRefusesGRPC(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
	_, err := Setup(context.Background(), Options{Getenv: func(k string) string { return env[k] }})
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc") {
		t.Errorf("Setup with grpc: %v; want an error naming the variable", err)
	}
}

// receiver is a loopback OTLP/HTTP collector: it decodes every export
// request (protobuf, gzip or not) and keeps the spans.
type receiver struct {
	t     *testing.T
	mu    sync.Mutex
	spans []*tracepb.Span
	svc   []string
	paths []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			rc.t.Errorf("receiver: gzip: %v", err)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		rc.t.Errorf("receiver: %v", err)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		rc.t.Errorf("receiver: Content-Type %q", ct)
	}
	var req collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		rc.t.Errorf("receiver: decode: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.paths = append(rc.paths, r.URL.Path)
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				rc.svc = append(rc.svc, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	resp, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

// exportOne sets tracing up against a loopback receiver with env, records
// one email (a model turn through the real genai SDK, a refused function
// call), shuts down, and returns what the receiver got.
// exportCached is the cachedContentTokenCount of exportOne's model answer.
const exportCached = 60

func exportOne(t *testing.T, env map[string]string) *receiver {
	rc := &receiver{t: t}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	for k, v := range env {
		t.Setenv(k, v)
	}
	prev := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prev); SetCaptureContent(false) })
	ctx := context.Background()
	shutdown, err := Setup(ctx, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	gem := geminitest.New(t, geminitest.ReplyUsage(geminitest.Usage{Prompt: geminitest.PromptTokens, Cached: exportCached, Output: geminitest.OutputTokens},
		geminitest.Cand("STOP", geminitest.Call("c1", "send_email", geminitest.Obj("to", "jan@example.com")))))
	m := &Model{Next: &agent.Gemini{Client: gem.Client()}, Provider: ProviderGemini}
	ectx, span, started := Email(ctx, InboxKey.String("serwis@example.com/INBOX"))
	if !started {
		t.Fatal("Email did not start a root span")
	}
	if _, err := m.GenerateContent(ectx, "gemini-test", []*genai.Content{genai.NewContentFromText("Mój numer SN-1", genai.RoleUser)}, &genai.GenerateContentConfig{}); err != nil {
		t.Fatal(err)
	}
	_, ts := Tool(ectx, "send_email")
	EndTool(ts, true, "recipient_not_allowed", map[string]any{"to": "evil@example.com"}, nil)
	span.End()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return rc
}

// The exporter sends the email's spans to the OTLP/HTTP endpoint of the
// standard variables: the root, the model turn after the GenAI
// conventions, the refused call with its policy; no message content.
func TestExportOverOTLPHTTP(t *testing.T) {
	rc := exportOne(t, nil)
	if !slices.Contains(rc.paths, "/v1/traces") {
		t.Errorf("export paths %v; want /v1/traces", rc.paths)
	}
	if !slices.Contains(rc.svc, "triage") {
		t.Errorf("service names %v; want triage", rc.svc)
	}
	byName := map[string]*tracepb.Span{}
	for _, s := range rc.spans {
		byName[s.Name] = s
	}
	root, chat, tool := byName[EmailSpanName], byName["chat gemini-test"], byName["execute_tool send_email"]
	if root == nil || chat == nil || tool == nil {
		t.Fatalf("spans %v; want the email, its model turn and its call", names(rc.spans))
	}
	for _, s := range []*tracepb.Span{chat, tool} {
		if hex.EncodeToString(s.TraceId) != hex.EncodeToString(root.TraceId) || hex.EncodeToString(s.ParentSpanId) != hex.EncodeToString(root.SpanId) {
			t.Errorf("%s is not a child of the email's root span", s.Name)
		}
	}
	got := map[string]any{}
	for _, k := range []string{"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model"} {
		got[k] = attr(chat, k).GetStringValue()
	}
	got["gen_ai.usage.input_tokens"] = attr(chat, "gen_ai.usage.input_tokens").GetIntValue()
	got["gen_ai.usage.output_tokens"] = attr(chat, "gen_ai.usage.output_tokens").GetIntValue()
	got["gen_ai.usage.cache_read.input_tokens"] = attr(chat, "gen_ai.usage.cache_read.input_tokens").GetIntValue()
	var reasons []string
	for _, v := range attr(chat, "gen_ai.response.finish_reasons").GetArrayValue().GetValues() {
		reasons = append(reasons, v.GetStringValue())
	}
	got["gen_ai.response.finish_reasons"] = reasons
	want := map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "gcp.gemini", "gen_ai.request.model": "gemini-test",
		"gen_ai.response.model": geminitest.ModelVersion, "gen_ai.usage.input_tokens": int64(geminitest.PromptTokens),
		"gen_ai.usage.output_tokens": int64(geminitest.OutputTokens), "gen_ai.response.finish_reasons": []string{"STOP"},
		"gen_ai.usage.cache_read.input_tokens": int64(exportCached),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chat span (-want +got):\n%s", diff)
	}
	if chat.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("chat span kind %v", chat.Kind)
	}
	if attr(tool, "gen_ai.operation.name").GetStringValue() != "execute_tool" || attr(tool, "gen_ai.tool.name").GetStringValue() != "send_email" ||
		!attr(tool, "triage.tool.blocked").GetBoolValue() || attr(tool, "triage.tool.refused_by").GetStringValue() != "recipient_not_allowed" {
		t.Errorf("tool span attributes %v", tool.Attributes)
	}
	for _, s := range rc.spans {
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments"} {
			if attr(s, k) != nil {
				t.Errorf("%s records %s without %s", s.Name, k, CaptureContentEnv)
			}
		}
	}
}

// With the switch on, the content is there.
func TestExportCapturesContentWhenEnabled(t *testing.T) {
	rc := exportOne(t, map[string]string{CaptureContentEnv: "true"})
	var in, args string
	for _, s := range rc.spans {
		if v := attr(s, "gen_ai.input.messages"); v != nil {
			in = v.GetStringValue()
		}
		if v := attr(s, "gen_ai.tool.call.arguments"); v != nil {
			args = v.GetStringValue()
		}
	}
	if !strings.Contains(in, `[{"parts":[{"text":"Mój numer SN-1"}]`) || !strings.Contains(args, "evil@example.com") {
		t.Errorf("input messages %q, call arguments %q; want the content", in, args)
	}
}

// Without the variables nothing is installed: spans are no-ops and emails
// get no trace id.
func TestOffByDefault(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(k, "")
	}
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(noop.NewTracerProvider())
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	shutdown, err := Setup(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	ctx, span, _ := Email(context.Background())
	defer span.End()
	if span.IsRecording() || ID(ctx) != "" {
		t.Errorf("tracing is on without OTEL_EXPORTER_OTLP_ENDPOINT: recording %v, id %q", span.IsRecording(), ID(ctx))
	}
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
