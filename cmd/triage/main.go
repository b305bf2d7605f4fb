// Command triage answers a warranty-support inbox: it reads customer emails,
// lets Gemini drive the work through function calls (check the warranty, open
// a ticket, send the reply) and proves a reply really went out.
//
// This package turns flags, environment and configuration into settings
// (settings.go), builds the pipeline once per command through
// processor.Build (wiring.go), runs the subcommands, and maps every error to
// its exit status in one place (exit.go). Follow one email from process.go
// into internal/processor.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"triage/internal/settings"
	"triage/internal/trace"
)

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
		return usageError(fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath()))
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

// run executes the CLI and returns its exit status (exitCode). A command
// that must stop at once (watch, on a second signal) calls interruptNow:
// run then returns exitInterrupted without waiting for it, after flushing
// the traces.
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
	abort := make(chan struct{})
	var once sync.Once
	ctx = context.WithValue(ctx, interruptKey{}, func() { once.Do(func() { close(abort) }) })
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	select {
	case err = <-done:
	case <-abort:
		err = &cmdError{kind: errInterrupted}
	}
	report(stderr, err)
	return exitCode(err)
}

// interruptKey holds, in a command's context, the function that ends run
// at once.
type interruptKey struct{}

// interruptNow makes run return exitInterrupted at once, without waiting
// for the command (which is left to die with the process).
func interruptNow(ctx context.Context) {
	if f, ok := ctx.Value(interruptKey{}).(func()); ok {
		f()
	}
}

// report prints err for a person, unless the command already did.
func report(stderr io.Writer, err error) {
	if err == nil {
		return
	}
	var ce *cmdError
	if errors.As(err, &ce) {
		if ce.err != nil && !ce.logged {
			fmt.Fprintln(stderr, "triage:", ce.err)
		}
		return
	}
	fmt.Fprintln(stderr, "triage:", err)
	// cobra's own argument errors (an unknown command, a wrong number of
	// arguments) are usage errors.
	fmt.Fprintln(stderr, "Run 'triage --help' for usage.")
}
