package main

import (
	"fmt"
	"strings"

	"github.com/joho/godotenv"
	"github.com/spf13/cobra"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/mail"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/language"
	"triage/internal/model"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/settings"
	"triage/internal/trace"
	"triage/internal/watch"
)

// Every setting of the commands is declared once, in the tables below:
// flag, environment variable, key in the watch configuration file, default
// and check, bound to the field it fills. The precedence is flag >
// environment > configuration file > default (settings.Table.Resolve).

// bindSettings registers a subcommand's own table on its flags and resolves
// it (flag > environment > default) before the subcommand runs, after its
// parent's persistent settings.
func bindSettings(cmd *cobra.Command, t settings.Table) {
	t.Register(cmd.Flags())
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := t.Resolve(cmd.Flags(), nil, nil); err != nil {
			return usageError(err)
		}
		if err := t.Check(); err != nil {
			return usageErr("%s: %v", cmd.CommandPath(), err)
		}
		return nil
	}
}

// Settings several commands read, declared once each.

// concurrencySetting is --concurrency of process, watch (key) and replay:
// how many emails are answered at once.
func concurrencySetting(p *int, key, usage string) *settings.Setting {
	return &settings.Setting{Flag: "concurrency", Key: key, Usage: usage,
		Var: settings.Int(p, processor.DefaultConcurrency, settings.AtLeast(1))}
}

// ticketsTokenSetting is the bearer token of the ticket HTTP service
// (pipeline.tickets_url), read by process, watch and the console.
func ticketsTokenSetting(p *string) *settings.Setting {
	return &settings.Setting{Env: "TRIAGE_TICKETS_TOKEN", Usage: "bearer token of --tickets-url", Var: settings.String(p, "")}
}

func instructionsSetting(p *string) *settings.Setting {
	return &settings.Setting{Flag: "instructions", Env: "TRIAGE_INSTRUCTIONS", Key: "pipeline.instructions", Path: true,
		Usage: "instructions directory with main.md, scenarios/*.md and tools.yaml (default: the built-in instructions)",
		Var:   settings.String(p, "")}
}

// modelSetting is the model id; model.name and pipeline.model are the same
// key (model.name wins when both are set).
func modelSetting(p *string) *settings.Setting {
	return &settings.Setting{Flag: "model", Env: "TRIAGE_MODEL", Key: "model.name", Aliases: []string{"pipeline.model"},
		Usage: "model id (Gemini's by default; with --provider openai, the endpoint's)",
		Var:   settings.String(p, model.DefaultModel)}
}

// providerSettings choose the model provider (process, watch and eval).
func providerSettings(m *modelOptions) settings.Table {
	return settings.Table{
		{Flag: "provider", Env: "TRIAGE_PROVIDER", Key: "model.provider",
			Usage: "model provider: gemini, or openai for any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LiteLLM; key from $OPENAI_API_KEY)",
			Var:   settings.String((*string)(&m.Provider), string(model.ProviderGemini), settings.OneOf(model.Providers...))},
		{Flag: "base-url", Env: "OPENAI_BASE_URL", Key: "model.base_url",
			Usage: "with --provider openai: the endpoint's API root, e.g. http://localhost:11434/v1 for Ollama (default https://api.openai.com/v1)",
			Var:   settings.String(&m.BaseURL, "")},
		{Flag: "api-key-file", Env: "OPENAI_API_KEY_FILE", Key: "model.api_key_file", Path: true,
			Usage: "with --provider openai: file holding the API key, when $OPENAI_API_KEY is unset",
			Var:   settings.String(&m.APIKeyFile, "")},
		{Flag: "requests-per-minute", Key: "model.requests_per_minute",
			Usage: "model calls per minute at most, shared by every process on the --store (per process without one; 0: no limit)",
			Var:   settings.Int(&m.RequestsPerMinute, 0, settings.AtLeast(0))},
		{Flag: "tokens-per-minute", Key: "model.tokens_per_minute",
			Usage: "model tokens (prompt and output) per minute at most, shared like --requests-per-minute (0: no limit)",
			Var:   settings.Int(&m.TokensPerMinute, 0, settings.AtLeast(0))},
		{Flag: "max-output-tokens", Env: "TRIAGE_MAX_OUTPUT_TOKENS", Key: "model.max_output_tokens",
			Usage: "output tokens of one model call at most, sent to the model (Gemini's maxOutputTokens, its thinking included; max_tokens on an OpenAI-compatible endpoint, where a local server's own default is unbounded)",
			Var:   settings.Int(&m.MaxOutputTokens, agent.DefaultMaxOutputTokens, settings.AtLeast(1))},
		{Flag: "tool-choice", Env: "TRIAGE_TOOL_CHOICE", Key: "model.tool_choice",
			Usage: "auto: the model may answer in text (it is nudged once to call the final function); required: every turn must call a function until the reply is sent (makes small local models usable)",
			Var:   settings.String(&m.ToolChoice, string(agent.ToolChoiceAuto), settings.OneOf(agent.ToolChoices...))},
		{Flag: "model-attachments", Env: "TRIAGE_MODEL_ATTACHMENTS", Key: "model.attachments",
			Usage: "with --provider openai: the attachment kinds the endpoint reads, image (sent as image_url data URLs) and pdf (as file parts), or none (repeatable; default image,pdf as the OpenAI API; a text-only local model: none); the others are listed to the model by name, recorded not sent (model_cannot_read)",
			Var:   settings.Strings(&m.Attachments, checkInputs)},
	}
}

