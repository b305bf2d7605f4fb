package main

import (
	"strings"
	"testing"
)

// check warns when replies would go out under the example address
// (pipeline.from unset) or under one that is not the login account.
func TestCheckWarnsAboutFrom(t *testing.T) {
	tests := []struct {
		name  string
		extra string
		env   string
		want  string // "" means no warning
	}{
		{"unset", "  offline: true\n", "", "pipeline.from is not set"},
		{"the login account", "  offline: true\n  from: Serwis <Serwis@example.com>\n", "", ""},
		{"another address", "  offline: true\n  from: Pomoc <pomoc@example.com>\n", "", "pipeline.from pomoc@example.com is not the login account serwis@example.com"},
		{"from the environment", "  offline: true\n", "Serwis <serwis@example.com>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			noDefaultConfig(t)
			t.Setenv("TRIAGE_FROM", tc.env)
			cfg := watchConfig(t, t.TempDir(), tc.extra)
			code, stdout, stderr := runArgs(t, "check", "--config", cfg)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			warned := strings.Contains(stdout, "warning: ")
			if tc.want == "" && warned || tc.want != "" && !strings.Contains(stdout, "warning: "+tc.want) {
				t.Errorf("stdout %q, want warning %q", stdout, tc.want)
			}
		})
	}
}
