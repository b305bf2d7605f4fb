package mailtest

import (
	"fmt"
	"os"
	"testing"
)

// SkipReportEnv names a file that Skip appends to; `make test` sets it and
// prints every line of it loudly at the end, because go test hides skips
// unless -v.
const SkipReportEnv = "TRIAGE_SKIP_REPORT"

// Skip skips t because a real server the test needs is not installed, and
// records why in $TRIAGE_SKIP_REPORT. With CI set it fails instead: CI must
// run every test.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s", msg)
	}
	if path := os.Getenv(SkipReportEnv); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%s: %s\n", t.Name(), msg)
			f.Close()
		}
	}
	t.Skipf("%s", msg)
}
