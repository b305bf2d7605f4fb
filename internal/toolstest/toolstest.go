// Package toolstest gives tests the tool bindings production runs: the
// shipped tools.yaml, with the built-in functions only (http and mcp bindings
// need backends a unit test does not start).
package toolstest

import (
	"testing"

	"triage/instructions"
	"triage/internal/tools"
)

// Shipped loads the shipped tools.yaml and drops every binding that is not a
// built-in: the guardrails and policies production runs on its own functions.
func Shipped(t testing.TB) *tools.Set {
	t.Helper()
	ts, err := tools.Load(instructions.FS, tools.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range ts.Tools {
		if b.Builtin == "" {
			delete(ts.Tools, name)
		}
	}
	return ts
}