// contextCacheSettings choose Gemini's explicit context cache (process and
// watch: eval builds a model per case, which a cache would not outlive).
func contextCacheSettings(m *modelOptions) settings.Table {
	return settings.Table{
		{Flag: "context-cache", Env: "TRIAGE_CONTEXT_CACHE", Key: "model.context_cache",
			Usage: "Gemini: off, or auto: serve the instructions and tool declarations every email of a scenario shares from an explicit context cache (one per scenario and instructions version, when at least 1,024 tokens; cached input costs a tenth, plus storage per hour: docs/scale.md); a cache Gemini refuses is logged and the call sent uncached",
			Var:   settings.String(&m.ContextCache, contextCacheOff, settings.OneOf(contextCacheOff, contextCacheAuto))},
		{Flag: "context-cache-ttl", Key: "model.context_cache_ttl",
			Usage: "with --context-cache auto: a cache's lifetime, extended while emails use it",
			Var:   settings.Duration(&m.ContextCacheTTL, agent.DefaultCacheTTL, settings.Positive)},
	}
}

// checkInputs accepts the attachment kinds of model.attachments.
func checkInputs(kinds []string) error {
	_, err := model.ParseInputs(kinds)
	return err
}

// storeSetting is the shared PostgreSQL store (process, watch, ledger,
// ledger stats, tickets, store migrate).
func storeSetting(p *string) *settings.Setting {
	return &settings.Setting{Flag: "store", Env: "TRIAGE_STORE", Key: "store",
		Usage: "shared store: a postgres:// URL holding the ledger and the tickets (and process's outbox index) instead of the SQLite files (--ledger, --tickets-db, the outbox's .index.jsonl and .index.db)",
		Var:   settings.String(p, "", checkStoreURL)}
}

func offlineSetting(p *bool) *settings.Setting {
	return &settings.Setting{Flag: "offline", Key: "pipeline.offline", Usage: "force the built-in offline model even when GEMINI_API_KEY is set",
		Var: settings.Bool(p, false)}
}

func ticketsDBSetting(p *string) *settings.Setting {
	return &settings.Setting{Flag: "tickets-db", Env: "TRIAGE_TICKETS_DB", Key: "pipeline.tickets_db", Path: true,
		Usage: "local ticket store (SQLite file)", Var: settings.String(p, "triage-tickets.db")}
}

// ledgerSetting is watch's ledger file (watch, the ledger commands, and
// replay's baseline); def is the command's default.
func ledgerSetting(p *string, def string) *settings.Setting {
	return &settings.Setting{Flag: "ledger", Env: "TRIAGE_LEDGER", Key: "ledger", Path: true,
		Usage: "ledger file (SQLite); <ledger>.lock guards against overlapping runs", Var: settings.String(p, def)}
}

// defaultLedger is the ledger file of watch and the ledger commands.
const defaultLedger = "triage-ledger.db"

// configSetting is the watch configuration file, also named by
// $TRIAGE_CONFIG. A command that finds the configuration by convention
// (findConfig: --config, $TRIAGE_CONFIG, then defaultConfigPath) says so
// with configFound in usage.
func configSetting(p *string, usage string) *settings.Setting {
	return &settings.Setting{Flag: "config", Env: configEnv, Usage: usage, Var: settings.String(p, "")}
}

