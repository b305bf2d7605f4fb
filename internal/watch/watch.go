// Package watch answers an IMAP mailbox: it finds new mail with a full UID
// search after every (re)connect (IDLE, or polling, only says when to look
// again), runs each message through the pipeline, flags or moves it, and
// keeps a ledger so that no message is answered twice or forgotten, whatever
// crashes, restarts, overlapping runs or UIDVALIDITY changes happen.
//
// One message goes through handle: fetch the header with BODY.PEEK, derive
// its key, consult the ledger (already final? a copy of a handled message? a
// reply already recorded? over a limit?), mark it processing, fetch the body,
// run the Processor (whose mail sender is a *Sender, writing the rendered
// reply to the ledger before submitting it), record the final state, then
// flag the message and move it where it belongs.
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
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/logattr"
	"triage/internal/mailauth"
	"triage/internal/message"
	"triage/internal/metrics"
	"triage/internal/processor"
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
	DefaultMaxMessageBytes = 25 << 20
	DefaultPerSenderLimit  = 5
	DefaultPerSenderWindow = 24 * time.Hour
	DefaultGlobalPerHour   = 100
	DefaultMaxAttempts     = 3
	DefaultConcurrency     = 4
	DefaultGrace           = 30 * time.Second
	DefaultBackoffMin      = time.Second
	DefaultBackoffMax      = 5 * time.Minute
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
	SentFolder      string // replies are appended here, and looked up after a crash, when set
	// NoSaveSent: the mail server files what SMTP sends in SentFolder itself
	// (Gmail, Microsoft 365): replies are not appended, only looked up.
	NoSaveSent bool
	// DraftsFolder receives drafts, flagged \Draft (reply mode draft;
	// default Drafts, created when missing).
	DraftsFolder string
	// DraftWindow is how long a draft waits for a person's reply in the
	// Sent folder before it counts as discarded (default 7 days). Draft
	// outcomes are tracked only when SentFolder is set.
	DraftWindow time.Duration
	// OnPersonReply, when set, is called for every reply a person wrote in
	// a thread triage handled, found in SentFolder (see scanSent). It must
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
	NoIdle          bool          // poll even when the server offers IDLE

	// PerSenderLimit caps the replies per window that count against one
	// address (default 5; negative: no limit). Every reply counts against
	// the From of the message it answers and against the address it goes
	// to, and the limit holds on each.
	PerSenderLimit  int
	PerSenderWindow time.Duration // default 24h
	GlobalPerHour   int           // replies per hour overall (default 100; negative: no limit)
	MaxAttempts     int           // processing attempts per message before a person takes over (default 3)
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

	Processor Processor
	Ledger    *ledger.Ledger
	Metrics   *metrics.Metrics // optional
	Logger    *slog.Logger
	Now       func() time.Time
}

// Watcher watches one mailbox.
type Watcher struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	mu      sync.Mutex // guards st.Final (workers finish messages concurrently)
	st      Stats
	dryDone map[[2]uint32]bool // dry run (sequential): (UIDVALIDITY, UID) already shown

	uidValidity uint32    // the mailbox UIDVALIDITY of the last pass (guarded by mu)
	tokenExpiry time.Time // expiry of the access token of the last login (Run's goroutine only)
}

// Stats counts what a watcher did, by final state.
type Stats struct {
	Passes     int            `json:"passes"`
	Final      map[string]int `json:"final"` // state -> messages that reached it
	Reconnects int            `json:"reconnects"`
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
		cfg.Account = cfg.Username
		if !strings.Contains(cfg.Username, "@") {
			cfg.Account += "@" + cfg.Addr
		}
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
	def(&cfg.DraftsFolder, DefaultDraftsFolder)
	defDur(&cfg.DraftWindow, DefaultDraftWindow)
	defDur(&cfg.Interval, DefaultInterval)
	defDur(&cfg.IdleRefresh, DefaultIdleRefresh)
	defDur(&cfg.PerSenderWindow, DefaultPerSenderWindow)
	defDur(&cfg.Grace, DefaultGrace)
	defDur(&cfg.BackoffMin, DefaultBackoffMin)
	defDur(&cfg.BackoffMax, DefaultBackoffMax)
	defInt(&cfg.PerSenderLimit, DefaultPerSenderLimit)
	defInt(&cfg.GlobalPerHour, DefaultGlobalPerHour)
	defInt(&cfg.MaxAttempts, DefaultMaxAttempts)
	defInt(&cfg.MaxAuthFailures, DefaultMaxAuthFailures)
	if cfg.Concurrency < 0 {
		return nil, fmt.Errorf("watch: Concurrency %d: want at least 1", cfg.Concurrency)
	}
	defInt(&cfg.Concurrency, DefaultConcurrency)
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
	return &Watcher{cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1), st: Stats{Final: map[string]int{}}}, nil
}

