package main

import (
	"cmp"
	"os"
	"time"

	"triage/internal/dispatcher"
	"triage/internal/model"
	"triage/internal/processor"
	"triage/internal/settings"
)

// verifyOptions choose the verifier (process and watch): a second model,
// of any provider, that reads every reply against its trusted sources
// before it leaves; declared in verifySettings. Provider "" is no
// verifier.
type verifyOptions struct {
	Provider   model.Provider // "" | gemini | openai
	Model      string
	BaseURL    string // openai: the endpoint's API root
	APIKeyFile string // openai: the key, when $TRIAGE_VERIFY_API_KEY is unset
	APIKey     string // $TRIAGE_VERIFY_API_KEY
	Timeout    time.Duration
}

// verifySettings declare the verifier's settings, after the model's.
func verifySettings(v *verifyOptions) settings.Table {
	return settings.Table{
		{Flag: "verify-provider", Env: "TRIAGE_VERIFY_PROVIDER", Key: "verify.provider",
			Usage: "verifier provider: gemini or openai (may differ from --provider); with a live model, a second model reads every reply against the decision, its commitments and the tool results before it leaves (default: none, the lexicon alone decides)",
			Var:   settings.String((*string)(&v.Provider), "", settings.OneOf(append([]string{""}, model.Providers...)...))},
		{Flag: "verify-model", Env: "TRIAGE_VERIFY_MODEL", Key: "verify.model",
			Usage: "the verifier's model id (default " + model.DefaultModel + " with gemini; required with openai)",
			Var:   settings.String(&v.Model, "")},
		{Flag: "verify-base-url", Env: "TRIAGE_VERIFY_BASE_URL", Key: "verify.base_url",
			Usage: "with --verify-provider openai: the endpoint's API root (default $OPENAI_BASE_URL, else https://api.openai.com/v1)",
			Var:   settings.String(&v.BaseURL, "")},
		{Flag: "verify-api-key-file", Env: "TRIAGE_VERIFY_API_KEY_FILE", Key: "verify.api_key_file", Path: true,
			Usage: "with --verify-provider openai: file holding the verifier's API key, when $TRIAGE_VERIFY_API_KEY is unset (default: the model's $OPENAI_API_KEY)",
			Var:   settings.String(&v.APIKeyFile, "")},
		{Env: "TRIAGE_VERIFY_API_KEY", Usage: "the verifier's OpenAI-compatible API key (wins over --verify-api-key-file and $OPENAI_API_KEY)",
			Var: settings.String(&v.APIKey, "")},
		{Flag: "verify-timeout", Key: "verify.timeout",
			Usage: "timeout of one verifier call; a verifier that does not answer in time leaves the email for a person (verifier_unavailable)",
			Var:   settings.Duration(&v.Timeout, dispatcher.DefaultVerifyTimeout, settings.Positive)},
	}
}

// parts are the verifier these settings choose for processor.Build (nil:
// none). Its key is $TRIAGE_VERIFY_API_KEY, else the key file, else the
// model's $OPENAI_API_KEY.
func (v verifyOptions) parts(concurrency int) *processor.VerifyParts {
	if v.Provider == "" {
		return nil
	}
	o := model.Options{Provider: v.Provider, BaseURL: v.BaseURL, APIKeyFile: v.APIKeyFile, APIKey: v.APIKey, Concurrency: concurrency}
	if v.APIKeyFile != "" {
		// The verifier's own key file comes before the model's key.
		o.Getenv = func(k string) string {
			if k == "OPENAI_API_KEY" {
				return ""
			}
			return os.Getenv(k)
		}
	}
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

// check returns the problem with these settings, or "". The verifier's
// credentials matter only beside a live model (live).
func (v verifyOptions) check(live bool) string {
	switch {
	case v.Provider == "" && (v.Model != "" || v.BaseURL != "" || v.APIKeyFile != ""):
		return "--verify-model, --verify-base-url and --verify-api-key-file need --verify-provider (verify.provider): gemini or openai"
	case v.Provider == model.ProviderOpenAI && v.Model == "":
		return "--verify-provider openai needs --verify-model (verify.model): the endpoint's model id"
	case live && v.Provider != "" && !v.parts(1).Model.Live():
		if v.Provider == model.ProviderOpenAI {
			return "the verifier has no credentials: set --verify-base-url (verify.base_url) for a local server, or a key ($TRIAGE_VERIFY_API_KEY, verify.api_key_file or $OPENAI_API_KEY)"
		}
		return "the verifier has no credentials: --verify-provider gemini needs GEMINI_API_KEY (or GOOGLE_API_KEY, or Vertex AI's variables) in the environment"
	}
	return ""
}
