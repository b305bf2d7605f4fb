package main

import (
	"cmp"
	"time"

	"triage/internal/dispatcher"
	"triage/internal/model"
	"triage/internal/processor"
	"triage/internal/settings"
)

// verifyOptions choose the verifier (process and watch): a second model,
// of either provider, that reads every reply against its trusted sources
// before it leaves; declared in verifySettings. Provider "" is no
// verifier.
type verifyOptions struct {
	secondModel
	Timeout time.Duration
}

// verifySettings declare the verifier's settings, after the model's.
func verifySettings(v *verifyOptions) settings.Table {
	return append(v.settings("verify", "verify", secondModelUsage{
		Provider:   "verifier provider: gemini or openai (either, whatever --provider is); with a live model, a second model reads every reply against the decision, its commitments and the tool results before it leaves (default: none, the lexicon and the grounding check alone decide)",
		Model:      "the verifier's model id (default " + model.DefaultModel + " with gemini; required with openai)",
		BaseURL:    "with --verify-provider openai: the verifier endpoint's API root (default: --base-url when the model is on openai too, else $OPENAI_BASE_URL, else https://api.openai.com/v1)",
		APIKeyEnv:  "with --verify-provider openai: the environment variable holding the verifier's API key (default OPENAI_API_KEY)",
		APIKeyFile: "with --verify-provider openai: file holding the verifier's API key, when its key variable is unset",
	}), &settings.Setting{Flag: "verify-timeout", Key: "verify.timeout",
		Usage: "timeout of one verifier call; a verifier that does not answer in time (or fails, or answers garbage) leaves the email for a person, reason verifier_unavailable",
		Var:   settings.Duration(&v.Timeout, dispatcher.DefaultVerifyTimeout, settings.Positive)})
}

// parts are the verifier these settings choose for processor.Build, beside
// the model m (nil: none). An openai verifier without endpoint settings
// beside an openai model uses the model's endpoint, another model id.
func (v verifyOptions) parts(m modelOptions, concurrency int) *processor.VerifyParts {
	if v.Provider == "" {
		return nil
	}
	o := v.options(v.Provider, m)
	o.Concurrency = concurrency
	return &processor.VerifyParts{Model: o, ModelName: v.modelID(), Timeout: v.Timeout}
}

// modelID is the verifier's model id: --verify-model, else Gemini's
// default with gemini.
func (v verifyOptions) modelID() string {
	if v.Provider == model.ProviderGemini {
		return cmp.Or(v.Model, model.DefaultModel)
	}
	return v.Model
}

// check returns the problem with these settings beside the model m, or
// "". The verifier's credentials matter only beside a live model (live).
func (v verifyOptions) check(m modelOptions, live bool) string {
	switch {
	case v.Provider == "" && (v.Model != "" || v.endpoint()):
		return "--verify-model, --verify-base-url, --verify-api-key-env and --verify-api-key-file need --verify-provider (verify.provider): gemini or openai"
	case v.Provider == model.ProviderGemini && v.endpoint():
		return "--verify-base-url, --verify-api-key-env and --verify-api-key-file are for --verify-provider openai; a Gemini verifier uses GEMINI_API_KEY (or Vertex settings)"
	case v.Provider == model.ProviderOpenAI && v.Model == "":
		return "--verify-provider openai needs --verify-model (verify.model): the verifier endpoint's model id"
	case live && v.Provider != "" && !v.parts(m, 1).Model.Live():
		return "the verifier (" + string(v.Provider) + ", model " + v.modelID() + ") has no credentials: set its key (GEMINI_API_KEY for gemini; for openai the variable --verify-api-key-env names, --verify-api-key-file or a --verify-base-url) or leave --verify-provider unset"
	}
	return ""
}