// configEnv names the configuration file when --config does not.
const configEnv = "TRIAGE_CONFIG"

// configFound ends the usage of a --config that findConfig completes.
var configFound = " (default " + defaultConfigPath + " when it exists)"

// envFileSetting is the KEY=value secrets file (the one systemd reads) that
// watch, check and console load before anything else (loadEnvFile).
func envFileSetting(p *string) *settings.Setting {
	return &settings.Setting{Flag: "env-file", Usage: "read KEY=value lines (secrets, GEMINI_API_KEY) from FILE into the environment first; variables already set win",
		Var: settings.String(p, "")}
}

// loadEnvFile loads the --env-file path names, when it names one.
func loadEnvFile(path string) error {
	if path == "" {
		return nil
	}
	if err := godotenv.Load(path); err != nil {
		return usageErr("--env-file: %v", err)
	}
	return nil
}

// outboxSetting is the directory replies are written to as .eml files:
// process's outbox, or watch's instead of SMTP; def is the command's
// default.
func outboxSetting(p *string, def string) *settings.Setting {
	return &settings.Setting{Flag: "outbox", Key: "outbox", Path: true, Usage: "directory that receives every reply as an .eml file (drafts in its drafts/)",
		Var: settings.String(p, def)}
}

// staffSetting is the staff addresses notify_staff mails (process, watch
// and eval).
func staffSetting(p *[]string) *settings.Setting {
	return &settings.Setting{Flag: "staff", Key: "pipeline.staff", Usage: "staff addresses notify_staff mails when a conversation is escalated or a reply promises a person (repeatable)",
		Var: settings.Strings(p)}
}

// autonomySettings are the bar reply mode auto holds a scenario to in an
// inbox (watch decides by it; the console and ledger stats show it).
func autonomySettings(t *review.Thresholds) settings.Table {
	return settings.Table{
		{Flag: "autonomy-min-reviewed", Key: "autonomy.min_reviewed",
			Usage: "reply mode auto: reviewed drafts a scenario needs in an inbox before it sends on its own; the latest this many are the window judged",
			Var:   settings.Int(&t.MinReviewed, review.DefaultMinReviewed, settings.AtLeast(1))},
		{Flag: "autonomy-min-sent-as-is", Key: "autonomy.min_sent_as_is",
			Usage: "reply mode auto: percentage of the window people sent as is (none may be rejected)",
			Var:   settings.Float(&t.MinSentAsIs, review.DefaultMinSentAsIs, checkPercent)},
		{Flag: "autonomy-sample-every", Key: "autonomy.sample_every",
			Usage: "reply mode auto: while a scenario sends on its own, draft every Nth of its messages for review, so it can fall back (0: none)",
			Var:   settings.Int(&t.SampleEvery, review.DefaultSampleEvery, settings.AtLeast(0))},
	}
}

// checkPercent accepts a percentage above 0 and at most 100.
func checkPercent(f float64) error {
	if f <= 0 || f > 100 {
		return fmt.Errorf("must be a percentage above 0 and at most 100, got %g", f)
	}
	return nil
}

// withUsage is s with the help text one command gives it.
func withUsage(s *settings.Setting, usage string) *settings.Setting {
	s.Usage = usage
	return s
}

// withEnv is s read from the environment variable env too, in one command.
func withEnv(s *settings.Setting, env string) *settings.Setting {
	s.Env = env
	return s
}

// boundsSettings declares the loop bounds (process, watch and eval).
func boundsSettings(b *processor.Bounds) settings.Table {
	return settings.Table{
		{Flag: "max-turns", Key: "pipeline.max_turns", Usage: "maximum model turns per email",
			Var: settings.Int(&b.MaxTurns, agent.DefaultMaxTurns, settings.AtLeast(1))},
		{Flag: "turn-timeout", Key: "pipeline.turn_timeout", Usage: "timeout of one model call",
			Var: settings.Duration(&b.TurnTimeout, agent.DefaultTurnTimeout, settings.Positive)},
		{Flag: "deadline", Key: "pipeline.deadline", Usage: "total time budget per email",
			Var: settings.Duration(&b.Deadline, agent.DefaultDeadline, settings.Positive)},
		{Flag: "max-calls-per-turn", Key: "pipeline.max_calls_per_turn",
			Usage: "function calls the model may make in one turn (more are refused, recorded blocked)",
			Var:   settings.Int(&b.MaxCallsPerTurn, dispatcher.DefaultMaxCallsPerTurn, settings.AtLeast(1))},
		{Flag: "max-calls", Key: "pipeline.max_calls",
			Usage: "function calls the model may make per email (more are refused, recorded blocked)",
			Var:   settings.Int(&b.MaxCalls, dispatcher.DefaultMaxCallsPerEmail, settings.AtLeast(1))},
	}
}

