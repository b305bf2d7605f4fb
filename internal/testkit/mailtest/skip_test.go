package mailtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Skip records the skipped test and why in $TRIAGE_SKIP_REPORT, for make
// test to print loudly.
func TestSkipIsReported(t *testing.T) {
	if os.Getenv("CI") != "" {
		t.Skip("with CI set, Skip fails the test by design")
	}
	report := filepath.Join(t.TempDir(), "skipped.txt")
	t.Setenv(SkipReportEnv, report)
	t.Run("needs-a-server", func(t *testing.T) { Skip(t, "server %s not installed", "x") })
	b, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(b), "TestSkipIsReported/needs-a-server: server x not installed") {
		t.Errorf("report %q (%v)", b, err)
	}
}
