package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	embedded "triage/instructions"
	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/testkit/geminitest"
)

// bundledConfig is a turn's config as the loop builds it from the bundled
// instructions: every scenario's text in the system instruction, with
// characters JSON escapes added, and every scenario's functions declared with
// their JSON Schemas as loaded from the files.
func bundledConfig(t testing.TB) *genai.GenerateContentConfig {
	t.Helper()
	set, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		t.Fatalf("load the bundled instructions: %v", err)
	}
	system := []string{set.Main, "Quote <b>&amp;</b> as \"is\", \\ and \u2028 zażółć 日本語 \x01"}
	var decls []*genai.FunctionDeclaration
	for _, sc := range set.Scenarios {
		system = append(system, sc.Body)
		for _, f := range sc.Functions {
			decls = append(decls, &genai.FunctionDeclaration{Name: f.Name, Description: f.Description, ParametersJsonSchema: f.Parameters})
		}
	}
	decls = append(decls, &genai.FunctionDeclaration{
		Name:        "typed_schema",
		Description: "a declaration with the SDK's own Schema type",
		Parameters: &genai.Schema{Type: genai.TypeObject, Required: []string{"n"}, Properties: map[string]*genai.Schema{
			"n":    {Type: genai.TypeInteger, Minimum: genai.Ptr(1.0), Maximum: genai.Ptr(9.0)},
			"tags": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString, Enum: []string{"a", "b"}}},
		}},
	})
	return &genai.GenerateContentConfig{
		Temperature:           genai.Ptr[float32](0.2),
		AutomaticContinuation: genai.Ptr(false),
		SystemInstruction:     genai.NewContentFromText(strings.Join(system, "\n\n"), genai.RoleUser),
		Tools:                 []*genai.Tool{{FunctionDeclarations: decls}},
		ToolConfig:            &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
	}
}

// sameBodies sends config once through the SDK and once through Gemini and
// fails unless the server received the same JSON both times.
func sameBodies(t *testing.T, config func() *genai.GenerateContentConfig) {
	t.Helper()
	sameRequests(t, turns, config)
}

// turns is a first turn as the loop sends it.
func turns() []*genai.Content {
	return []*genai.Content{genai.NewContentFromText("Hello <there> & welcome", genai.RoleUser)}
}

// sameRequests is sameBodies with the turns given too.
func sameRequests(t *testing.T, contents func() []*genai.Content, config func() *genai.GenerateContentConfig) {
	t.Helper()
	f := geminitest.New(t, geminitest.One(geminitest.Text("a")), geminitest.One(geminitest.Text("b")))
	c := f.Client()
	ctx := context.Background()
	// The SDK sets defaults into what it is given: Gemini must leave the
	// config and the turns as the SDK leaves its own.
	sdkConfig, sdkTurns := config(), contents()
	if _, err := c.Models.GenerateContent(ctx, "gemini-test", sdkTurns, sdkConfig); err != nil {
		t.Fatalf("through the SDK: %v", err)
	}
	given, givenTurns := config(), contents()
	if _, err := (&agent.Gemini{Client: c}).GenerateContent(ctx, "gemini-test", givenTurns, given); err != nil {
		t.Fatalf("through Gemini: %v", err)
	}
	if diff := cmp.Diff(sdkConfig, given, cmp.Comparer(func(a, b *genai.HTTPOptions) bool { return (a == nil) == (b == nil) })); diff != "" {
		t.Errorf("the config Gemini was given differs from the SDK's after the call (-SDK +Gemini):\n%s", diff)
	}
	if diff := cmp.Diff(sdkTurns, givenTurns); diff != "" {
		t.Errorf("the turns Gemini was given differ from the SDK's after the call (-SDK +Gemini):\n%s", diff)
	}
	bodies := f.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("server got %d requests, want 2", len(bodies))
	}
	var sdk, ours any
	if err := json.Unmarshal(bodies[0], &sdk); err != nil {
		t.Fatalf("the SDK's body: %v", err)
	}
	if err := json.Unmarshal(bodies[1], &ours); err != nil {
		t.Fatalf("Gemini's body: %v\n%s", err, bodies[1])
	}
	if diff := cmp.Diff(sdk, ours); diff != "" {
		t.Errorf("the request differs from the SDK's own (-SDK +Gemini):\n%s", diff)
	}
}

