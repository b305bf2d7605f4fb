// Package watch answers an IMAP mailbox: it finds new mail with a full UID
// search after every (re)connect (IDLE, or polling, only says when to look
// again), runs each message through the pipeline, flags or moves it, and
// keeps a ledger so that no message is answered twice or forgotten, whatever
// crashes, restarts, overlapping runs or UIDVALIDITY changes happen.
//
// One message goes through handle: fetch the header with BODY.PEEK, derive
// its key, claim it in the ledger (one daemon at a time, under a lease a
// heartbeat renews), consult the ledger (a copy of a handled message? a
// reply already recorded? over a limit?), fetch the body, run the Processor
// (whose mail sender is a *replies.LedgerSender, writing the rendered reply to the
// ledger before submitting it), record the terminal state, then flag the
// message and move it where it belongs. Several daemons may share one
// PostgreSQL store (shared.go): one polls each inbox, all of them handle
// what they claim; a daemon that does not poll claims a recorded message
// by its ledger row first and reads its header only once the claim is won.
package watch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"

	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/mailauth"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/store"
	"triage/internal/trace"
)

// Processor is the pipeline as the watcher sees it (*processor.Processor).
type Processor interface {
	Process(ctx context.Context, in processor.Input) processor.Outcome
}

var _ Processor = (*processor.Processor)(nil)

// Connection security modes for Config.TLS (checked by mail.CheckTLS).
const (
	TLSImplicit = mail.TLSImplicit // TLS from the first byte (port 993), the default
	TLSStartTLS = mail.TLSStartTLS // plain connect, then STARTTLS (port 143)
	TLSNone     = mail.TLSNone     // no TLS: allowed only for loopback hosts
)

// Defaults applied by New.
const (
	DefaultMailbox         = "INBOX"
	DefaultKeyword         = "$Triaged"
	DefaultFailedFolder    = "Needs-Human"
	DefaultInterval        = time.Minute
	DefaultIdleRefresh     = 10 * time.Minute
	DefaultWakePoll        = 2 * time.Second
	DefaultMaxMessageBytes = 25 << 20
	DefaultGlobalPerHour   = 100
	DefaultMaxAttempts     = 3
	DefaultGrace           = 30 * time.Second
	DefaultBackoffMin      = time.Second
	DefaultBackoffMax      = 5 * time.Minute
	DefaultLease           = 30 * time.Second
)

