package httpapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretsValue(t *testing.T) {
	sec := Secrets{"tok-123456", ""}
	got := sec.Value(map[string]any{
		"echo":       "Bearer tok-123456 accepted",
		"tok-123456": 1.0,
		"list":       []any{"a tok-123456", 2.0, nil, true, map[string]any{"deep": "xtok-123456x"}},
		"plain":      "nothing here",
	})
	want := map[string]any{
		"echo":   "Bearer [redacted] accepted",
		Redacted: 1.0,
		"list":   []any{"a [redacted]", 2.0, nil, true, map[string]any{"deep": "x[redacted]x"}},
		"plain":  "nothing here",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Value (-want +got):\n%s", diff)
	}
	if got := (Secrets{}).String("a"); got != "a" {
		t.Errorf("no secrets: %q", got)
	}
}
