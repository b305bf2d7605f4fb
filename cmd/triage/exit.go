package main

import (
	"errors"
	"fmt"
)

// Exit statuses. They are a contract (scripts, cron and systemd's
// RestartPreventExitStatus read them), each with one meaning in every
// command; the README's "Exit status" table lists them. exitCode is the one
// place an error becomes one of them.
const (
	exitOK        = 0
	exitFailed    = 1 // an input failed, or the command could not do its work (watch: the mailbox or store is unusable)
	exitUsage     = 2 // usage or configuration error
	exitFlipped   = 3 // replay: an outcome flips
	exitBelowGate = 4 // eval: the pass rate is below --min-pass-rate, or every case was skipped
	// exitAuth: the IMAP server refused the login, or the OAuth2 token
	// endpoint refused the grant; retrying will not help.
	exitAuth = 5
	// exitLocked: another run holds the ledger lock; this one did nothing.
	exitLocked = 6
	// exitInterrupted: a second SIGINT/SIGTERM stopped the command at once
	// (128 + SIGINT, as a shell reports it).
	exitInterrupted = 130
)

// The kinds of error a command returns; exitCode maps each to its status.
var (
	errFailed      = errors.New("failed")
	errUsage       = errors.New("usage or configuration error")
	errFlipped     = errors.New("an outcome flips")
	errBelowGate   = errors.New("pass rate below the gate")
	errAuth        = errors.New("authentication refused")
	errLocked      = errors.New("locked by another run")
	errInterrupted = errors.New("interrupted")
)

// cmdError is an error of one kind. err nil: nothing more to print than
// what the command already printed.
type cmdError struct {
	kind error
	err  error
	// logged: the error was already written as a log line (--log-format
	// json), so run does not print it again.
	logged bool
}

func (e *cmdError) Error() string {
	if e.err == nil {
		return e.kind.Error()
	}
	return e.err.Error()
}

func (e *cmdError) Unwrap() error { return e.err }

// failure marks err as a failure of the command's work (exit 1).
func failure(err error) error { return &cmdError{kind: errFailed, err: err} }

// usageError marks err as a usage or configuration error (exit 2).
func usageError(err error) error { return &cmdError{kind: errUsage, err: err} }

// usageErr is usageError with a formatted message.
func usageErr(format string, a ...any) error { return usageError(fmt.Errorf(format, a...)) }

// exitCode is the exit status of a command that returned err: the kind of
// the outermost cmdError in its chain. An error of no kind comes from the
// command line itself (cobra: an unknown command or flag, a wrong number of
// arguments): a usage error.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ce *cmdError
	if !errors.As(err, &ce) {
		return exitUsage
	}
	switch ce.kind {
	case errFailed:
		return exitFailed
	case errFlipped:
		return exitFlipped
	case errBelowGate:
		return exitBelowGate
	case errAuth:
		return exitAuth
	case errLocked:
		return exitLocked
	case errInterrupted:
		return exitInterrupted
	}
	return exitUsage
}