// pipelineSettings are the settings process and watch share.
func pipelineSettings(o *pipelineOptions) settings.Table {
	t := settings.Table{
		instructionsSetting(&o.Instructions),
		modelSetting(&o.Model),
		offlineSetting(&o.Offline),
		{Flag: "offline-faults", Usage: "comma-separated faults to inject into the offline model (503,429,empty,safety_first,malformed_call,third_party,hang); for testing",
			Var: settings.String(&o.OfflineFaults, "")},
		{Flag: "warranty-csv", Env: "TRIAGE_WARRANTY_CSV", Key: "pipeline.warranty_csv", Path: true,
			Usage: "local warranty registry (CSV: serial_number,status,expiration_date,product[,purchase_date][,buyer]); this or --warranty-url is required",
			Var:   settings.String(&o.WarrantyCSV, "")},
		{Flag: "warranty-url", Env: "TRIAGE_WARRANTY_URL", Key: "pipeline.warranty_url",
			Usage: "warranty HTTP service base URL (overrides --warranty-csv; bearer token from $TRIAGE_WARRANTY_TOKEN)",
			Var:   settings.String(&o.WarrantyURL, "")},
		{Env: "TRIAGE_WARRANTY_TOKEN", Usage: "bearer token of --warranty-url", Var: settings.String(&o.WarrantyToken, "")},
		ticketsDBSetting(&o.TicketsDB),
		storeSetting(&o.Store),
		{Flag: "tickets-url", Env: "TRIAGE_TICKETS_URL", Key: "pipeline.tickets_url",
			Usage: "ticket HTTP service base URL (overrides --tickets-db; bearer token from $TRIAGE_TICKETS_TOKEN)",
			Var:   settings.String(&o.TicketsURL, "")},
		ticketsTokenSetting(&o.TicketsToken),
		{Flag: "from", Env: "TRIAGE_FROM", Key: "pipeline.from", Usage: "our address: From of every reply, and never answered",
			Var: settings.String(&o.From, "Serwis gwarancyjny <serwis@example.com>")},
		staffSetting(&o.Staff),
		{Flag: "trusted-authserv-id", Env: "TRIAGE_TRUSTED_AUTHSERV_IDS", Key: "pipeline.trusted_authserv_ids",
			Usage: "authserv-id of the receiving mail server whose Authentication-Results header is believed (repeatable): a Reply-To outside the sender's domain is answered, and a message joins a conversation, only when its topmost such header says DMARC or a DKIM signature of the From domain passed; none: no message is authenticated, a Reply-To elsewhere is never answered",
			Var:   settings.Strings(&o.TrustedAuthservIDs)},
		{Flag: "notices-per-customer", Key: "limits.notices_per_customer",
			Usage: "staff notices about one customer's mail per hour; more is left for a person (negative: no limit); notices never count against the reply limits",
			Var:   settings.Int(&o.Notices.PerCustomer, triage.DefaultNoticesPerCustomer)},
		{Flag: "notices-per-hour", Key: "limits.notices_per_hour",
			Usage: "staff notices per hour overall; more is left for a person (negative: no limit)",
			Var:   settings.Int(&o.Notices.PerHour, triage.DefaultNoticesPerHour)},
		{Flag: "console-url", Env: "TRIAGE_CONSOLE_URL", Key: "console.url",
			Usage: "the review console's address (e.g. https://triage.example.com): staff notices link to the conversation there",
			Var:   settings.String(&o.ConsoleURL, "", checkConsoleURL)},
		{Flag: "default-language", Env: "TRIAGE_DEFAULT_LANGUAGE", Key: "pipeline.default_language",
			Usage: "ISO 639-1 code of the inbox's language: a customer whose language cannot be told (a short or mixed message) is answered in it",
			Var:   settings.String(&o.DefaultLanguage, language.DefaultLanguage)},
		{Flag: "languages", Key: "pipeline.languages",
			Usage: "ISO 639-1 codes of the languages told apart (default " + strings.Join(language.DefaultLanguages, ",") + ")",
			Var:   settings.Strings(&o.Languages)},
		{Flag: "ai-disclosure", Key: "pipeline.ai_disclosure",
			Usage: "add the AI disclosure of main.md's replies styles (a line saying an AI assistant wrote the reply, in its language, above the signature) to every reply and draft the model writes; false for a shop that discloses otherwise",
			Var:   settings.Bool(&o.AIDisclosure, true)},
		{Flag: "attachment-types", Key: "pipeline.attachments.types",
			Usage: "media types of attachments sent to the model (repeatable; default " + strings.Join(processor.DefaultAttachTypes, ",") + ")",
			Var:   settings.Strings(&o.Attachments.Types)},
		{Flag: "max-attachments", Key: "pipeline.attachments.max_count",
			Usage: "attachments sent to the model at most per email, largest left out first (negative: none)",
			Var:   settings.Int(&o.Attachments.MaxCount, processor.DefaultAttachMaxCount)},
		{Flag: "max-attachment-bytes", Key: "pipeline.attachments.max_bytes",
			Usage: "bytes of attachments sent to the model at most per email",
			Var:   settings.Int(&o.Attachments.MaxBytes, processor.DefaultAttachMaxBytes, settings.AtLeast(1))},
		{Flag: "jurisdiction", Env: "TRIAGE_JURISDICTION", Key: "pipeline.jurisdiction",
			Usage: "the jurisdiction of policy.yaml the warranty decisions apply (pl, eu, de, uk in the built-in policy; default: its default:)",
			Var:   settings.String(&o.Jurisdiction, "")},
		{Flag: "spam-header", Env: "TRIAGE_SPAM_HEADER", Key: "pipeline.spam.header",
			Usage: "header in which the receiving mail server writes a spam score (e.g. X-Spam-Score): a score at or over --spam-threshold is skipped as spam, as X-Spam-Flag: YES and rspamd's spam actions always are",
			Var:   settings.String(&o.Spam.Header, "", guard.CheckSpamHeader)},
		{Flag: "spam-threshold", Env: "TRIAGE_SPAM_THRESHOLD", Key: "pipeline.spam.threshold",
			Usage: "the --spam-header score at which a message is spam",
			Var:   settings.Float(&o.Spam.Threshold, guard.DefaultSpamThreshold)},
		{Flag: "serial-pattern", Key: "pipeline.serial_patterns",
			Usage: "regular expression with one group capturing a serial number (repeatable; default: built-in patterns)",
			Var:   settings.Strings(&o.SerialPattern)},
	}
	t = append(t, providerSettings(&o.modelOptions)...)
	t = append(t, contextCacheSettings(&o.modelOptions)...)
	t = append(t, verifySettings(&o.Verify)...)
	t = append(t, boundsSettings(&o.Bounds)...)
	return append(t,
		&settings.Setting{Flag: "reply-mode", Env: "TRIAGE_REPLY_MODE", Key: "reply_mode", Aliases: []string{"pipeline.reply_mode"},
			Usage: "send: replies go out; draft: replies are left as drafts a person sends; auto: a scenario drafts until people's reviews of its drafts in the inbox qualify it to send on its own (watch; process drafts) (a scenario's reply_mode: overrides it)",
			Var:   settings.String(&o.ReplyMode, string(triage.ReplySend), settings.OneOf(string(triage.ReplySend), string(triage.ReplyDraft), string(triage.ReplyAuto)))},
		&settings.Setting{Flag: "dry-run", Usage: "do nothing with an effect (no ticket, note, mail, draft, server flag or ledger entry); outcomes say what would have happened",
			Var: settings.Bool(&o.DryRun, false)})
}

