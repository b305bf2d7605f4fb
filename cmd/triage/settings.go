package main

import (
	"fmt"
	"strings"
	"time"

	"triage/internal/dispatcher"
	"triage/internal/llm"
	"triage/internal/scenario"
	"triage/internal/settings"
	"triage/internal/watch"
)

// Every setting of process and watch is declared once, in the tables below:
// flag, environment variable, key in the watch configuration file, default
// and check, bound to the field it fills. The precedence is flag >
// environment > configuration file > default (settings.Table.Resolve).

// pipelineSettings are the settings process and watch share.
func pipelineSettings(o *pipelineOptions) settings.Table {
	return settings.Table{
		{Flag: "instructions", Env: "TRIAGE_INSTRUCTIONS", Key: "pipeline.instructions", Path: true,
			Usage: "instructions directory with main.md, scenarios/*.md and tools.yaml (default: the built-in instructions)",
			Var:   settings.String(&o.Instructions, "")},
		{Flag: "model", Env: "TRIAGE_MODEL", Key: "pipeline.model", Usage: "Gemini model id",
			Var: settings.String(&o.Model, llm.DefaultModel)},
		{Flag: "offline", Key: "pipeline.offline", Usage: "force the built-in offline model even when GEMINI_API_KEY is set",
			Var: settings.Bool(&o.Offline, false)},
		{Flag: "offline-faults", Usage: "comma-separated faults to inject into the offline model (503,429,empty,safety_first,malformed_call,third_party,hang); for testing",
			Var: settings.String(&o.OfflineFaults, "")},
		{Flag: "warranty-csv", Env: "TRIAGE_WARRANTY_CSV", Key: "pipeline.warranty_csv", Path: true,
			Usage: "local warranty registry (CSV: serial_number,status,expiration_date,product); this or --warranty-url is required",
			Var:   settings.String(&o.WarrantyCSV, "")},
		{Flag: "warranty-url", Env: "TRIAGE_WARRANTY_URL", Key: "pipeline.warranty_url",
			Usage: "warranty HTTP service base URL (overrides --warranty-csv; bearer token from $TRIAGE_WARRANTY_TOKEN)",
			Var:   settings.String(&o.WarrantyURL, "")},
		{Flag: "tickets-db", Env: "TRIAGE_TICKETS_DB", Key: "pipeline.tickets_db", Path: true,
			Usage: "local ticket store (SQLite file)", Var: settings.String(&o.TicketsDB, "triage-tickets.db")},
		{Flag: "tickets-url", Env: "TRIAGE_TICKETS_URL", Key: "pipeline.tickets_url",
			Usage: "ticket HTTP service base URL (overrides --tickets-db; bearer token from $TRIAGE_TICKETS_TOKEN)",
			Var:   settings.String(&o.TicketsURL, "")},
		{Flag: "from", Env: "TRIAGE_FROM", Key: "pipeline.from", Usage: "our address: From of every reply, and never answered",
			Var: settings.String(&o.From, "Serwis gwarancyjny <serwis@example.com>")},
		{Flag: "staff", Key: "pipeline.staff", Usage: "staff addresses notify_staff mails when a conversation is escalated (repeatable)",
			Var: settings.Strings(&o.Staff)},
		{Flag: "serial-pattern", Key: "pipeline.serial_patterns",
			Usage: "regular expression with one group capturing a serial number (repeatable; default: built-in patterns)",
			Var:   settings.Strings(&o.SerialPattern)},
		{Flag: "max-turns", Key: "pipeline.max_turns", Usage: "maximum model turns per email",
			Var: settings.Int(&o.MaxTurns, 10, settings.AtLeast(1))},
		{Flag: "turn-timeout", Key: "pipeline.turn_timeout", Usage: "timeout of one model call",
			Var: settings.Duration(&o.TurnTimeout, 30*time.Second, settings.Positive)},
		{Flag: "deadline", Key: "pipeline.deadline", Usage: "total time budget per email",
			Var: settings.Duration(&o.Deadline, 2*time.Minute, settings.Positive)},
		{Flag: "reply-mode", Env: "TRIAGE_REPLY_MODE", Key: "reply_mode", Aliases: []string{"pipeline.reply_mode"},
			Usage: "send: replies go out; draft: replies are left as drafts a person sends (a scenario's reply_mode: overrides it)",
			Var:   settings.String(&o.ReplyMode, scenario.ReplySend, settings.OneOf(scenario.ReplySend, scenario.ReplyDraft))},
		{Flag: "dry-run", Usage: "do nothing with an effect (no ticket, note, mail, draft, server flag or ledger entry); outcomes say what would have happened",
			Var: settings.Bool(&o.DryRun, false)},
		{Flag: "max-calls-per-turn", Key: "pipeline.max_calls_per_turn",
			Usage: "function calls the model may make in one turn (more are refused, recorded blocked)",
			Var:   settings.Int(&o.MaxCallsPerTurn, dispatcher.DefaultMaxCallsPerTurn, settings.AtLeast(1))},
		{Flag: "max-calls", Key: "pipeline.max_calls",
			Usage: "function calls the model may make per email (more are refused, recorded blocked)",
			Var:   settings.Int(&o.MaxCalls, dispatcher.DefaultMaxCallsPerEmail, settings.AtLeast(1))},
	}
}

