package watch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/ledger"
)

// Several daemons may watch one inbox on one PostgreSQL store. One of them
// polls: it holds the inbox's poll lock (a session-level advisory lock the
// server frees when the daemon's session ends), searches the mailbox, IDLEs,
// and records every message it finds as seen (ledger.Offer). Every daemon,
// the poller included, works on messages it claims (ledger.Claim): a claim
// is exclusive while its lease is live and the heartbeat renews it while the
// message is worked on. The others (helpers) claim what the poller
// recorded, on their own IMAP connection, fetching each message by UID. A
// daemon that dies loses its poll lock at once and its claims when their
// leases run out; then the others take over. On SQLite one process serves
// the store (the watch lock file): it polls, and claims all the same.

// DefaultOwner names this process in claims: host name, process id and a
// random suffix (a restarted process with a reused pid is another owner).
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s/%d/%04x", host, os.Getpid(), rand.Uint32()&0xffff)
}

// releaseRole gives up the poll lock, if this watcher holds it.
func (w *Watcher) releaseRole() {
	if w.role != nil {
		w.role.Release()
	}
}

// claimPoll is how often a helper looks for messages to claim, and the
// poller for messages whose claimant died.
func (w *Watcher) claimPoll() time.Duration {
	return min(w.cfg.Interval, time.Second)
}

// roleLost is closed when the poll lock this watcher holds is lost (nil
// without a shared store).
func (w *Watcher) roleLost() <-chan struct{} {
	if w.role == nil {
		return nil
	}
	return w.role.Lost()
}

// hasClaimable reports whether a message of the inbox waits to be claimed
// (seen, or its claimant died): the poller then makes a pass.
func (w *Watcher) hasClaimable(ctx context.Context) bool {
	w.mu.Lock()
	v := w.uidValidity
	w.mu.Unlock()
	cl, err := w.cfg.Ledger.Claimable(ctx, w.cfg.Account, w.cfg.Mailbox, v, 1)
	if err != nil {
		w.cfg.Metrics.Error("ledger")
		w.log.Warn("could not look for claimable messages", "err", err)
		return false
	}
	return len(cl) > 0
}

// heartbeat renews the claim on loc every third of the lease until the
// returned stop is called. The returned context (for the pipeline) ends
// when the claim is lost: another daemon has the message now.
func (w *Watcher) heartbeat(ctx context.Context, loc ledger.Loc) (context.Context, func(), func() bool) {
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	lostc := make(chan struct{})
	go func() {
		t := time.NewTicker(w.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			err := w.cfg.Ledger.Renew(context.WithoutCancel(ctx), loc, w.cfg.Owner, w.cfg.Lease)
			switch {
			case errors.Is(err, ledger.ErrLeaseLost):
				w.log.WarnContext(ctx, "claim on the message lost (its lease ran out); another daemon has it, this one stops working on it", "uid", loc.UID, "lease", w.cfg.Lease.String())
				close(lostc)
				cancel()
				return
			case err != nil:
				w.cfg.Metrics.Error("ledger")
				w.log.WarnContext(ctx, "could not renew the claim on the message; trying again", "uid", loc.UID, "err", err)
			}
		}
	}()
	var once bool
	stop := func() {
		if !once {
			once = true
			close(done)
			cancel()
		}
	}
	lost := func() bool {
		select {
		case <-lostc:
			return true
		default:
			return false
		}
	}
	return hctx, stop, lost
}

