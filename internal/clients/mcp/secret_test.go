package mcp_test

import (
	"context"
	"strings"
	"testing"
)

// A tool error (isError) that quotes a value the binding passed in env:
// reaches the model redacted.
func TestEnvSecretRedactedFromToolErrors(t *testing.T) {
	cfg := stdioConfig(nil)
	cfg.Env = append(cfg.Env, "KB_TOKEN=kb-secret-42")
	c := newClient(t, cfg)
	_, err := c.Call(context.Background(), "failenv", map[string]any{"text": "KB_TOKEN"})
	if err == nil || strings.Contains(err.Error(), "kb-secret-42") || !strings.Contains(err.Error(), "token [redacted] rejected") {
		t.Fatalf("err = %v, want the token redacted", err)
	}
}
