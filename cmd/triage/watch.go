package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/joho/godotenv"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/logattr"
	"triage/internal/mailauth"
	"triage/internal/metrics"
	"triage/internal/watch"
	"triage/internal/yamlstrict"
)

// exitLocked: another triage watch holds the ledger lock; exitAuth: the
// IMAP server refused the login, or the OAuth2 token endpoint refused the
// grant (retrying will not help; systemd's RestartPreventExitStatus lists
// both).
const (
	exitLocked = 3
	exitAuth   = 5
)

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
	// OAuth2: access tokens that renew themselves (see mailauth.Config);
	// in smtp, "oauth2: imap" shares imap's.
	OAuth2 *mailauth.Setting `yaml:"oauth2"`
	// CAFile is a PEM file of the CA that signed the server's certificate
	// (a private CA), trusted besides the system's.
	CAFile string `yaml:"ca_file"`
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
	DraftsFolder    string `yaml:"drafts_folder"`
}

// smtpFile is the smtp section of the configuration.
type smtpFile struct {
	serverFile `yaml:",inline"`
	Timeout    time.Duration `yaml:"timeout"`
	// Mechanism is the password mechanism: plain or login (default: plain,
	// or login when the server offers only that).
	Mechanism string `yaml:"mechanism"`
	// SaveSent: append each reply to imap.sent_folder (default: false for
	// Gmail and Microsoft 365, which file SMTP-sent mail themselves).
	SaveSent *bool `yaml:"save_sent"`
}

// saveSent is smtp.save_sent, or its default for the SMTP host: Gmail and
// Microsoft 365 file what SMTP sends in Sent themselves, so a copy of ours
// would be the second one.
func (s smtpFile) saveSent() bool {
	if s.SaveSent != nil {
		return *s.SaveSent
	}
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		host = s.Addr
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case host == "smtp.gmail.com", host == "smtp.office365.com", strings.HasSuffix(host, ".outlook.com"):
		return false
	}
	return true
}

// watchFile is the YAML configuration of triage watch (--config).
type watchFile struct {
	IMAP            imapFile      `yaml:"imap"`
	SMTP            smtpFile      `yaml:"smtp"`
	Outbox          string        `yaml:"outbox"`
	Ledger          string        `yaml:"ledger"`
	Store           string        `yaml:"store"` // postgres:// URL holding the ledger and the tickets
	Interval        time.Duration `yaml:"interval"`
	Idle            *bool         `yaml:"idle"`
	MaxMessageBytes int64         `yaml:"max_message_bytes"`
	ShutdownGrace   time.Duration `yaml:"shutdown_grace"`
	MaxAttempts     int           `yaml:"max_attempts"`
	MaxAuthFailures int           `yaml:"max_auth_failures"`
	MaxSendFailures int           `yaml:"max_send_failures"`
	Concurrency     int           `yaml:"concurrency"`
	Limits          struct {
		PerSender       int           `yaml:"per_sender"`
		PerSenderWindow time.Duration `yaml:"per_sender_window"`
		GlobalPerHour   int           `yaml:"global_per_hour"`
	} `yaml:"limits"`
	MetricsAddr string    `yaml:"metrics_addr"`
	Model       modelFile `yaml:"model"`         // provider, base_url, name, api_key_file
	ReplyMode   string    `yaml:"reply_mode"`    // send | draft; also accepted as pipeline.reply_mode
	DraftsAlias string    `yaml:"drafts_folder"` // also accepted here; imap.drafts_folder is the documented place
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
		ReplyMode       string        `yaml:"reply_mode"`
		DefaultLanguage string        `yaml:"default_language"`
		Languages       []string      `yaml:"languages"`
	} `yaml:"pipeline"`
}

