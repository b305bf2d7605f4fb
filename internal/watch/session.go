package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/mailauth"
)

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

	if err := w.findFolders(c); err != nil {
		return err
	}
	if !once && !w.cfg.DryRun {
		// A person's request in the console ends the wait for a pass.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go w.cfg.Ledger.Wakes(wctx, w.cfg.WakePoll, func() {
			select {
			case w.asked <- struct{}{}:
			default:
			}
		})
	}
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
		if w.role != nil {
			// Several daemons share the store: the one holding the poll
			// lock polls, the others help.
			polls, err := w.role.TryAcquire(hard)
			if err != nil {
				return w.ledgerErr(err)
			}
			if !polls {
				if err := w.help(ctx, hard, c, once); err != nil {
					return err
				}
				if once || ctx.Err() != nil {
					if err := c.Logout().Wait(); err != nil {
						w.log.Debug("imap logout", "err", err)
					}
					return nil
				}
				continue
			}
			if !w.polling {
				w.log.Info("polling this inbox for the daemons sharing the store", "mailbox", w.cfg.Mailbox, "account", w.cfg.Account, "owner", w.cfg.Owner)
				w.polling = true
			}
		}
		select { // a pass is about to look: forget earlier hints
		case <-w.wake:
		default:
		}
		select {
		case <-w.asked:
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
// the polling interval. With a shared store it also ends when a message
// waits to be claimed (its claimant died) or the poll lock is lost.
func (w *Watcher) wait(ctx context.Context, c *imapclient.Client) error {
	var tick <-chan time.Time
	if w.role != nil {
		t := time.NewTicker(w.claimPoll())
		defer t.Stop()
		tick = t.C
	}
	lost := w.roleLost()
	if w.cfg.NoIdle || !c.Caps().Has(imap.CapIdle) && !c.Caps().Has(imap.CapIMAP4rev2) {
		timer := time.NewTimer(w.cfg.Interval)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
			case <-c.Closed():
				return errors.New("watch: imap connection closed")
			case <-timer.C:
			case <-w.asked:
				w.log.Info("woken for a person's request (triage console)", "mailbox", w.cfg.Mailbox)
			case <-lost:
				w.log.Warn("poll lock lost (the store connection holding it ended)", "mailbox", w.cfg.Mailbox)
			case <-tick:
				if !w.hasClaimable(ctx) {
					continue
				}
			}
			return nil
		}
	}
	idle, err := c.Idle()
	if err != nil {
		return fmt.Errorf("watch: idle: %w", err)
	}
	w.log.Debug("idling", "mailbox", w.cfg.Mailbox)
	timer := time.NewTimer(w.cfg.IdleRefresh)
	defer timer.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
		case <-w.wake:
			w.log.Debug("idle: mailbox changed")
		case <-w.asked:
			w.log.Info("woken for a person's request (triage console)", "mailbox", w.cfg.Mailbox)
		case <-timer.C:
		case <-lost:
			w.log.Warn("poll lock lost (the store connection holding it ended)", "mailbox", w.cfg.Mailbox)
		case <-tick:
			if !w.hasClaimable(ctx) {
				continue
			}
		case <-c.Closed():
			return errors.New("watch: imap connection closed while idling")
		}
		break wait
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
	if err := w.removeRejectedDrafts(hard, c); err != nil {
		return err
	}
	if err := w.filePersonReplies(hard, c); err != nil {
		return err
	}
	if err := w.sweepComplaints(hard); err != nil {
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
	var found []uint32
	for _, uid := range data.AllUIDs() {
		if uid > 0 {
			found = append(found, uint32(uid))
		}
	}
	settled, err := w.cfg.Ledger.Settled(hard, w.cfg.Account, w.cfg.Mailbox, b.uidValidity, found)
	if err != nil {
		w.cfg.Metrics.Error("ledger")
		return err
	}
	var todo []imap.UID
	for _, uid := range found {
		if !settled[uid] {
			todo = append(todo, imap.UID(uid))
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
	if w.role != nil {
		inTodo := make(map[imap.UID]bool, len(todo))
		for _, uid := range todo {
			inTodo[uid] = true
		}
		if err := w.forgetGone(hard, b.uidValidity, inTodo); err != nil {
			return err
		}
	}
	// An idle pass (nothing new) is DEBUG; a pass with work says how much.
	lvl := slog.LevelDebug
	if len(todo) > 0 {
		lvl = slog.LevelInfo
	}
	w.log.Log(hard, lvl, "pass", "mailbox", w.cfg.Mailbox, "uidvalidity", b.uidValidity, "keywords", b.keywords, "candidates", len(todo), "concurrency", w.cfg.Concurrency)

	return w.work(ctx, hard, c, b, todo)
}

// work handles the messages of a pass, up to Concurrency at a time. Headers
// are read here, in UID order, a bounded window ahead, Concurrency at a
// time; after each read the oldest messages that may start start. Messages that share a ledger key, a From or
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
	// Messages read and not yet recorded for the other daemons of the
	// inbox to claim: recorded Concurrency at a time, in one statement.
	var offers []ledger.Entry
	offer := func() {
		if len(offers) == 0 || firstErr != nil {
			return
		}
		if _, err := w.cfg.Ledger.OfferAll(hard, offers); err != nil {
			firstErr = w.ledgerErr(err)
		}
		offers = offers[:0]
	}
	for {
		// Read headers ahead, in UID order, Concurrency at a time between
		// starts: the first messages start before the window is full.
		for read := 0; !stopped() && next < len(todo) && open < window && read < w.cfg.Concurrency; read++ {
			m, err := w.peek(hard, c, b, todo[next])
			next++
			if err != nil {
				firstErr = err
				break
			}
			if m == nil {
				continue
			}
			if w.role != nil {
				if offers = append(offers, m.entry()); len(offers) >= w.cfg.Concurrency {
					offer()
				}
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
		offer()
		// Start the oldest messages that may start.
		for i := first; !stopped() && running < w.cfg.Concurrency && i < len(jobs); i++ {
			j := jobs[i]
			if j.started || !ready(j) {
				continue
			}
			j.started = true
			running++
			go func() {
				err := w.handle(hard, c, b, j.m)
				if errors.Is(err, ledger.ErrClaimed) {
					err = nil // another daemon works on it
				}
				finished <- result{i, err}
			}()
		}
		for first < len(jobs) && jobs[first].started {
			first++
		}
		if running == 0 && (stopped() || next == len(todo) && first == len(jobs)) {
			return firstErr
		}
		var r result
		if !stopped() && next < len(todo) && open < window {
			// More headers to read: take a finished message if there is one.
			select {
			case r = <-finished:
			default:
				continue
			}
		} else {
			r = <-finished
		}
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
	// internal is the message's INTERNALDATE: when the server received it.
	internal time.Time
}

// entry is the ledger entry of the message, as its header names it.
func (m *peeked) entry() ledger.Entry {
	return ledger.Entry{Loc: m.loc, Key: m.id.Key, MessageID: m.id.MessageID, Sender: m.id.From, Subject: m.id.Subject}
}

// orderKeys are the keys whose messages must not overlap.
func (m *peeked) orderKeys() []string { return orderKeys(m.id.Key, m.id.From, m.id.ReplyTo) }

// orderKeys are the keys of a message keyed k from (or answering to) the
// addresses: two messages sharing one are handled one after the other.
func orderKeys(k triage.Key, addrs ...string) []string {
	keys := []string{"key:" + string(k)}
	for _, a := range addrs {
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