// Config configures a Watcher. Addr, Username, Password or Token or OAuth2,
// Processor and Ledger are required.
type Config struct {
	Addr      string // host:port
	TLS       string // "tls" (default), "starttls" or "none" (loopback only)
	TLSConfig *tls.Config
	// CASetting names the setting that trusts a private CA (e.g.
	// "imap.ca_file"): an untrusted certificate's error says to use it.
	CASetting string
	Username  string
	Password  string // LOGIN password
	Token     string // a fixed OAuth2 access token: AUTHENTICATE instead of LOGIN
	// OAuth2 hands out access tokens that renew themselves: every
	// (re)connect logs in with AUTHENTICATE XOAUTH2 or OAUTHBEARER and a
	// token valid for a while yet. It takes precedence over Token.
	OAuth2 *mailauth.Source
	// Account names the mailbox owner in the ledger (default: Username, with
	// "@"+Addr appended when Username has no "@").
	Account string

	Mailbox         string // default INBOX
	Keyword         string // default $Triaged; \Seen when the server refuses keywords
	ProcessedFolder string // replied mail moves here when set
	FailedFolder    string // default Needs-Human; created when missing
	// SentFolder holds the replies sent (appended there, and looked up
	// after a crash) and people's replies (see scanSent). Default: the
	// folder the server marks \Sent (RFC 6154 SPECIAL-USE), found at every
	// connect; none when it marks none. A configured name must exist: a
	// *FolderError otherwise.
	SentFolder string
	// NoSaveSent: the mail server files what SMTP sends in SentFolder itself
	// (Gmail, Microsoft 365): replies are not appended, only looked up.
	NoSaveSent bool
	// JunkFolder receives the messages skipped as spam (the receiving
	// server's verdict, guard's ReasonSpam), unanswered. Default: the folder
	// the server marks \Junk (RFC 6154 SPECIAL-USE), found at every
	// connect; when it marks none, spam stays in Mailbox, flagged like
	// other skipped mail. A configured name must exist: a *FolderError
	// otherwise.
	JunkFolder string
	// DraftsFolder receives drafts, flagged \Draft (reply mode draft).
	// Default: the folder the server marks \Drafts, else
	// DefaultDraftsFolder, created when missing. A configured name must
	// exist: a *FolderError otherwise.
	DraftsFolder string
	// DraftWindow is how long a draft waits for a person's reply in the
	// Sent folder before it counts as discarded (default 7 days). Draft
	// outcomes are tracked only when there is a Sent folder.
	DraftWindow time.Duration
	// OnPersonReply, when set, is called for every reply a person wrote in
	// a thread triage handled, found in the Sent folder (see scanSent). It must
	// be idempotent: after a crash the same reply may be reported again.
	OnPersonReply func(ctx context.Context, r PersonReply) error
	// DryRun: process every new message and log its outcome, but change
	// nothing: no ledger entry, no flag or move, no append (the mailbox is
	// opened read-only); Ledger may be nil. The pipeline must be in dry run
	// too.
	DryRun bool

	MaxMessageBytes int64         // larger messages go to a person unread (default 25 MiB)
	Interval        time.Duration // polling interval without IDLE (default 1m)
	IdleRefresh     time.Duration // full pass while idling at least this often (default 10m)
	// WakePoll is how often a waiting watcher reads the store's wake
	// counter (ledger.Wakes; PostgreSQL also notifies at once) for a
	// person's request from the console (default 2s).
	WakePoll time.Duration
	NoIdle   bool // poll even when the server offers IDLE

	// Limits cap the replies; the watcher leaves mail whose reply would
	// pass them for a person before the pipeline runs. Its
	// replies.LedgerSender must enforce the same (Limits.Replies): that check, made
	// when the reply is written, is the exact one.
	Limits
	MaxAttempts int // processing attempts per message before a person takes over (default 3)
	// Concurrency is how many messages of a pass go through the pipeline at
	// once (default 4). IMAP commands stay one at a time on the one
	// connection; copies of one message (same ledger key) never overlap.
	Concurrency int
	Grace       time.Duration // after a stop request, time the messages in flight may still take (default 30s)
	// MaxAuthFailures is how many logins the server refuses in a row before
	// Run gives up with an *AuthError (default 3); network errors are
	// retried for ever, with backoff.
	MaxAuthFailures int
	BackoffMin      time.Duration // reconnect backoff (default 1s, doubling, with jitter)
	BackoffMax      time.Duration // default 5m

	// Owner names this daemon in the claims it takes on messages (default:
	// host name, process id and a random suffix); every daemon sharing a
	// store has its own.
	Owner string
	// Lease is how long a claim on a message lasts unless renewed (default
	// 30s); the watcher renews it every third of it while the message is
	// worked on. After a daemon dies, its messages wait this long for
	// another daemon.
	Lease time.Duration

	// Complaints configures the complaint clock (complaints.go).
	Complaints Complaints

	Processor Processor
	Ledger    *ledger.Ledger
	Metrics   *trace.Metrics // optional
	Logger    *slog.Logger
	Now       func() time.Time
}

// Limits cap the replies of a watcher: zero fields take the defaults, a
// negative count is no limit.
type Limits struct {
	// PerSenderLimit caps the replies per PerSenderWindow that count
	// against one address (default replies.DefaultPerSenderLimit). Every reply counts against the From
	// of the message it answers and against the address it goes to, and the
	// limit holds on each.
	PerSenderLimit  int
	PerSenderWindow time.Duration // default replies.DefaultPerSenderWindow
	GlobalPerHour   int           // replies per hour overall (default 100)
}

// Replies is l as the reply memory applies it (replies.LedgerSender,
// replies.Store.Exceeded), the defaults filled in.
func (l Limits) Replies() replies.Limits {
	if l.PerSenderLimit == 0 {
		l.PerSenderLimit = replies.DefaultPerSenderLimit
	}
	if l.PerSenderWindow <= 0 {
		l.PerSenderWindow = replies.DefaultPerSenderWindow
	}
	if l.GlobalPerHour == 0 {
		l.GlobalPerHour = DefaultGlobalPerHour
	}
	return replies.Limits{PerAddress: max(l.PerSenderLimit, 0), Window: l.PerSenderWindow, PerHour: max(l.GlobalPerHour, 0)}
}

// The reply memory is the pipeline's reply history.
var _ processor.History = (*replies.LedgerSender)(nil)