// processSettings are the settings of triage process.
func processSettings(o *processOptions) settings.Table {
	return append(pipelineSettings(&o.pipelineOptions),
		&settings.Setting{Flag: "json", Usage: "print one JSON outcome per input, one per line", Var: settings.Bool(&o.JSON, false)},
		withEnv(outboxSetting(&o.Outbox, "outbox"), "TRIAGE_OUTBOX"),
		concurrencySetting(&o.Concurrency, "", "emails processed in parallel"),
		&settings.Setting{Flag: "verbose", Short: "v", Usage: "log each step to stderr", Var: settings.Bool(&o.Verbose, false)},
	)
}

// serverSettings are the settings of one server section (imap, smtp).
func serverSettings(section string, s *serverOptions, tls string) settings.Table {
	return settings.Table{
		{Key: section + ".addr", Usage: "host:port of the server", Var: settings.String(&s.Addr, "")},
		{Key: section + ".tls", Usage: "tls, starttls or none (none only for loopback hosts)", Var: settings.String(&s.TLS, tls, checkTLSMode(tls))},
		{Key: section + ".user", Usage: "user name", Var: settings.String(&s.User, "")},
		{Key: section + ".password", Usage: "password (TRIAGE_" + strings.ToUpper(section) + "_PASSWORD and password_file come first)", Var: settings.String(&s.Password, "")},
		{Key: section + ".password_file", Path: true, Usage: "file holding the password", Var: settings.String(&s.PasswordFile, "")},
		{Key: section + ".token", Usage: "OAuth2 access token (TRIAGE_" + strings.ToUpper(section) + "_TOKEN and token_file come first)", Var: settings.String(&s.Token, "")},
		{Key: section + ".token_file", Path: true, Usage: "file holding the OAuth2 access token", Var: settings.String(&s.TokenFile, "")},
		{Key: section + ".oauth2", Usage: "OAuth2 token source: token_url, client_id, client_secret_file, scopes, refresh_token_file, mechanism",
			Var: settings.YAML(&s.OAuth2)},
		{Key: section + ".ca_file", Path: true, Usage: "PEM file of the CA that signed the server's certificate (a private CA), trusted besides the system's",
			Var: settings.String(&s.CAFile, "")},
	}
}

