package mcptest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/mailtest"
)

// A missing npm server is a skip that make test's banner lists (through
// $TRIAGE_SKIP_REPORT), not a silent one.
func TestMissingServerSkipIsReported(t *testing.T) {
	if os.Getenv("CI") != "" {
		t.Skip("with CI set, a missing server fails the test by design")
	}
	report := filepath.Join(t.TempDir(), "skipped.txt")
	t.Setenv(mailtest.SkipReportEnv, report)
	t.Setenv(FilesystemServerEnv, filepath.Join(t.TempDir(), "no-such-server"))
	t.Run("needs-npm", func(t *testing.T) { FilesystemServer(t) })
	b, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(b), "TestMissingServerSkipIsReported/needs-npm: mcptest: *** SKIPPING: the npm MCP server") {
		t.Errorf("report %q (%v)", b, err)
	}
}