// Watcher watches one mailbox.
type Watcher struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}
	// asked is signalled when a person asks for a pass (ledger.Wake: a
	// retry, a rejected draft, a person's reply to file).
	asked chan struct{}

	mu      sync.Mutex // guards st.ByState (workers finish messages concurrently)
	st      Stats
	dryDone map[[2]uint32]bool // dry run (sequential): (UIDVALIDITY, UID) already shown

	uidValidity uint32    // the mailbox UIDVALIDITY of the last pass (guarded by mu)
	tokenExpiry time.Time // expiry of the access token of the last login (guarded by mu)
	// draftStatsAt is when the draft figures last went to the metrics
	// (Run's goroutine only).
	draftStatsAt time.Time

	// The Sent and Drafts folders of this connection (findFolders, at
	// every connect, before any worker starts): sent is "" without one;
	// draftsFallback says drafts is DefaultDraftsFolder, neither configured
	// nor marked \Drafts, and may be created.
	sent, drafts   string
	junk           string // the spam folder of this session ("" none)
	draftsFallback bool
	foldersKnown   bool

	// role is held by the one watcher of the inbox that polls it, among
	// daemons sharing a PostgreSQL store (nil: a SQLite store, which
	// serves one process: this watcher always polls).
	role    *store.SessionLock
	polling bool // the last session polled (Run's goroutine only)

	// review is the draft review on the ledger's store (nil without a
	// ledger).
	review *review.Store

	// claims are the messages this watcher works on, whose claims it
	// renews (shared.go).
	claims claims
}

// Stats counts what a watcher did, by terminal state.
type Stats struct {
	Passes int `json:"passes"`
	// ByState counts the messages that reached each terminal state.
	ByState    map[ledger.State]int `json:"final"`
	Reconnects int                  `json:"reconnects"`
	// SendRetries counts messages whose reply the mail server refused for
	// now, left for a later pass (not terminal).
	SendRetries int `json:"send_retries"`
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Watcher, error) {
	if cfg.Addr == "" {
		return nil, errors.New("watch: Addr is required")
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("watch: Addr %q: %w", cfg.Addr, err)
	}
	if cfg.Username == "" || (cfg.Password == "" && cfg.Token == "" && cfg.OAuth2 == nil) {
		return nil, errors.New("watch: Username and a Password, Token or OAuth2 are required")
	}
	if cfg.OAuth2 == nil && cfg.Token != "" {
		cfg.OAuth2 = mailauth.Static(cfg.Token, "")
	}
	if cfg.Processor == nil || cfg.Ledger == nil && !cfg.DryRun {
		return nil, errors.New("watch: Processor and Ledger are required")
	}
	if err := mail.CheckTLS(cfg.TLS, host, TLSImplicit); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if cfg.TLS == "" {
		cfg.TLS = TLSImplicit
	}
	if cfg.Account == "" {
		cfg.Account = AccountOf(cfg.Username, cfg.Addr)
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	defDur := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	def(&cfg.Mailbox, DefaultMailbox)
	def(&cfg.Keyword, DefaultKeyword)
	def(&cfg.FailedFolder, DefaultFailedFolder)
	defDur(&cfg.DraftWindow, DefaultDraftWindow)
	defDur(&cfg.Interval, DefaultInterval)
	defDur(&cfg.IdleRefresh, DefaultIdleRefresh)
	defDur(&cfg.WakePoll, DefaultWakePoll)
	defDur(&cfg.Grace, DefaultGrace)
	defDur(&cfg.BackoffMin, DefaultBackoffMin)
	defDur(&cfg.BackoffMax, DefaultBackoffMax)
	defDur(&cfg.Lease, DefaultLease)
	defDur(&cfg.Complaints.AnswerPeriod, ledger.DefaultAnswerPeriod)
	if cfg.Complaints.NotifyBefore == 0 {
		cfg.Complaints.NotifyBefore = DefaultNotifyBefore
	}
	if cfg.Owner == "" {
		cfg.Owner = DefaultOwner()
	}
	defInt(&cfg.MaxAttempts, DefaultMaxAttempts)
	defInt(&cfg.MaxAuthFailures, DefaultMaxAuthFailures)
	if cfg.Concurrency < 0 {
		return nil, fmt.Errorf("watch: Concurrency %d: want at least 1", cfg.Concurrency)
	}
	defInt(&cfg.Concurrency, processor.DefaultConcurrency)
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if err := CheckKeyword(cfg.Keyword); err != nil {
		return nil, fmt.Errorf("watch: Keyword %w", err)
	}
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = &tls.Config{}
	} else {
		cfg.TLSConfig = cfg.TLSConfig.Clone()
	}
	if cfg.TLSConfig.ServerName == "" {
		cfg.TLSConfig.ServerName = host
	}
	if cfg.Logger == nil {
		cfg.Logger = discard()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	w := &Watcher{cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1), asked: make(chan struct{}, 1), st: Stats{ByState: map[ledger.State]int{}}}
	if cfg.Ledger != nil {
		w.review = review.Of(cfg.Ledger)
	}
	if !cfg.DryRun && cfg.Ledger.Shared() {
		w.role = cfg.Ledger.PollLock(cfg.Account, cfg.Mailbox)
	}
	return w, nil
}

