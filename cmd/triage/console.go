package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/console"
	"triage/internal/ledger"
	"triage/internal/settings"
)

type consoleOptions struct {
	config, listen, tokenFile, proxyHeader string
	store                                  string // --store / $TRIAGE_STORE: overrides the configuration's store
	table                                  settings.Table
	trusted                                []string
	secureCookie                           bool
}

const consoleLong = `Console serves a web page for the people who supervise triage, over the
same ledger, ticket store and mail settings as triage watch (--config; --store
or TRIAGE_STORE puts the ledger and tickets on that PostgreSQL store):

  Queue         everything waiting for a person: drafts to review,
                Needs-Human, failed, over a limit, escalations; filter by
                inbox, scenario, reason and age
  Conversation  the customer's emails, what triage did with each (scenario
                and why, every function call with arguments and result,
                blocked or not, model calls and tokens), our replies and
                drafts, the ticket and its notes; approve a draft (sent as
                is), edit and send, reject; take over, give back; add a note
  Scenarios     per scenario: volume, replied/drafted/failed, draft fate
                (sent as is, edited, discarded) and edit similarity by week
  Activity      the ledger, newest first, searchable

Approved drafts go out through the configuration's smtp server (or outbox
directory), threaded as triage's own replies, and count as sent as is or
edited in 'triage ledger stats'.

Every request is authenticated. With a token (TRIAGE_CONSOLE_TOKEN, or
--token-file; at least 16 characters) a script sends
"Authorization: Bearer TOKEN" and a person signs in once in the browser
(an HttpOnly, SameSite=Strict session cookie). Behind an authenticating
reverse proxy such as oauth2-proxy, --proxy-header names the header that
carries the signed-in person (e.g. X-Forwarded-Email); it is believed only
from --trusted-proxy addresses (default loopback). Every action is refused
when it comes from another site. It listens on loopback unless --listen
says otherwise. See docs/console.md.`

