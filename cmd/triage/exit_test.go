package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/watch"
)

// Every kind of error has its own status, the outermost kind wins, and an
// error of no kind (cobra's own) is a usage error.
func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"failure", failure(errors.New("x")), exitFailed},
		{"failure without text", failure(nil), exitFailed},
		{"usage", usageErr("bad %s", "flag"), exitUsage},
		{"flipped", &cmdError{kind: errFlipped}, exitFlipped},
		{"below the gate", &cmdError{kind: errBelowGate, err: errors.New("x")}, exitBelowGate},
		{"auth", &cmdError{kind: errAuth, err: errors.New("x")}, exitAuth},
		{"locked", &cmdError{kind: errLocked, err: errors.New("x")}, exitLocked},
		{"interrupted", &cmdError{kind: errInterrupted}, exitInterrupted},
		{"wrapped", fmt.Errorf("watch: %w", &cmdError{kind: errAuth, err: errors.New("x")}), exitAuth},
		{"the outermost kind wins", failure(usageErr("inner")), exitFailed},
		{"logged keeps its kind", &cmdError{kind: errLocked, err: errors.New("x"), logged: true}, exitLocked},
		{"no kind", errors.New(`unknown command "x" for "triage"`), exitUsage},
	} {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("%s: exitCode = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// The README's table lists every status with one meaning.
func TestExitStatusesDocumented(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{exitOK, exitFailed, exitUsage, exitFlipped, exitBelowGate, exitAuth, exitLocked, exitInterrupted} {
		if n := strings.Count(string(b), fmt.Sprintf("\n| %d | ", code)); n != 1 {
			t.Errorf("README: status %d in %d rows of the exit status table, want 1", code, n)
		}
	}
}

// A second watch on a ledger another run holds exits 6 and touches nothing.
func TestWatchLockedExits6(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n")
	unlock, err := watch.Lock(filepath.Join(dir, "state", "ledger.db") + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	code, _, stderr := runArgs(t, "watch", "--once", "--config", cfg)
	if code != exitLocked || !strings.Contains(stderr, "already using") {
		t.Fatalf("exit %d, want %d (locked); stderr:\n%s", code, exitLocked, stderr)
	}
}
