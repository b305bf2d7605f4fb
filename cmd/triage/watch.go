package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/language"
	"triage/internal/ledger"
	"triage/internal/model"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/store"
	"triage/internal/trace"
	"triage/internal/watch"
)

const watchLong = `Watch connects to an IMAP mailbox, runs every new message through the
pipeline, sends the replies over SMTP and keeps a ledger (SQLite, or a
PostgreSQL store several daemons share) so that no message is ever answered
twice or forgotten: not after a crash, a restart, two overlapping cron runs,
several daemons on one inbox, or a server that renumbers its mailbox
(UIDVALIDITY change).

Modes: --once makes one pass and exits (for cron); without it triage watch is
a daemon that uses IDLE when the server offers it (polling every --interval
otherwise) and makes a full pass after every (re)connect. It reconnects with
capped exponential backoff and jitter.

After a message is handled it gets the keyword $Triaged (or \Seen when the
server refuses keywords). Replied mail optionally moves to
--processed-folder; failed mail, mail whose reply could not be confirmed and
mail over a reply limit move to --failed-folder (default Needs-Human,
created when missing) with the reason in the ledger; skipped mail (auto-
replies, lists, bounces) is marked and left in place. 'triage ledger' shows
what happened to each message.

Configuration is one YAML file: --config FILE, else $TRIAGE_CONFIG, else
/etc/triage/triage.yaml when it exists (a file found that way is reported at
start). Precedence of every setting: flag > environment > configuration file
> default; the environment variable of a flag is shown beside it
([$TRIAGE_...]). The whole configuration (every section, path, URL, secret
and the model credentials) is validated before anything is created or
connected; --check stops there (exit 0 valid, 2 not). Without GEMINI_API_KEY
(or other genai credentials) watch refuses to start unless pipeline.offline:
true (or --offline) asks for the built-in offline stand-in. See
deploy/triage.example.yaml and docs/watch.md (a table of every flag, key,
variable and default). Its fields:

  imap:      addr (host:port), tls (tls|starttls|none; none only for
             loopback), user, password_file | token_file (a fixed OAuth2
             token) | oauth2 (tokens that renew themselves: token_url,
             client_id, client_secret_file, scopes, refresh_token_file
             (Gmail; without it: client credentials, Microsoft 365),
             mechanism xoauth2|oauthbearer (default: what the server
             advertises); see docs/watch.md), account, mailbox, keyword, processed_folder, failed_folder,
             sent_folder (replies are stored there, and looked up after a
             crash; a person's replies found there resolve drafts and take
             the conversation over; default: the folder the server marks
             \Sent), drafts_folder (default: the folder marked \Drafts,
             else Drafts), junk_folder (mail skipped as spam moves there;
             default: the folder marked \Junk, else it stays in mailbox);
             a sent_folder, drafts_folder or junk_folder that does not
             exist stops watch at connect (exit 2, naming the folders that
             do exist)
  smtp:      addr, tls (starttls|tls|none), user (default with oauth2:
             imap.user), password_file | token_file | oauth2 (a block as
             in imap, or "oauth2: imap" to share imap's), mechanism
             (plain|login; default plain, or login when the server offers
             only LOGIN), timeout, save_sent (append replies to
             the Sent folder; default false for smtp.gmail.com,
             smtp.office365.com and *.outlook.com, which file them
             themselves, true otherwise); imap and smtp: ca_file (PEM of a
             private CA that signed the server's certificate)
             (or "outbox: DIR" to write .eml files instead)
  ledger, interval, idle, max_message_bytes, shutdown_grace, max_attempts,
  max_auth_failures, max_send_failures (replies refused by the mail
             server in a row before /healthz fails, default 3),
  store:     postgres:// URL: the ledger and the tickets live in PostgreSQL
             instead of the SQLite files; any number of daemons may share
             it (no lock file): one polls each inbox, all work on the
             messages they claim; lease (default 30s): how long a claim
             lasts unless renewed (see docs/scale.md),
  inboxes:   several inboxes in one process: a list of sections, each with
             name, imap, smtp, outbox, from, instructions, reply_mode over
             the other settings, which every inbox shares,
  concurrency (messages handled at once, default 4),
  limits:    per_sender (default 5), per_sender_window (24h),
             global_per_hour (100); staff notices apart from replies:
             notices_per_customer (3 an hour), notices_per_hour (30);
             negative disables
  console:   url (staff notices link to the conversation there)
  metrics_addr, log: {format: text|json, level: debug|info|warn|error}
  reply_mode: send (default) | draft: drafts go to drafts_folder flagged
             \Draft, nothing is sent (no smtp needed) | auto: a scenario
             drafts until people's reviews of its drafts in this inbox
             qualify it, then sends (every 10th drafted as a sample), and
             falls back when they no longer do; a scenario's reply_mode:
             overrides it; see 'triage ledger stats'
  autonomy:  min_reviewed (30), min_sent_as_is (90 percent), sample_every
             (10): the bar of reply_mode auto
  pipeline:  from, instructions, model, offline, warranty_csv, warranty_url,
             tickets_db, tickets_url, staff, serial_patterns, max_turns,
             turn_timeout, deadline, max_calls_per_turn, max_calls,
             default_language (pl), languages (ISO 639-1 codes told apart)

Secrets never go on the command line. They are read from the environment
first, then from the *_file settings (a literal password in the file also
works):
  TRIAGE_IMAP_PASSWORD, TRIAGE_IMAP_TOKEN   IMAP LOGIN password / OAuth2 token
  TRIAGE_SMTP_PASSWORD, TRIAGE_SMTP_TOKEN   SMTP AUTH PLAIN password / OAuth2 token
  TRIAGE_OAUTH2_CLIENT_SECRET               OAuth2 client secret (oauth2 blocks)
  TRIAGE_WARRANTY_TOKEN, TRIAGE_TICKETS_TOKEN  bearer tokens of the HTTP services
  GEMINI_API_KEY (and the other genai SDK variables) for the model
--env-file FILE loads KEY=value lines (the systemd EnvironmentFile format)
into the environment first, for cron; variables already set win.

--dry-run processes every new message and logs what would happen, changing
nothing: no ledger entry or lock, no flag, move or append (the mailbox is
opened read-only), no ticket, no mail, no draft.

Signals: SIGTERM or SIGINT stops taking new mail and lets the message in
flight finish within --shutdown-grace (a message cut short is left for the
next run, never half-answered); a second signal exits at once.

Exit status: 0 after a clean pass (--once) or a requested stop; 1 when the
mailbox could not be processed (connection, ledger) or, with --once, when
any message of the pass failed or had its reply refused (a refusal for good
is failed/send_failed; a temporary one is tried again on later passes, up
to max_attempts); 2 for a usage or configuration error (also a sent_folder
or drafts_folder the server does not have); 3 when another triage watch holds the (SQLite)
ledger lock; 5
when the IMAP server refused the login (the daemon tries max_auth_failures
times, default 3, then stops: /healthz fails meanwhile; network errors are
retried for ever with backoff).`

