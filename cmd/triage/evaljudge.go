package main

import (
	"cmp"
	"context"
	"fmt"

	"triage/eval"
	"triage/internal/model"
	"triage/internal/settings"
)

// judgeOptions configure the model that grades eval's rubrics and
// customers' goals when it is not the model under test: another model id,
// another provider, another endpoint or key. Provider "": the provider of
// the model under test; Model "": the model under test's id (same
// provider), else the provider's default.
type judgeOptions struct{ secondModel }

// separate reports whether any judge setting is given.
func (j judgeOptions) separate() bool { return j != judgeOptions{} }

// judgeSettings are eval's --judge-* settings.
func judgeSettings(j *judgeOptions) settings.Table {
	return j.settings("judge", "", secondModelUsage{
		Provider:   "provider of the model judge that grades reply_rubric and a simulated customer's goal in live runs: gemini or openai (default: the model under test's)",
		Model:      "the judge's model id (default: --model when the judge's provider is the model's, else Gemini's default; required for --judge-provider openai)",
		BaseURL:    "with --judge-provider openai: the judge endpoint's API root (default $OPENAI_BASE_URL, else https://api.openai.com/v1)",
		APIKeyEnv:  "with --judge-provider openai: the environment variable holding the judge's API key (default OPENAI_API_KEY)",
		APIKeyFile: "with --judge-provider openai: file holding the judge's API key, when its key variable is unset",
	})
}

// judgeModelOptions are the model options and model id of the judge:
// the model under test's unless a --judge-* setting is given.
func judgeModelOptions(o *evalOptions) (model.Options, string, error) {
	run := model.Options{Provider: o.Provider, BaseURL: o.BaseURL, APIKeyFile: o.APIKeyFile}
	j := o.Judge
	if !j.separate() {
		return run, o.Model, nil
	}
	prov := j.Provider
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
	opts := j.options(prov, o.modelOptions)
	if prov != model.ProviderOpenAI && j.endpoint() {
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