// Account is the ledger account name in use.
func (w *Watcher) Account() string { return w.cfg.Account }

// Stats returns what the watcher did so far (not safe to call while Run or
// RunOnce is running).
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.Final = maps.Clone(w.st.Final)
	return st
}

// RunOnce connects, resolves replies left pending by a crash, processes every
// message not yet handled, and returns. When ctx is cancelled it stops taking
// new mail; the message in flight gets Config.Grace to finish.
func (w *Watcher) RunOnce(ctx context.Context) error {
	hard, cancel := graceContext(ctx, w.cfg.Grace)
	defer cancel()
	return w.session(ctx, hard, true)
}

// Run watches until ctx is cancelled: a full pass after every (re)connect,
// then IDLE (or polling every Interval) and a pass whenever the mailbox
// changes. Connection failures reconnect with capped exponential backoff and
// jitter. It returns nil after a stop request.
func (w *Watcher) Run(ctx context.Context) error {
	hard, cancel := graceContext(ctx, w.cfg.Grace)
	defer cancel()
	backoff := w.cfg.BackoffMin
	refused := 0 // logins refused in a row
	for {
		passes := w.st.Passes
		err := w.session(ctx, hard, false)
		if ctx.Err() != nil {
			return nil
		}
		w.cfg.Metrics.SetHealthy(false)
		w.cfg.Metrics.Error("imap")
		if w.st.Passes > passes {
			backoff = w.cfg.BackoffMin // the connection worked for a while
		}
		var ae *AuthError
		if errors.As(err, &ae) {
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
		} else if exp := w.tokenExpiry; !exp.IsZero() && !w.cfg.Now().Before(exp) {
			// Microsoft 365 ends a session when its token expires: the
			// reconnect logs in with a new one.
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

// graceContext returns a context that ends Grace after ctx ends.
func graceContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	hard, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(hard, func() { t.Stop() })
	})
	return hard, func() { stop(); cancel() }
}

// session is one connection: connect, resolve pending replies, then passes.
func (w *Watcher) session(ctx, hard context.Context, once bool) error {
	c, err := w.dial(hard)
	if err != nil {
		return err
	}
	defer c.Close()
	// Unblock any IMAP command when the grace period is over.
	stop := context.AfterFunc(hard, func() { c.Close() })
	defer stop()

	if !w.cfg.DryRun { // a dry run settles nothing
		if err := w.resolveDrafts(hard, c); err != nil {
			return err
		}
		if err := w.resolvePending(hard, c); err != nil {
			return err
		}
	}
	for {
		if ctx.Err() != nil {
			return nil
		}
		select { // a pass is about to look: forget earlier hints
		case <-w.wake:
		default:
		}
		if err := w.pass(ctx, hard, c); err != nil {
			return err
		}
		w.st.Passes++
		w.cfg.Metrics.PassDone(w.cfg.Now())
		if once || ctx.Err() != nil {
			if err := c.Logout().Wait(); err != nil {
				w.log.Debug("imap logout", "err", err)
			}
			return nil
		}
		if err := w.wait(ctx, c); err != nil {
			return err
		}
	}
}

// wait blocks until the mailbox may have changed: IDLE when offered, else
// the polling interval.
func (w *Watcher) wait(ctx context.Context, c *imapclient.Client) error {
	if w.cfg.NoIdle || !c.Caps().Has(imap.CapIdle) && !c.Caps().Has(imap.CapIMAP4rev2) {
		select {
		case <-ctx.Done():
		case <-c.Closed():
			return errors.New("watch: imap connection closed")
		case <-time.After(w.cfg.Interval):
		}
		return nil
	}
	idle, err := c.Idle()
	if err != nil {
		return fmt.Errorf("watch: idle: %w", err)
	}
	w.log.Debug("idling", "mailbox", w.cfg.Mailbox)
	timer := time.NewTimer(w.cfg.IdleRefresh)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
		w.log.Debug("idle: mailbox changed")
	case <-timer.C:
	case <-c.Closed():
		return errors.New("watch: imap connection closed while idling")
	}
	if err := idle.Close(); err != nil {
		return fmt.Errorf("watch: idle: %w", err)
	}
	if err := idle.Wait(); err != nil {
		return fmt.Errorf("watch: idle: %w", err)
	}
	return nil
}

