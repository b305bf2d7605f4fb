package main

import (
	"github.com/spf13/pflag"

	"triage/internal/llm"
)

// modelOptions choose the model provider (process, eval and watch).
type modelOptions struct {
	Provider   string // gemini | openai
	BaseURL    string // openai: the endpoint's API root
	APIKeyFile string // openai: the key, when $OPENAI_API_KEY is unset
}

// addFlags registers --provider, --base-url and --api-key-file.
func (m *modelOptions) addFlags(fs *pflag.FlagSet) {
	envString(fs, &m.Provider, "provider", "TRIAGE_PROVIDER", llm.ProviderGemini,
		"model provider: gemini, or openai for any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LiteLLM; key from $OPENAI_API_KEY)")
	envString(fs, &m.BaseURL, "base-url", "OPENAI_BASE_URL", "",
		"with --provider openai: the endpoint's API root, e.g. http://localhost:11434/v1 for Ollama (default https://api.openai.com/v1)")
	envString(fs, &m.APIKeyFile, "api-key-file", "OPENAI_API_KEY_FILE", "",
		"with --provider openai: file holding the API key, when $OPENAI_API_KEY is unset")
}

// llmOptions are the llm options these settings select.
func (m modelOptions) llmOptions() llm.Options {
	return llm.Options{Provider: m.Provider, BaseURL: m.BaseURL, APIKeyFile: m.APIKeyFile}
}

// check returns the problem with these settings and the model id, or "".
func (m modelOptions) check(model string) string {
	if err := llm.CheckProvider(m.Provider); err != nil {
		return "--provider: " + err.Error()
	}
	if m.Provider == llm.ProviderOpenAI && (model == "" || model == llm.DefaultModel) {
		return "--provider openai needs --model (model.name): the endpoint's model id, e.g. llama3.1 on Ollama or gpt-4o-mini on OpenAI"
	}
	return ""
}

// modelFile is the model section of the configuration file.
type modelFile struct {
	Provider   string `yaml:"provider"`     // gemini | openai
	BaseURL    string `yaml:"base_url"`     // openai
	Name       string `yaml:"name"`         // the model id (as pipeline.model)
	APIKeyFile string `yaml:"api_key_file"` // openai
}

// merge applies the file's model section to the options not given as flags
// (or their environment variables).
func (m *modelOptions) merge(fs *pflag.FlagSet, mf modelFile, model *string) {
	set := func(flag string, dst *string, v string) {
		if v != "" && !given(fs, flag) {
			*dst = v
		}
	}
	set("provider", &m.Provider, mf.Provider)
	set("base-url", &m.BaseURL, mf.BaseURL)
	set("api-key-file", &m.APIKeyFile, mf.APIKeyFile)
	set("model", model, mf.Name)
}
