// The watch configuration: its options, the file it is read from, and its
// validation into a watchSetup before anything is created or connected.

package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/instructions"
	"triage/internal/mailauth"
	"triage/internal/model"
	"triage/internal/review"
	"triage/internal/settings"
	"triage/internal/watch"
)

// serverOptions are one server's settings (the imap and smtp sections),
// declared in serverSettings.
type serverOptions struct {
	Addr, TLS, User        string
	Password, PasswordFile string
	Token, TokenFile       string
	// OAuth2: access tokens that renew themselves (see mailauth.Config);
	// in smtp, "oauth2: imap" shares imap's.
	OAuth2 *mailauth.Setting
	// CAFile is a PEM file of the CA that signed the server's certificate
	// (a private CA), trusted besides the system's.
	CAFile string
}

// saveSent is smtp.save_sent, or its default for the SMTP host: Gmail and
// Microsoft 365 file what SMTP sends in Sent themselves, so a copy of ours
// would be the second one.
func (o *watchOptions) saveSent() bool {
	if o.SaveSent != nil {
		return *o.SaveSent
	}
	host, _, err := net.SplitHostPort(o.SMTP.Addr)
	if err != nil {
		host = o.SMTP.Addr
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case host == "smtp.gmail.com", host == "smtp.office365.com", strings.HasSuffix(host, ".outlook.com"):
		return false
	}
	return true
}

// watchOptions are the settings of watch, declared in watchSettings.
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
	JunkFolder      string
	Account         string
	Ledger          string
	Outbox          string
	MetricsAddr     string
	LogFormat       string
	LogLevel        string
	Grace           time.Duration
	Limits          watch.Limits
	MaxMessageBytes int64
	MaxAttempts     int
	MaxAuthFailures int
	MaxSendFailures int
	Lease           time.Duration
	IMAP, SMTP      serverOptions
	SMTPTimeout     time.Duration
	// SMTPMechanism is smtp.mechanism: plain or login ("" : plain, or
	// login when the server offers only that).
	SMTPMechanism string
	// SaveSent is smtp.save_sent (nil: the host's default, see saveSent).
	SaveSent *bool
	// Inboxes is inboxes: (several inboxes in one process; see
	// inboxes.go); Name an inbox's name, label how problems name it ("":
	// the configuration's only inbox).
	Inboxes []inboxEntry
	Name    string
	label   string
	// Autonomy is the bar of reply mode auto (autonomy.*).
	Autonomy review.Thresholds
	// Complaints is the complaint clock (complaints.*).
	Complaints complaintOptions
	// Prices are what the models charge (prices:), for the cost report
	// of ledger stats --cost and the console.
	Prices model.Prices
	table  settings.Table
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

// readWatchFile reads the watch configuration file at path against the
// watch settings.
func readWatchFile(path string, t settings.Table) (*settings.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	f, err := settings.ParseFile(path, data, t)
	if err != nil {
		return nil, usageErr("%s: %s", path, strings.ReplaceAll(err.Error(), "\n", "\n"+path+": "))
	}
	return f, nil
}

// loadWatchFile is the watch configuration of the file at path alone: no
// flag and no environment variable counts.
func loadWatchFile(path string) (*watchOptions, error) {
	o, _, err := loadWatchConfig(path)
	return o, err
}

// loadWatchConfig is loadWatchFile with the file read, which says which
// keys it sets.
func loadWatchConfig(path string) (*watchOptions, *settings.File, error) {
	cmd, o := watchCommand()
	f, err := readWatchFile(path, o.table)
	if err != nil {
		return nil, nil, err
	}
	if err := o.table.Resolve(cmd.Flags(), f, func(string) string { return "" }); err != nil {
		return nil, nil, usageErr("%v", err)
	}
	o.Complaints.AnswerDaysSet = answerDaysGiven(o.table)
	return o, f, nil
}

// watchSetup is a validated watch configuration, or one inbox of it:
// nothing has been created or connected yet.
type watchSetup struct {
	o                   *watchOptions // the resolved settings (of the inbox)
	found               string        // how the configuration was found
	imapPass, imapToken string
	imapOAuth2          *mailauth.Source // nil without imap.oauth2
	smtpOAuth2          *mailauth.Source // imapOAuth2 itself with "oauth2: imap"
	smtp                *mail.SMTP
	imapTLS             *tls.Config    // imap.ca_file's pool, nil without it
	parts               *pipelineParts // what checkPipeline loaded, for newPipeline
	// inboxes are the configuration's inboxes (loadWatch's result): one,
	// or one per entry of inboxes:, each a watchSetup of its own.
	inboxes []*watchSetup
}

func (ws *watchSetup) foundText() string { return foundText(ws.found) }