func (w *Watcher) dial(ctx context.Context) (*imapclient.Client, error) {
	opts := &imapclient.Options{
		TLSConfig: w.cfg.TLSConfig,
		Dialer:    &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					select {
					case w.wake <- struct{}{}:
					default:
					}
				}
			},
		},
	}
	var (
		c   *imapclient.Client
		err error
	)
	switch w.cfg.TLS {
	case TLSImplicit:
		c, err = imapclient.DialTLS(w.cfg.Addr, opts)
	case TLSStartTLS:
		c, err = imapclient.DialStartTLS(w.cfg.Addr, opts)
	default:
		c, err = imapclient.DialInsecure(w.cfg.Addr, opts)
	}
	if err != nil {
		if hint := mail.UntrustedHint(err, w.cfg.TLSConfig.ServerName, w.cfg.CASetting); hint != "" {
			return nil, fmt.Errorf("watch: connect %s: %w (%s)", w.cfg.Addr, err, hint)
		}
		return nil, fmt.Errorf("watch: connect %s: %w", w.cfg.Addr, err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err = w.login(c); err != nil {
		c.Close()
		if refusedLogin(err) || mailauth.IsPermanent(err) || errors.Is(err, mailauth.ErrNoMechanism) {
			return nil, &AuthError{Addr: w.cfg.Addr, User: w.cfg.Username, Attempts: 1, OAuth2: w.cfg.OAuth2 != nil, Err: err}
		}
		return nil, fmt.Errorf("watch: login %s as %s: %w", w.cfg.Addr, w.cfg.Username, err)
	}
	w.cfg.Metrics.SetHealthy(true)
	w.log.Debug("imap connected", "addr", w.cfg.Addr, "user", w.cfg.Username)
	return c, nil
}

// box is the selected mailbox of one pass, shared by its workers.
type box struct {
	uidValidity uint32

	// imap serialises the workers' commands on the one connection (and
	// guards keywords and folders): a command's responses must not
	// interleave with another's.
	imap     sync.Mutex
	keywords bool // the server accepts our keyword
	folders  map[string]bool
}

// pass selects the mailbox and handles every message without a settled
// ledger entry, oldest first, until ctx ends.
func (w *Watcher) pass(ctx, hard context.Context, c *imapclient.Client) error {
	if w.cfg.DryRun {
		return w.dryPass(ctx, hard, c)
	}
	if err := w.trackDrafts(hard, c); err != nil {
		return err
	}
	if err := w.requeue(hard, c); err != nil {
		return err
	}
	if err := w.settleSentDrafts(hard, c); err != nil {
		return err
	}
	sel, err := c.Select(w.cfg.Mailbox, nil).Wait()
	if err != nil {
		return fmt.Errorf("watch: select %s: %w", w.cfg.Mailbox, err)
	}
	b := &box{uidValidity: sel.UIDValidity, keywords: w.keywordsAllowed(sel.PermanentFlags), folders: map[string]bool{}}
	w.noteUIDValidity(hard, sel.UIDValidity)
	crit := &imap.SearchCriteria{UID: []imap.UIDSet{{imap.UIDRange{Start: 1, Stop: 0}}}}
	if b.keywords {
		crit.NotFlag = []imap.Flag{imap.Flag(w.cfg.Keyword)}
	}
	data, err := c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return fmt.Errorf("watch: search %s: %w", w.cfg.Mailbox, err)
	}
	settled, err := w.cfg.Ledger.Settled(hard, w.cfg.Account, w.cfg.Mailbox, b.uidValidity)
	if err != nil {
		w.cfg.Metrics.Error("ledger")
		return err
	}
	var todo []imap.UID
	for _, uid := range data.AllUIDs() {
		if uid > 0 && !settled[uint32(uid)] {
			todo = append(todo, uid)
		}
	}
	// A crash between the flag and the move leaves a final message flagged,
	// so the search above skips it: the ledger knows it is unfinished.
	unsettled, err := w.cfg.Ledger.Unsettled(hard, w.cfg.Account, w.cfg.Mailbox, b.uidValidity)
	if err != nil {
		w.cfg.Metrics.Error("ledger")
		return err
	}
	for _, uid := range unsettled {
		todo = append(todo, imap.UID(uid))
	}
	slices.Sort(todo)
	todo = slices.Compact(todo)
	// An idle pass (nothing new) is DEBUG; a pass with work says how much.
	lvl := slog.LevelDebug
	if len(todo) > 0 {
		lvl = slog.LevelInfo
	}
	w.log.Log(hard, lvl, "pass", "mailbox", w.cfg.Mailbox, "uidvalidity", b.uidValidity, "keywords", b.keywords, "candidates", len(todo), "concurrency", w.cfg.Concurrency)

	return w.work(ctx, hard, c, b, todo)
}

