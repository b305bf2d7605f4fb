package main

import (
	"time"

	"triage/internal/agent"
	"triage/internal/model"
)

// modelOptions choose the model provider (process, eval and watch),
// declared in providerSettings.
type modelOptions struct {
	Provider   model.Provider // gemini | openai
	BaseURL    string         // openai: the endpoint's API root
	APIKeyFile string         // openai: the key, when $OPENAI_API_KEY is unset
	// RequestsPerMinute and TokensPerMinute bound the model calls of every
	// process on the store together (0: no limit).
	RequestsPerMinute int
	TokensPerMinute   int
	// Attachments (openai) are the attachment kinds the endpoint reads;
	// MaxOutputTokens bounds every call's output; ToolChoice is auto or
	// required.
	Attachments     []string
	MaxOutputTokens int
	ToolChoice      string
	// ContextCache is off or auto (Gemini's explicit context cache of the
	// stable prefix); ContextCacheTTL a cache's lifetime.
	ContextCache    string
	ContextCacheTTL time.Duration
}

// The values of model.context_cache.
const (
	contextCacheOff  = "off"
	contextCacheAuto = "auto"
)

// options are the model options these settings select.
func (m modelOptions) options() model.Options {
	return model.Options{Provider: m.Provider, BaseURL: m.BaseURL, APIKeyFile: m.APIKeyFile,
		Inputs: m.Attachments, MaxOutputTokens: m.MaxOutputTokens, ToolChoice: agent.ToolChoice(m.ToolChoice),
		ContextCache: m.ContextCache == contextCacheAuto, ContextCacheTTL: m.ContextCacheTTL}
}

// check returns the problem with these settings and the model id, or "".
// The provider's name itself is checked by its setting.
func (m modelOptions) check(modelID string) string {
	if m.Provider == model.ProviderOpenAI && (modelID == "" || modelID == model.DefaultModel) {
		return "--provider openai needs --model (model.name): the endpoint's model id, e.g. llama3.1 on Ollama or gpt-4o-mini on OpenAI"
	}
	return ""
}
