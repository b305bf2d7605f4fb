package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/metrics"
	"triage/internal/watch"
)

// exitLocked: another triage watch holds the ledger lock.
const exitLocked = 3

// serverFile is how the configuration names one server and its credentials
// (the imap and smtp sections share it).
type serverFile struct {
	Addr         string `yaml:"addr"`
	TLS          string `yaml:"tls"`
	User         string `yaml:"user"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
	Token        string `yaml:"token"`
	TokenFile    string `yaml:"token_file"`
}

// imapFile is the imap section of the configuration.
type imapFile struct {
	serverFile      `yaml:",inline"`
	Account         string `yaml:"account"`
	Mailbox         string `yaml:"mailbox"`
	Keyword         string `yaml:"keyword"`
	ProcessedFolder string `yaml:"processed_folder"`
	FailedFolder    string `yaml:"failed_folder"`
	SentFolder      string `yaml:"sent_folder"`
}

// smtpFile is the smtp section of the configuration.
type smtpFile struct {
	serverFile `yaml:",inline"`
	Timeout    time.Duration `yaml:"timeout"`
}

// watchFile is the YAML configuration of triage watch (--config).
type watchFile struct {
	IMAP            imapFile      `yaml:"imap"`
	SMTP            smtpFile      `yaml:"smtp"`
	Outbox          string        `yaml:"outbox"`
	Ledger          string        `yaml:"ledger"`
	Interval        time.Duration `yaml:"interval"`
	Idle            *bool         `yaml:"idle"`
	MaxMessageBytes int64         `yaml:"max_message_bytes"`
	ShutdownGrace   time.Duration `yaml:"shutdown_grace"`
	MaxAttempts     int           `yaml:"max_attempts"`
	Limits          struct {
		PerSender       int           `yaml:"per_sender"`
		PerSenderWindow time.Duration `yaml:"per_sender_window"`
		GlobalPerHour   int           `yaml:"global_per_hour"`
	} `yaml:"limits"`
	MetricsAddr string `yaml:"metrics_addr"`
	Log         struct {
		Format string `yaml:"format"`
		Level  string `yaml:"level"`
	} `yaml:"log"`
	Pipeline struct {
		From            string        `yaml:"from"`
		Instructions    string        `yaml:"instructions"`
		Model           string        `yaml:"model"`
		Offline         bool          `yaml:"offline"`
		WarrantyCSV     string        `yaml:"warranty_csv"`
		WarrantyURL     string        `yaml:"warranty_url"`
		TicketsDB       string        `yaml:"tickets_db"`
		TicketsURL      string        `yaml:"tickets_url"`
		Staff           []string      `yaml:"staff"`
		SerialPattern   []string      `yaml:"serial_patterns"`
		MaxTurns        int           `yaml:"max_turns"`
		TurnTimeout     time.Duration `yaml:"turn_timeout"`
		Deadline        time.Duration `yaml:"deadline"`
		MaxCallsPerTurn int           `yaml:"max_calls_per_turn"`
		MaxCalls        int           `yaml:"max_calls"`
	} `yaml:"pipeline"`
}

type watchOptions struct {
	pipelineOptions
	Config          string
	Once            bool
	Interval        time.Duration
	NoIdle          bool
	Mailbox         string
	Keyword         string
	ProcessedFolder string
	FailedFolder    string
	SentFolder      string
	Ledger          string
	Outbox          string
	MetricsAddr     string
	LogFormat       string
	LogLevel        string
	Grace           time.Duration
	PerSender       int
	GlobalPerHour   int
	MaxMessageBytes int64
}

const watchLong = `Watch connects to an IMAP mailbox, runs every new message through the
pipeline, sends the replies over SMTP and keeps a SQLite ledger so that no
message is ever answered twice or forgotten: not after a crash, a restart,
two overlapping cron runs, or a server that renumbers its mailbox
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

Configuration is one YAML file (--config); flags given on the command line
override it. See deploy/triage.example.yaml and docs/watch.md. Its fields:

  imap:      addr (host:port), tls (tls|starttls|none; none only for
             loopback), user, password_file | token_file (XOAUTH2),
             account, mailbox, keyword, processed_folder, failed_folder,
             sent_folder (replies are stored there, and looked up after a
             crash)
  smtp:      addr, tls (starttls|tls|none), user, password_file | token_file,
             timeout            (or "outbox: DIR" to write .eml files instead)
  ledger, interval, idle, max_message_bytes, shutdown_grace, max_attempts,
  limits:    per_sender (default 5), per_sender_window (24h),
             global_per_hour (100); negative disables
  metrics_addr, log: {format: text|json, level: debug|info|warn|error}
  pipeline:  from, instructions, model, offline, warranty_csv, warranty_url,
             tickets_db, tickets_url, staff, serial_patterns, max_turns,
             turn_timeout, deadline, max_calls_per_turn, max_calls

Secrets never go on the command line. They are read from the environment
first, then from the *_file settings (a literal password in the file also
works):
  TRIAGE_IMAP_PASSWORD, TRIAGE_IMAP_TOKEN   IMAP LOGIN password / OAuth2 token
  TRIAGE_SMTP_PASSWORD, TRIAGE_SMTP_TOKEN   SMTP AUTH PLAIN password / XOAUTH2 token
  GEMINI_API_KEY (and the other genai SDK variables) for the model

Signals: SIGTERM or SIGINT stops taking new mail and lets the message in
flight finish within --shutdown-grace (a message cut short is left for the
next run, never half-answered); a second signal exits at once.

Exit status: 0 after a clean pass (--once) or a requested stop; 1 when the
mailbox could not be processed (connection, login, ledger); 2 for a usage or
configuration error; 3 when another triage watch holds the ledger lock.`

func newWatchCmd() *cobra.Command {
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
			return runWatch(cmd.Context(), cmd.Flags(), o, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVar(&o.Config, "config", envOr("TRIAGE_CONFIG", ""), "YAML configuration file (required)")
	f.BoolVar(&o.Once, "once", false, "make one pass and exit (for cron)")
	f.DurationVar(&o.Interval, "interval", watch.DefaultInterval, "polling interval when the server has no IDLE (or with --no-idle)")
	f.BoolVar(&o.NoIdle, "no-idle", false, "poll every --interval even when the server offers IDLE")
	f.StringVar(&o.Mailbox, "mailbox", watch.DefaultMailbox, "mailbox to watch")
	f.StringVar(&o.Keyword, "keyword", watch.DefaultKeyword, "keyword added to handled mail (\\Seen when the server refuses keywords)")
	f.StringVar(&o.ProcessedFolder, "processed-folder", "", "move replied mail to this folder (default: leave it in place)")
	f.StringVar(&o.FailedFolder, "failed-folder", watch.DefaultFailedFolder, "folder for mail a person must handle (created when missing)")
	f.StringVar(&o.SentFolder, "sent-folder", "", "store every reply in this folder, and look pending replies up there after a crash")
	f.StringVar(&o.Ledger, "ledger", envOr("TRIAGE_LEDGER", "triage-ledger.db"), "ledger file (SQLite); <ledger>.lock guards against overlapping runs")
	f.StringVar(&o.Outbox, "outbox", "", "write replies as .eml files into this directory instead of SMTP")
	f.StringVar(&o.MetricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on this address (e.g. 127.0.0.1:9464)")
	f.StringVar(&o.LogFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&o.LogLevel, "log-level", "info", "log level: debug (includes message bodies), info, warn, error")
	f.DurationVar(&o.Grace, "shutdown-grace", watch.DefaultGrace, "after SIGTERM/SIGINT, time the message in flight may still take")
	f.IntVar(&o.PerSender, "per-sender-limit", watch.DefaultPerSenderLimit, "replies per sender per 24h; more is left for a person (negative: no limit)")
	f.IntVar(&o.GlobalPerHour, "global-per-hour", watch.DefaultGlobalPerHour, "replies per hour overall; more is left for a person (negative: no limit)")
	f.Int64Var(&o.MaxMessageBytes, "max-message-bytes", watch.DefaultMaxMessageBytes, "larger messages go to a person without being read")
	return cmd
}

// secret returns the first of: the environment variable, the file, the
// literal.
func secret(env, file, literal string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", usageErr("secret file: %v", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return literal, nil
}

func loadWatchFile(path string) (*watchFile, error) {
	var wf watchFile
	if path == "" {
		return &wf, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil && !errors.Is(err, io.EOF) {
		return nil, usageErr("--config %s: %v", path, err)
	}
	// Relative paths in the file are relative to the file.
	dir := filepath.Dir(path)
	for _, p := range []*string{&wf.IMAP.PasswordFile, &wf.IMAP.TokenFile, &wf.SMTP.PasswordFile, &wf.SMTP.TokenFile,
		&wf.Outbox, &wf.Ledger, &wf.Pipeline.Instructions, &wf.Pipeline.WarrantyCSV, &wf.Pipeline.TicketsDB} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return &wf, nil
}

// merge applies the file's values to every option not given as a flag.
func (o *watchOptions) merge(fs *pflag.FlagSet, wf *watchFile) {
	str := func(flag string, dst *string, v string) {
		if v != "" && !fs.Changed(flag) {
			*dst = v
		}
	}
	dur := func(flag string, dst *time.Duration, v time.Duration) {
		if v != 0 && !fs.Changed(flag) {
			*dst = v
		}
	}
	num := func(flag string, dst *int, v int) {
		if v != 0 && !fs.Changed(flag) {
			*dst = v
		}
	}
	p := &wf.Pipeline
	str("from", &o.From, p.From)
	str("instructions", &o.Instructions, p.Instructions)
	str("model", &o.Model, p.Model)
	if p.Offline && !fs.Changed("offline") {
		o.Offline = true
	}
	str("warranty-csv", &o.WarrantyCSV, p.WarrantyCSV)
	str("warranty-url", &o.WarrantyURL, p.WarrantyURL)
	str("tickets-db", &o.TicketsDB, p.TicketsDB)
	str("tickets-url", &o.TicketsURL, p.TicketsURL)
	if len(p.Staff) > 0 && !fs.Changed("staff") {
		o.Staff = p.Staff
	}
	if len(p.SerialPattern) > 0 && !fs.Changed("serial-pattern") {
		o.SerialPattern = p.SerialPattern
	}
	num("max-turns", &o.MaxTurns, p.MaxTurns)
	dur("turn-timeout", &o.TurnTimeout, p.TurnTimeout)
	dur("deadline", &o.Deadline, p.Deadline)
	num("max-calls-per-turn", &o.MaxCallsPerTurn, p.MaxCallsPerTurn)
	num("max-calls", &o.MaxCalls, p.MaxCalls)

	str("mailbox", &o.Mailbox, wf.IMAP.Mailbox)
	str("keyword", &o.Keyword, wf.IMAP.Keyword)
	str("processed-folder", &o.ProcessedFolder, wf.IMAP.ProcessedFolder)
	str("failed-folder", &o.FailedFolder, wf.IMAP.FailedFolder)
	str("sent-folder", &o.SentFolder, wf.IMAP.SentFolder)
	str("ledger", &o.Ledger, wf.Ledger)
	str("outbox", &o.Outbox, wf.Outbox)
	str("metrics-addr", &o.MetricsAddr, wf.MetricsAddr)
	str("log-format", &o.LogFormat, wf.Log.Format)
	str("log-level", &o.LogLevel, wf.Log.Level)
	dur("interval", &o.Interval, wf.Interval)
	dur("shutdown-grace", &o.Grace, wf.ShutdownGrace)
	num("per-sender-limit", &o.PerSender, wf.Limits.PerSender)
	num("global-per-hour", &o.GlobalPerHour, wf.Limits.GlobalPerHour)
	if wf.Idle != nil && !*wf.Idle && !fs.Changed("no-idle") {
		o.NoIdle = true
	}
	if wf.MaxMessageBytes != 0 && !fs.Changed("max-message-bytes") {
		o.MaxMessageBytes = wf.MaxMessageBytes
	}
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErr("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageErr("--log-format %q: want text or json", format)
}

func runWatch(ctx context.Context, fs *pflag.FlagSet, o *watchOptions, stderr io.Writer) error {
	if o.Config == "" {
		return usageErr("watch: --config FILE is required (see deploy/triage.example.yaml)")
	}
	if o.DryRun {
		return usageErr("watch: --dry-run is not supported by watch yet")
	}
	wf, err := loadWatchFile(o.Config)
	if err != nil {
		return err
	}
	o.merge(fs, wf)
	log, err := newLogger(stderr, o.LogFormat, o.LogLevel)
	if err != nil {
		return err
	}
	if wf.IMAP.Addr == "" || wf.IMAP.User == "" {
		return usageErr("watch: %s: imap.addr and imap.user are required", o.Config)
	}
	imapPass, err := secret("TRIAGE_IMAP_PASSWORD", wf.IMAP.PasswordFile, wf.IMAP.Password)
	if err != nil {
		return err
	}
	imapToken, err := secret("TRIAGE_IMAP_TOKEN", wf.IMAP.TokenFile, wf.IMAP.Token)
	if err != nil {
		return err
	}
	if imapPass == "" && imapToken == "" {
		return usageErr("watch: no IMAP password or token: set TRIAGE_IMAP_PASSWORD (or TRIAGE_IMAP_TOKEN), or imap.password_file in %s", o.Config)
	}

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
			os.Exit(130)
		}
	}()

	unlock, err := watch.Lock(o.Ledger + ".lock")
	if err != nil {
		var le *watch.LockedError
		if errors.As(err, &le) {
			return &exitError{code: exitLocked, err: fmt.Errorf("watch: another triage watch (pid %d) is already using %s; exiting without touching the mailbox", le.PID, o.Ledger)}
		}
		return &exitError{code: exitFailed, err: err}
	}
	defer unlock()

	led, err := ledger.Open(ctx, ledger.Config{Path: o.Ledger})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer led.Close()

	var next mail.Sender
	switch {
	case wf.SMTP.Addr != "":
		pass, err := secret("TRIAGE_SMTP_PASSWORD", wf.SMTP.PasswordFile, wf.SMTP.Password)
		if err != nil {
			return err
		}
		token, err := secret("TRIAGE_SMTP_TOKEN", wf.SMTP.TokenFile, wf.SMTP.Token)
		if err != nil {
			return err
		}
		next, err = mail.NewSMTP(mail.SMTPConfig{Addr: wf.SMTP.Addr, TLS: wf.SMTP.TLS, Username: wf.SMTP.User, Password: pass, Token: token, Timeout: wf.SMTP.Timeout})
		if err != nil {
			return usageErr("%v", err)
		}
	case o.Outbox != "":
		next, err = mail.NewOutbox(o.Outbox)
		if err != nil {
			return usageErr("--outbox: %v", err)
		}
	default:
		return usageErr("watch: no way to send replies: set smtp.addr in %s (or outbox: DIR)", o.Config)
	}
	var met *metrics.Metrics
	if o.MetricsAddr != "" {
		met = metrics.New()
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return usageErr("--metrics-addr: %v", err)
		}
		srv := &http.Server{Handler: met.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("metrics", "addr", ln.Addr().String())
	}

	_, _, domain, err := parseFrom(o.From)
	if err != nil {
		return err
	}
	sender, err := watch.NewSender(watch.SenderConfig{Ledger: led, Next: next, Domain: domain, Logger: log, Metrics: met})
	if err != nil {
		return usageErr("%v", err)
	}
	p, err := newPipeline(ctx, o.pipelineOptions, sender, log)
	if err != nil {
		return err
	}
	defer p.Close()
	log.Info("model", "description", p.Model.Description)

	grace := o.Grace
	w, err := watch.New(watch.Config{
		Addr: wf.IMAP.Addr, TLS: wf.IMAP.TLS, Username: wf.IMAP.User, Password: imapPass, Token: imapToken,
		Account: wf.IMAP.Account, Mailbox: o.Mailbox, Keyword: o.Keyword,
		ProcessedFolder: o.ProcessedFolder, FailedFolder: o.FailedFolder, SentFolder: o.SentFolder,
		MaxMessageBytes: o.MaxMessageBytes, Interval: o.Interval, NoIdle: o.NoIdle,
		PerSenderLimit: o.PerSender, PerSenderWindow: wf.Limits.PerSenderWindow, GlobalPerHour: o.GlobalPerHour,
		MaxAttempts: wf.MaxAttempts, Grace: grace,
		Processor: p.Processor, Ledger: led, Metrics: met, Logger: log,
	})
	if err != nil {
		return usageErr("%v", err)
	}
	log.Info("watch starting", "addr", wf.IMAP.Addr, "mailbox", o.Mailbox, "account", w.Account(), "ledger", o.Ledger, "once", o.Once)
	if o.Once {
		err = w.RunOnce(ctx)
	} else {
		err = w.Run(ctx)
	}
	st := w.Stats()
	log.Info("watch done", "passes", st.Passes, "reconnects", st.Reconnects, "final", st.Final)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}