// work handles the messages of a pass, up to Concurrency at a time. Headers
// are read here, in UID order, a bounded window ahead; then the oldest
// message that may start starts. Messages that share a ledger key, a From or
// a Reply-To address run one after the other in UID order (each waits for
// the one before it), so copies of a message never race, a sender's oldest
// mail comes first under a limit, and one busy sender holds one worker, not
// all of them. With Concurrency 1 this is the plain sequential pass. After a
// stop request no new message starts; those in flight finish within Grace.
// An IMAP or ledger error stops the pass the same way and ends the session.
func (w *Watcher) work(ctx, hard context.Context, c *imapclient.Client, b *box, todo []imap.UID) error {
	type result struct {
		job int
		err error
	}
	type job struct {
		m       *peeked
		after   []int // earlier jobs sharing an ordering key
		started bool
		done    bool
	}
	var (
		jobs     []*job
		last     = map[string]int{} // ordering key -> its latest job
		finished = make(chan result)
		firstErr error
		running  int
		open     int // peeked, not done
		next     int // next todo to peek
		first    int // jobs before it are all started
		window   = 8 * w.cfg.Concurrency
	)
	stopped := func() bool { return firstErr != nil || ctx.Err() != nil }
	ready := func(j *job) bool {
		for _, i := range j.after {
			if !jobs[i].done {
				return false
			}
		}
		return true
	}
	for {
		// Read headers ahead, in UID order.
		for !stopped() && next < len(todo) && open < window {
			m, err := w.peek(hard, c, b, todo[next])
			next++
			if err != nil {
				firstErr = err
				break
			}
			if m == nil {
				continue
			}
			j := &job{m: m}
			for _, k := range m.orderKeys() {
				if i, ok := last[k]; ok {
					j.after = append(j.after, i)
				}
				last[k] = len(jobs)
			}
			jobs = append(jobs, j)
			open++
		}
		// Start the oldest messages that may start.
		for i := first; !stopped() && running < w.cfg.Concurrency && i < len(jobs); i++ {
			j := jobs[i]
			if j.started || !ready(j) {
				continue
			}
			j.started = true
			running++
			go func() { finished <- result{i, w.handle(hard, c, b, j.m)} }()
		}
		for first < len(jobs) && jobs[first].started {
			first++
		}
		if running == 0 && (stopped() || next == len(todo) && first == len(jobs)) {
			return firstErr
		}
		r := <-finished
		jobs[r.job].done = true
		running--
		open--
		if r.err != nil && firstErr == nil {
			firstErr = r.err
		}
	}
}

// peeked is a message of a pass whose header was read.
type peeked struct {
	uid  imap.UID
	loc  ledger.Loc
	id   identity
	size int64
}

// orderKeys are the keys whose messages must not overlap.
func (m *peeked) orderKeys() []string {
	keys := []string{"key:" + string(m.id.Key)}
	for _, a := range []string{m.id.Sender, m.id.ReplyTo} {
		if a != "" && !slices.Contains(keys, "addr:"+a) {
			keys = append(keys, "addr:"+a)
		}
	}
	return keys
}

// keywordsAllowed reports whether PERMANENTFLAGS allows our keyword.
func (w *Watcher) keywordsAllowed(perm []imap.Flag) bool {
	for _, f := range perm {
		if f == imap.FlagWildcard || strings.EqualFold(string(f), w.cfg.Keyword) {
			return true
		}
	}
	return false
}

// peek reads the header of one message; nil when it is gone.
func (w *Watcher) peek(ctx context.Context, c *imapclient.Client, b *box, uid imap.UID) (*peeked, error) {
	loc := ledger.Loc{Account: w.cfg.Account, Mailbox: w.cfg.Mailbox, UIDValidity: b.uidValidity, UID: uint32(uid)}
	hdr, size, ok, err := b.fetchHeader(c, uid)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Gone (expunged, or moved by someone else or by a run that crashed
		// before recording it): a final entry has nothing left to do.
		l := w.cfg.Ledger
		if prev, err := l.Get(ctx, loc); err == nil && ledger.Final(prev.State) && !prev.IMAPDone {
			return nil, w.ledgerErr(l.MarkIMAPDone(context.WithoutCancel(ctx), loc))
		}
		return nil, nil
	}
	return &peeked{uid: uid, loc: loc, id: identify(hdr), size: size}, nil
}

