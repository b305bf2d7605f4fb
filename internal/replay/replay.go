// Package replay is the what-if replay: it runs past mail through new
// instructions and reports which outcomes flip against a baseline (other
// instructions, or what watch recorded).
package replay

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"

	"triage/internal/ledger"
	"triage/internal/processor"
)

// Config is one replay.
type Config struct {
	// New processes each email with the instructions to try.
	New *processor.Processor
	// Baseline processes each email with the instructions to compare
	// against; nil: Recorded is the baseline.
	Baseline *processor.Processor
	// Recorded is the outcome recorded for a Message-ID, when there is
	// one (see LedgerBaseline); used when Baseline is nil.
	Recorded func(ctx context.Context, messageID string) (processor.Outcome, bool)
	// BaselineName names the baseline in the summary.
	BaselineName string
	// Source yields the emails in order until yield returns false; its
	// error ends the replay early (Run returns it with what it did).
	Source func(yield func(Input) bool) error
	// Runs is how many times each side processes an email (at least 1).
	Runs int
	// Concurrency is how many emails are replayed at once (at least 1).
	Concurrency int
	// JSON: one JSON record per line (each flip, then the summary)
	// instead of the human-readable report.
	JSON bool
	// Out receives the report.
	Out io.Writer
	// WarnMark begins each flip of the human-readable report.
	WarnMark string
	// Unreadable is told of each input that could not be read (may be nil).
	Unreadable func(error)
}

// Run replays every email of c.Source and writes the flips and then the
// summary to c.Out, in input order. Its error is the source's, when it
// ended the replay early (the summary counts what was replayed).
func Run(ctx context.Context, c Config) (Summary, error) {
	sum := Summary{Type: TypeSummary, ByKind: map[Kind]int{}, Runs: c.Runs, Baseline: c.BaselineName}
	work := func(in Input) Record {
		if in.Err != nil {
			return Record{Input: in.Name, readError: in.Err}
		}
		newSide, first := runSide(ctx, c.New, in, c.Runs)
		rec := Record{Input: in.Name, MessageID: first.MessageID, From: first.From, Subject: first.Subject, New: newSide}
		if c.Baseline != nil {
			rec.Baseline, _ = runSide(ctx, c.Baseline, in, c.Runs)
			rec.hasBase = true
		} else if c.Recorded != nil && first.MessageID != "" {
			if st, ok := c.Recorded(ctx, first.MessageID); ok {
				rec.Baseline = Side{View: viewOf(st), Agreed: 1, Runs: 1, Detail: "recorded by watch"}
				rec.hasBase = true
			}
		}
		rec.stable = rec.New.Agreed == rec.New.Runs && rec.Baseline.Agreed == rec.Baseline.Runs
		if rec.hasBase {
			rec.Kinds = flipKinds(rec.Baseline.View, rec.New.View)
		}
		return rec
	}
	emit := func(rec Record) {
		sum.Emails++
		switch {
		case rec.readError != nil:
			sum.Unreadable++
			if c.Unreadable != nil {
				c.Unreadable(rec.readError)
			}
			return
		case !rec.hasBase:
			sum.NoBaseline++
			return
		case !rec.stable:
			sum.Unstable++
			rec.Type = TypeUnstable
		case len(rec.Kinds) == 0:
			return
		default:
			sum.Flips++
			rec.Type = TypeFlip
			for _, k := range rec.Kinds {
				sum.ByKind[k]++
			}
		}
		if c.JSON {
			writeJSON(c.Out, rec)
			return
		}
		printFlip(c.Out, rec, c.WarnMark)
	}
	records, srcErr := all(ctx, c.Source, c.Concurrency, work)
	for _, r := range records {
		emit(r)
	}
	if c.JSON {
		writeJSON(c.Out, sum)
	} else {
		printSummary(c.Out, sum)
	}
	return sum, srcErr
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) {
	json.NewEncoder(w).Encode(v)
}

// runSide processes one email k times and returns the most frequent view
// with how many runs gave it, and the first outcome.
func runSide(ctx context.Context, p *processor.Processor, in Input, k int) (Side, processor.Outcome) {
	views := make([]View, k)
	var first processor.Outcome
	for i := range k {
		out := p.Process(ctx, processor.Input{Name: in.Name, Raw: in.Raw})
		if i == 0 {
			first = out
		}
		views[i] = viewOf(out)
	}
	side := tally(views)
	side.Detail = first.Detail
	return side, first
}

// tally returns the most frequent of views (the earliest on a tie) and how
// many runs gave it.
func tally(views []View) Side {
	counts := map[string]int{}
	best := 0
	for i, v := range views {
		counts[v.key()]++
		if counts[v.key()] > counts[views[best].key()] {
			best = i
		}
	}
	return Side{View: views[best], Agreed: counts[views[best].key()], Runs: len(views)}
}

// LedgerBaseline returns Config.Recorded for a watch ledger: the outcome of
// the latest entry of the message that has one (what the customer got).
func LedgerBaseline(l *ledger.Ledger) func(ctx context.Context, messageID string) (processor.Outcome, bool) {
	return func(ctx context.Context, messageID string) (processor.Outcome, bool) {
		if l == nil || messageID == "" {
			return processor.Outcome{}, false
		}
		ids := []string{messageID, strings.Trim(messageID, "<>"), "<" + strings.Trim(messageID, "<>") + ">"}
		es, err := l.ByMessageIDs(ctx, ids)
		if err != nil {
			return processor.Outcome{}, false
		}
		// The latest entry with an outcome is what the customer got.
		for i := len(es) - 1; i >= 0; i-- {
			if len(es[i].Outcome) == 0 {
				continue
			}
			var out processor.Outcome
			if json.Unmarshal(es[i].Outcome, &out) == nil {
				return out, true
			}
		}
		return processor.Outcome{}, false
	}
}

// all runs work on every input of source with n workers and returns the
// records in input order, and the error that ended source early. At most n
// inputs are held at once besides the one being read.
func all(ctx context.Context, source func(func(Input) bool) error, n int, work func(Input) Record) ([]Record, error) {
	type job struct {
		i  int
		in Input
	}
	jobs := make(chan job)
	var (
		mu      sync.Mutex
		records []Record
		wg      sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			for j := range jobs {
				rec := work(j.in)
				mu.Lock()
				if j.i >= len(records) {
					records = append(records, make([]Record, j.i+1-len(records))...)
				}
				records[j.i] = rec
				mu.Unlock()
			}
		})
	}
	count := 0
	err := source(func(in Input) bool {
		select {
		case jobs <- job{count, in}:
			count++
			return true
		case <-ctx.Done():
			return false
		}
	})
	close(jobs)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	return records[:count], err
}