type watchOptions struct {
	pipelineOptions
	Config          string
	Check           bool
	EnvFile         string
	Once            bool
	Interval        time.Duration
	NoIdle          bool
	Mailbox         string
	Keyword         string
	ProcessedFolder string
	FailedFolder    string
	SentFolder      string
	DraftsFolder    string
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
             the conversation over), drafts_folder (default Drafts)
  smtp:      addr, tls (starttls|tls|none), user (default with oauth2:
             imap.user), password_file | token_file | oauth2 (a block as
             in imap, or "oauth2: imap" to share imap's), mechanism
             (plain|login; default plain, or login when the server offers
             only LOGIN), timeout, save_sent (append replies to
             imap.sent_folder; default false for smtp.gmail.com,
             smtp.office365.com and *.outlook.com, which file them
             themselves, true otherwise); imap and smtp: ca_file (PEM of a
             private CA that signed the server's certificate)
             (or "outbox: DIR" to write .eml files instead)
  ledger, interval, idle, max_message_bytes, shutdown_grace, max_attempts,
  max_auth_failures, max_send_failures (replies refused by the mail
             server in a row before /healthz fails, default 3),
  store:     postgres:// URL: the ledger and the tickets live in PostgreSQL
             instead of the SQLite files (the lock stays <ledger>.lock),
  concurrency (messages handled at once, default 4),
  limits:    per_sender (default 5), per_sender_window (24h),
             global_per_hour (100); negative disables
  metrics_addr, log: {format: text|json, level: debug|info|warn|error}
  reply_mode: send (default) | draft: drafts go to drafts_folder flagged
             \Draft, nothing is sent (no smtp needed); a scenario's
             reply_mode: overrides it; see 'triage ledger stats'
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
any message of the pass failed (a refused reply is failed/send_failed); 2 for a usage or
configuration error; 3 when another triage watch holds the ledger lock; 5
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
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVar(&o.Config, "config", "", "YAML configuration file [$TRIAGE_CONFIG; default /etc/triage/triage.yaml when it exists]")
	f.BoolVar(&o.Check, "check", false, "validate the configuration and the instructions without connecting or creating anything, then exit (0 valid, 2 not)")
	f.StringVar(&o.EnvFile, "env-file", "", "read KEY=value lines (secrets, GEMINI_API_KEY) from FILE into the environment first; variables already set win")
	f.BoolVar(&o.Once, "once", false, "make one pass and exit (for cron)")
	f.DurationVar(&o.Interval, "interval", watch.DefaultInterval, "polling interval when the server has no IDLE (or with --no-idle)")
	f.BoolVar(&o.NoIdle, "no-idle", false, "poll every --interval even when the server offers IDLE")
	f.StringVar(&o.Mailbox, "mailbox", watch.DefaultMailbox, "mailbox to watch")
	f.StringVar(&o.Keyword, "keyword", watch.DefaultKeyword, "keyword added to handled mail (\\Seen when the server refuses keywords)")
	f.StringVar(&o.ProcessedFolder, "processed-folder", "", "move replied mail to this folder (default: leave it in place)")
	f.StringVar(&o.FailedFolder, "failed-folder", watch.DefaultFailedFolder, "folder for mail a person must handle (created when missing)")
	f.StringVar(&o.SentFolder, "sent-folder", "", "store every reply in this folder, and look pending replies up there after a crash")
	f.StringVar(&o.DraftsFolder, "drafts-folder", watch.DefaultDraftsFolder, "folder that receives drafts (reply mode draft), flagged \\Draft")
	envString(f, &o.Ledger, "ledger", "TRIAGE_LEDGER", "triage-ledger.db", "ledger file (SQLite); <ledger>.lock guards against overlapping runs")
	f.StringVar(&o.Outbox, "outbox", "", "write replies as .eml files into this directory instead of SMTP")
	f.StringVar(&o.MetricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on this address (e.g. 127.0.0.1:9464)")
	f.StringVar(&o.LogFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&o.LogLevel, "log-level", "info", "log level: debug (includes message bodies), info, warn, error")
	f.DurationVar(&o.Grace, "shutdown-grace", watch.DefaultGrace, "after SIGTERM/SIGINT, time the message in flight may still take")
	f.IntVar(&o.PerSender, "per-sender-limit", watch.DefaultPerSenderLimit, "replies per sender per 24h; more is left for a person (negative: no limit)")
	f.IntVar(&o.GlobalPerHour, "global-per-hour", watch.DefaultGlobalPerHour, "replies per hour overall; more is left for a person (negative: no limit)")
	f.Int64Var(&o.MaxMessageBytes, "max-message-bytes", watch.DefaultMaxMessageBytes, "larger messages go to a person without being read")
	f.IntVar(&o.Concurrency, "concurrency", watch.DefaultConcurrency, "messages of a pass handled at once (IMAP stays one connection)")
	return cmd, o
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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	if err := yamlstrict.Decode(data, &wf); err != nil {
		return nil, usageErr("%s: %s", path, strings.ReplaceAll(err.Error(), "\n", "\n"+path+": "))
	}
	// Relative paths in the file are relative to the file.
	dir := filepath.Dir(path)
	for _, p := range []*string{&wf.IMAP.PasswordFile, &wf.IMAP.TokenFile, &wf.SMTP.PasswordFile, &wf.SMTP.TokenFile, &wf.IMAP.CAFile, &wf.SMTP.CAFile,
		&wf.Outbox, &wf.Ledger, &wf.Pipeline.Instructions, &wf.Pipeline.WarrantyCSV, &wf.Pipeline.TicketsDB} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for _, o := range []*mailauth.Setting{wf.IMAP.OAuth2, wf.SMTP.OAuth2} {
		if o == nil {
			continue
		}
		for _, p := range []*string{&o.ClientSecretFile, &o.RefreshTokenFile} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(dir, *p)
			}
		}
	}
	return &wf, nil
}

