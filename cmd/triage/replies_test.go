package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Running process twice over the same inbox writes each reply once: the
// second run says the reply already exists, as it opens no second ticket.
func TestProcessTwiceWritesNoSecondReply(t *testing.T) {
	dir := t.TempDir()
	files, err := filepath.Glob("../../examples/inbox/*.eml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	outbox := filepath.Join(dir, "outbox")
	args := append([]string{"process", "--staff", "reklamacje@example.com", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox}, files...)
	code, first, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	written, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if len(written) == 0 || strings.Contains(first, "already exists") {
		t.Fatalf("first run wrote %d replies:\n%s", len(written), first)
	}
	code, second, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	again, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if len(again) != len(written) {
		t.Errorf("second run: %d reply files, want still %d", len(again), len(written))
	}
	replies := strings.Count(first, " written: ") // files also holds staff notices
	if n := strings.Count(second, "already exists (not written again)"); n != replies || n == 0 {
		t.Errorf("second run says 'already exists' %d times, want %d:\n%s", n, replies, second)
	}
	// --json says it too.
	code, js, _ := runCLI(t, "", append([]string{"process", "--json"}, args[1:]...)...)
	existing := 0
	for _, o := range decodeOutcomes(t, js) {
		if o.Reply != nil && o.Reply.Existing {
			existing++
		}
	}
	if code != 0 || existing != replies {
		t.Errorf("--json: exit %d, %d existing replies, want %d", code, existing, replies)
	}
	if entries, _ := os.ReadDir(outbox); len(entries) != len(written) {
		t.Errorf("outbox holds %d entries after three runs, want %d", len(entries), len(written))
	}
}