// checkTLSMode accepts the TLS modes of a server section whose default is
// def; whether none is allowed depends on the host, which loadWatch checks.
func checkTLSMode(def string) settings.Check[string] {
	return func(mode string) error { return mail.CheckTLS(mode, "", def) }
}

// checkConsoleURL accepts "" or an http(s) URL with a host.
func checkConsoleURL(s string) error {
	if s == "" {
		return nil
	}
	return checkURL("", s)
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
		configSetting(&o.Config, "YAML configuration file"+configFound),
		{Flag: "check", Usage: "validate the configuration and the instructions without connecting or creating anything, then exit (0 valid, 2 not)",
			Var: settings.Bool(&o.Check, false)},
		envFileSetting(&o.EnvFile),
		{Flag: "once", Usage: "make one pass and exit (for cron)", Var: settings.Bool(&o.Once, false)},
		{Flag: "interval", Key: "interval", Usage: "polling interval when the server has no IDLE (or with --no-idle)",
			Var: settings.Duration(&o.Interval, watch.DefaultInterval, settings.NotNegative)},
		{Flag: "no-idle", Key: "idle", Negated: true, Usage: "poll every --interval even when the server offers IDLE",
			Var: settings.Bool(&o.NoIdle, false)},
		{Flag: "mailbox", Key: "imap.mailbox", Usage: "mailbox to watch", Var: settings.String(&o.Mailbox, watch.DefaultMailbox)},
		{Flag: "keyword", Key: "imap.keyword", Usage: "keyword added to handled mail (\\Seen when the server refuses keywords)",
			Var: settings.String(&o.Keyword, watch.DefaultKeyword, watch.CheckKeyword)},
		{Flag: "processed-folder", Key: "imap.processed_folder", Usage: "move replied mail to this folder (default: leave it in place)",
			Var: settings.String(&o.ProcessedFolder, "")},
		{Flag: "failed-folder", Key: "imap.failed_folder", Usage: "folder for mail a person must handle (created when missing)",
			Var: settings.String(&o.FailedFolder, watch.DefaultFailedFolder)},
		{Flag: "sent-folder", Key: "imap.sent_folder", Usage: "store every reply in this folder, and look pending replies and people's replies up there (default: the folder the server marks \\Sent; it must exist)",
			Var: settings.String(&o.SentFolder, "")},
		{Flag: "drafts-folder", Key: "imap.drafts_folder", Aliases: []string{"drafts_folder"},
			Usage: "folder that receives drafts (reply mode draft), flagged \\Draft (default: the folder the server marks \\Drafts, else Drafts, created when missing; a folder named here must exist)", Var: settings.String(&o.DraftsFolder, "")},
		{Flag: "junk-folder", Key: "imap.junk_folder",
			Usage: "folder that receives mail skipped as spam, unanswered (default: the folder the server marks \\Junk; when it marks none, spam stays in the mailbox; a folder named here must exist)",
			Var:   settings.String(&o.JunkFolder, "")},
		{Key: "imap.account", Usage: "account name in logs and the ledger (default: user@addr)", Var: settings.String(&o.Account, "")},
		ledgerSetting(&o.Ledger, defaultLedger),
		withUsage(outboxSetting(&o.Outbox, ""), "write replies as .eml files into this directory instead of SMTP"),
		{Flag: "metrics-addr", Key: "metrics_addr", Usage: "serve Prometheus /metrics and /healthz on this address (e.g. 127.0.0.1:9464)",
			Var: settings.String(&o.MetricsAddr, "", checkOptionalHostPort)},
		{Flag: "log-format", Key: "log.format", Usage: "log format: text or json", Var: settings.String(&o.LogFormat, "text")},
		{Flag: "log-level", Key: "log.level", Usage: "log level: debug (includes message bodies), info, warn, error",
			Var: settings.String(&o.LogLevel, "info")},
		{Flag: "shutdown-grace", Key: "shutdown_grace", Usage: "after SIGTERM/SIGINT, time the message in flight may still take",
			Var: settings.Duration(&o.Grace, watch.DefaultGrace, settings.NotNegative)},
		{Flag: "per-sender-limit", Key: "limits.per_sender", Usage: "replies per sender per 24h; more is left for a person (negative: no limit)",
			Var: settings.Int(&o.Limits.PerSenderLimit, replies.DefaultPerSenderLimit)},
		{Key: "limits.per_sender_window", Usage: "the window of the per-sender limit",
			Var: settings.Duration(&o.Limits.PerSenderWindow, replies.DefaultPerSenderWindow, settings.NotNegative)},
		{Flag: "global-per-hour", Key: "limits.global_per_hour", Usage: "replies per hour overall; more is left for a person (negative: no limit)",
			Var: settings.Int(&o.Limits.GlobalPerHour, watch.DefaultGlobalPerHour)},
		{Flag: "max-message-bytes", Key: "max_message_bytes", Usage: "larger messages go to a person without being read",
			Var: settings.Int64(&o.MaxMessageBytes, watch.DefaultMaxMessageBytes, settings.NotNegative)},
		{Key: "max_attempts", Usage: "attempts at one message before it goes to a person",
			Var: settings.Int(&o.MaxAttempts, watch.DefaultMaxAttempts, settings.NotNegative)},
		{Key: "max_auth_failures", Usage: "refused logins in a row before the daemon stops (exit 5)",
			Var: settings.Int(&o.MaxAuthFailures, watch.DefaultMaxAuthFailures, settings.NotNegative)},
		{Key: "inboxes", Usage: "several inboxes served by this process: a list of sections, each with name, imap, smtp, outbox, from, instructions and reply_mode over the other settings, which every inbox shares",
			Var: settings.YAML(&o.Inboxes)},
		{Key: "lease", Usage: "how long a daemon's claim on a message lasts unless renewed (renewed every third of it while the message is worked on): after a daemon dies, its messages wait this long for another daemon on the store",
			Var: settings.Duration(&o.Lease, watch.DefaultLease, settings.Positive)},
		concurrencySetting(&o.Concurrency, "concurrency", "messages of a pass handled at once (IMAP stays one connection)"),
		{Key: "smtp.timeout", Usage: "timeout of one SMTP submission", Var: settings.Duration(&o.SMTPTimeout, mail.DefaultSMTPTimeout, settings.NotNegative)},
		{Key: "max_send_failures", Usage: "replies refused by the mail server in a row before /healthz reports sending as failing",
			Var: settings.Int(&o.MaxSendFailures, trace.DefaultSendFailureLimit, settings.NotNegative)},
		{Key: "smtp.mechanism", Usage: "password mechanism: plain or login (default: plain, or login when the server offers only that)",
			Var: settings.String(&o.SMTPMechanism, "", settings.OneOf("", mail.MechPlain, mail.MechLogin))},
		{Key: "smtp.save_sent", Usage: "append each reply to the Sent folder (imap.sent_folder, or the folder the server marks \\Sent; default: false for Gmail and Microsoft 365 hosts, which file SMTP-sent mail themselves; true otherwise)",
			Var: settings.YAML(&o.SaveSent)},
	}...)
	t = append(t, autonomySettings(&o.Autonomy)...)
	t = append(t, &settings.Setting{Key: "prices", Usage: "what each model charges per 1M tokens, by model id: input, cached_input, output (triage ledger stats --cost and the console's Scenarios page turn tokens into money with them)",
		Var: settings.YAML(&o.Prices)})
	t = append(t, complaintSettings(&o.Complaints)...)
	t = append(t, serverSettings("imap", &o.IMAP, "tls")...)
	return append(t, serverSettings("smtp", &o.SMTP, "starttls")...)
}

