// What model tokens cost: the prices a team configures per model, and the
// money a count of tokens comes to.

package model

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Price is what one model charges per million tokens, in the currency the
// configuration is written in (Google and OpenAI list US dollars): Input
// for prompt tokens not served from a cache, CachedInput for those served
// from one (Gemini's context cache, an OpenAI-compatible endpoint's prompt
// cache), Output for the answer and the model's thinking.
type Price struct {
	Input       float64 `yaml:"input"`
	CachedInput float64 `yaml:"cached_input"`
	Output      float64 `yaml:"output"`
}

// Prices are the prices by model id (the outcome's model, e.g.
// gemini-2.5-flash): the configuration's prices: section.
type Prices map[string]Price

// Check returns an error naming the model and the price that is negative,
// not a number or infinite, or a model id that is empty.
func (ps Prices) Check() error {
	var bad []string
	for _, m := range slices.Sorted(maps.Keys(ps)) {
		if strings.TrimSpace(m) == "" {
			bad = append(bad, "a model id is empty")
			continue
		}
		p := ps[m]
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"output", p.Output}} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				bad = append(bad, fmt.Sprintf("%s.%s is %v: want a price per 1M tokens, 0 or more", m, f.name, f.v))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("prices: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Cost is what prompt tokens (cached of them served from a cache) and
// output tokens come to at p.
func (p Price) Cost(prompt, cached, output int64) float64 {
	cached = min(max(cached, 0), prompt)
	return (float64(prompt-cached)*p.Input + float64(cached)*p.CachedInput + float64(output)*p.Output) / 1e6
}

// Cost is what calls to the model id modelID that used prompt tokens
// (cached of them served from a cache) and output tokens come to at ps,
// and whether the model has a price: no call costs nothing, whatever the
// model.
func (ps Prices) Cost(modelID string, calls, prompt, cached, output int64) (float64, bool) {
	p, ok := ps[modelID]
	if !ok {
		return 0, calls == 0
	}
	return p.Cost(prompt, cached, output), true
}

// String is the price as the cost report heads it.
func (p Price) String() string {
	return fmt.Sprintf("input %g, cached input %g, output %g per 1M tokens", p.Input, p.CachedInput, p.Output)
}
