package main

import (
	"context"
	"os"
	"testing"
)

// TestMain lets the test binary stand in for triage as a child process:
// the shipped tools.yaml starts the manuals server as "${TRIAGE_BIN}
// mcp-manuals DIR", and TRIAGE_BIN defaults to the running binary, which in
// tests is this one.
func TestMain(m *testing.M) {
	if os.Getenv("TRIAGE_MANUALS") == "" {
		os.Setenv("TRIAGE_MANUALS", "../../examples/manuals") // the server's default is relative to the repository
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp-manuals" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
