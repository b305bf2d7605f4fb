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
	"github.com/spf13/pflag"

	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/console"
	"triage/internal/ledger"
	"triage/internal/model"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/settings"
)

// consoleOptions are the settings of console, declared in consoleSettings.
type consoleOptions struct {
	config, store, listen, tokenFile, proxyHeader string
	usersFile                                     string
	envFile                                       string
	token                                         string // $TRIAGE_CONSOLE_TOKEN
	trusted                                       []string
	secureCookie                                  bool
	table                                         settings.Table
}

const consoleLong = `Console serves a web page for the people who supervise triage, over the
same ledger, ticket store and mail settings as triage watch (--config):

  Queue         everything waiting for a person: drafts to review,
                Needs-Human, failed, over a limit, escalations; search
                (subject, customer, serial, ticket), counts per reason,
                filter by inbox, scenario, reason, owner and age, sort by
                waiting, complaint deadline or priority, 50 a page
  Conversation  the customer's emails, what triage did with each (scenario
                and why, every function call with arguments and result,
                blocked or not, model calls and tokens), our replies and
                drafts, the ticket and its notes; approve a draft (sent as
                is), edit and send, reject with a reason; reply to the
                customer as a person (drafts saved); resolve, dismiss and
                reopen with a reason; take over, give back; add a note;
                retry; a reply a crash left unconfirmed is looked up in
                the Sent folder as the page opens
  Scenarios     per scenario: volume, replied/drafted/failed, draft fate
                (sent as is, edited, rejected, discarded) and edit
                similarity by week; per scenario and inbox, whether it is
                ready to send on its own (autonomy.* of the configuration)
                and every switch reply mode auto made
  Activity      the ledger, newest first, searchable

Approved drafts go out through the configuration's smtp server (or outbox
directory), exactly as triage watch sends its own replies (the same
password, OAuth2 token source, mechanism and smtp.ca_file), threaded as
triage's own replies, and count as sent as is or edited in 'triage ledger
stats'. --store (or $TRIAGE_STORE) reads the ledger and the tickets from
a shared PostgreSQL store; without --config the console then only reads
and cannot send.

Every request is authenticated. --users-file names the people who sign in
with their own token ("sha256:HEX NAME" lines); the token file and the
users file are read again whenever they change (a replaced token opens
nothing and its sessions end); wrong tokens are throttled per address.
With a token (TRIAGE_CONSOLE_TOKEN, or
--token-file; at least 16 characters) a script sends
"Authorization: Bearer TOKEN" and a person signs in once in the browser
(an HttpOnly, SameSite=Strict session cookie). Behind an authenticating
reverse proxy such as oauth2-proxy, --proxy-header names the header that
carries the signed-in person (e.g. X-Forwarded-Email); it is believed only
from --trusted-proxy addresses (default loopback). Every action is refused
when it comes from another site. It listens on loopback unless --listen
says otherwise. --env-file loads KEY=value lines (the systemd
EnvironmentFile, e.g. /etc/triage/env with TRIAGE_SMTP_PASSWORD) first, as
triage watch --env-file does. See docs/console.md.`

func newConsoleCmd() *cobra.Command {
	var o consoleOptions
	cmd := &cobra.Command{
		Use:   "console --config FILE [--listen 127.0.0.1:8080]",
		Short: "Serve the review console: queue, conversations, scenarios, activity",
		Long:  consoleLong,
		Example: `  TRIAGE_CONSOLE_TOKEN=$(cat /etc/triage/console.token) triage console --config /etc/triage/triage.yaml
  triage console --env-file /etc/triage/env --config /etc/triage/triage.yaml --token-file /etc/triage/console.token
  triage console --config triage.yaml --listen 127.0.0.1:4180 --proxy-header X-Forwarded-Email`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConsole(cmd.Context(), cmd.Flags(), &o, cmd.ErrOrStderr())
		},
	}
	o.table = consoleSettings(&o)
	o.table.Register(cmd.Flags())
	return cmd
}

// consoleParts is what runConsole opens from the configuration.
type consoleParts struct {
	ledger   *ledger.Ledger
	tickets  tickets.Conversations
	sender   mail.Sender
	autonomy review.Thresholds
	prices   model.Prices // prices:, for the scenarios page
	// from and domain sign a person's reply as triage signs its own
	// (pipeline.from); limits are watch's reply limits.
	from, domain string
	limits       replies.Limits
	watch        *watchOptions // the configuration, for the Sent folder check
	oauth2       *watchSetup   // the token sources, to observe
	closers      []func() error
}

func (p *consoleParts) close() {
	for _, c := range p.closers {
		c()
	}
}

