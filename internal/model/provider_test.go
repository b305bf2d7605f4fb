package model_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"triage/internal/model"
	"triage/internal/testkit/openaitest"
)

// TestOpenAIProvider: with provider openai the model is the Chat Completions
// client at the given base URL (or $OPENAI_BASE_URL), keyed from
// $OPENAI_API_KEY or a key file; without a key and a base URL it is an
// error, never a silent fallback to the offline model.
func TestOpenAIProvider(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(openaitest.APIKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		env      map[string]string
		keyFile  string
		flagBase bool
	}{
		{"base URL option, key from the environment", map[string]string{"OPENAI_API_KEY": openaitest.APIKey}, "", true},
		{"base URL from the environment, key from a file", nil, keyFile, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.Text("hello"))
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			o := model.Options{Provider: model.ProviderOpenAI, APIKeyFile: tt.keyFile, Getenv: func(k string) string { return env[k] }}
			if tt.flagBase {
				o.BaseURL = srv.BaseURL()
			} else {
				env["OPENAI_BASE_URL"] = srv.BaseURL()
			}
			if !o.Live() {
				t.Fatal("Live() = false")
			}
			m, err := model.New(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Offline || !strings.Contains(m.Description, srv.BaseURL()) {
				t.Errorf("model %q (offline %v)", m.Description, m.Offline)
			}
			resp, err := m.GenerateContent(context.Background(), "gpt-test", []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, nil)
			if err != nil || resp.Text() != "hello" {
				t.Errorf("GenerateContent: %v, %v", resp, err)
			}
		})
	}
	none := model.Options{Provider: model.ProviderOpenAI, Getenv: func(string) string { return "" }}
	if none.Live() {
		t.Error("Live() without key or base URL")
	}
	if _, err := model.New(context.Background(), none); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: err %v", err)
	}
	if _, err := model.New(context.Background(), model.Options{Provider: "claude"}); err == nil {
		t.Error("unknown provider accepted")
	}
	if m, err := model.New(context.Background(), model.Options{Provider: model.ProviderOpenAI, Offline: true}); err != nil || !m.Offline {
		t.Errorf("offline forced with provider openai: %v", err)
	} else {
		m.Close()
	}
}