// foundText says how findConfig found a configuration.
func foundText(how string) string {
	switch how {
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
	// The flags and the environment first: they name the env file and the
	// configuration.
	if err := o.table.Resolve(fs, nil, nil); err != nil {
		return nil, usageError(err)
	}
	if err := loadEnvFile(o.EnvFile); err != nil {
		return nil, err
	}
	path, how := findConfig(fs, o.Config)
	if path == "" {
		return nil, usageErr("watch: no configuration: give --config FILE (or set $TRIAGE_CONFIG, or install %s); start from deploy/triage.example.yaml", defaultConfigPath)
	}
	file, err := readWatchFile(path, o.table)
	if err != nil {
		return nil, err
	}
	var p problems
	p.addErr(o.table.Resolve(fs, file, nil))
	o.Complaints.AnswerDaysSet = answerDaysGiven(o.table)
	o.Config = path
	p.addErr(o.table.Check())
	p.addErr(o.Prices.Check())
	if _, err := newLogger(io.Discard, o.LogFormat, o.LogLevel); err != nil {
		p.addErr(err) // the log settings are checked where they are used
	}
	ws := &watchSetup{found: how, o: o}

	// the ledger, shared by every inbox
	if o.Ledger == "" {
		p.add("ledger: missing")
	} else if err := checkParentDir("ledger", o.Ledger); err != nil {
		p.addErr(err)
	}

	// each inbox: its servers, secrets and pipeline
	inboxes := inboxOptions(path, o, &p)
	checkInboxesDistinct(inboxes, &p)
	seen := map[string]bool{}
	for _, io := range inboxes {
		// A problem of the shared settings is found in every inbox:
		// reported once.
		var q problems
		is := checkInbox(path, io, &q)
		for _, e := range q.errs {
			msg := strings.TrimPrefix(e.Error(), io.label+": ")
			if !seen[msg] {
				seen[msg] = true
				p.errs = append(p.errs, e)
			}
		}
		ws.inboxes = append(ws.inboxes, is)
	}
	// the model credentials
	checkCredentials(o.pipelineOptions, path, &p)
	if err := p.err(); err != nil {
		var ee *cmdError
		errors.As(err, &ee)
		return nil, usageError(fmt.Errorf("watch: %s: invalid configuration:\n  %s", path, strings.ReplaceAll(ee.err.Error(), "\n", "\n  ")))
	}
	return ws, nil
}

// imapSetup validates the imap section of the configuration at path and
// fills ws with what logging in needs: the password or token (from the
// environment first, then the *_file settings), the OAuth2 source and the
// TLS configuration of imap.ca_file. The files an oauth2 block names are
// made relative to the configuration, as every *_file setting is. Nothing
// is contacted. watch and replay (reading the inbox) share it.
func imapSetup(o *watchOptions, path string, ws *watchSetup, p *problems) {
	oauth2Relative(o, path)
	var host string
	var err error
	switch {
	case o.IMAP.Addr == "":
		p.add("imap.addr: missing (host:port of the IMAP server)")
	default:
		if host, err = checkHostPort("imap.addr", o.IMAP.Addr); err != nil {
			p.addErr(err)
		}
	}
	checkTLS("imap.tls", o.IMAP.TLS, host, mail.TLSImplicit, p)
	if o.IMAP.User == "" {
		p.add("imap.user: missing")
	}
	imapOAuth2Setup(o, ws, p)
	ws.imapTLS, err = caConfig("imap.ca_file", o.IMAP.CAFile)
	p.addErr(err)
	perr, terr := error(nil), error(nil)
	if ws.imapPass, perr = o.secretOf("TRIAGE_IMAP_PASSWORD", o.IMAP.PasswordFile, o.IMAP.Password); perr != nil {
		p.add("imap.password_file: %v", errors.Unwrap(perr))
	}
	if ws.imapToken, terr = o.secretOf("TRIAGE_IMAP_TOKEN", o.IMAP.TokenFile, o.IMAP.Token); terr != nil {
		p.add("imap.token_file: %v", errors.Unwrap(terr))
	}
	if perr == nil && terr == nil && ws.imapPass == "" && ws.imapToken == "" && o.IMAP.OAuth2 == nil {
		p.add("no IMAP password or token: set TRIAGE_IMAP_PASSWORD (or TRIAGE_IMAP_TOKEN) in the environment (e.g. with --env-file FILE), or imap.password_file in %s", path)
	}
}

// checkAutoCanSend refuses a configuration where reply mode auto (the
// run's or a scenario's) could qualify a scenario to send with no way to
// send: drafting needs no SMTP, but auto does.
func checkAutoCanSend(o *watchOptions, parts *pipelineParts, path string, p *problems) {
	if o.SMTP.Addr != "" || o.Outbox != "" || o.DryRun || parts.Scenarios == nil || o.ReplyMode == string(triage.ReplyAuto) {
		return // the run's auto without smtp is reported as no way to send replies
	}
	for _, sc := range parts.Scenarios.Scenarios {
		if instructions.ReplyModeFor(sc, triage.ReplyMode(o.ReplyMode)) == triage.ReplyAuto {
			p.add("scenario %s: reply_mode auto sends once people's reviews qualify it, and nothing can send: set smtp.addr in %s (or outbox: DIR)", sc.Name, path)
		}
	}
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
