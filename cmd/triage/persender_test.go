package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"triage"
)

// perSenderRun runs process over n warranty claims from one sender, each a
// new message (its own Message-ID, no threading header), four at a time,
// and counts the outcomes by status/reason.
func perSenderRun(t *testing.T, n int, extra ...string) map[string]int {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := range n {
		files = append(files, writeEML(t, dir, fmt.Sprintf("claim-%02d", i), "Anna Nowak <anna@customer.example>",
			fmt.Sprintf("Reklamacja %d", i), "Dzień dobry, mój ekspres SN-48213-PL nie grzeje. Proszę o naprawę w ramach gwarancji."))
	}
	args := append([]string{"process", "--json", "--concurrency", "4", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox")}, extra...)
	code, stdout, stderr := runCLI(t, "", append(args, files...)...)
	if code != 1 {
		t.Errorf("exit %d, want 1 (some emails left for a person)\n%s", code, stderr)
	}
	got := map[string]int{}
	for _, o := range decodeOutcomes(t, stdout) {
		got[string(o.Status)+"/"+string(o.Reason)]++
	}
	return got
}

// The per-sender limit of process is exact however many emails are
// answered at once: the outbox checks it when the reply is written.
func TestProcessPerSenderLimitConcurrent(t *testing.T) {
	got := perSenderRun(t, 12)
	want := map[string]int{string(triage.StatusReplied) + "/": 5, "failed/" + string(triage.ReasonPerSenderLimit): 7}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}

// Drafts count against the per-sender limit: each cost a model run and a
// ticket.
func TestProcessPerSenderLimitDrafts(t *testing.T) {
	got := perSenderRun(t, 7, "--reply-mode", "draft")
	want := map[string]int{string(triage.StatusDrafted) + "/": 5, "failed/" + string(triage.ReasonPerSenderLimit): 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
