package model

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

// TestCallsWithoutIDs: history whose calls carry no ID (written by another
// provider) still pairs each tool message with its call.
func TestCallsWithoutIDs(t *testing.T) {
	req, err := chatRequestFor("m", []*genai.Content{
		genai.NewContentFromText("hi", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{FunctionCall: &genai.FunctionCall{Name: "a", Args: map[string]any{}}},
			{FunctionCall: &genai.FunctionCall{Name: "b"}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{Name: "a", Response: map[string]any{"ok": true}}},
			{FunctionResponse: &genai.FunctionResponse{Name: "b", Response: map[string]any{"ok": true}}},
		}},
	}, nil, DefaultOpenAIInputs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			got = append(got, tc.Function.Name+"="+tc.ID)
		}
		if m.ToolCallID != "" {
			got = append(got, "response="+m.ToolCallID)
		}
	}
	if diff := cmp.Diff([]string{"a=call_1", "b=call_2", "response=call_1", "response=call_2"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestChatUsageDetails: the cached prompt tokens and the reasoning tokens an
// OpenAI-compatible endpoint reports reach the usage metadata, reasoning
// apart from the answer as Gemini counts it; an endpoint without the
// details gives neither.
func TestChatUsageDetails(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       genai.GenerateContentResponseUsageMetadata
	}{
		{"details", `{"id":"x","model":"m","choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,` +
			`"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":100}}}`,
			genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 2006, CachedContentTokenCount: 1920, CandidatesTokenCount: 200, ThoughtsTokenCount: 100, TotalTokenCount: 2306}},
		{"none", `{"id":"x","model":"m","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}`,
			genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 20, CandidatesTokenCount: 3, TotalTokenCount: 23}},
		{"cached over prompt", `{"id":"x","model":"m","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23,"prompt_tokens_details":{"cached_tokens":99}}}`,
			genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 20, CachedContentTokenCount: 20, CandidatesTokenCount: 3, TotalTokenCount: 23}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cr chatResponse
			if err := json.Unmarshal([]byte(tt.body), &cr); err != nil {
				t.Fatal(err)
			}
			got := fromChat(&cr).UsageMetadata
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}