// merge applies the file's values to every option not given as a flag.
func (o *watchOptions) merge(fs *pflag.FlagSet, wf *watchFile) {
	// Precedence: flag > environment > file (given reports the first two).
	str := func(flag string, dst *string, v string) {
		if v != "" && !given(fs, flag) {
			*dst = v
		}
	}
	dur := func(flag string, dst *time.Duration, v time.Duration) {
		if v != 0 && !given(fs, flag) {
			*dst = v
		}
	}
	num := func(flag string, dst *int, v int) {
		if v != 0 && !given(fs, flag) {
			*dst = v
		}
	}
	p := &wf.Pipeline
	str("from", &o.From, p.From)
	str("instructions", &o.Instructions, p.Instructions)
	str("model", &o.Model, p.Model)
	o.modelOptions.merge(fs, wf.Model, &o.Model)
	if p.Offline && !fs.Changed("offline") {
		o.Offline = true
	}
	str("warranty-csv", &o.WarrantyCSV, p.WarrantyCSV)
	str("warranty-url", &o.WarrantyURL, p.WarrantyURL)
	str("tickets-db", &o.TicketsDB, p.TicketsDB)
	str("store", &o.Store, wf.Store)
	str("tickets-url", &o.TicketsURL, p.TicketsURL)
	if len(p.Staff) > 0 && !given(fs, "staff") {
		o.Staff = p.Staff
	}
	if len(p.SerialPattern) > 0 && !given(fs, "serial-pattern") {
		o.SerialPattern = p.SerialPattern
	}
	num("max-turns", &o.MaxTurns, p.MaxTurns)
	dur("turn-timeout", &o.TurnTimeout, p.TurnTimeout)
	dur("deadline", &o.Deadline, p.Deadline)
	num("max-calls-per-turn", &o.MaxCallsPerTurn, p.MaxCallsPerTurn)
	num("max-calls", &o.MaxCalls, p.MaxCalls)
	str("default-language", &o.DefaultLanguage, p.DefaultLanguage)
	if len(p.Languages) > 0 && !given(fs, "languages") {
		o.Languages = p.Languages
	}

	str("mailbox", &o.Mailbox, wf.IMAP.Mailbox)
	str("keyword", &o.Keyword, wf.IMAP.Keyword)
	str("processed-folder", &o.ProcessedFolder, wf.IMAP.ProcessedFolder)
	str("failed-folder", &o.FailedFolder, wf.IMAP.FailedFolder)
	str("sent-folder", &o.SentFolder, wf.IMAP.SentFolder)
	str("drafts-folder", &o.DraftsFolder, wf.DraftsAlias)
	str("drafts-folder", &o.DraftsFolder, wf.IMAP.DraftsFolder)
	str("reply-mode", &o.ReplyMode, wf.Pipeline.ReplyMode)
	str("reply-mode", &o.ReplyMode, wf.ReplyMode)
	str("ledger", &o.Ledger, wf.Ledger)
	str("outbox", &o.Outbox, wf.Outbox)
	str("metrics-addr", &o.MetricsAddr, wf.MetricsAddr)
	str("log-format", &o.LogFormat, wf.Log.Format)
	str("log-level", &o.LogLevel, wf.Log.Level)
	dur("interval", &o.Interval, wf.Interval)
	dur("shutdown-grace", &o.Grace, wf.ShutdownGrace)
	num("per-sender-limit", &o.PerSender, wf.Limits.PerSender)
	num("global-per-hour", &o.GlobalPerHour, wf.Limits.GlobalPerHour)
	num("concurrency", &o.Concurrency, wf.Concurrency)
	if wf.Idle != nil && !*wf.Idle && !fs.Changed("no-idle") {
		o.NoIdle = true
	}
	if wf.MaxMessageBytes != 0 && !fs.Changed("max-message-bytes") {
		o.MaxMessageBytes = wf.MaxMessageBytes
	}
}

