package main

import (
	"strings"
	"testing"
)

// pipeline.jurisdiction chooses the policy's jurisdiction the decisions
// apply (triage check says which); an undeclared one stops the start-up,
// naming itself and the declared ones.
func TestJurisdictionSetting(t *testing.T) {
	noDefaultConfig(t)
	cfg := watchConfig(t, t.TempDir(), "  offline: true\n  jurisdiction: uk\n")
	code, out, stderr := runArgs(t, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "decisions under uk (United Kingdom)") {
		t.Errorf("jurisdiction uk: exit %d, want 0 and decisions under uk\n%s%s", code, out, stderr)
	}
	cfg = watchConfig(t, t.TempDir(), "  offline: true\n  jurisdiction: fr\n")
	code, out, stderr = runArgs(t, "watch", "--config", cfg, "--check")
	if code != 2 || !strings.Contains(stderr, `"fr"`) || !strings.Contains(stderr, "de, eu, pl, uk") {
		t.Errorf("jurisdiction fr: exit %d, want 2 naming fr and de, eu, pl, uk\n%s%s", code, out, stderr)
	}
}