// AccountOf is the ledger account of a mailbox when none is configured:
// the login name, with "@"+addr appended when it has no "@".
func AccountOf(username, addr string) string {
	if strings.Contains(username, "@") {
		return username
	}
	return username + "@" + addr
}

// Account is the ledger account name in use.
func (w *Watcher) Account() string { return w.cfg.Account }

// Stats returns what the watcher did so far (not safe to call while Run or
// RunOnce is running).
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.ByState = maps.Clone(w.st.ByState)
	return st
}

// RunOnce connects, resolves replies left pending by a crash, processes every
// message not yet handled, and returns. When ctx is cancelled it stops taking
// new mail; the message in flight gets Config.Grace to finish.
func (w *Watcher) RunOnce(ctx context.Context) error {
	hard, cancel := graceContext(ctx, w.cfg.Grace)
	defer cancel()
	defer w.releaseRole()
	return w.session(ctx, hard, true)
}

// Run watches until ctx is cancelled: a full pass after every (re)connect,
// then IDLE (or polling every Interval) and a pass whenever the mailbox
// changes. Connection failures reconnect with capped exponential backoff and
// jitter. It returns nil after a stop request.
func (w *Watcher) Run(ctx context.Context) error {
	hard, cancel := graceContext(ctx, w.cfg.Grace)
	defer cancel()
	defer w.releaseRole()
	backoff := w.cfg.BackoffMin
	refused := 0 // logins refused in a row
	for {
		passes := w.st.Passes
		err := w.session(ctx, hard, false)
		if ctx.Err() != nil {
			return nil
		}
		if w.st.Passes > passes {
			backoff = w.cfg.BackoffMin // the connection worked for a while
		}
		var ae *AuthError
		var fe *FolderError
		isAuth := errors.As(err, &ae)
		// Microsoft 365 ends a session when its token expires: the
		// reconnect logs in with a new one. That is no failure: /healthz
		// stays healthy and no imap error is counted.
		exp := w.lastTokenExpiry()
		expired := !isAuth && !exp.IsZero() && !w.cfg.Now().Before(exp)
		if !expired {
			w.cfg.Metrics.SetHealthy(false)
			w.cfg.Metrics.Error("imap")
		}
		if errors.As(err, &fe) {
			return fe // a configuration error: a reconnect cannot fix it
		}
		if isAuth {
			refused++
			ae.Attempts = refused
			if refused >= w.cfg.MaxAuthFailures {
				w.log.Error("imap login refused; giving up", "err", ae.Err.Error(), "attempts", refused)
				return ae
			}
		} else {
			refused = 0
		}
		// Full jitter on the upper half: [backoff/2, backoff).
		d := backoff/2 + rand.N(backoff/2+1)
		if ae != nil {
			w.log.Error("imap login refused; trying again", "err", ae.Err.Error(), "attempt", refused, "of", w.cfg.MaxAuthFailures, "in", d.Round(time.Millisecond).String())
		} else if expired {
			w.log.Info("imap session ended after its access token expired; reconnecting with a new token", "err", errString(err), "in", d.Round(time.Millisecond).String())
		} else {
			w.log.Warn("imap session ended; reconnecting", "err", errString(err), "in", d.Round(time.Millisecond).String())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(d):
		}
		w.st.Reconnects++
		backoff = min(2*backoff, w.cfg.BackoffMax)
	}
}

func isNo(err error) bool {
	var ie *imap.Error
	return errors.As(err, &ie) && ie.Type == imap.StatusResponseTypeNo
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// errString renders an error for a log attribute ("" for nil).
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
