package e2e

import (
	"fmt"
	"testing"

	"triage/internal/testkit/mailtest"
)

// The binary against a real Dovecot on loopback. mailtest.StartDovecot
// skips with a clear message when Dovecot is not installed, and fails when
// the CI environment variable is set: CI must run these.

func dovecotTarget(t *testing.T) (mailtest.Target, *mailtest.Dovecot) {
	d := mailtest.StartDovecot(t)
	return d.Target(), d
}

// TestDovecotBinaryEndToEnd runs the real binary against Dovecot.
func TestDovecotBinaryEndToEnd(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	binaryEndToEnd(t, newWorldFor(t, tgt, ""))
}

// TestDovecotCrashConsistency: SIGKILL at random moments against Dovecot.
func TestDovecotCrashConsistency(t *testing.T) {
	for _, n := range crashConcurrencies(t) {
		t.Run(fmt.Sprintf("concurrency=%d", n), func(t *testing.T) {
			tgt, _ := dovecotTarget(t)
			crashConsistency(t, newWorldFor(t, tgt, fmt.Sprintf("concurrency: %d\n", n)), 25, 30)
		})
	}
}