// handle takes one message to a final, settled ledger state.
func (w *Watcher) handle(ctx context.Context, c *imapclient.Client, b *box, m *peeked) error {
	uid, loc, id, size := m.uid, m.loc, m.id, m.size
	// Every line logged about this message, here and in the pipeline, names it.
	ctx = logattr.With(ctx, "uid", uint32(uid), "key", id.Key, "message_id", id.MessageID)
	l := w.cfg.Ledger
	e := ledger.Entry{Loc: loc, Key: id.Key, MessageID: id.MessageID, Sender: id.Sender, Subject: id.Subject}

	prev, err := l.Get(ctx, loc)
	switch {
	case err == nil && ledger.Final(prev.State):
		return w.settle(ctx, c, b, prev) // final, but the flag/move did not happen
	case err == nil:
		e.Attempts = prev.Attempts
	case !errors.Is(err, ledger.ErrNotFound):
		return w.ledgerErr(err)
	}

	if other, err := l.FinalByKey(ctx, id.Key, loc); err == nil {
		return w.finish(ctx, c, b, e, ledger.StateSkipped, triage.ReasonAlreadyHandled, "", "previous="+other.Loc.String()+" state="+other.State)
	} else if !errors.Is(err, ledger.ErrNotFound) {
		return w.ledgerErr(err)
	}
	if r, err := l.GetReply(ctx, id.Key); err == nil {
		if r.Kind == ledger.KindDraft {
			if r.State != ledger.DraftStored {
				return nil // resolveDrafts stores it at the next connect
			}
			return w.finish(ctx, c, b, e, ledger.StateDrafted, triage.ReasonRecovered, "", "draft="+r.MessageID)
		}
		if r.State == ledger.ReplySent {
			return w.finish(ctx, c, b, e, ledger.StateReplied, triage.ReasonRecovered, "", "reply="+r.MessageID)
		}
		if r.State == ledger.ReplyPending {
			if err := l.MarkReplyNeedsHuman(ctx, id.Key); err != nil {
				return w.ledgerErr(err)
			}
		}
		return w.finish(ctx, c, b, e, ledger.StateNeedsHuman, triage.ReasonReplyUnconfirmed, "", "reply="+r.MessageID)
	} else if !errors.Is(err, ledger.ErrNotFound) {
		return w.ledgerErr(err)
	}

	if reason, err := w.overLimit(ctx, id.Sender, id.ReplyTo); err != nil {
		return w.ledgerErr(err)
	} else if reason != "" {
		return w.finish(ctx, c, b, e, ledger.StateOverLimit, reason, "", "")
	}
	if size > w.cfg.MaxMessageBytes {
		return w.finish(ctx, c, b, e, ledger.StateFailed, triage.ReasonTooLarge, "", fmt.Sprintf("size=%d max=%d", size, w.cfg.MaxMessageBytes))
	}
	attempt, err := l.Begin(ctx, e)
	if err != nil {
		return w.ledgerErr(err)
	}
	e.Attempts = attempt
	if attempt > w.cfg.MaxAttempts {
		return w.finish(ctx, c, b, e, ledger.StateFailed, triage.ReasonTooManyAttempts, "", fmt.Sprintf("attempts=%d", attempt-1))
	}
	raw, ok, err := b.fetchBody(c, uid)
	if err != nil {
		return err
	}
	if !ok {
		return w.ledgerErr(l.Abandon(ctx, loc))
	}
	w.log.DebugContext(ctx, "message body", "uid", uid, "raw", string(raw))

	start := w.cfg.Now()
	in := &answering{sender: id.Sender, limits: w.limits()}
	out := w.process(withAnswering(ctx, in), processor.Input{Name: loc.String(), Raw: raw, Key: id.Key})
	w.keepOutcome(ctx, loc, out, raw)
	w.cfg.Metrics.Observe(out, w.cfg.Now().Sub(start))
	if out.Status == triage.StatusFailed {
		w.cfg.Metrics.Error("process")
	}

	state, reason, detail := ledger.StateOf(out.Status), out.Reason, out.Detail
	r, rerr := l.GetReply(context.WithoutCancel(ctx), id.Key)
	switch {
	case rerr != nil && !errors.Is(rerr, ledger.ErrNotFound):
		return w.ledgerErr(rerr)
	case rerr == nil && r.Kind == ledger.KindDraft:
		// Draft mode: the draft is recorded; store it before the message
		// counts as handled.
		if r.State != ledger.DraftStored {
			if err := w.storeDraft(ctx, c, b, r); err != nil {
				return err
			}
		}
		state, reason = ledger.StateDrafted, ""
	case rerr == nil && r.State == ledger.ReplySent:
		state = ledger.StateReplied
	case rerr == nil:
		// Submitted ambiguously: never again, a person decides.
		if r.State == ledger.ReplyPending {
			if err := l.MarkReplyNeedsHuman(context.WithoutCancel(ctx), id.Key); err != nil {
				return w.ledgerErr(err)
			}
		}
		state, reason = ledger.StateNeedsHuman, triage.ReasonReplyUnconfirmed
	case in.refusal() != nil:
		// The Sender refused the reply: the address it would have gone to,
		// or the From, is at its limit. Nothing was sent.
		state, reason, detail = ledger.StateOverLimit, in.refusal().Reason, in.refusal().Error()
	case out.Status == triage.StatusFailed && (out.Reason == triage.ReasonCanceled || ctx.Err() != nil):
		// Nothing was sent: leave the message for the next run.
		w.log.InfoContext(ctx, "message abandoned at shutdown; it will be processed again", "uid", uid, "key", id.Key)
		return w.ledgerErr(l.Abandon(context.WithoutCancel(ctx), loc))
	case out.Status == triage.StatusSkipped && out.Reason == triage.ReasonHumanOwner:
		// A person owns the conversation (taken over, or escalated): the
		// follow-up, already appended to the ticket, goes to the failed
		// folder, where people work, with the reason human_owner.
		state = ledger.StateNeedsHuman
	case out.Status == triage.StatusReplied:
		// A reply the ledger does not know cannot be confirmed.
		state, reason = ledger.StateNeedsHuman, triage.ReasonReplyUnconfirmed
	}
	if rerr == nil {
		detail = strings.TrimSpace(detail + " reply=" + r.MessageID)
	}
	if err := w.finish(ctx, c, b, e, state, reason, out.Scenario, detail); err != nil {
		return err
	}
	if state == ledger.StateReplied && w.cfg.SentFolder != "" && !w.cfg.NoSaveSent && rerr == nil && !r.Appended {
		if err := w.appendSent(ctx, c, b, r); err != nil {
			w.log.WarnContext(ctx, "could not store the reply in the Sent folder", "folder", w.cfg.SentFolder, "reply_message_id", r.MessageID, "err", err)
		}
	}
	return nil
}