// logFinalError writes err as one JSON log line (level ERROR, with the exit
// status) and returns it marked as logged.
func logFinalError(w io.Writer, err error) error {
	ee := &exitError{code: exitFailed, err: err}
	if !errors.As(err, &ee) {
		ee = &exitError{code: exitFailed, err: err}
	}
	if ee.err == nil || ee.logged {
		return err
	}
	slog.New(slog.NewJSONHandler(w, nil)).Error("triage watch stopped", "err", ee.err.Error(), "exit_status", ee.code)
	return &exitError{code: ee.code, err: ee.err, logged: true}
}

// finalGroup renders the count per final state as a log group
// (final.replied=3), never as Go map syntax.
func finalGroup(final map[string]int) slog.Attr {
	var attrs []any
	for _, k := range slices.Sorted(maps.Keys(final)) {
		attrs = append(attrs, slog.Int(k, final[k]))
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
		return slog.New(logattr.Handler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(logattr.Handler(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, usageErr("--log-format %q: want text or json", format)
}

// watchSetup is a validated watch configuration: nothing has been created
// or connected yet.
type watchSetup struct {
	wf                  *watchFile
	found               string // how the configuration was found
	imapPass, imapToken string
	imapOAuth2          *mailauth.Source // nil without imap.oauth2
	smtpOAuth2          *mailauth.Source // imapOAuth2 itself with "oauth2: imap"
	smtp                *mail.SMTP
	imapTLS             *tls.Config    // imap.ca_file's pool, nil without it
	parts               *pipelineParts // what checkPipeline loaded, for newPipeline
}

func (ws *watchSetup) foundText() string {
	switch ws.found {
	case "--config":
		return "given with --config"
	case "$TRIAGE_CONFIG":
		return "named by $TRIAGE_CONFIG"
	}
	return "found at the default location"
}

// loadWatch finds, reads and validates the whole watch configuration (every
// section, path, URL, secret and the model credentials) without creating a
// file or opening a connection. Every problem is reported in one error
// (exit 2). triage watch --check and triage check --config run exactly this.
func loadWatch(fs *pflag.FlagSet, o *watchOptions) (*watchSetup, error) {
	if o.EnvFile != "" {
		if err := godotenv.Load(o.EnvFile); err != nil {
			return nil, usageErr("--env-file: %v", err)
		}
	}
	path, how := findConfig(fs, o.Config)
	if path == "" {
		return nil, usageErr("watch: no configuration: give --config FILE (or set $TRIAGE_CONFIG, or install %s); start from deploy/triage.example.yaml", defaultConfigPath)
	}
	o.Config = path
	wf, err := loadWatchFile(path)
	if err != nil {
		return nil, err
	}
	o.merge(fs, wf)
	var p problems
	if _, err := newLogger(io.Discard, o.LogFormat, o.LogLevel); err != nil {
		p.addErr(err)
	}
	ws := &watchSetup{wf: wf, found: how}

	// imap
	var host string
	switch {
	case wf.IMAP.Addr == "":
		p.add("imap.addr: missing (host:port of the IMAP server)")
	default:
		if host, err = checkHostPort("imap.addr", wf.IMAP.Addr); err != nil {
			p.addErr(err)
		}
	}
	checkTLS("imap.tls", wf.IMAP.TLS, host, &p)
	if wf.IMAP.User == "" {
		p.add("imap.user: missing")
	}
	oauth2Setup(wf, ws, &p)
	var cerr error
	ws.imapTLS, cerr = caConfig("imap.ca_file", wf.IMAP.CAFile)
	p.addErr(cerr)
	perr, terr := error(nil), error(nil)
	if ws.imapPass, perr = secret("TRIAGE_IMAP_PASSWORD", wf.IMAP.PasswordFile, wf.IMAP.Password); perr != nil {
		p.add("imap.password_file: %v", errors.Unwrap(perr))
	}
	if ws.imapToken, terr = secret("TRIAGE_IMAP_TOKEN", wf.IMAP.TokenFile, wf.IMAP.Token); terr != nil {
		p.add("imap.token_file: %v", errors.Unwrap(terr))
	}
	if perr == nil && terr == nil && ws.imapPass == "" && ws.imapToken == "" && wf.IMAP.OAuth2 == nil {
		p.add("no IMAP password or token: set TRIAGE_IMAP_PASSWORD (or TRIAGE_IMAP_TOKEN) in the environment (e.g. with --env-file FILE), or imap.password_file in %s", path)
	}
	if strings.ContainsAny(o.Keyword, " ()\\{]%*\"") {
		p.add("imap.keyword %q: not a valid IMAP keyword", o.Keyword)
	}

	// smtp or outbox
	switch {
	case wf.SMTP.Addr != "":
		pass, perr := secret("TRIAGE_SMTP_PASSWORD", wf.SMTP.PasswordFile, wf.SMTP.Password)
		if perr != nil {
			p.add("smtp.password_file: %v", errors.Unwrap(perr))
		}
		token, terr := secret("TRIAGE_SMTP_TOKEN", wf.SMTP.TokenFile, wf.SMTP.Token)
		if terr != nil {
			p.add("smtp.token_file: %v", errors.Unwrap(terr))
		}
		if wf.SMTP.Timeout < 0 {
			p.add("smtp.timeout must not be negative")
		}
		if perr == nil && terr == nil && wf.SMTP.User != "" && pass == "" && token == "" && wf.SMTP.OAuth2 == nil {
			p.add("no SMTP password or token for smtp.user %s: set TRIAGE_SMTP_PASSWORD (or TRIAGE_SMTP_TOKEN) in the environment (e.g. with --env-file FILE), or smtp.password_file in %s", wf.SMTP.User, path)
		}
		smtpTLS, cerr := caConfig("smtp.ca_file", wf.SMTP.CAFile)
		p.addErr(cerr)
		if perr == nil && terr == nil && cerr == nil {
			if ws.smtp, err = mail.NewSMTP(mail.SMTPConfig{Addr: wf.SMTP.Addr, TLS: wf.SMTP.TLS, Username: wf.SMTP.User, Password: pass, Mechanism: wf.SMTP.Mechanism, Token: token, OAuth2: ws.smtpOAuth2, Timeout: wf.SMTP.Timeout,
				TLSConfig: smtpTLS, CASetting: "smtp.ca_file"}); err != nil {
				p.add("smtp: %v", strings.TrimPrefix(err.Error(), "mail: smtp: "))
			}
		}
	case o.Outbox != "":
		if err := checkDirOrParent("outbox", o.Outbox); err != nil {
			p.addErr(err)
		}
	case o.DryRun || o.ReplyMode == string(triage.ReplyDraft):
		// Nothing is sent: drafts need no SMTP (a scenario with
		// reply_mode: send then fails, left for a person).
	default:
		p.add("no way to send replies: set smtp.addr in %s (or outbox: DIR, or reply_mode: draft)", path)
	}

	// ledger, metrics, numbers
	if o.Ledger == "" {
		p.add("ledger: missing")
	} else if err := checkParentDir("ledger", o.Ledger); err != nil {
		p.addErr(err)
	}
	if o.MetricsAddr != "" {
		if _, err := checkHostPort("metrics_addr", o.MetricsAddr); err != nil {
			p.addErr(err)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"interval", o.Interval}, {"shutdown_grace", o.Grace}, {"limits.per_sender_window", wf.Limits.PerSenderWindow}} {
		if d.v < 0 {
			p.add("%s must not be negative, got %s", d.name, d.v)
		}
	}
	if o.MaxMessageBytes < 0 {
		p.add("max_message_bytes must not be negative")
	}
	if wf.MaxAuthFailures < 0 {
		p.add("max_auth_failures must not be negative")
	}
	if wf.MaxSendFailures < 0 {
		p.add("max_send_failures must not be negative")
	}
	if wf.MaxAttempts < 0 {
		p.add("max_attempts must not be negative")
	}
	if o.Concurrency < 1 {
		p.add("concurrency must be at least 1, got %d", o.Concurrency)
	}

	// pipeline: instructions, registry, store, and the model credentials
	ws.parts = checkPipeline(o.pipelineOptions, &p)
	checkCredentials(o.pipelineOptions, path, &p)
	if err := p.err(); err != nil {
		var ee *exitError
		errors.As(err, &ee)
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("watch: %s: invalid configuration:\n  %s", path, strings.ReplaceAll(ee.err.Error(), "\n", "\n  "))}
	}
	return ws, nil
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
	wf, imapPass, imapToken := ws.wf, ws.imapPass, ws.imapToken
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

	led, unlock, err := openWatchLedger(ctx, o)
	if err != nil {
		return err
	}
	defer unlock()

	var next mail.Sender
	switch {
	case o.DryRun:
		next = dryRunSender{} // never reached: the dispatcher answers effect tools itself
	case ws.smtp != nil:
		next = ws.smtp
	case o.Outbox != "":
		if next, err = mail.NewOutbox(o.Outbox); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	default:
		next = noSMTP{} // draft mode without smtp (loadWatch checked)
	}
	var met *metrics.Metrics
	if o.MetricsAddr != "" {
		met = metrics.New()
		met.SetSendFailureLimit(wf.MaxSendFailures)
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return usageErr("--metrics-addr: %v", err)
		}
		srv := &http.Server{Handler: met.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("metrics", "addr", ln.Addr().String())
	}
	ws.observeOAuth2(log, met)

	_, _, domain, err := parseFrom(o.From)
	if err != nil {
		return err
	}
	var sender mail.Sender = next
	if !o.DryRun {
		sender, err = watch.NewSender(watch.SenderConfig{Ledger: led, Next: next, Domain: domain, Logger: log, Metrics: met})
		if err != nil {
			return usageErr("%v", err)
		}
	}
	p, err := newPipeline(ctx, o.pipelineOptions, ws.parts, sender, log)
	if err != nil {
		return err
	}
	defer p.Close()
	log.Info("model", "description", p.Model.Description)

	grace := o.Grace
	w, err := watch.New(watch.Config{
		TLSConfig: ws.imapTLS, CASetting: "imap.ca_file", NoSaveSent: wf.SMTP.Addr != "" && !wf.SMTP.saveSent(),
		Addr: wf.IMAP.Addr, TLS: wf.IMAP.TLS, Username: wf.IMAP.User, Password: imapPass, Token: imapToken, OAuth2: ws.imapOAuth2,
		Account: wf.IMAP.Account, Mailbox: o.Mailbox, Keyword: o.Keyword,
		ProcessedFolder: o.ProcessedFolder, FailedFolder: o.FailedFolder, SentFolder: o.SentFolder,
		DraftsFolder: o.DraftsFolder, DryRun: o.DryRun, OnPersonReply: personReplyHook(p.Tickets, log),
		MaxMessageBytes: o.MaxMessageBytes, Interval: o.Interval, NoIdle: o.NoIdle,
		PerSenderLimit: o.PerSender, PerSenderWindow: wf.Limits.PerSenderWindow, GlobalPerHour: o.GlobalPerHour,
		MaxAttempts: wf.MaxAttempts, MaxAuthFailures: wf.MaxAuthFailures, Grace: grace, Concurrency: o.Concurrency,
		Processor: p.Processor, Ledger: led, Metrics: met, Logger: log,
	})
	if err != nil {
		return usageErr("%v", err)
	}
	log.Info("watch starting", "addr", wf.IMAP.Addr, "mailbox", o.Mailbox, "account", w.Account(), "ledger", o.ledgerName(), "once", o.Once)
	if o.Once {
		err = w.RunOnce(ctx)
	} else {
		err = w.Run(ctx)
	}
	st := w.Stats()
	log.Info("watch done", "passes", st.Passes, "reconnects", st.Reconnects, finalGroup(st.Final))
	var ae *watch.AuthError
	if errors.As(err, &ae) {
		return &exitError{code: exitAuth, err: err}
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if n := st.Final[ledger.StateFailed]; o.Once && n > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("watch: %d message(s) of the pass failed (see the log and 'triage ledger')", n)}
	}
	return nil
}

// caConfig is a TLS configuration trusting the system's CAs and the PEM
// certificates of file (nil when file is ""); setting names it in errors.
func caConfig(setting, file string) (*tls.Config, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, usageErr("%s: %v", setting, err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, usageErr("%s: %s holds no PEM certificate", setting, file)
	}
	return &tls.Config{RootCAs: pool}, nil
}