// processSettings are the settings of triage process.
func processSettings(o *processOptions) settings.Table {
	return append(pipelineSettings(&o.pipelineOptions),
		&settings.Setting{Flag: "json", Usage: "print one JSON outcome per input, one per line", Var: settings.Bool(&o.JSON, false)},
		&settings.Setting{Flag: "outbox", Env: "TRIAGE_OUTBOX", Usage: "directory that receives every sent reply as an .eml file",
			Var: settings.String(&o.Outbox, "outbox")},
		&settings.Setting{Flag: "concurrency", Usage: "emails processed in parallel",
			Var: settings.Int(&o.Concurrency, 4, settings.AtLeast(1))},
		&settings.Setting{Flag: "verbose", Short: "v", Usage: "log each step to stderr", Var: settings.Bool(&o.Verbose, false)},
	)
}

// serverSettings are the settings of one server section (imap, smtp).
func serverSettings(section string, s *serverOptions, tls string) settings.Table {
	return settings.Table{
		{Key: section + ".addr", Usage: "host:port of the server", Var: settings.String(&s.Addr, "")},
		{Key: section + ".tls", Usage: "tls, starttls or none (none only for loopback hosts)", Var: settings.String(&s.TLS, tls, checkTLSMode)},
		{Key: section + ".user", Usage: "user name", Var: settings.String(&s.User, "")},
		{Key: section + ".password", Usage: "password (TRIAGE_" + strings.ToUpper(section) + "_PASSWORD and password_file come first)", Var: settings.String(&s.Password, "")},
		{Key: section + ".password_file", Path: true, Usage: "file holding the password", Var: settings.String(&s.PasswordFile, "")},
		{Key: section + ".token", Usage: "OAuth2 access token (TRIAGE_" + strings.ToUpper(section) + "_TOKEN and token_file come first)", Var: settings.String(&s.Token, "")},
		{Key: section + ".token_file", Path: true, Usage: "file holding the OAuth2 access token", Var: settings.String(&s.TokenFile, "")},
	}
}

// checkTLSMode accepts the TLS modes of a server section ("" is the
// section's default); whether none is allowed depends on the host, which
// loadWatch checks.
func checkTLSMode(mode string) error {
	switch strings.ToLower(mode) {
	case "", "tls", "starttls", "none":
		return nil
	}
	return fmt.Errorf("%q: want tls, starttls or none", mode)
}

// checkKeyword accepts an IMAP keyword (an atom: no space, parentheses,
// quote, backslash, brace or wildcard).
func checkKeyword(k string) error {
	if strings.ContainsAny(k, " ()\\{]%*\"") {
		return fmt.Errorf("%q: not a valid IMAP keyword", k)
	}
	return nil
}

// checkOptionalHostPort accepts "" or host:port.
func checkOptionalHostPort(addr string) error {
	if addr == "" {
		return nil
	}
	_, err := checkHostPort("", addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port", addr)
	}
	return nil
}

