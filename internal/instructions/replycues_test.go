package instructions_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/instructions"
)

// What a scenario declares about its reply (asks_for, declines_topic) is
// read from the frontmatter.
func TestReplyFrontmatter(t *testing.T) {
	fsys := baseFS()
	fsys["scenarios/alpha.md"].Data = []byte(strings.Replace(string(fsys["scenarios/alpha.md"].Data),
		"version: 1.2.3\n", "version: 1.2.3\nasks_for: [serial_number]\ndeclines_topic: true\n", 1))
	set, err := instructions.LoadScenarios(fsys, routes)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	type reply struct {
		AsksSerial, Declines bool
	}
	got := map[string]reply{}
	for _, name := range []string{"alpha", "beta"} {
		sc := set.Get(name)
		got[name] = reply{sc.Asks(instructions.FactSerialNumber), sc.DeclinesTopic}
	}
	want := map[string]reply{"alpha": {true, true}, "beta": {false, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reply declarations (-want +got):\n%s", diff)
	}
	var none *instructions.Scenario
	if none.Asks(instructions.FactSerialNumber) {
		t.Error("a nil scenario asks for a serial number")
	}
}
