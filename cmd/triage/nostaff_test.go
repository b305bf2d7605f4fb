package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The missing staff address is said once, where it matters: not when no
// email escalates (the README's first example), once for a run in which
// escalations were left for a person.
func TestNoStaffWarnedOnceWhereItMatters(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		warns int
	}{
		{"no escalation", []string{"../../examples/inbox/01-valid-warranty-pl.eml"}, 0},
		{"two escalations", []string{"../../examples/inbox/14-angry-customer-en.eml", "../../examples/inbox/01-valid-warranty-pl.eml", "../../examples/inbox/14-angry-customer-en.eml"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"process", "--json", "--concurrency", "1", "--warranty-csv", "../../examples/warranty.csv",
				"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox")}, tc.files...)
			_, stdout, stderr := runCLI(t, "", args...)
			if got := strings.Count(stderr, "no staff address configured"); got != tc.warns {
				t.Errorf("warned %d times, want %d:\n%s", got, tc.warns, stderr)
			}
			if tc.warns > 0 && !strings.Contains(stdout, `"no_staff"`) {
				t.Errorf("no outcome failed/no_staff:\n%s", stdout)
			}
		})
	}
}
