package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"triage/internal/replay"
	"triage/internal/watch"
)

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
func inboxSource(ctx context.Context, o *replayOptions, ws *watchSetup, p *pipeline, log *slog.Logger, stderr io.Writer) (func(func(replay.Input) bool) error, error) {
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
	return func(yield func(replay.Input) bool) error {
		stop := errors.New("stop")
		err := w.Archive(ctx, opts, func(a watch.Archived) error {
			name := fmt.Sprintf("%s/%s;UIDVALIDITY=%d/;UID=%d", a.Loc.Account, a.Loc.Mailbox, a.Loc.UIDValidity, a.Loc.UID)
			if !yield(replay.Input{Name: name, Raw: a.Raw, Err: a.Err}) {
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
