package model

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// TestContextCacheOption: with ContextCache, the Gemini model serves a
// loop call's prefix from a context cache; without it, nothing is cached.
func TestContextCacheOption(t *testing.T) {
	for _, on := range []bool{false, true} {
		f := geminitest.New(t, geminitest.One(geminitest.Text("ok")))
		t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
		t.Setenv("GOOGLE_GEMINI_BASE_URL", f.URL())
		m, err := New(context.Background(), Options{ContextCache: on})
		if err != nil {
			t.Fatal(err)
		}
		config := &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText(strings.Repeat("Answer warranty claims politely. ", 200), genai.RoleUser),
			Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "send_email", Description: "Send the reply."}}}},
		}
		if _, err := m.GenerateContent(context.Background(), agent.DefaultModelName, []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, config); err != nil {
			t.Fatal(err)
		}
		creates := 0
		for _, r := range f.CacheRequests() {
			if r.Method == http.MethodPost {
				creates++
			}
		}
		named := f.Requests()[0].CachedContent != ""
		if on != (creates == 1 && named) || (!on && creates != 0) {
			t.Errorf("ContextCache %v: %d caches created, request names one: %v", on, creates, named)
		}
	}
}
