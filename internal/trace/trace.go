// Package trace is what triage tells its operators about its work. It
// records one OpenTelemetry trace per inbound email (the email's root span;
// a span per model turn and per function call after the GenAI semantic
// conventions; spans for the IMAP fetch, the store claim and the SMTP send)
// and exports it over OTLP/HTTP when the standard OTEL_* variables ask for
// it; without them every span is a no-op. It carries the log attributes
// that name a message on every line logged about it (WithLogAttrs,
// LogHandler), and exposes the Prometheus metrics and /healthz of triage
// watch (Metrics).
//
// Message content (what the model is sent and answers, function arguments
// and results) is never recorded unless
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
package trace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of triage's spans.
const Name = "triage"

// CaptureContentEnv, set to true, records message content in the spans.
const CaptureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

var captureContent atomic.Bool

// CaptureContent reports whether spans may carry message content.
func CaptureContent() bool { return captureContent.Load() }

// SetCaptureContent switches the recording of message content (Setup sets
// it from CaptureContentEnv).
func SetCaptureContent(on bool) { captureContent.Store(on) }

// Enabled reports whether getenv configures trace export: an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), with
// neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
func Enabled(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Options configure Setup.
type Options struct {
	Version string // service.version
	// Getenv reads the environment (default os.Getenv); the exporter
	// itself reads the OTEL_EXPORTER_OTLP_* variables from the process
	// environment.
	Getenv func(string) string
}

// Setup installs the global tracer provider, exporting spans in batches
// over OTLP/HTTP, when Enabled; otherwise it changes nothing. The returned
// shutdown flushes what is left; call it before the process exits.
func Setup(ctx context.Context, o Options) (shutdown func(context.Context) error, err error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	SetCaptureContent(strings.EqualFold(getenv(CaptureContentEnv), "true"))
	if !Enabled(getenv) {
		return func(context.Context) error { return nil }, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(v); p != "" {
			if p != "http/protobuf" && p != "http/json" {
				return nil, fmt.Errorf("trace: %s=%s: triage exports over OTLP/HTTP: use http/protobuf (the default) or http/json", v, p)
			}
			break
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("trace: OTLP/HTTP exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(Name), semconv.ServiceVersion(o.Version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
		resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace: resource: %w", err)
	}
	// The sampler follows OTEL_TRACES_SAMPLER (default: every trace).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

func tracer() oteltrace.Tracer { return otel.Tracer(Name) }

// StartClient starts a span for a call to another system (IMAP, SMTP, the
// store).
func StartClient(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, oteltrace.Span) {
	return tracer().Start(ctx, name, oteltrace.WithAttributes(attrs...), oteltrace.WithSpanKind(oteltrace.SpanKindClient))
}

// End ends span, marking it failed with err when err is not nil.
func End(span oteltrace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// emailKey marks a context that carries an email's root span.
type emailKey struct{}

// EmailSpanName is the name of an email's root span.
const EmailSpanName = "triage email"

// Email starts the root span of an email's trace, a new trace whatever ctx
// carries, or, when ctx already belongs to an email (watch started it
// before the fetch), returns that span and started false: only the one who
// started it ends it.
func Email(ctx context.Context, attrs ...attribute.KeyValue) (_ context.Context, span oteltrace.Span, started bool) {
	if s, ok := ctx.Value(emailKey{}).(oteltrace.Span); ok {
		s.SetAttributes(attrs...)
		return ctx, s, false
	}
	ctx, span = tracer().Start(ctx, EmailSpanName, oteltrace.WithNewRoot(), oteltrace.WithAttributes(attrs...))
	return context.WithValue(ctx, emailKey{}, span), span, true
}

// EmailSpan is the root span of ctx's email (a no-op span outside one).
func EmailSpan(ctx context.Context) oteltrace.Span {
	if s, ok := ctx.Value(emailKey{}).(oteltrace.Span); ok {
		return s
	}
	return oteltrace.SpanFromContext(context.Background()) // a no-op span
}

// ID is the trace id of ctx's span ("" when none is recorded).
func ID(ctx context.Context) string {
	sc := oteltrace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	return sc.TraceID().String()
}

// The attributes of triage's own spans.
const (
	InboxKey    = attribute.Key("triage.inbox")
	KeyKey      = attribute.Key("triage.key")
	StatusKey   = attribute.Key("triage.status")
	ReasonKey   = attribute.Key("triage.reason")
	ScenarioKey = attribute.Key("triage.scenario")
	// DetectionKey is how the scenario was chosen (rules, model,
	// fallback: the outcome's detection.method).
	DetectionKey = attribute.Key("triage.detection")
	// DetectionFirstTurnKey is true when the model chose the scenario in
	// the email's first turn (the outcome's detection.first_turn).
	DetectionFirstTurnKey = attribute.Key("triage.detection.first_turn")
	StateKey              = attribute.Key("triage.ledger.state")
	UIDKey                = attribute.Key("triage.imap.uid")
	BlockedKey            = attribute.Key("triage.tool.blocked")
	PolicyKey             = attribute.Key("triage.tool.refused_by")
	FileKey               = attribute.Key("triage.file")
	// The verifier's reading of a reply (VerifySpan).
	VerifyModelKey   = attribute.Key("triage.verify.model")
	VerifyVerdictKey = attribute.Key("triage.verify.verdict")
	VerifyFlaggedKey = attribute.Key("triage.verify.flagged")
	VerifyIgnoredKey = attribute.Key("triage.verify.ignored")
	// VerifyStatementsKey holds the statements as JSON (CaptureContent only).
	VerifyStatementsKey = attribute.Key("triage.verify.statements")
)