// process runs the pipeline; a panic becomes a failed outcome so that one
// bad message cannot stop the watcher.
func (w *Watcher) process(ctx context.Context, in processor.Input) (out processor.Outcome) {
	defer func() {
		if v := recover(); v != nil {
			w.log.ErrorContext(ctx, "pipeline panicked", "name", in.Name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out = processor.Outcome{File: in.Name, Status: triage.StatusFailed, Reason: triage.ReasonPanic, Detail: fmt.Sprint(v)}
		}
	}()
	return w.cfg.Processor.Process(ctx, in)
}

func (w *Watcher) ledgerErr(err error) error {
	if err != nil {
		w.cfg.Metrics.Error("ledger")
	}
	return err
}

// limits are the reply limits the Sender enforces for a message.
func (w *Watcher) limits() ledger.Limits {
	return ledger.Limits{PerAddress: max(w.cfg.PerSenderLimit, 0), Window: w.cfg.PerSenderWindow, PerHour: max(w.cfg.GlobalPerHour, 0)}
}

// overLimit returns the limit reason when a reply to a message from sender,
// answered at replyTo, would exceed a limit. It saves the pipeline a message
// whose reply would be refused; the Sender's check, when the reply is
// written, is the exact one.
func (w *Watcher) overLimit(ctx context.Context, sender, replyTo string) (triage.Reason, error) {
	le, err := w.cfg.Ledger.Exceeded(ctx, w.limits(), sender, replyTo, w.cfg.Now())
	if err != nil || le == nil {
		return "", err
	}
	return le.Reason, nil
}

// finish records the final state, logs the one line per message, and settles
// the message on the server.
func (w *Watcher) finish(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry, state string, reason triage.Reason, scenario, detail string) error {
	e.State, e.Reason, e.Scenario, e.Detail = state, reason, scenario, detail
	if err := w.cfg.Ledger.Record(context.WithoutCancel(ctx), e); err != nil {
		return w.ledgerErr(err)
	}
	w.mu.Lock()
	w.st.Final[state]++
	w.mu.Unlock()
	w.cfg.Metrics.Final(state)
	level := slog.LevelInfo
	if state == ledger.StateFailed || state == ledger.StateNeedsHuman || state == ledger.StateOverLimit {
		level = slog.LevelWarn
	}
	w.log.Log(ctx, level, "message", "uid", e.UID, "uidvalidity", e.UIDValidity, "message_id", e.MessageID,
		"from", e.Sender, "state", state, "reason", reason, "scenario", scenario, "attempts", e.Attempts, "detail", detail)
	return w.settle(ctx, c, b, e)
}

// settle flags the message (keyword, or \Seen) and moves it where its state
// says, then records that in the ledger.
func (w *Watcher) settle(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry) error {
	b.imap.Lock()
	defer b.imap.Unlock()
	uids := imap.UIDSetNum(imap.UID(e.UID))
	flag := imap.FlagSeen
	if b.keywords {
		flag = imap.Flag(w.cfg.Keyword)
	}
	err := c.Store(uids, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{flag}}, nil).Close()
	if err != nil && b.keywords && isNo(err) {
		w.log.Warn("server refused the keyword; marking \\Seen instead", "keyword", w.cfg.Keyword, "err", err)
		b.keywords = false
		err = c.Store(uids, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close()
	}
	if err != nil {
		return fmt.Errorf("watch: flag uid %d: %w", e.UID, err)
	}
	var dest string
	switch e.State {
	case ledger.StateReplied:
		dest = w.cfg.ProcessedFolder
	case ledger.StateFailed, ledger.StateNeedsHuman, ledger.StateOverLimit:
		dest = w.cfg.FailedFolder
	}
	if dest != "" && dest != w.cfg.Mailbox {
		if err := w.ensureFolder(c, b, dest); err != nil {
			return err
		}
		if _, err := c.Move(uids, dest).Wait(); err != nil {
			return fmt.Errorf("watch: move uid %d to %s: %w", e.UID, dest, err)
		}
	}
	return w.ledgerErr(w.cfg.Ledger.MarkIMAPDone(context.WithoutCancel(ctx), e.Loc))
}

// ensureFolder creates folder when it does not exist; the caller holds b.imap.
func (w *Watcher) ensureFolder(c *imapclient.Client, b *box, folder string) error {
	if b.folders[folder] {
		return nil
	}
	if _, err := c.Status(folder, &imap.StatusOptions{UIDValidity: true}).Wait(); err != nil {
		if cerr := c.Create(folder, nil).Wait(); cerr != nil {
			// Lost a race with another client? Then it exists now.
			if _, err := c.Status(folder, &imap.StatusOptions{UIDValidity: true}).Wait(); err != nil {
				return fmt.Errorf("watch: create folder %s: %w", folder, cerr)
			}
		} else {
			w.log.Info("created folder", "folder", folder)
		}
	}
	b.folders[folder] = true
	return nil
}

// appendSent stores a sent reply in the Sent folder.
func (w *Watcher) appendSent(ctx context.Context, c *imapclient.Client, b *box, r ledger.Reply) error {
	b.imap.Lock()
	defer b.imap.Unlock()
	if err := w.ensureFolder(c, b, w.cfg.SentFolder); err != nil {
		return err
	}
	if err := appendMessage(c, w.cfg.SentFolder, r.Raw, &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: r.SentAt}, "append"); err != nil {
		return err
	}
	return w.cfg.Ledger.MarkAppended(context.WithoutCancel(ctx), r.Key)
}

