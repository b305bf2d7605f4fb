// Command triage answers a warranty-support inbox: it reads customer emails,
// lets Gemini drive the work through function calls (check the warranty, open
// a ticket, send the reply) and proves a reply really went out.
//
// This package is thin: flags, environment and wiring. Follow one email from
// process.go into internal/processor.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"triage/internal/settings"
	"triage/internal/trace"
)

// Exit codes, every command's: they are a contract (scripts, cron and
// systemd's RestartPreventExitStatus read them).
const (
	exitOK     = 0
	exitFailed = 1 // some input failed; watch: the mailbox or ledger is unusable
	exitUsage  = 2 // usage or configuration error
	// exitLocked: another triage watch holds the ledger lock. exitFlipped:
	// replay found an outcome that flips. They share 3: no command has both.
	exitLocked    = 3
	exitFlipped   = 3
	exitBelowGate = 4 // eval pass rate below --min-pass-rate
	// exitAuth: the IMAP server refused the login, or the OAuth2 token
	// endpoint refused the grant; retrying will not help.
	exitAuth = 5
	// exitInterrupted: a second SIGINT/SIGTERM stopped watch at once (128 +
	// SIGINT, as a shell reports it).
	exitInterrupted = 130
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
	// logged: the error was already written as a log line (--log-format
	// json), so run does not print it again.
	logged bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr marks a usage or configuration error (exit 2).
func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "triage",
		Short: "Answer a warranty-support inbox with Gemini function calling",
		Long: `triage reads customer emails, decides what each customer needs, lets Gemini
drive the work through function calls (check the warranty, open a ticket,
send the reply) and refuses to call an email handled unless a reply was
really sent.

Without GEMINI_API_KEY (or Vertex settings) it uses the built-in offline
model, a deterministic stand-in that needs no network.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
	})
	root.Version = readBuildInfo().Version // enables --version
	// Declared here so that cobra gives it no -v: -v is --verbose, in every
	// command that has it.
	var version bool // cobra reads the flag itself
	settings.Table{{Flag: "version", Usage: "print the version (as triage version)", Var: settings.Bool(&version, false)}}.Register(root.Flags())
	root.SetVersionTemplate(readBuildInfo().String() + "\n")
	root.AddCommand(newProcessCmd(), newCheckCmd(), newEvalCmd(), newWatchCmd(), newLedgerCmd(), newTicketsCmd(), newVersionCmd(), newManualsCmd(), newStoreCmd(), newConsoleCmd(), newReplayCmd())
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the CLI and maps errors to exit codes.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Tracing is on when the OTEL_* variables ask for it (package trace);
	// whatever is left is flushed before the command returns.
	shutdown, err := trace.Setup(ctx, trace.Options{Version: readBuildInfo().Version})
	if err != nil {
		fmt.Fprintln(stderr, "triage:", err)
		return exitUsage
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			fmt.Fprintln(stderr, "triage: trace export:", err)
		}
	}()
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err = root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && !ee.logged {
			fmt.Fprintln(stderr, "triage:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "triage:", err)
	// cobra's own argument errors (an unknown command, a wrong number of
	// arguments) are usage errors.
	fmt.Fprintln(stderr, "Run 'triage --help' for usage.")
	return exitUsage
}