// consoleSettings are the settings of triage console.
func consoleSettings(o *consoleOptions) settings.Table {
	return settings.Table{
		configSetting(&o.config, "the watch configuration (YAML): ledger, ticket store, smtp or outbox, autonomy"),
		envFileSetting(&o.envFile),
		withUsage(storeSetting(&o.store), "shared store: a postgres:// URL holding the ledger and the tickets (wins over the configuration's store, ledger and tickets_db)"),
		{Flag: "listen", Usage: "address to serve on (loopback unless you mean otherwise)", Var: settings.String(&o.listen, "127.0.0.1:8080")},
		{Flag: "token-file", Usage: "file holding the console token (when $TRIAGE_CONSOLE_TOKEN is unset); read again whenever it changes", Var: settings.String(&o.tokenFile, "")},
		{Flag: "users-file", Usage: "file naming the people who sign in with their own token, one \"sha256:HEX NAME\" line each; read again whenever it changes", Var: settings.String(&o.usersFile, "")},
		{Env: "TRIAGE_CONSOLE_TOKEN", Usage: "the console token (wins over --token-file)", Var: settings.String(&o.token, "")},
		{Flag: "proxy-header", Usage: "header an authenticating reverse proxy sets to the signed-in person (e.g. X-Forwarded-Email)",
			Var: settings.String(&o.proxyHeader, "")},
		{Flag: "trusted-proxy", Usage: "address or CIDR whose --proxy-header is believed (repeatable; default loopback)", Var: settings.Strings(&o.trusted)},
		{Flag: "secure-cookie", Usage: "mark the session cookie Secure (the console is reached over HTTPS)", Var: settings.Bool(&o.secureCookie, false)},
	}
}