// watchSettings are the settings of triage watch.
func watchSettings(o *watchOptions) settings.Table {
	t := pipelineSettings(&o.pipelineOptions)
	t = append(t, settings.Table{
		{Flag: "config", Usage: "YAML configuration file [$TRIAGE_CONFIG; default /etc/triage/triage.yaml when it exists]",
			Var: settings.String(&o.Config, "")},
		{Flag: "check", Usage: "validate the configuration and the instructions without connecting or creating anything, then exit (0 valid, 2 not)",
			Var: settings.Bool(&o.Check, false)},
		{Flag: "env-file", Usage: "read KEY=value lines (secrets, GEMINI_API_KEY) from FILE into the environment first; variables already set win",
			Var: settings.String(&o.EnvFile, "")},
		{Flag: "once", Usage: "make one pass and exit (for cron)", Var: settings.Bool(&o.Once, false)},
		{Flag: "interval", Key: "interval", Usage: "polling interval when the server has no IDLE (or with --no-idle)",
			Var: settings.Duration(&o.Interval, watch.DefaultInterval, settings.NotNegative)},
		{Flag: "no-idle", Key: "idle", Negated: true, Usage: "poll every --interval even when the server offers IDLE",
			Var: settings.Bool(&o.NoIdle, false)},
		{Flag: "mailbox", Key: "imap.mailbox", Usage: "mailbox to watch", Var: settings.String(&o.Mailbox, watch.DefaultMailbox)},
		{Flag: "keyword", Key: "imap.keyword", Usage: "keyword added to handled mail (\\Seen when the server refuses keywords)",
			Var: settings.String(&o.Keyword, watch.DefaultKeyword, checkKeyword)},
		{Flag: "processed-folder", Key: "imap.processed_folder", Usage: "move replied mail to this folder (default: leave it in place)",
			Var: settings.String(&o.ProcessedFolder, "")},
		{Flag: "failed-folder", Key: "imap.failed_folder", Usage: "folder for mail a person must handle (created when missing)",
			Var: settings.String(&o.FailedFolder, watch.DefaultFailedFolder)},
		{Flag: "sent-folder", Key: "imap.sent_folder", Usage: "store every reply in this folder, and look pending replies up there after a crash",
			Var: settings.String(&o.SentFolder, "")},
		{Flag: "drafts-folder", Key: "imap.drafts_folder", Aliases: []string{"drafts_folder"},
			Usage: "folder that receives drafts (reply mode draft), flagged \\Draft", Var: settings.String(&o.DraftsFolder, watch.DefaultDraftsFolder)},
		{Key: "imap.account", Usage: "account name in logs and the ledger (default: user@addr)", Var: settings.String(&o.Account, "")},
		{Flag: "ledger", Env: "TRIAGE_LEDGER", Key: "ledger", Path: true,
			Usage: "ledger file (SQLite); <ledger>.lock guards against overlapping runs", Var: settings.String(&o.Ledger, "triage-ledger.db")},
		{Flag: "outbox", Key: "outbox", Path: true, Usage: "write replies as .eml files into this directory instead of SMTP",
			Var: settings.String(&o.Outbox, "")},
		{Flag: "metrics-addr", Key: "metrics_addr", Usage: "serve Prometheus /metrics and /healthz on this address (e.g. 127.0.0.1:9464)",
			Var: settings.String(&o.MetricsAddr, "", checkOptionalHostPort)},
		{Flag: "log-format", Key: "log.format", Usage: "log format: text or json", Var: settings.String(&o.LogFormat, "text")},
		{Flag: "log-level", Key: "log.level", Usage: "log level: debug (includes message bodies), info, warn, error",
			Var: settings.String(&o.LogLevel, "info")},
		{Flag: "shutdown-grace", Key: "shutdown_grace", Usage: "after SIGTERM/SIGINT, time the message in flight may still take",
			Var: settings.Duration(&o.Grace, watch.DefaultGrace, settings.NotNegative)},
		{Flag: "per-sender-limit", Key: "limits.per_sender", Usage: "replies per sender per 24h; more is left for a person (negative: no limit)",
			Var: settings.Int(&o.PerSender, watch.DefaultPerSenderLimit)},
		{Key: "limits.per_sender_window", Usage: "the window of the per-sender limit",
			Var: settings.Duration(&o.PerSenderWindow, watch.DefaultPerSenderWindow, settings.NotNegative)},
		{Flag: "global-per-hour", Key: "limits.global_per_hour", Usage: "replies per hour overall; more is left for a person (negative: no limit)",
			Var: settings.Int(&o.GlobalPerHour, watch.DefaultGlobalPerHour)},
		{Flag: "max-message-bytes", Key: "max_message_bytes", Usage: "larger messages go to a person without being read",
			Var: settings.Int64(&o.MaxMessageBytes, watch.DefaultMaxMessageBytes, settings.NotNegative)},
		{Key: "max_attempts", Usage: "attempts at one message before it goes to a person",
			Var: settings.Int(&o.MaxAttempts, watch.DefaultMaxAttempts, settings.NotNegative)},
		{Key: "max_auth_failures", Usage: "refused logins in a row before the daemon stops (exit 5)",
			Var: settings.Int(&o.MaxAuthFailures, watch.DefaultMaxAuthFailures, settings.NotNegative)},
		{Flag: "concurrency", Key: "concurrency", Usage: "messages of a pass handled at once (IMAP stays one connection)",
			Var: settings.Int(&o.Concurrency, watch.DefaultConcurrency, settings.AtLeast(1))},
		{Key: "smtp.timeout", Usage: "timeout of one SMTP submission", Var: settings.Duration(&o.SMTPTimeout, 30*time.Second, settings.NotNegative)},
	}...)
	t = append(t, serverSettings("imap", &o.IMAP, "tls")...)
	return append(t, serverSettings("smtp", &o.SMTP, "starttls")...)
}
