package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"triage/internal/replies"

	"github.com/google/go-cmp/cmp"
)

// dirFiles lists the files under dir (relative, slash-separated), but for
// the outbox's lock files, which hold nothing.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() && info.Name() == replies.ClaimsDir {
			return filepath.SkipDir
		}
		if err == nil && !info.IsDir() && info.Name() != replies.LockFile && info.Name() != replies.IndexDB {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// `process --reply-mode draft` writes complete replies into outbox/drafts,
// the outcomes say drafted, and the exit status is 0.
func TestProcessReplyModeDraft(t *testing.T) {
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--reply-mode", "draft", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox,
		"../../examples/inbox/01-valid-warranty-pl.eml", "../../examples/inbox/06-out-of-office.eml")
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstderr: %s", code, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 2 || outs[0].Status != "drafted" || outs[1].Status != "skipped" {
		t.Fatalf("outcomes %+v, want drafted and skipped", outs)
	}
	files := dirFiles(t, outbox)
	if len(files) != 2 || files[0] != replies.IndexFile || !strings.HasPrefix(files[1], "drafts/") || outs[0].Reply.Path != filepath.Join(outbox, files[1]) {
		t.Fatalf("outbox files %v, reply %+v: want the one draft in drafts/ and the index", files, outs[0].Reply)
	}
	raw, _ := os.ReadFile(outs[0].Reply.Path)
	if !strings.Contains(string(raw), "In-Reply-To: <") || !strings.Contains(string(raw), "SN-48213-PL") {
		t.Errorf("draft is not a complete threaded reply:\n%s", raw)
	}
	if !strings.Contains(stderr, "1 drafted") {
		t.Errorf("summary does not count the draft: %s", stderr)
	}
}

// `process --dry-run` creates no outbox, no ticket store, writes nothing,
// and prints complete outcomes marked dry_run.
func TestProcessDryRun(t *testing.T) {
	dir := t.TempDir()
	outbox, db := filepath.Join(dir, "outbox"), filepath.Join(dir, "t.db")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--dry-run", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", db, "--outbox", outbox, "../../examples/inbox/01-valid-warranty-pl.eml")
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstderr: %s", code, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 1 || outs[0].Status != "replied" || !outs[0].DryRun || outs[0].Reply == nil || outs[0].Reply.To == "" {
		t.Fatalf("outcomes %+v, want one complete replied outcome with dry_run", outs)
	}
	var calls []string
	for _, c := range outs[0].FunctionCalls {
		calls = append(calls, c.Name+map[bool]string{true: " (dry run)"}[c.DryRun])
	}
	if diff := cmp.Diff([]string{"check_warranty", "create_ticket (dry run)", "send_email (dry run)"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := dirFiles(t, dir); len(got) != 0 {
		t.Errorf("the dry run wrote %v, want nothing", got)
	}
	if !strings.Contains(stdout, `"dry_run":true`) {
		t.Errorf("outcome JSON lacks \"dry_run\":true: %s", stdout)
	}
}

func TestProcessReplyModeInvalid(t *testing.T) {
	code, _, stderr := runCLI(t, "", "process", "--reply-mode", "later", "--outbox", t.TempDir(), "x.eml")
	if code != 2 || !strings.Contains(stderr, `--reply-mode "later"`) {
		t.Fatalf("exit %d, stderr %s: want 2 naming --reply-mode", code, stderr)
	}
}

// `process --reply-mode auto` drafts: process has no inbox and no review
// history to earn sending by.
func TestProcessReplyModeAuto(t *testing.T) {
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--reply-mode", "auto", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox, "../../examples/inbox/01-valid-warranty-pl.eml")
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstderr: %s", code, stderr)
	}
	if outs := decodeOutcomes(t, stdout); len(outs) != 1 || outs[0].Status != "drafted" {
		t.Fatalf("outcomes %+v, want drafted", outs)
	}
	if files := dirFiles(t, outbox); len(files) != 2 || files[0] != replies.IndexFile || !strings.HasPrefix(files[1], "drafts/") {
		t.Errorf("outbox files %v, want the one draft in drafts/ and the index", files)
	}
}
