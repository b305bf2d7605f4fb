package model

import (
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
