package eval

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A case can run in draft mode: the outcome is drafted, the send_email mock
// answers status drafted, and an expectation of replied fails.
func TestRunCaseDraftMode(t *testing.T) {
	draft := strings.Replace(validCase, "input:\n", "input:\n  reply_mode: draft\n", 1)
	draft = strings.Replace(draft, "status: replied", "status: drafted", 1)
	r := newTestRunner(t, testSet(t), Config{})
	rr := r.RunCase(context.Background(), loadOne(t, t.TempDir(), "draft.yaml", draft))
	if !rr.Passed || rr.Outcome.Status != "drafted" {
		t.Fatalf("draft case: passed %v, status %s, failures %v", rr.Passed, rr.Outcome.Status, rr.Failures)
	}
	last := rr.Outcome.FunctionCalls[len(rr.Outcome.FunctionCalls)-1]
	if last.Name != "send_email" || last.Result["status"] != "drafted" {
		t.Errorf("send_email result %v, want status drafted", last.Result)
	}

	// Auto drafts in a case: it has no inbox and no review history.
	auto := strings.Replace(draft, "  reply_mode: draft\n", "  reply_mode: auto\n", 1)
	if rr := r.RunCase(context.Background(), loadOne(t, t.TempDir(), "auto.yaml", auto)); !rr.Passed || rr.Outcome.Status != "drafted" {
		t.Fatalf("auto case: passed %v, status %s, failures %v", rr.Passed, rr.Outcome.Status, rr.Failures)
	}

	// The same email in send mode does not meet status: drafted.
	send := strings.Replace(draft, "  reply_mode: draft\n", "", 1)
	rr = r.RunCase(context.Background(), loadOne(t, t.TempDir(), "send.yaml", send))
	if rr.Passed || rr.Outcome.Status != "replied" {
		t.Fatalf("send case expecting drafted: passed %v, status %s", rr.Passed, rr.Outcome.Status)
	}
}

func TestLoadReplyModeInvalid(t *testing.T) {
	bad := strings.Replace(validCase, "input:\n", "input:\n  reply_mode: later\n", 1)
	_, err := Load([]string{writeCase(t, t.TempDir(), "bad.yaml", bad)}, testSet(t))
	var le *LoadError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), `bad.yaml:5: input.reply_mode "later": want send, draft or auto`) {
		t.Fatalf("Load: %v, want an error naming the file, line and reply_mode", err)
	}
}