// Gemini encodes the system instruction and the declarations itself: the
// request on the wire must be the one the SDK would send.
func TestGeminiSendsTheSDKsRequest(t *testing.T) {
	t.Run("bundled instructions", func(t *testing.T) {
		sameBodies(t, func() *genai.GenerateContentConfig { return bundledConfig(t) })
	})
	t.Run("system instruction alone", func(t *testing.T) {
		sameBodies(t, func() *genai.GenerateContentConfig {
			return &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
		})
	})
	t.Run("tools alone", func(t *testing.T) {
		sameBodies(t, func() *genai.GenerateContentConfig {
			cfg := bundledConfig(t)
			cfg.SystemInstruction = nil
			return cfg
		})
	})
	// What is not of the plain kind goes through the SDK as it is: a part
	// that is not text, a tool that is not only declarations, and a body
	// hook of the caller's, which must still run.
	t.Run("inline data in the system instruction", func(t *testing.T) {
		sameBodies(t, func() *genai.GenerateContentConfig {
			cfg := bundledConfig(t)
			cfg.SystemInstruction.Parts = append(cfg.SystemInstruction.Parts, genai.NewPartFromBytes([]byte("\x89PNG"), "image/png"))
			return cfg
		})
	})
	t.Run("search tool", func(t *testing.T) {
		sameBodies(t, func() *genai.GenerateContentConfig {
			cfg := bundledConfig(t)
			cfg.Tools = append(cfg.Tools, &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
			return cfg
		})
	})
	t.Run("system instruction without a role", func(t *testing.T) {
		sameBodies(t, func() *genai.GenerateContentConfig {
			cfg := bundledConfig(t)
			cfg.SystemInstruction.Role = ""
			return cfg
		})
	})
	t.Run("no config", func(t *testing.T) {
		sameRequests(t, conversation, func() *genai.GenerateContentConfig { return nil })
	})
	t.Run("a conversation with a photo, calls and their results", func(t *testing.T) {
		sameRequests(t, conversation, func() *genai.GenerateContentConfig { return bundledConfig(t) })
	})
	t.Run("a part of another kind in the turns", func(t *testing.T) {
		sameRequests(t, func() []*genai.Content {
			c := conversation()
			c[0].Parts = append(c[0].Parts, &genai.Part{FileData: &genai.FileData{FileURI: "https://example.com/a.pdf", MIMEType: "application/pdf"}})
			return c
		}, func() *genai.GenerateContentConfig { return bundledConfig(t) })
	})
	t.Run("caller's extra body", func(t *testing.T) {
		sameBodies(t, func() *genai.GenerateContentConfig {
			cfg := bundledConfig(t)
			cfg.HTTPOptions = &genai.HTTPOptions{ExtraBody: map[string]any{"labels": map[string]any{"team": "support"}}}
			return cfg
		})
	})
}

// conversation is the turns of an email with a photo, two calls and their
// results, as the loop sends its third turn.
func conversation() []*genai.Content {
	photo := make([]byte, 3000)
	for i := range photo {
		photo[i] = byte(i * 7)
	}
	return []*genai.Content{
		{Role: genai.RoleUser, Parts: []*genai.Part{
			genai.NewPartFromText("Mój ekspres SN-48213-PL nie grzeje <od wczoraj> & cieknie."),
			genai.NewPartFromBytes(photo, "image/jpeg"),
		}},
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Thought: true, Text: "checking", ThoughtSignature: []byte{1, 2, 3, 250}},
			{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "check_warranty", Args: map[string]any{"serial_number": "SN-48213-PL", "n": 1.5}}},
			{FunctionCall: &genai.FunctionCall{Name: "create_ticket", Args: map[string]any{"tags": []any{"a", "b"}}}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "check_warranty", Response: map[string]any{"output": map[string]any{"valid": true, "until": "2027-05-31"}}}},
			{FunctionResponse: &genai.FunctionResponse{Name: "create_ticket", Response: map[string]any{"error": "unavailable"}}},
		}},
	}
}

// BenchmarkGeminiRequest: one call with the bundled instructions' system
// instruction and declarations, straight through the SDK and through Gemini,
// against a loopback server (whose own cost is the same for both).
func BenchmarkGeminiRequest(b *testing.B) {
	contents := []*genai.Content{genai.NewContentFromText("Hello, my kettle SN-1234 stopped working.", genai.RoleUser)}
	for _, via := range []string{"sdk", "gemini"} {
		b.Run("via="+via, func(b *testing.B) {
			steps := make([]geminitest.Step, b.N)
			for i := range steps {
				steps[i] = geminitest.One(geminitest.Text("ok"))
			}
			f := geminitest.New(b, steps...)
			c := f.Client()
			var m agent.Model = &agent.Gemini{Client: c}
			if via == "sdk" {
				m = sdkModel{c}
			}
			configs := make([]*genai.GenerateContentConfig, b.N)
			for i := range configs {
				configs[i] = bundledConfig(b)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := m.GenerateContent(context.Background(), "gemini-test", contents, configs[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sdkModel calls the SDK directly.
type sdkModel struct{ c *genai.Client }

func (s sdkModel) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return s.c.Models.GenerateContent(ctx, model, contents, config)
}