// appendMessage appends raw to folder; what names the operation in the
// error ("append", "append draft").
func appendMessage(c *imapclient.Client, folder string, raw []byte, opts *imap.AppendOptions, what string) error {
	cmd := c.Append(folder, int64(len(raw)), opts)
	if _, err := cmd.Write(raw); err != nil {
		cmd.Close()
		return fmt.Errorf("watch: %s to %s: %w", what, folder, err)
	}
	if err := cmd.Close(); err != nil {
		return fmt.Errorf("watch: %s to %s: %w", what, folder, err)
	}
	if _, err := cmd.Wait(); err != nil {
		return fmt.Errorf("watch: %s to %s: %w", what, folder, err)
	}
	return nil
}

// holdsMessageID reports whether the selected folder holds a message with
// this Message-ID; folder names it in the error.
func holdsMessageID(c *imapclient.Client, folder, messageID string) (bool, error) {
	crit := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: messageID}}}
	data, err := c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return false, fmt.Errorf("watch: search %s: %w", folder, err)
	}
	return len(data.AllUIDs()) > 0, nil
}

// resolvePending settles replies a crash left between "rendered" and "sent":
// found in the Sent folder means sent; otherwise a person must look. Nothing
// is ever submitted again.
func (w *Watcher) resolvePending(ctx context.Context, c *imapclient.Client) error {
	pending, err := w.cfg.Ledger.Replies(ctx, ledger.ReplyPending)
	if err != nil {
		return w.ledgerErr(err)
	}
	if len(pending) == 0 {
		return nil
	}
	sentOK := false
	if w.cfg.SentFolder != "" {
		if _, err := c.Select(w.cfg.SentFolder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
			w.log.Warn("cannot open the Sent folder to confirm pending replies", "folder", w.cfg.SentFolder, "err", err)
		} else {
			sentOK = true
		}
	}
	for _, r := range pending {
		found := false
		if sentOK {
			if found, err = holdsMessageID(c, w.cfg.SentFolder, r.MessageID); err != nil {
				return err
			}
		}
		if found {
			err = w.cfg.Ledger.MarkSent(ctx, r.Key)
			w.log.Info("pending reply found in the Sent folder; recorded as sent", "message_id", r.MessageID, "key", r.Key)
		} else {
			err = w.cfg.Ledger.MarkReplyNeedsHuman(ctx, r.Key)
			w.log.Warn("pending reply could not be confirmed; left for a person (not sent again)", "message_id", r.MessageID, "key", r.Key, "to", r.To)
		}
		if err != nil {
			return w.ledgerErr(err)
		}
	}
	if sentOK {
		if err := c.Unselect().Wait(); err != nil {
			return fmt.Errorf("watch: unselect: %w", err)
		}
	}
	return nil
}