// help is a session of a watcher that does not poll its inbox: another
// daemon holds the poll lock. It claims the messages the poller recorded,
// and those whose claimant died, oldest first, fetches each by UID on its
// own connection and handles it as the poller would, Concurrency at a time
// (messages sharing a key or a sender one after the other). It returns nil
// when it took the poll lock over (the session then polls), when ctx ended
// (once the messages in flight are done), or, with once, when nothing is
// left to claim.
func (w *Watcher) help(ctx, hard context.Context, c *imapclient.Client, once bool) error {
	sel, err := c.Select(w.cfg.Mailbox, nil).Wait()
	if err != nil {
		return fmt.Errorf("watch: select %s: %w", w.cfg.Mailbox, err)
	}
	b := &box{uidValidity: sel.UIDValidity, keywords: w.keywordsAllowed(sel.PermanentFlags), folders: map[string]bool{}}
	w.mu.Lock()
	w.uidValidity = sel.UIDValidity
	w.mu.Unlock()
	w.log.Info("another daemon polls this inbox; this one works on the messages it finds", "mailbox", w.cfg.Mailbox, "account", w.cfg.Account, "owner", w.cfg.Owner)
	w.polling = false
	type result struct {
		keys    []string
		claimed bool
		err     error
	}
	var (
		busy     = map[string]bool{} // ordering keys of the messages in flight
		finished = make(chan result)
		running  int
		firstErr error
		nextList time.Time // when to look for claimable messages again
		poll     = w.claimPoll()
		lastIMAP = time.Now()
	)
	stopped := func() bool { return firstErr != nil || ctx.Err() != nil }
	for {
		empty := false
		if !stopped() && running < w.cfg.Concurrency && !time.Now().Before(nextList) {
			cands, err := w.cfg.Ledger.Claimable(hard, w.cfg.Account, w.cfg.Mailbox, b.uidValidity, 4*w.cfg.Concurrency)
			if err != nil {
				firstErr = w.ledgerErr(err)
			}
			for _, e := range cands {
				if running == w.cfg.Concurrency {
					break
				}
				keys := orderKeys(e.Key, e.Sender)
				if slices.ContainsFunc(keys, func(k string) bool { return busy[k] }) {
					continue
				}
				for _, k := range keys {
					busy[k] = true
				}
				running++
				go func() {
					claimed, err := w.helpOne(hard, c, b, e)
					finished <- result{keys, claimed, err}
				}()
			}
			empty = len(cands) == 0
			if running < w.cfg.Concurrency {
				nextList = time.Now().Add(poll)
			}
		}
		if running == 0 && (stopped() || once && empty) {
			return firstErr
		}
		var tick <-chan time.Time
		var timer *time.Timer
		if !stopped() && running < w.cfg.Concurrency {
			timer = time.NewTimer(max(time.Until(nextList), 0))
			tick = timer.C
		}
		done := ctx.Done()
		if stopped() {
			done = nil
		}
		r, ticked := result{}, false
		finishedOne := false
		select {
		case r = <-finished:
			finishedOne = true
		case <-tick:
			ticked = true
		case <-done:
		}
		if timer != nil {
			timer.Stop()
		}
		switch {
		case finishedOne:
			running--
			for _, k := range r.keys {
				delete(busy, k)
			}
			if r.err != nil && firstErr == nil {
				firstErr = r.err
			}
			if r.claimed {
				nextList = time.Time{} // there may be more
			}
		case ticked && running == 0 && !once:
			if ok, err := w.role.TryAcquire(hard); err != nil {
				firstErr = w.ledgerErr(err)
			} else if ok {
				return nil
			}
			if time.Since(lastIMAP) >= w.cfg.IdleRefresh {
				// Keep the idle connection alive (servers log out idle
				// clients after 30 minutes).
				if err := c.Noop().Wait(); err != nil {
					firstErr = fmt.Errorf("watch: noop: %w", err)
				}
				lastIMAP = time.Now()
			}
		}
	}
}

// helpOne handles the claimable message e; it reports whether this watcher
// claimed it.
func (w *Watcher) helpOne(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry) (bool, error) {
	m, err := w.peek(ctx, c, b, imap.UID(e.UID))
	if err != nil {
		return false, err
	}
	if m == nil {
		// No longer in the mailbox: nothing to answer.
		return false, w.ledgerErr(w.cfg.Ledger.Forget(context.WithoutCancel(ctx), e.Loc, w.cfg.Owner))
	}
	err = w.handle(ctx, c, b, m)
	if errors.Is(err, ledger.ErrClaimed) {
		return false, nil
	}
	return err == nil, err
}

// forgetGone deletes the rows of messages the poller recorded that a pass
// no longer finds in the mailbox (moved or deleted by someone else before
// anybody worked on them), so nobody waits for them.
func (w *Watcher) forgetGone(ctx context.Context, uidValidity uint32, found map[imap.UID]bool) error {
	cl, err := w.cfg.Ledger.Claimable(ctx, w.cfg.Account, w.cfg.Mailbox, uidValidity, 10000)
	if err != nil {
		return w.ledgerErr(err)
	}
	for _, e := range cl {
		if !found[imap.UID(e.UID)] {
			if err := w.cfg.Ledger.Forget(ctx, e.Loc, w.cfg.Owner); err != nil {
				return w.ledgerErr(err)
			}
		}
	}
	return nil
}

// holdsOnServer reports whether folder holds a message with messageID,
// looked up on a connection of its own (a pass's connection has the
// watched mailbox selected, which its workers share).
func (w *Watcher) holdsOnServer(ctx context.Context, folder, messageID string) (bool, error) {
	c, err := w.dial(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	if _, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return false, fmt.Errorf("watch: examine %s: %w", folder, err)
	}
	found, err := holdsMessageID(c, folder, messageID)
	if err != nil {
		return false, err
	}
	if err := c.Logout().Wait(); err != nil {
		w.log.Debug("imap logout", "err", err)
	}
	return found, nil
}