func newWatchCmd() *cobra.Command {
	cmd, _ := watchCommand()
	return cmd
}

// watchCommand returns the watch command and the options its flags fill.
func watchCommand() (*cobra.Command, *watchOptions) {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch --config FILE [flags]",
		Short: "Answer an IMAP mailbox (daemon, or one pass with --once)",
		Long:  watchLong,
		Example: `  TRIAGE_IMAP_PASSWORD=... TRIAGE_SMTP_PASSWORD=... triage watch --config /etc/triage/triage.yaml
  triage watch --config triage.yaml --once          # from cron
  triage watch --config triage.yaml --log-format json --metrics-addr 127.0.0.1:9464`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWatch(cmd.Context(), cmd.Flags(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.table = watchSettings(o)
	o.table.Register(cmd.Flags())
	return cmd, o
}

// logFinalError writes err as one JSON log line (level ERROR, with the exit
// status) and returns it marked as logged.
func logFinalError(w io.Writer, err error) error {
	ee := &cmdError{kind: errFailed, err: err}
	if !errors.As(err, &ee) {
		ee = &cmdError{kind: errFailed, err: err}
	}
	if ee.err == nil || ee.logged {
		return err
	}
	slog.New(slog.NewJSONHandler(w, nil)).Error("triage watch stopped", "err", ee.err.Error(), "exit_status", exitCode(ee))
	return &cmdError{kind: ee.kind, err: ee.err, logged: true}
}

// finalGroup renders the count per final state as a log group
// (final.replied=3), never as Go map syntax.
func finalGroup(final map[ledger.State]int) slog.Attr {
	var attrs []any
	for _, k := range slices.Sorted(maps.Keys(final)) {
		attrs = append(attrs, slog.Int(string(k), final[k]))
	}
	return slog.Group("final", attrs...)
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErr("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text", "":
		return slog.New(trace.LogHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(trace.LogHandler(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, usageErr("--log-format %q: want text or json", format)
}

func runWatch(ctx context.Context, fs *pflag.FlagSet, o *watchOptions, stdout, stderr io.Writer) (err error) {
	// With --log-format json every line is JSON, the final error included.
	defer func() {
		if err != nil && o.LogFormat == "json" {
			err = logFinalError(stderr, err)
		}
	}()
	ws, err := loadWatch(fs, o)
	if err != nil {
		return err
	}
	if o.Check {
		fmt.Fprintf(stdout, "%s: configuration valid (%s; nothing was created or connected)\n", o.Config, ws.foundText())
		return nil
	}
	log, err := newLogger(stderr, o.LogFormat, o.LogLevel)
	if err != nil {
		return err
	}
	if ws.found != "--config" {
		log.Info("configuration found", "path", o.Config, "from", ws.found)
	}
	defer warmLanguages(ws.inboxes, log)()

	// Second signal: exit at once. The first one cancels ctx (main).
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer func() { signal.Stop(sigs); close(sigs) }()
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		log.Warn("stopping: no new mail is taken; the message in flight may take up to --shutdown-grace. Signal again to exit now.", "grace", o.Grace.String())
		if _, ok := <-sigs; ok {
			log.Error("second signal: exiting now")
			interruptNow(ctx)
		}
	}()

	// A stop requested while starting (opening the store, starting the
	// pipeline) ends the run as a stop, not as a failure.
	stopped := func(err error) error {
		if ctx.Err() != nil {
			log.Info("stopped while starting", "err", err.Error())
			return nil
		}
		return err
	}
	led, unlock, err := openWatchLedger(ctx, o)
	if err != nil {
		return stopped(err)
	}
	defer unlock()

	var met *trace.Metrics
	if o.MetricsAddr != "" {
		met = trace.NewMetrics()
		met.SetSendFailureLimit(o.MaxSendFailures)
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return usageErr("--metrics-addr: %v", err)
		}
		srv := &http.Server{Handler: met.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("metrics", "addr", ln.Addr().String())
	}

	// Claims name this process and the inbox: two inboxes of one process
	// holding copies of one message (a customer writing to both) claim them
	// one after the other, as two processes would.
	owner := watch.DefaultOwner()
	var watchers []*watch.Watcher
	var logs []*slog.Logger
	var shared *model.Budget // one model budget for every inbox of the process
	var db *store.DB         // one pool of connections to the store, the ledger's
	if led != nil && !o.DryRun && o.Store != "" {
		db = led.Store()
	}
	for i, is := range ws.inboxes {
		ilog := log
		if len(ws.inboxes) > 1 {
			name := is.o.Name
			if name == "" {
				name = is.o.account()
			}
			ilog = log.With("inbox", name)
		}
		is.o.budget, is.o.shared = shared, db
		w, p, err := newInboxWatcher(ctx, is, led, met, fmt.Sprintf("%s/%d", owner, i+1), ilog, i == 0)
		if p != nil {
			defer p.Close()
			shared = cmp.Or(shared, p.budget)
		}
		if err != nil {
			return stopped(err)
		}
		watchers = append(watchers, w)
		logs = append(logs, ilog)
	}

	errs := make([]error, len(watchers))
	if len(watchers) == 1 {
		errs[0] = runWatcher(ctx, watchers[0], o.Once)
	} else {
		// Every inbox runs until the stop request; one that gives up
		// (its login refused) stops the others.
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for i, w := range watchers {
			wg.Go(func() {
				errs[i] = runWatcher(rctx, w, o.Once)
				var ae *watch.AuthError
				if errors.As(errs[i], &ae) {
					cancel()
				}
			})
		}
		wg.Wait()
		cancel()
	}
	failed, retries := 0, 0
	for i, w := range watchers {
		st := w.Stats()
		logs[i].Info("watch done", "passes", st.Passes, "reconnects", st.Reconnects, "send_retries", st.SendRetries, finalGroup(st.ByState))
		failed += st.ByState[ledger.StateFailed]
		retries += st.SendRetries
	}
	for _, err := range errs {
		var ae *watch.AuthError
		if errors.As(err, &ae) {
			return &cmdError{kind: errAuth, err: err}
		}
		var fe *watch.FolderError
		if errors.As(err, &fe) {
			return usageError(fmt.Errorf("%s: invalid configuration: %w", o.Config, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return failure(err)
	}
	if o.Once && failed > 0 {
		return failure(fmt.Errorf("watch: %d message(s) of the pass failed (see the log and 'triage ledger')", failed))
	}
	if o.Once && retries > 0 {
		return failure(fmt.Errorf("watch: the mail server refused the reply to %d message(s) for now; the next run tries again, up to max_attempts (see the log and 'triage ledger')", retries))
	}
	return nil
}

// warmLanguages loads the language detectors' models (language.Warm) in
// the background, while the daemon opens the store and connects, so that
// its first messages do not wait for them; a first message that comes
// sooner waits for what is loading. Each detector is warmed once, one
// after the other. The returned stop is called when the
// run ends: the loading then finishes unlogged (log's writer is the
// caller's again).
func warmLanguages(inboxes []*watchSetup, log *slog.Logger) (stop func()) {
	var ds []*language.Detector
	for _, is := range inboxes {
		if d := is.parts.Language; d != nil && !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	var mu sync.Mutex
	stopped := false
	go func() {
		start := time.Now()
		for _, d := range ds {
			d.Warm()
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			log.Info("language models loaded", "ms", time.Since(start).Milliseconds())
		}
	}()
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}

// runWatcher runs w until ctx ends, or for one pass.
func runWatcher(ctx context.Context, w *watch.Watcher, once bool) error {
	if once {
		return w.RunOnce(ctx)
	}
	return w.Run(ctx)
}

// newInboxWatcher builds the watcher of one inbox: its mail sender, its
// pipeline (returned to be closed, also on error) and the watcher itself,
// on the shared ledger and metrics.
func newInboxWatcher(ctx context.Context, is *watchSetup, led *ledger.Ledger, met *trace.Metrics, owner string, log *slog.Logger, first bool) (*watch.Watcher, *pipeline, error) {
	o := is.o
	var next mail.Sender
	var err error
	switch {
	case o.DryRun:
		next = dryRunSender{} // never reached: the dispatcher answers effect tools itself
	case is.smtp != nil:
		next = is.smtp
	case o.Outbox != "":
		if next, err = replies.NewOutbox(o.Outbox); err != nil {
			return nil, nil, failure(err)
		}
	default:
		next = noSMTP{} // draft mode without smtp (loadWatch checked)
	}
	is.observeOAuth2(log, met)

	_, _, domain, err := parseFrom(o.From)
	if err != nil {
		return nil, nil, err
	}
	var sender mail.Sender = next
	if !o.DryRun {
		sender, err = replies.NewLedgerSender(replies.LedgerSenderConfig{Replies: led.Replies(), Next: next, Domain: domain, Limits: o.Limits.Replies(), Notices: o.Notices,
			Inbox: triage.Inbox{Account: o.account(), Mailbox: o.Mailbox}, Logger: log, Metrics: met})
		if err != nil {
			return nil, nil, usageErr("%v", err)
		}
	}
	if led != nil { // reply mode auto decides from the ledger
		res, err := review.NewResolver(review.ResolverConfig{Store: review.Of(led), Thresholds: o.Autonomy, DryRun: o.DryRun, Logger: log})
		if err != nil {
			return nil, nil, usageErr("%v", err)
		}
		o.autonomy = res
	}
	p, err := newPipeline(ctx, o.pipelineOptions, is.parts, sender, log)
	if err != nil {
		return nil, nil, err
	}
	if first {
		log.Info("model", "description", p.Model.Description)
		if p.Verifier != nil {
			log.Info("verifier", "description", p.Verifier.Description, "model", o.Verify.modelID())
		}
	}
	w, err := watch.New(watch.Config{
		TLSConfig: is.imapTLS, CASetting: "imap.ca_file", NoSaveSent: o.SMTP.Addr != "" && !o.saveSent(),
		Addr: o.IMAP.Addr, TLS: o.IMAP.TLS, Username: o.IMAP.User, Password: is.imapPass, Token: is.imapToken, OAuth2: is.imapOAuth2,
		Account: o.Account, Mailbox: o.Mailbox, Keyword: o.Keyword,
		ProcessedFolder: o.ProcessedFolder, FailedFolder: o.FailedFolder, SentFolder: o.SentFolder,
		DraftsFolder: o.DraftsFolder, JunkFolder: o.JunkFolder, DryRun: o.DryRun, OnPersonReply: personReplyHook(p.Tickets, ourIdentity(o.From, p.Scenarios), log),
		MaxMessageBytes: o.MaxMessageBytes, Interval: o.Interval, NoIdle: o.NoIdle,
		Limits:      o.Limits,
		MaxAttempts: o.MaxAttempts, MaxAuthFailures: o.MaxAuthFailures, Grace: o.Grace, Concurrency: o.Concurrency,
		Lease: o.Lease, Owner: owner,
		Complaints: o.Complaints.watch(sender, is.parts.From, domain, o.Staff, is.parts.Policy),
		Processor:  p.Processor, Ledger: led, Metrics: met, Logger: log,
	})
	if err != nil {
		return nil, p, usageErr("%v", err)
	}
	log.Info("watch starting", "addr", o.IMAP.Addr, "mailbox", o.Mailbox, "account", w.Account(), "ledger", o.ledgerName(), "once", o.Once)
	return w, p, nil
}