// fetchHeader is fetchHeader for a worker of the pass.
func (b *box) fetchHeader(c *imapclient.Client, uid imap.UID) (hdr []byte, size int64, ok bool, err error) {
	b.imap.Lock()
	defer b.imap.Unlock()
	return fetchHeader(c, uid)
}

// fetchBody is fetchBody for a worker of the pass.
func (b *box) fetchBody(c *imapclient.Client, uid imap.UID) ([]byte, bool, error) {
	b.imap.Lock()
	defer b.imap.Unlock()
	return fetchBody(c, uid)
}

// maxHeaderFetch bounds the header fetched before the size check: one
// byte over what the parser accepts, so a header over it is still refused
// as too large, and a header-only message of any size costs at most this.
const maxHeaderFetch = message.DefaultMaxHeaderBytes + 1

// fetchHeader fetches UID, size (RFC822.SIZE) and at most maxHeaderFetch
// bytes of the header of one message (BODY.PEEK[HEADER]<0.N>).
func fetchHeader(c *imapclient.Client, uid imap.UID) (hdr []byte, size int64, ok bool, err error) {
	sec := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true,
		Partial: &imap.SectionPartial{Offset: 0, Size: maxHeaderFetch}}
	bufs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
	if err != nil {
		return nil, 0, false, fmt.Errorf("watch: fetch header uid %d: %w", uid, err)
	}
	for _, b := range bufs {
		if b.UID == uid {
			return b.FindBodySection(sec), b.RFC822Size, true, nil
		}
	}
	return nil, 0, false, nil
}

// fetchBody fetches the whole message with BODY.PEEK[].
func fetchBody(c *imapclient.Client, uid imap.UID) ([]byte, bool, error) {
	sec := &imap.FetchItemBodySection{Peek: true}
	bufs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
	if err != nil {
		return nil, false, fmt.Errorf("watch: fetch uid %d: %w", uid, err)
	}
	for _, b := range bufs {
		if b.UID == uid {
			return b.FindBodySection(sec), true, nil
		}
	}
	return nil, false, nil
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

// noteUIDValidity logs at WARN when the mailbox's UIDVALIDITY differs from
// the one this watcher (or, after a restart, the ledger) last saw: the
// server renumbered the mailbox. Nothing is answered twice (messages are
// recognised by Message-ID and sender), but a person should know.
func (w *Watcher) noteUIDValidity(ctx context.Context, v uint32) {
	w.mu.Lock()
	prev := w.uidValidity
	w.uidValidity = v
	w.mu.Unlock()
	if prev == 0 {
		if last, err := w.cfg.Ledger.LastUIDValidity(ctx, w.cfg.Account, w.cfg.Mailbox); err == nil {
			prev = last
		}
	}
	if prev != 0 && prev != v {
		w.log.WarnContext(ctx, "mailbox UIDVALIDITY changed: the server renumbered it; handled messages are recognised by Message-ID and not answered again",
			"mailbox", w.cfg.Mailbox, "previous", prev, "uidvalidity", v)
	}
}
