package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"

	"triage/eval"
	"triage/internal/model"
	"triage/internal/settings"
)

// judgeOptions configure the model that grades eval's rubrics and
// customers' goals when it is not the model under test: another model id,
// another provider, another endpoint or key.
type judgeOptions struct {
	Provider   string // "": the provider of the model under test
	Model      string // "": the model under test's id (same provider), else the provider's default
	BaseURL    string // openai: the judge endpoint's API root
	APIKeyFile string // openai: the judge's key, when its key variable is unset
	APIKeyEnv  string // openai: the variable holding the judge's key (default OPENAI_API_KEY)
}

// separate reports whether any judge setting is given.
func (j judgeOptions) separate() bool { return j != judgeOptions{} }

// judgeSettings are eval's --judge-* settings.
func judgeSettings(j *judgeOptions) settings.Table {
	providers := append([]string{""}, model.Providers...)
	return settings.Table{
		{Flag: "judge-provider", Env: "TRIAGE_JUDGE_PROVIDER",
			Usage: "provider of the model judge that grades reply_rubric and a simulated customer's goal in live runs: gemini or openai (default: the model under test's)",
			Var: settings.String(&j.Provider, "", func(v string) error {
				if !slices.Contains(providers, v) {
					return fmt.Errorf("%q: want gemini or openai", v)
				}
				return nil
			})},
		{Flag: "judge-model", Env: "TRIAGE_JUDGE_MODEL",
			Usage: "the judge's model id (default: --model when the judge's provider is the model's, else Gemini's default; required for --judge-provider openai)",
			Var:   settings.String(&j.Model, "")},
		{Flag: "judge-base-url", Env: "TRIAGE_JUDGE_BASE_URL",
			Usage: "with --judge-provider openai: the judge endpoint's API root (default $OPENAI_BASE_URL, else https://api.openai.com/v1)",
			Var:   settings.String(&j.BaseURL, "")},
		{Flag: "judge-api-key-file", Env: "TRIAGE_JUDGE_API_KEY_FILE", Path: true,
			Usage: "with --judge-provider openai: file holding the judge's API key, when its key variable is unset",
			Var:   settings.String(&j.APIKeyFile, "")},
		{Flag: "judge-api-key-env", Env: "TRIAGE_JUDGE_API_KEY_ENV",
			Usage: "with --judge-provider openai: the environment variable holding the judge's API key (default OPENAI_API_KEY)",
			Var:   settings.String(&j.APIKeyEnv, "")},
	}
}

// judgeModelOptions are the model options and model id of the judge:
// the model under test's unless a --judge-* setting is given.
func judgeModelOptions(o *evalOptions) (model.Options, string, error) {
	run := model.Options{Provider: o.Provider, BaseURL: o.BaseURL, APIKeyFile: o.APIKeyFile}
	j := o.Judge
	if !j.separate() {
		return run, o.Model, nil
	}
	prov := model.Provider(j.Provider)
	if prov == "" {
		prov = o.Provider
	}
	name := j.Model
	if name == "" {
		switch {
		case sameProvider(prov, o.Provider):
			name = o.Model
		case prov == model.ProviderOpenAI:
			return model.Options{}, "", fmt.Errorf("--judge-provider openai needs --judge-model: the judge endpoint's model id")
		default:
			name = model.DefaultModel
		}
	}
	opts := model.Options{Provider: prov}
	if prov == model.ProviderOpenAI {
		opts.BaseURL, opts.APIKeyFile = j.BaseURL, j.APIKeyFile
		if sameProvider(prov, o.Provider) && j.BaseURL == "" && j.APIKeyFile == "" && j.APIKeyEnv == "" {
			opts.BaseURL, opts.APIKeyFile = o.BaseURL, o.APIKeyFile // the model under test's endpoint, another model id
		}
		if env := j.APIKeyEnv; env != "" {
			opts.Getenv = func(k string) string {
				if k == "OPENAI_API_KEY" {
					return os.Getenv(env)
				}
				return os.Getenv(k)
			}
		}
	} else if j.BaseURL != "" || j.APIKeyFile != "" || j.APIKeyEnv != "" {
		return model.Options{}, "", fmt.Errorf("--judge-base-url, --judge-api-key-file and --judge-api-key-env are for --judge-provider openai; a Gemini judge uses GEMINI_API_KEY (or Vertex settings)")
	}
	if !opts.Live() {
		return model.Options{}, "", fmt.Errorf("the judge (%s, model %s) has no credentials: set its key (or base URL) or leave the --judge-* settings unset to judge with the model under test", cmp.Or(string(prov), "gemini"), name)
	}
	return opts, name, nil
}

func sameProvider(a, b model.Provider) bool {
	norm := func(p model.Provider) model.Provider {
		if p == "" {
			return model.ProviderGemini
		}
		return p
	}
	return norm(a) == norm(b)
}

// evalModels builds, for a live run, the model that plays simulated
// customers (the model under test) and the judge (its own model when the
// --judge-* settings choose one); nil, nil offline and in --replay, where
// neither grades nor plays.
func evalModels(ctx context.Context, o *evalOptions) (judge *eval.Judge, customer *eval.Customer, closeAll func(), err error) {
	closeAll = func() {}
	run := model.Options{Provider: o.Provider, BaseURL: o.BaseURL, APIKeyFile: o.APIKeyFile, Offline: o.Offline}
	if o.Replay != "" || !run.Live() {
		return nil, nil, closeAll, nil
	}
	jo, jname, err := judgeModelOptions(o)
	if err != nil {
		return nil, nil, closeAll, fmt.Errorf("eval: judge model: %v", err)
	}
	rm, err := model.New(ctx, run)
	if err != nil {
		return nil, nil, closeAll, fmt.Errorf("eval: judge model: %v", err)
	}
	closers := []func(){func() { rm.Close() }}
	closeAll = func() {
		for _, c := range closers {
			c()
		}
	}
	customer = &eval.Customer{Model: rm, ModelName: o.Model}
	judge = &eval.Judge{Model: rm, ModelName: o.Model}
	if o.Judge.separate() {
		jm, err := model.New(ctx, jo)
		if err != nil {
			closeAll()
			return nil, nil, func() {}, fmt.Errorf("eval: judge model: %v", err)
		}
		closers = append(closers, func() { jm.Close() })
		judge = &eval.Judge{Model: jm, ModelName: jname, Description: jm.Description}
	}
	return judge, customer, closeAll, nil
}
