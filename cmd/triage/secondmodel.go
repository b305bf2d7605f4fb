package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"triage/internal/model"
	"triage/internal/settings"
)

// secondModel is a model beside the one the model settings choose: the
// verifier (--verify-*) or eval's judge (--judge-*), of either provider.
// Provider "" is the role's default (no verifier; a judge of the model's
// provider).
type secondModel struct {
	Provider   model.Provider // "" | gemini | openai
	Model      string
	BaseURL    string // openai: the endpoint's API root
	APIKeyFile string // openai: the key, when its key variable is unset
	APIKeyEnv  string // openai: the variable holding the key (default OPENAI_API_KEY)
}

// secondModelUsage are the help texts of a second model's settings.
type secondModelUsage struct {
	Provider, Model, BaseURL, APIKeyEnv, APIKeyFile string
}

// settings declare s's settings for the role name (verify, judge): flags
// --NAME-provider, --NAME-model, --NAME-base-url, --NAME-api-key-env and
// --NAME-api-key-file, variables TRIAGE_NAME_*, and YAML keys under key
// unless key is "".
func (s *secondModel) settings(name, key string, u secondModelUsage) settings.Table {
	env := "TRIAGE_" + strings.ToUpper(name) + "_"
	keyOf := func(k string) string {
		if key == "" {
			return ""
		}
		return key + "." + k
	}
	providers := append([]string{""}, model.Providers...)
	return settings.Table{
		{Flag: name + "-provider", Env: env + "PROVIDER", Key: keyOf("provider"), Usage: u.Provider,
			Var: settings.String((*string)(&s.Provider), "", func(v string) error {
				if !slices.Contains(providers, v) {
					return fmt.Errorf("%q: want gemini or openai", v)
				}
				return nil
			})},
		{Flag: name + "-model", Env: env + "MODEL", Key: keyOf("model"), Usage: u.Model,
			Var: settings.String(&s.Model, "")},
		{Flag: name + "-base-url", Env: env + "BASE_URL", Key: keyOf("base_url"), Usage: u.BaseURL,
			Var: settings.String(&s.BaseURL, "")},
		{Flag: name + "-api-key-env", Env: env + "API_KEY_ENV", Key: keyOf("api_key_env"), Usage: u.APIKeyEnv,
			Var: settings.String(&s.APIKeyEnv, "")},
		{Flag: name + "-api-key-file", Env: env + "API_KEY_FILE", Key: keyOf("api_key_file"), Path: true, Usage: u.APIKeyFile,
			Var: settings.String(&s.APIKeyFile, "")},
	}
}

// endpoint reports whether an openai endpoint setting is given.
func (s secondModel) endpoint() bool {
	return s.BaseURL != "" || s.APIKeyFile != "" || s.APIKeyEnv != ""
}

// options are the model options of s, of provider prov, beside the model
// m: an openai model without endpoint settings beside an openai model m
// uses m's endpoint (another model id); the key variable APIKeyEnv stands
// for OPENAI_API_KEY.
func (s secondModel) options(prov model.Provider, m modelOptions) model.Options {
	o := model.Options{Provider: prov}
	if prov != model.ProviderOpenAI {
		return o
	}
	o.BaseURL, o.APIKeyFile = s.BaseURL, s.APIKeyFile
	if m.Provider == model.ProviderOpenAI && !s.endpoint() {
		o.BaseURL, o.APIKeyFile = m.BaseURL, m.APIKeyFile
	}
	if env := s.APIKeyEnv; env != "" {
		o.Getenv = func(k string) string {
			if k == "OPENAI_API_KEY" {
				return os.Getenv(env)
			}
			return os.Getenv(k)
		}
	}
	return o
}
