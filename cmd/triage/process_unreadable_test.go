package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// process whose inputs cannot be read reports each (failed/read_error, exit
// 1) and creates nothing: no outbox, no ticket store. With one readable
// input among them, the pipeline runs as usual.
func TestProcessUnreadableInputCreatesNothing(t *testing.T) {
	tests := []struct {
		name       string
		inputs     []string
		wantCreate bool
	}{
		{"missing file", []string{"nope.eml"}, false},
		{"a directory and a missing file", []string{".", "nope.eml"}, false},
		{"one readable", []string{"nope.eml", "../../examples/inbox/07-newsletter.eml"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			outbox, db := filepath.Join(dir, "outbox"), filepath.Join(dir, "tickets.db")
			args := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", db, "--outbox", outbox}, tc.inputs...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 1 || strings.Count(stdout, `"reason":"read_error"`) != len(tc.inputs)-btoi(tc.wantCreate) {
				t.Errorf("exit %d, want 1 and a read_error per unreadable input\n%s%s", code, stdout, stderr)
			}
			for _, p := range []string{outbox, db} {
				_, err := os.Stat(p)
				if created := err == nil; created != tc.wantCreate {
					t.Errorf("%s created = %v, want %v", p, created, tc.wantCreate)
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
