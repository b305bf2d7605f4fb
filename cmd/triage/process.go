package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"triage"
	"triage/eval"
	"triage/internal/clients/mail"
	"triage/internal/clip"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/settings"
	"triage/internal/trace"
)

// maxInputBytes caps one input message read from disk or stdin.
const maxInputBytes = 25 << 20

// processOptions are the settings of process, declared in processSettings.
type processOptions struct {
	pipelineOptions
	JSON    bool
	Outbox  string
	Verbose bool
	table   settings.Table
}

func newProcessCmd() *cobra.Command {
	cmd, _ := newProcessCmdOptions()
	return cmd
}

// newProcessCmdOptions returns the process command and the options its
// settings fill.
func newProcessCmdOptions() (*cobra.Command, *processOptions) {
	o := &processOptions{}
	cmd := &cobra.Command{
		Use:   "process [flags] FILE.eml...",
		Short: "Process .eml files (or - for stdin) and reply to each",
		Long: `Process reads each message, decides what the customer needs, lets the model
drive the work through function calls and writes the reply. It prints one
summary per message (or one JSON outcome per line with --json), in input
order.

Everything is validated before anything is created: an invalid setting
exits 2 without an outbox or a ticket store appearing. A warranty registry
is required (--warranty-csv FILE or --warranty-url URL).

Environment: every flag marked [$TRIAGE_...] reads that variable when the
flag is not given (a flag wins over its variable). TRIAGE_WARRANTY_TOKEN and
TRIAGE_TICKETS_TOKEN are the bearer tokens of the HTTP services. ${VAR} in
tools.yaml is read from the environment at start (the shipped search_manual
runs $TRIAGE_BIN mcp-manuals over $TRIAGE_MANUALS). The model is Gemini
when GEMINI_API_KEY (or GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI with
GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION) is set, the built-in offline
model otherwise.

Exit status: 0 when every input was replied, drafted or skipped, 1 when any
failed, 2 for a usage or configuration error.`,
		Example: `  triage process --warranty-csv examples/warranty.csv examples/inbox/*.eml
  triage process --json --warranty-csv registry.csv --outbox out/ mail.eml
  cat mail.eml | triage process --json --warranty-csv registry.csv -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("process: no input: give one or more .eml files, or - for stdin")
			}
			n := 0
			for _, a := range args {
				if a == "-" {
					n++
				}
			}
			if n > 1 {
				return usageErr("process: - (stdin) may be given only once")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return usageError(err)
			}
			return runProcess(cmd.Context(), o, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.table = processSettings(o)
	o.table.Register(cmd.Flags())
	return cmd, o
}

func runProcess(ctx context.Context, o *processOptions, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(trace.LogHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	// Everything is validated before anything (outbox, ticket store) is created.
	var probs problems
	probs.addErr(o.table.Check())
	parts := checkPipeline(o.pipelineOptions, &probs)
	if err := checkDirOrParent("--outbox", o.Outbox); err != nil && !o.DryRun {
		probs.addErr(err)
	}
	if err := probs.err(); err != nil {
		return err
	}
	// When no input can be read there is nothing to answer: each gets its
	// read_error outcome, and nothing (outbox, ticket store) is created.
	var proc *processor.Processor
	if anyReadable(args) {
		var sender mail.Sender = dryRunSender{} // a dry run writes nothing, not even the outbox directory
		if !o.DryRun {
			outbox, err := replies.NewOutbox(o.Outbox)
			if err != nil {
				return usageErr("--outbox: %v", err)
			}
			defer outbox.Close()
			if o.Store != "" {
				// The outbox index lives in the store: no run reads the
				// outbox directory, however much it holds.
				l, err := ledger.Open(ctx, ledger.Config{Path: o.Store})
				if err != nil {
					return failure(err)
				}
				defer l.Close()
				if err := outbox.UseIndex(ctx, l.Replies()); err != nil {
					return failure(err)
				}
				o.shared = l.Store() // the tickets and the budget too
			}
			sender = outbox
		}
		p, err := newPipeline(ctx, o.pipelineOptions, parts, sender, log)
		if err != nil {
			return err
		}
		defer p.Close()
		if p.Model.Offline {
			fmt.Fprintf(stderr, "triage: using the %s; set GEMINI_API_KEY to use Gemini (or --provider openai)\n", p.Model.Description)
		} else {
			fmt.Fprintf(stderr, "triage: using %s, model %s\n", p.Model.Description, o.Model)
		}
		if p.Verifier != nil {
			fmt.Fprintf(stderr, "triage: replies verified by %s, model %s\n", p.Verifier.Description, o.Verify.modelID())
		} else if o.Verify.Provider != "" {
			fmt.Fprintf(stderr, "triage: no verifier with the offline model; the lexicon alone decides\n")
		}
		proc = p.Processor
	}

	marks := marksFor(stdout)
	start := time.Now()
	failed, total, calls := 0, 0, 0
	// escalated counts the replies after which a person owns the
	// conversation (watch moves such an email to Needs-Human).
	escalated := 0
	counts := map[triage.Status]int{}
	work := func(i int) processor.Outcome { return processOne(ctx, proc, args[i], stdin) }
	processAll(len(args), o.Concurrency, work, func(i int, out processor.Outcome) {
		if o.JSON {
			b, _ := json.Marshal(out)
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			printSummary(stdout, out, marks)
		}
		total++
		counts[out.Status]++
		if out.Status == triage.StatusReplied && out.Escalated {
			escalated++
		}
		calls += out.ModelCalls
		if out.Status == triage.StatusFailed {
			failed++
		}
	})
	dry := ""
	if o.DryRun {
		dry = " (dry run: nothing was done)"
	}
	replied := fmt.Sprintf("%d replied", counts[triage.StatusReplied])
	if escalated > 0 {
		replied += fmt.Sprintf(" (%d escalated to a person)", escalated)
	}
	fmt.Fprintf(stderr, "triage: %d email(s): %s, %d drafted, %d skipped, %d failed; %d model call(s); %s%s\n",
		total, replied, counts[triage.StatusDrafted], counts[triage.StatusSkipped], failed, calls,
		time.Since(start).Round(time.Millisecond), dry)
	if failed > 0 {
		return failure(nil)
	}
	return nil
}

// processAll runs work for inputs 0..count-1 with n workers and calls emit
// for each outcome in input order, as soon as it and all before it are done.
// An input starts only within reorderWindow(n) of the oldest one not yet
// emitted, so at most that many outcomes are held however many inputs there
// are (a slow email holds back the others' output, not their memory).
func processAll(count, n int, work func(int) processor.Outcome, emit func(int, processor.Outcome)) {
	type result struct {
		i   int
		out processor.Outcome
	}
	window := reorderWindow(n)
	jobs := make(chan int)
	results := make(chan result, n)
	var wg sync.WaitGroup
	for range min(n, count) {
		wg.Go(func() {
			for i := range jobs {
				results <- result{i, work(i)}
			}
		})
	}
	held := make(map[int]processor.Outcome, window)
	next, started := 0, 0 // next to emit, next to start
	for next < count {
		var start chan int // nil (never ready) outside the window
		if started < count && started < next+window {
			start = jobs
		}
		select {
		case start <- started:
			started++
		case r := <-results:
			held[r.i] = r.out
			for {
				out, ok := held[next]
				if !ok {
					break
				}
				delete(held, next)
				emit(next, out)
				next++
			}
		}
	}
	close(jobs)
	wg.Wait()
}

// reorderWindow is how far ahead of the oldest unfinished input processAll
// may start: enough to keep n workers busy behind one slow email (one
// that waits for a claim, or makes more model calls than the others) for
// about sixteen times as long as the others take. What it holds is the
// finished outcomes, a few kilobytes each.
func reorderWindow(n int) int { return 16 * max(n, 1) }

// processOne reads one input and processes it; a read error is a failed
// outcome naming the input, never a lost message.
// anyReadable reports whether one of the inputs is stdin ("-") or a file
// that opens (and is not a directory).
func anyReadable(names []string) bool {
	for _, name := range names {
		if name == "-" {
			return true
		}
		if st, err := os.Stat(name); err == nil && !st.IsDir() {
			if f, err := os.Open(name); err == nil {
				f.Close()
				return true
			}
		}
	}
	return false
}

// processOne reads one input and runs it through p; an input that cannot be
// read is failed/read_error (p is not used, and may be nil).
func processOne(ctx context.Context, p *processor.Processor, name string, stdin io.Reader) processor.Outcome {
	raw, err := readInput(name, stdin)
	if err != nil {
		return processor.Outcome{
			File: name, Status: triage.StatusFailed, Reason: triage.ReasonReadError, Detail: err.Error(),
			SerialNumbers: []string{}, FunctionCalls: []dispatcher.Record{},
		}
	}
	return p.Process(ctx, processor.Input{Name: name, Raw: raw})
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	size := int64(-1) // unknown
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err // *fs.PathError names the file
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				return nil, fmt.Errorf("%s: is a directory, not an .eml file", name)
			}
			size = st.Size()
		}
		if size > maxInputBytes {
			// Refused from its size: a message too large is never read.
			return nil, fmt.Errorf("%s: larger than %d MiB (%d bytes); left for a person", name, maxInputBytes>>20, size)
		}
		r = f
	}
	b, err := readAtMost(r, size, maxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxInputBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; left for a person", name, maxInputBytes>>20)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s: empty input", name)
	}
	return b, nil
}

// readAtMost reads r to the end, or to max+1 bytes (so the caller sees that
// it is too large). With a size hint (a file's size) it reads into one
// buffer of that size, without the copies io.ReadAll makes as it grows.
func readAtMost(r io.Reader, size, max int64) ([]byte, error) {
	var buf bytes.Buffer
	if size >= 0 && size <= max {
		buf.Grow(int(size) + bytes.MinRead) // ReadFrom keeps MinRead free: EOF is seen without growing
	}
	_, err := buf.ReadFrom(io.LimitReader(r, max+1))
	return buf.Bytes(), err
}

// decisionLine is the summary's line on the decision, what the reply
// committed to and the verifier's verdict ("" when there is none).
func decisionLine(out processor.Outcome) string {
	var parts []string
	if d := out.Decision; d != nil {
		p := "decision " + string(d.Basis)
		if len(d.Remedies) > 0 {
			rs := make([]string, len(d.Remedies))
			for i, r := range d.Remedies {
				rs[i] = string(r)
			}
			p += " (" + strings.Join(rs, ", ") + ")"
		}
		if !d.AnswerBy.IsZero() {
			p += ", answer by " + d.AnswerBy.String()
		}
		parts = append(parts, p)
	}
	if len(out.Commitments) > 0 {
		cs := make([]string, len(out.Commitments))
		for i, c := range out.Commitments {
			cs[i] = string(c)
		}
		parts = append(parts, "commitments "+strings.Join(cs, ", "))
	}
	if v := out.Verification; v != nil {
		p := "verifier " + v.Model + ": " + string(v.Verdict)
		if n := len(v.Flagged); n > 0 {
			p += fmt.Sprintf(" (%d statement(s) flagged)", n)
		}
		if n := len(v.Ignored); n > 0 {
			p += fmt.Sprintf(" (%d misquoted, ignored)", n)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "    " + strings.Join(parts, "; ")
}

// printSummary writes the human-readable summary of one outcome.
//
// Everything but the marks (which may be coloured) goes through a
// clip.EscapeWriter: a stranger's subject, address or text never reaches the
// terminal as control characters.
func printSummary(tty io.Writer, out processor.Outcome, m eval.Marks) {
	w := clip.NewEscapeWriter(tty)
	mark := map[triage.Status]string{triage.StatusReplied: m.Pass, triage.StatusDrafted: m.Pass, triage.StatusSkipped: "-", triage.StatusFailed: m.Fail}[out.Status]
	io.WriteString(tty, mark)
	fmt.Fprintf(w, " %s  %s\n", out.File, out.Status)
	if out.From != "" || out.Subject != "" {
		fmt.Fprintf(w, "    from %s: %q\n", out.From, out.Subject)
	}
	if out.Scenario != "" {
		method := string(out.Detection.Method)
		if out.Detection.FirstTurn {
			method += ", first turn"
		}
		fmt.Fprintf(w, "    scenario %s (%s: %s)\n", out.Scenario, method, out.Detection.Reason)
	}
	if len(out.SerialNumbers) > 0 {
		more := ""
		if out.SerialsOmitted > 0 {
			more = fmt.Sprintf(" (and %d more, not listed)", out.SerialsOmitted)
		}
		fmt.Fprintf(w, "    serials %s%s\n", strings.Join(out.SerialNumbers, ", "), more)
	}
	for _, a := range out.Attachments {
		seen := "sent to the model"
		if !a.Sent {
			seen = "not sent: " + a.NotSent
		}
		fmt.Fprintf(w, "    attachment %q %s %d bytes: %s\n", a.Name, a.Type, a.Size, seen)
	}
	if out.AttachmentsOmitted > 0 {
		fmt.Fprintf(w, "    and %d more attachments, not listed and not sent\n", out.AttachmentsOmitted)
	}
	if out.TicketID != "" {
		line := "    ticket " + out.TicketID
		if out.Followup {
			line += " (follow-up of an existing conversation)"
		}
		if out.Escalated {
			line += "; escalated: staff notified, a person owns the conversation now"
		}
		fmt.Fprintln(w, line)
	}
	if line := decisionLine(out); line != "" {
		fmt.Fprintln(w, line)
	}
	for i, c := range out.FunctionCalls {
		state := m.Pass
		switch {
		case c.Blocked:
			state = m.Fail + " blocked"
		case !c.OK:
			state = m.Fail
		}
		fmt.Fprintf(w, "    %d. ", i+1)
		io.WriteString(tty, state)
		line := fmt.Sprintf(" %s(%s)", c.Name, compactArgs(c.Args))
		if c.Error != nil {
			line += fmt.Sprintf(" → %s: %s", c.Error.Code, c.Error.Message)
		} else if c.Result != nil && c.Name != dispatcher.FuncSendEmail {
			b, _ := json.Marshal(c.Result)
			line += " → " + string(b)
		}
		fmt.Fprintln(w, line)
	}
	switch {
	case out.DryRun && (out.Status == triage.StatusReplied || out.Status == triage.StatusDrafted):
		what := map[triage.Status]string{triage.StatusReplied: "reply", triage.StatusDrafted: "draft"}[out.Status]
		fmt.Fprintf(w, "    dry run: a %s to %s (%q) would have been written\n", what, out.Reply.To, out.Reply.Subject)
	case out.Status == triage.StatusReplied || out.Status == triage.StatusDrafted:
		where := out.Reply.Path
		if where == "" {
			where = out.Reply.MessageID
		}
		what := map[triage.Status]string{triage.StatusReplied: "reply", triage.StatusDrafted: "draft (a person sends it)"}[out.Status]
		if out.Reply.Existing {
			fmt.Fprintf(w, "    %s to %s already exists (not written again): %s\n", what, out.Reply.To, where)
			break
		}
		fmt.Fprintf(w, "    %s to %s written: %s\n", what, out.Reply.To, where)
	default:
		fmt.Fprintf(w, "    reason %s: %s\n", out.Reason, out.Detail)
	}
}

// compactArgs renders call arguments on one line, long strings shortened.
func compactArgs(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sortStrings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := args[k]
		s, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			s = string(b)
		} else {
			if r := []rune(s); len(r) > 40 {
				s = string(r[:40]) + "…"
			}
			s = fmt.Sprintf("%q", s)
		}
		parts = append(parts, k+"="+s)
	}
	return strings.Join(parts, ", ")
}
