package instructions_test

import (
	"strings"
	"testing"

	"triage"
	"triage/internal/instructions"
)

func TestReplyModeFrontmatter(t *testing.T) {
	fsys := baseFS()
	fsys["scenarios/alpha.md"].Data = []byte(strings.Replace(string(fsys["scenarios/alpha.md"].Data), "version: 1.2.3\n", "version: 1.2.3\nreply_mode: draft\n", 1))
	set, err := instructions.LoadScenarios(fsys, routes)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	alpha, beta := set.Get("alpha"), set.Get("beta")
	if alpha.ReplyMode != triage.ReplyDraft || beta.ReplyMode != "" {
		t.Fatalf("ReplyMode alpha=%q beta=%q, want draft and empty", alpha.ReplyMode, beta.ReplyMode)
	}
	for _, tc := range []struct {
		sc        *instructions.Scenario
		run, want triage.ReplyMode
	}{
		{alpha, "", triage.ReplyDraft},
		{alpha, triage.ReplySend, triage.ReplyDraft}, // the scenario overrides the run
		{beta, "", triage.ReplySend},                 // default: send
		{beta, triage.ReplyDraft, triage.ReplyDraft}, // the run's mode
		{nil, triage.ReplyDraft, triage.ReplyDraft},
	} {
		name := "nil"
		if tc.sc != nil {
			name = tc.sc.Name
		}
		if got := instructions.ReplyModeFor(tc.sc, tc.run); got != tc.want {
			t.Errorf("ReplyModeFor(%s, %q) = %q, want %q", name, tc.run, got, tc.want)
		}
	}
}

func TestReplyModeInvalid(t *testing.T) {
	fsys := baseFS()
	fsys["scenarios/beta.md"].Data = []byte(strings.Replace(string(fsys["scenarios/beta.md"].Data), "fallback: true\n", "fallback: true\nreply_mode: drafts\n", 1))
	_, err := instructions.LoadScenarios(fsys, routes)
	if err == nil || !strings.Contains(err.Error(), `scenarios/beta.md: reply_mode: "drafts" must be "send", "draft", "auto" or empty`) {
		t.Fatalf("Load error = %v, want one naming the file and reply_mode", err)
	}
}