func runConsole(ctx context.Context, fs *pflag.FlagSet, o *consoleOptions, stderr io.Writer) error {
	if err := o.table.Resolve(fs, nil, nil); err != nil {
		return usageErr("console: %v", err)
	}
	// The env file may set what the flags left to the environment (the
	// token, the store, the configuration) and the secrets the
	// configuration's smtp block reads: load it, then resolve again.
	if o.envFile != "" {
		if err := loadEnvFile(o.envFile); err != nil {
			return err
		}
		if err := o.table.Resolve(fs, nil, nil); err != nil {
			return usageErr("console: %v", err)
		}
	}
	if err := o.table.Check(); err != nil {
		return usageErr("console: %v", err)
	}
	if o.config == "" && o.store == "" {
		return usageErr("console: --config FILE is required (the configuration triage watch uses), or --store URL to read a shared store without sending")
	}
	cfg := console.Config{ProxyHeader: o.proxyHeader, SecureCookie: o.secureCookie, UsersFile: o.usersFile}
	// The environment's token is fixed; the file's is read again whenever
	// the file changes (a rewritten file revokes the old token).
	if cfg.Token = strings.TrimSpace(o.token); cfg.Token == "" {
		cfg.TokenFile = o.tokenFile
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
	if parts.oauth2 != nil {
		parts.oauth2.observeOAuth2(log, nil)
	}
	cfg.Ledger, cfg.Tickets, cfg.Sender, cfg.Autonomy, cfg.Logger = parts.ledger, parts.tickets, parts.sender, parts.autonomy, log
	cfg.Prices = parts.prices
	cfg.From, cfg.Domain, cfg.Limits = parts.from, parts.domain, parts.limits
	if parts.watch != nil {
		if sent := consoleSent(parts.watch, log); sent != nil {
			cfg.Sent = sent
		}
	}
	srv, err := console.New(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return failure(fmt.Errorf("console: listen: %w", err))
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
		return failure(fmt.Errorf("console: %w", err))
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return failure(fmt.Errorf("console: shutdown: %w", err))
	}
	return nil
}

// openConsoleParts opens the ledger (which must exist), the ticket store
// and the sender of the watch configuration at path, read as triage watch
// reads it (its values alone: the flags and variables of watch do not
// count, but the secrets' variables do). storeURL, when set, is the store
// of the ledger and the tickets instead of the configuration's; with no
// configuration it is all there is (no sender).
func openConsoleParts(ctx context.Context, path, storeURL string) (*consoleParts, error) {
	wo := &watchOptions{Autonomy: review.DefaultThresholds}
	var file *settings.File
	if path != "" {
		var err error
		if wo, file, err = loadWatchConfig(path); err != nil {
			return nil, usageErr("console: %v", err)
		}
		if err := wo.table.Check(); err != nil {
			return nil, usageErr("console: %s: %v", path, err)
		}
		if err := wo.Prices.Check(); err != nil {
			return nil, usageErr("console: %s: %v", path, err)
		}
		oauth2Relative(wo, path)
	}
	if storeURL != "" {
		wo.Store = storeURL
	}
	if wo.Store == "" && !file.Has("ledger") {
		return nil, usageErr("console: %s has no ledger (nor store): the console shows the ledger triage watch writes", path)
	}
	if wo.Store == "" {
		if _, err := os.Stat(wo.Ledger); err != nil {
			return nil, usageErr("console: ledger %v (run triage watch first)", err)
		}
	}
	p := &consoleParts{autonomy: wo.Autonomy, prices: wo.Prices, limits: wo.Limits.Replies()}
	var err error
	if path != "" {
		p.watch = wo
		if p.from, _, p.domain, err = parseFrom(wo.From); err != nil {
			return nil, usageErr("console: %s: %v", path, err)
		}
	}
	if p.ledger, err = ledger.Open(ctx, ledger.Config{Path: wo.ledgerTarget()}); err != nil {
		return nil, failure(err)
	}
	p.closers = append(p.closers, p.ledger.Close)
	fail := func(err error) (*consoleParts, error) { p.close(); return nil, err }
	switch {
	case wo.TicketsURL != "":
		h, err := tickets.NewHTTP(tickets.HTTPConfig{BaseURL: wo.TicketsURL, Token: wo.TicketsToken})
		if err != nil {
			return fail(usageErr("console: pipeline.tickets_url: %v", err))
		}
		p.tickets = h
	case wo.Store != "":
		s, err := tickets.New(ctx, p.ledger.Store()) // one pool for both
		if err != nil {
			return fail(failure(err))
		}
		p.tickets = s
	case file.Has("pipeline.tickets_db"):
		if _, err := os.Stat(wo.TicketsDB); err != nil {
			return fail(usageErr("console: pipeline.tickets_db: %v", err))
		}
		s, err := tickets.OpenSQLite(wo.TicketsDB)
		if err != nil {
			return fail(failure(err))
		}
		p.tickets = s
		p.closers = append(p.closers, s.Close)
	}
	switch {
	case wo.SMTP.Addr != "":
		// The same client triage watch sends with: secrets, mechanism,
		// OAuth2, CA file.
		var probs problems
		ws := &watchSetup{o: wo}
		imapOAuth2Setup(wo, ws, &probs)
		smtpOAuth2Setup(wo, ws, &probs)
		smtp := smtpClient(wo, ws.smtpOAuth2, path, &probs)
		if err := probs.err(); err != nil {
			var ee *cmdError
			errors.As(err, &ee)
			return fail(usageErr("console: %s: %v", path, ee.err))
		}
		p.sender, p.oauth2 = smtp, ws
	case wo.Outbox != "":
		o, err := replies.NewOutbox(wo.Outbox)
		if err != nil {
			return fail(usageErr("console: outbox: %v", err))
		}
		p.sender = o
	}
	return p, nil
}