func newConsoleCmd() *cobra.Command {
	var o consoleOptions
	cmd := &cobra.Command{
		Use:   "console --config FILE [--store URL] [--listen 127.0.0.1:8080]",
		Short: "Serve the review console: queue, conversations, scenarios, activity",
		Long:  consoleLong,
		Example: `  TRIAGE_CONSOLE_TOKEN=$(cat /etc/triage/console.token) triage console --config /etc/triage/triage.yaml
  triage console --config triage.yaml --listen 127.0.0.1:4180 --proxy-header X-Forwarded-Email`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if err := o.table.Check(); err != nil {
				return usageErr("console: %v", err)
			}
			return runConsole(cmd.Context(), &o, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	o.table = settings.Table{storeSetting(&o.store)}
	o.table.Register(f)
	f.StringVar(&o.config, "config", os.Getenv("TRIAGE_CONFIG"), "the watch configuration (YAML) [$TRIAGE_CONFIG]")
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to serve on (loopback unless you mean otherwise)")
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the console token (else $TRIAGE_CONSOLE_TOKEN)")
	f.StringVar(&o.proxyHeader, "proxy-header", "", "header an authenticating reverse proxy sets to the signed-in person (e.g. X-Forwarded-Email)")
	f.StringSliceVar(&o.trusted, "trusted-proxy", nil, "address or CIDR whose --proxy-header is believed (repeatable; default loopback)")
	f.BoolVar(&o.secureCookie, "secure-cookie", false, "mark the session cookie Secure (the console is reached over HTTPS)")
	return cmd
}

// consoleParts is what runConsole opens from the configuration.
type consoleParts struct {
	ledger  *ledger.Ledger
	tickets tickets.Conversations
	sender  mail.Sender
	closers []func() error
}

func (p *consoleParts) close() {
	for _, c := range p.closers {
		c()
	}
}

func runConsole(ctx context.Context, o *consoleOptions, stderr io.Writer) error {
	if o.config == "" {
		return usageErr("console: --config FILE is required (the configuration triage watch uses)")
	}
	cfg := console.Config{ProxyHeader: o.proxyHeader, SecureCookie: o.secureCookie}
	var err error
	if cfg.Token, err = consoleToken(o.tokenFile); err != nil {
		return err
	}
	for _, s := range o.trusted {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return usageErr("console: --trusted-proxy %q: want an address or CIDR", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		cfg.TrustedProxies = append(cfg.TrustedProxies, p)
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return usageErr("console: --listen %q: want host:port", o.listen)
	}
	parts, err := openConsoleParts(ctx, o.config, o.store)
	if err != nil {
		return err
	}
	defer parts.close()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg.Ledger, cfg.Tickets, cfg.Sender, cfg.Logger = parts.ledger, parts.tickets, parts.sender, log
	srv, err := console.New(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("console: listen: %w", err)}
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !mail.IsLoopback(host) {
		log.Warn("console listens beyond loopback: put it behind HTTPS", "addr", ln.Addr().String())
	}
	log.Info("console serving", "url", "http://"+ln.Addr().String()+"/", "sending", parts.sender != nil, "tickets", parts.tickets != nil)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return &exitError{code: exitFailed, err: fmt.Errorf("console: %w", err)}
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("console: shutdown: %w", err)}
	}
	return nil
}

// consoleToken reads the token: $TRIAGE_CONSOLE_TOKEN, else the file.
func consoleToken(file string) (string, error) {
	if t := strings.TrimSpace(os.Getenv("TRIAGE_CONSOLE_TOKEN")); t != "" {
		return t, nil
	}
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usageErr("console: --token-file: %v", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// openConsoleParts opens the ledger (which must exist), the ticket store
// and the sender of the watch configuration at path, read as triage watch
// reads it (its values alone: the flags and variables of watch do not
// count); storeURL, when set (--store, $TRIAGE_STORE), is the store instead
// of the configuration's.
func openConsoleParts(ctx context.Context, path, storeURL string) (*consoleParts, error) {
	wo, file, err := loadWatchConfig(path)
	if err != nil {
		return nil, usageErr("console: %v", err)
	}
	if storeURL != "" {
		wo.Store = storeURL
	}
	if err := wo.table.Check(); err != nil {
		return nil, usageErr("console: %s: %v", path, err)
	}
	if wo.Store == "" && !file.Has("ledger") {
		return nil, usageErr("console: %s has no ledger (nor store): the console shows the ledger triage watch writes", path)
	}
	if wo.Store == "" {
		if _, err := os.Stat(wo.Ledger); err != nil {
			return nil, usageErr("console: ledger %v (run triage watch first)", err)
		}
	}
	p := &consoleParts{}
	if p.ledger, err = ledger.Open(ctx, ledger.Config{Path: wo.ledgerTarget()}); err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	p.closers = append(p.closers, p.ledger.Close)
	fail := func(err error) (*consoleParts, error) { p.close(); return nil, err }
	switch {
	case wo.TicketsURL != "":
		h, err := tickets.NewHTTP(tickets.HTTPConfig{BaseURL: wo.TicketsURL, Token: os.Getenv("TRIAGE_TICKETS_TOKEN")})
		if err != nil {
			return fail(usageErr("console: pipeline.tickets_url: %v", err))
		}
		p.tickets = h
	case wo.Store != "":
		s, err := tickets.Open(ctx, wo.Store)
		if err != nil {
			return fail(&exitError{code: exitFailed, err: err})
		}
		p.tickets = s
		p.closers = append(p.closers, s.Close)
	case file.Has("pipeline.tickets_db"):
		if _, err := os.Stat(wo.TicketsDB); err != nil {
			return fail(usageErr("console: pipeline.tickets_db: %v", err))
		}
		s, err := tickets.OpenSQLite(wo.TicketsDB)
		if err != nil {
			return fail(&exitError{code: exitFailed, err: err})
		}
		p.tickets = s
		p.closers = append(p.closers, s.Close)
	}
	switch {
	case wo.SMTP.Addr != "":
		pass, err := consoleSecret("TRIAGE_SMTP_PASSWORD", wo.SMTP.PasswordFile, wo.SMTP.Password)
		if err != nil {
			return fail(err)
		}
		token, err := consoleSecret("TRIAGE_SMTP_TOKEN", wo.SMTP.TokenFile, wo.SMTP.Token)
		if err != nil {
			return fail(err)
		}
		s, err := mail.NewSMTP(mail.SMTPConfig{Addr: wo.SMTP.Addr, TLS: wo.SMTP.TLS, Username: wo.SMTP.User, Password: pass, Token: token, Timeout: wo.SMTPTimeout})
		if err != nil {
			return fail(usageErr("console: smtp: %v", err))
		}
		p.sender = s
	case wo.Outbox != "":
		o, err := mail.NewOutbox(wo.Outbox)
		if err != nil {
			return fail(usageErr("console: outbox: %v", err))
		}
		p.sender = o
	}
	return p, nil
}

// consoleSecret is the environment variable, else the file, else the
// literal value of the configuration.
func consoleSecret(env, file, literal string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", usageErr("console: secret file: %v", errors.Unwrap(err))
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return literal, nil
}
