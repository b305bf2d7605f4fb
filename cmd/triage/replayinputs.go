package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"triage/internal/message"
	"triage/internal/watch"
)

// replayInput is one email to replay.
type replayInput struct {
	Name string
	Raw  []byte
	Err  error
}

// readReplayInputs reads every .eml file and every message of every mbox.
func readReplayInputs(args []string) ([]replayInput, error) {
	var out []replayInput
	for _, a := range args {
		raw, err := readInput(a, nil)
		if err != nil {
			if a == "-" {
				return nil, usageErr("replay: stdin is not an input; give files")
			}
			out = append(out, replayInput{Name: a, Err: err})
			continue
		}
		if !message.IsMbox(raw) {
			out = append(out, replayInput{Name: a, Raw: raw})
			continue
		}
		r := message.NewMboxReader(bytes.NewReader(raw), maxInputBytes)
		for {
			msg, n, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			name := fmt.Sprintf("%s#%d", a, n)
			if err != nil {
				out = append(out, replayInput{Name: name, Err: err})
				if errors.Is(err, message.ErrMboxTooLarge) {
					continue
				}
				break
			}
			out = append(out, replayInput{Name: name, Raw: msg})
		}
	}
	return out, nil
}

// replayConfig is the watch configuration replay found: its path, how it
// was found, and its settings (the file and the environment).
type replayConfig struct {
	path, how string
	watch     *watchOptions
}

// resolveReplay fills o from the flags, the environment and the watch
// configuration when one is found (--config, $TRIAGE_CONFIG, the default
// location), in that order of precedence; nil when there is none.
func resolveReplay(cmd *cobra.Command, o *replayOptions) (*replayConfig, error) {
	fs := cmd.Flags()
	o.given = func(flag string) bool { return o.table.Given(fs, flag, os.Getenv) }
	if err := o.table.Resolve(fs, nil, nil); err != nil {
		return nil, usageError(err)
	}
	path, how := findConfig(fs, o.Config)
	if path == "" {
		return nil, nil
	}
	wcmd, wo := watchCommand()
	file, err := readWatchFile(path, wo.table)
	if err != nil {
		return nil, err
	}
	if err := wo.table.Resolve(wcmd.Flags(), file, nil); err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	if err := o.table.Resolve(fs, file, nil); err != nil {
		return nil, usageError(err)
	}
	o.Config = path
	return &replayConfig{path: path, how: how, watch: wo}, nil
}

// inboxSource reads the configuration's inbox read-only (watch.Archive):
// the newest --limit messages, received since --since when given, one at
// a time.
func inboxSource(ctx context.Context, o *replayOptions, ws *watchSetup, p *pipeline, log *slog.Logger, stderr io.Writer) (func(func(replayInput) bool) error, error) {
	wo := ws.o
	mailbox := cmp.Or(o.Mailbox, wo.Mailbox)
	w, err := watch.New(watch.Config{
		Addr: wo.IMAP.Addr, TLS: wo.IMAP.TLS, TLSConfig: ws.imapTLS, CASetting: "imap.ca_file",
		Username: wo.IMAP.User, Password: ws.imapPass, Token: ws.imapToken, OAuth2: ws.imapOAuth2,
		Account: wo.Account, Mailbox: mailbox, MaxMessageBytes: wo.MaxMessageBytes,
		DryRun: true, Processor: p.Processor, Logger: log,
	})
	if err != nil {
		return nil, usageErr("replay: %v", err)
	}
	var opts watch.ArchiveOptions
	opts.Limit = o.Limit
	what := fmt.Sprintf("the newest %d message(s)", o.Limit)
	if o.Since != "" {
		opts.Since, _ = time.Parse(time.DateOnly, o.Since) // checked by the setting
		what += " received since " + o.Since
	}
	fmt.Fprintf(stderr, "triage: replay reads %s of %s at %s, read-only (EXAMINE, BODY.PEEK: nothing on the server changes)\n", what, mailbox, wo.IMAP.Addr)
	return func(yield func(replayInput) bool) error {
		stop := errors.New("stop")
		err := w.Archive(ctx, opts, func(a watch.Archived) error {
			name := fmt.Sprintf("%s/%s;UIDVALIDITY=%d/;UID=%d", a.Loc.Account, a.Loc.Mailbox, a.Loc.UIDValidity, a.Loc.UID)
			if !yield(replayInput{Name: name, Raw: a.Raw, Err: a.Err}) {
				return stop
			}
			return nil
		})
		if errors.Is(err, stop) {
			return nil
		}
		return err
	}, nil
}

// replayAll runs work on every input of source with n workers and returns
// the records in input order, and the error that ended source early. At
// most n inputs are held at once besides the one being read.
func replayAll(ctx context.Context, source func(func(replayInput) bool) error, n int, work func(replayInput) replayRecord) ([]replayRecord, error) {
	type job struct {
		i  int
		in replayInput
	}
	jobs := make(chan job)
	var (
		mu      sync.Mutex
		records []replayRecord
		wg      sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			for j := range jobs {
				rec := work(j.in)
				mu.Lock()
				if j.i >= len(records) {
					records = append(records, make([]replayRecord, j.i+1-len(records))...)
				}
				records[j.i] = rec
				mu.Unlock()
			}
		})
	}
	count := 0
	err := source(func(in replayInput) bool {
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
