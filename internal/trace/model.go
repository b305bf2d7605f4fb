package trace

import (
	"context"
	"encoding/json"

	"errors"
	"fmt"

	"go.opentelemetry.io/otel/codes"

	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	oteltrace "go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
)

// The gen_ai.provider.name values of the models triage talks to.
const (
	ProviderGemini   = "gcp.gemini"    // the Gemini API
	ProviderVertexAI = "gcp.vertex_ai" // Gemini on Vertex AI
	ProviderOpenAI   = "openai"        // an OpenAI-compatible endpoint
	ProviderOffline  = "triage.offline"
)

// Model records a `chat <model>` span for every call of Next (each turn,
// each retry) after the GenAI semantic conventions: operation, provider,
// requested and answering model, token usage, finish reasons, and the
// error type of a failed call. With CaptureContent, the messages sent and
// the answer are recorded too (gen_ai.input.messages,
// gen_ai.output.messages, gen_ai.system_instructions).
type Model struct {
	Next     agent.Model
	Provider string // gen_ai.provider.name
}

var _ agent.Model = (*Model)(nil)

// GenerateContent calls Next inside the span.
func (m *Model) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	ctx, span := tracer().Start(ctx, "chat "+model, oteltrace.WithSpanKind(oteltrace.SpanKindClient),
		oteltrace.WithAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(m.Provider),
			semconv.GenAIRequestModelKey.String(model)))
	defer span.End()
	if config != nil && config.MaxOutputTokens > 0 {
		span.SetAttributes(semconv.GenAIRequestMaxTokensKey.Int(int(config.MaxOutputTokens)))
	}
	if config != nil && config.Temperature != nil {
		span.SetAttributes(semconv.GenAIRequestTemperatureKey.Float64(float64(*config.Temperature)))
	}
	if CaptureContent() && span.IsRecording() {
		span.SetAttributes(semconv.GenAIInputMessagesKey.String(jsonOf(contents)))
		if config != nil && config.SystemInstruction != nil {
			span.SetAttributes(semconv.GenAISystemInstructionsKey.String(jsonOf(config.SystemInstruction.Parts)))
		}
	}
	resp, err := m.Next.GenerateContent(ctx, model, contents, config)
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		End(span, err)
		return resp, err
	}
	if resp == nil {
		return resp, err
	}
	if resp.ModelVersion != "" {
		span.SetAttributes(semconv.GenAIResponseModelKey.String(resp.ModelVersion))
	}
	if resp.ResponseID != "" {
		span.SetAttributes(semconv.GenAIResponseIDKey.String(resp.ResponseID))
	}
	if u := resp.UsageMetadata; u != nil {
		span.SetAttributes(semconv.GenAIUsageInputTokensKey.Int(int(u.PromptTokenCount)),
			semconv.GenAIUsageOutputTokensKey.Int(int(u.CandidatesTokenCount+u.ThoughtsTokenCount)),
			semconv.GenAIUsageCacheReadInputTokensKey.Int(int(u.CachedContentTokenCount)))
	}
	var reasons []string
	for _, c := range resp.Candidates {
		if c != nil && c.FinishReason != "" {
			reasons = append(reasons, string(c.FinishReason))
		}
	}
	if len(reasons) > 0 {
		span.SetAttributes(semconv.GenAIResponseFinishReasonsKey.StringSlice(reasons))
	}
	if CaptureContent() && span.IsRecording() {
		var out []*genai.Content
		for _, c := range resp.Candidates {
			if c != nil {
				out = append(out, c.Content)
			}
		}
		span.SetAttributes(semconv.GenAIOutputMessagesKey.String(jsonOf(out)))
	}
	return resp, nil
}

// errorType is error.type of a failed model call: the HTTP status of an
// API error, else the error's Go type.
func errorType(err error) string {
	var ae genai.APIError
	if errors.As(err, &ae) {
		return fmt.Sprint(ae.Code)
	}
	var pae *genai.APIError
	if errors.As(err, &pae) && pae != nil {
		return fmt.Sprint(pae.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// Tool starts the `execute_tool <name>` span of one function call.
func Tool(ctx context.Context, name string) (context.Context, oteltrace.Span) {
	return tracer().Start(ctx, "execute_tool "+name, oteltrace.WithSpanKind(oteltrace.SpanKindInternal),
		oteltrace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolNameKey.String(name)))
}

// EndTool ends a function call's span: blocked says a policy refused it
// (code names the policy, e.g. recipient_not_allowed); code alone is a call
// that ran and failed. With CaptureContent the arguments and the result
// are recorded.
func EndTool(span oteltrace.Span, blocked bool, code string, args, result any) {
	span.SetAttributes(BlockedKey.Bool(blocked))
	if code != "" {
		span.SetAttributes(semconv.ErrorTypeKey.String(code))
		if blocked {
			span.SetAttributes(PolicyKey.String(code))
		}
		span.SetStatus(codes.Error, code)
	}
	if CaptureContent() && span.IsRecording() {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(jsonOf(args)))
		if result != nil {
			span.SetAttributes(semconv.GenAIToolCallResultKey.String(jsonOf(result)))
		}
	}
	span.End()
}

// VerifySpanName is the name of the span of a verifier's reading of a reply.
const VerifySpanName = "verify_reply"

// Verify starts the span of one verifier reading of a reply (inside the
// reply's execute_tool span); the verifier's model call is its child.
func Verify(ctx context.Context, model string) (context.Context, oteltrace.Span) {
	return tracer().Start(ctx, VerifySpanName, oteltrace.WithSpanKind(oteltrace.SpanKindInternal),
		oteltrace.WithAttributes(VerifyModelKey.String(model)))
}

// EndVerify ends a verifier span with its verdict (pass, flagged, error),
// the statements it flagged and ignored, and the error that stopped it
// (""). With CaptureContent the statements are recorded too.
func EndVerify(span oteltrace.Span, verdict string, flagged, ignored int, errText string, statements any) {
	span.SetAttributes(VerifyVerdictKey.String(verdict), VerifyFlaggedKey.Int(flagged), VerifyIgnoredKey.Int(ignored))
	if errText != "" {
		span.SetAttributes(semconv.ErrorTypeKey.String(string(triage.ReasonVerifierUnavailable)))
		span.SetStatus(codes.Error, errText)
	}
	if CaptureContent() && span.IsRecording() && statements != nil {
		span.SetAttributes(VerifyStatementsKey.String(jsonOf(statements)))
	}
	span.End()
}
