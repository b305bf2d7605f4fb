package model

import (
	"math"
	"strings"
	"testing"
)

// TestPriceCost: uncached prompt tokens at the input price, cached ones at
// the cached input price, output at the output price, per million.
func TestPriceCost(t *testing.T) {
	flash := Price{Input: 0.30, CachedInput: 0.03, Output: 2.50}
	for _, tt := range []struct {
		name                   string
		prompt, cached, output int64
		want                   float64
	}{
		{"none cached", 1_000_000, 0, 0, 0.30},
		{"all cached", 1_000_000, 1_000_000, 0, 0.03},
		{"mixed", 9000, 6000, 200, (3000*0.30 + 6000*0.03 + 200*2.50) / 1e6},
		{"cached over prompt counts as the prompt", 100, 500, 0, 100 * 0.03 / 1e6},
	} {
		if got := flash.Cost(tt.prompt, tt.cached, tt.output); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: Cost = %g, want %g", tt.name, got, tt.want)
		}
	}
}

// TestPricesCost: a priced model costs its price; an unpriced one has no
// cost unless it made no call.
func TestPricesCost(t *testing.T) {
	ps := Prices{"flash": {Input: 1, Output: 2}}
	if c, ok := ps.Cost("flash", 3, 1_000_000, 0, 1_000_000); !ok || math.Abs(c-3) > 1e-12 {
		t.Errorf("priced: Cost = %g, %v; want 3, true", c, ok)
	}
	if c, ok := ps.Cost("other", 1, 10, 0, 10); ok || c != 0 {
		t.Errorf("unpriced with calls: Cost = %g, %v; want 0, false", c, ok)
	}
	if c, ok := ps.Cost("other", 0, 0, 0, 0); !ok || c != 0 {
		t.Errorf("unpriced without calls: Cost = %g, %v; want 0, true", c, ok)
	}
}

func TestPricesCheck(t *testing.T) {
	if err := (Prices{"gemini-2.5-flash": {Input: 0.3, CachedInput: 0.03, Output: 2.5}, "free": {}}).Check(); err != nil {
		t.Errorf("valid prices: %v", err)
	}
	err := Prices{"m": {Input: -1, Output: math.NaN()}, " ": {}}.Check()
	for _, want := range []string{"m.input is -1", "m.output is NaN", "a model id is empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v, want it to say %q", err, want)
		}
	}
}