// evalSettings are the settings of triage eval.
func evalSettings(o *evalOptions) settings.Table {
	t := settings.Table{
		instructionsSetting(&o.Instructions),
		modelSetting(&o.Model),
		offlineSetting(&o.Offline),
		{Flag: "record", Usage: "record each case's model HTTP exchanges to DIR/<scenario_id>.yaml (API keys stripped)", Var: settings.String(&o.Record, "")},
		{Flag: "replay", Usage: "replay model exchanges from DIR instead of calling a model; an unmatched request fails the case", Var: settings.String(&o.Replay, "")},
		{Flag: "parallel", Short: "j", Usage: "cases run in parallel", Var: settings.Int(&o.Parallel, 1)},
		{Flag: "repeat", Usage: "run each case N times; reports pass^N and flaky cases", Var: settings.Int(&o.Repeat, 1)},
		{Flag: "filter", Usage: "run only cases whose scenario_id or category matches (glob; comma-separated or repeated)", Var: settings.Strings(&o.Filter)},
		{Flag: "min-pass-rate", Usage: "lowest passing percentage that exits 0 (else exit 4)", Var: settings.Float(&o.MinPassRate, 99)},
		{Flag: "junit", Usage: "write a JUnit XML report to FILE (its directory is created before the run)", Var: settings.String(&o.JUnit, "")},
		{Flag: "json-out", Usage: "write the full JSON report (every case, call and outcome) to FILE (its directory is created before the run)", Var: settings.String(&o.JSONOut, "")},
		{Flag: "json", Usage: "print one JSON object per case on stdout, one per line (as process --json does); the summary goes to stderr", Var: settings.Bool(&o.JSON, false)},
		staffSetting(&o.Staff),
		{Flag: "quiet", Short: "q", Usage: "print each passing case on one line, without its calls", Var: settings.Bool(&o.Quiet, false)},
		{Flag: "verbose", Short: "v", Usage: "log each pipeline step to stderr", Var: settings.Bool(&o.Verbose, false)},
	}
	t = append(t, providerSettings(&o.modelOptions)...)
	t = append(t, judgeSettings(&o.Judge)...)
	return append(t, boundsSettings(&o.Bounds)...)
}
