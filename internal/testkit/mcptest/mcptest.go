// Package mcptest finds the MCP servers from npm that tests run (servers
// that are not ours), installed by .ci/node.sh into .ci/node/node_modules.
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"triage/internal/testkit/mailtest"
)

// FilesystemServerEnv overrides where the filesystem server is.
const FilesystemServerEnv = "TRIAGE_MCP_FILESYSTEM_SERVER"

// FilesystemServer returns the command that starts
// @modelcontextprotocol/server-filesystem over stdio (append the allowed
// directories). When it is not installed the test is skipped with a loud
// message, or fails when the CI environment variable is set: CI must run
// it (install with .ci/node.sh).
func FilesystemServer(t testing.TB) []string {
	t.Helper()
	bin := os.Getenv(FilesystemServerEnv)
	if bin == "" {
		_, file, _, _ := runtime.Caller(0)
		bin = filepath.Join(filepath.Dir(file), "..", "..", "..", ".ci", "node", "node_modules", ".bin", "mcp-server-filesystem")
	}
	_, statErr := os.Stat(bin)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		// mailtest.Skip records the skip for make test's banner (and fails
		// with CI set), like every other test that needs a server not ours.
		mailtest.Skip(t, "mcptest: *** SKIPPING: the npm MCP server @modelcontextprotocol/server-filesystem is not installed (%s; node: %v); run .ci/node.sh ***", bin, nodeErr)
	}
	return []string{bin}
}
