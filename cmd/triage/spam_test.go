package main

import (
	"os"
	"path/filepath"
	"testing"
	"triage/internal/testkit/corpustest"

	"triage"
)

// TestProcessSpam: process reports the receiving server's spam verdict as
// skipped with reason spam, without a model call; --spam-header and
// --spam-threshold add a score header; a message under the threshold is
// answered.
func TestProcessSpam(t *testing.T) {
	dir := t.TempDir()
	write := func(name, header string) string {
		p := filepath.Join(dir, name)
		raw := "From: Jan <jan@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja SN-48213-PL\r\n" +
			"Message-ID: <" + name + "@customer.example>\r\nDate: Mon, 3 Mar 2025 10:00:00 +0100\r\n" + header +
			"Content-Type: text/plain; charset=utf-8\r\n\r\nEkspres SN-48213-PL przecieka.\r\n"
		if err := os.WriteFile(p, []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagged := write("flagged.eml", "X-Spam-Flag: YES\r\n")
	scored := write("scored.eml", "X-Spam-Score: 9.5\r\n")
	low := write("low.eml", "X-Spam-Score: 2.0\r\n")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox"),
		"--spam-header", "X-Spam-Score", "--spam-threshold", "6", flagged, scored, low)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 3 {
		t.Fatalf("%d outcomes, want 3:\n%s", len(outs), stdout)
	}
	for _, o := range outs {
		spam := filepath.Base(o.File) != "low.eml"
		switch {
		case spam && (o.Status != triage.StatusSkipped || o.Reason != triage.ReasonSpam || o.ModelCalls != 0):
			t.Errorf("%s: %s/%s after %d model calls (%s), want skipped as spam without a model call", o.File, o.Status, o.Reason, o.ModelCalls, o.Detail)
		case !spam && o.Status != triage.StatusReplied:
			t.Errorf("%s: %s/%s (%s), want replied", o.File, o.Status, o.Reason, o.Detail)
		}
	}
	code, _, stderr = runCLI(t, "", "process", "--spam-header", "X Spam", low)
	if code != 2 {
		t.Errorf("--spam-header with a space: exit %d, want 2 (%s)", code, stderr)
	}
}

// TestProcessCorpusSample runs the guard's corpus sample
// (internal/guard/testdata/corpus, "<class>--<name>.eml") through `triage
// process` with the offline model: no machine and no spam is answered or
// costs a model call, and every person is answered. The log lists, per
// class, how many were answered.
func TestProcessCorpusSample(t *testing.T) {
	files := corpustest.Files(t, "../../internal/guard/testdata/corpus")
	dir := t.TempDir()
	args := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox"), "--staff", "kierownik@example.com"}, files...)
	code, stdout, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != len(files) {
		t.Fatalf("%d outcomes for %d files", len(outs), len(files))
	}
	var tally corpustest.Tally
	for _, o := range outs {
		class, _ := corpustest.Class(o.File)
		tally.Add(class, o.Status.Answered())
		if class == corpustest.Person {
			if !o.Status.Answered() {
				t.Errorf("%s: a person's mail %s/%s (%s), want answered", o.File, o.Status, o.Reason, o.Detail)
			}
			continue
		}
		if o.Status != triage.StatusSkipped || o.ModelCalls != 0 {
			t.Errorf("%s: %s mail %s/%s after %d model calls, want skipped without one", o.File, class, o.Status, o.Reason, o.ModelCalls)
		}
	}
	t.Log(tally.String())
}
