package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/genai"

	"triage/internal/llm"
	"triage/internal/offline"
)

func clearEnv(t *testing.T) {
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL"} {
		t.Setenv(k, "")
	}
}

func ask(t *testing.T, m *llm.Model) *genai.GenerateContentResponse {
	t.Helper()
	resp, err := m.GenerateContent(context.Background(), llm.DefaultModel,
		[]*genai.Content{genai.NewContentFromText("hello", genai.RoleUser)}, &genai.GenerateContentConfig{})
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	return resp
}

// TestBaseURL: with a key and GOOGLE_GEMINI_BASE_URL, the Gemini path is taken
// and every request goes to that endpoint (here: an offline server standing in
// for any Gemini-compatible endpoint).
func TestBaseURL(t *testing.T) {
	clearEnv(t)
	srv, err := offline.Start(offline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("GEMINI_API_KEY", "test-key")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())

	m, err := llm.New(context.Background(), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Offline || m.Server != nil {
		t.Fatalf("with a key the Gemini path must be used, got offline")
	}
	ask(t, m)
	if srv.Requests() != 1 {
		t.Errorf("endpoint saw %d requests, want 1", srv.Requests())
	}
}

func TestOfflineWithoutKey(t *testing.T) {
	clearEnv(t)
	m, err := llm.New(context.Background(), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.Offline || !strings.Contains(m.Description, "not an LLM") {
		t.Fatalf("no key: got %+v", m)
	}
	resp := ask(t, m)
	if resp.ModelVersion != offline.ModelVersion {
		t.Errorf("model version %q", resp.ModelVersion)
	}
}

func TestOfflineForcedAndFaults(t *testing.T) {
	clearEnv(t)
	t.Setenv("GEMINI_API_KEY", "k")
	if _, err := llm.New(context.Background(), llm.Options{Faults: []offline.Fault{offline.Fault503}}); err == nil {
		t.Error("faults with a live model must be refused")
	}
	m, err := llm.New(context.Background(), llm.Options{Offline: true, Faults: []offline.Fault{offline.Fault503}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = m.GenerateContent(context.Background(), "m", []*genai.Content{genai.NewContentFromText("x", genai.RoleUser)}, &genai.GenerateContentConfig{})
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 503 {
		t.Errorf("injected fault: err %v", err)
	}
}

func TestHasCredentials(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"GEMINI_API_KEY": "x"}, true},
		{map[string]string{"GOOGLE_API_KEY": "x"}, true},
		{map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}, true},
		{map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "1"}, false},
	} {
		if got := llm.HasCredentials(env(tt.env)); got != tt.want {
			t.Errorf("HasCredentials(%v) = %v", tt.env, got)
		}
	}
}
