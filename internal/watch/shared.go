package watch

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/ledger"
)

// Several daemons may watch one inbox on one PostgreSQL store. One of them
// polls: it holds the inbox's poll lock (a session-level advisory lock the
// server frees when the daemon's session ends), searches the mailbox, IDLEs,
// and records every message it finds as seen (ledger.OfferAll). Every
// daemon, the poller included, works on messages it claims (ledger.Claim):
// a claim is exclusive while its lease is live, and the daemon renews the
// claims of all the messages it works on at once (ledger.RenewAll). The
// others (helpers) claim what the poller recorded by its row, then fetch
// each message they won by UID on their own IMAP connection. A
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

// claims are the claims a watcher works on. It renews them all at once,
// every third of the lease, in one store statement (ledger.RenewAll), not
// one statement a message.
type claims struct {
	mu       sync.Mutex
	held     map[ledger.Loc]*claimHeld
	renewing bool // renewClaims runs
}

// claimHeld is one claim in flight.
type claimHeld struct {
	ctx    context.Context // the message's, for what is logged about it
	lost   chan struct{}   // closed when the claim is lost
	cancel context.CancelFunc
}

// heartbeat keeps the claim on loc alive until the returned stop is
// called. The returned context (for the pipeline) ends when the claim is
// lost: another daemon has the message now; lost reports whether it was.
func (w *Watcher) heartbeat(ctx context.Context, loc ledger.Loc) (context.Context, func(), func() bool) {
	hctx, cancel := context.WithCancel(ctx)
	h := &claimHeld{ctx: ctx, lost: make(chan struct{}), cancel: cancel}
	cl := &w.claims
	cl.mu.Lock()
	if cl.held == nil {
		cl.held = map[ledger.Loc]*claimHeld{}
	}
	cl.held[loc] = h
	if !cl.renewing {
		cl.renewing = true
		go w.renewClaims()
	}
	cl.mu.Unlock()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cl.mu.Lock()
			if cl.held[loc] == h {
				delete(cl.held, loc)
			}
			cl.mu.Unlock()
			cancel()
		})
	}
	lost := func() bool {
		select {
		case <-h.lost:
			return true
		default:
			return false
		}
	}
	return hctx, stop, lost
}

// renewClaims renews the watcher's claims every third of the lease, all
// in one statement, until none is held; a claim found lost stops its
// message's pipeline.
func (w *Watcher) renewClaims() {
	cl := &w.claims
	t := time.NewTicker(w.cfg.Lease / 3)
	defer t.Stop()
	for range t.C {
		cl.mu.Lock()
		if len(cl.held) == 0 {
			cl.renewing = false
			cl.mu.Unlock()
			return
		}
		locs := slices.Collect(maps.Keys(cl.held))
		cl.mu.Unlock()
		lost, err := w.cfg.Ledger.RenewAll(context.Background(), w.cfg.Owner, locs, w.cfg.Lease)
		if err != nil {
			w.cfg.Metrics.Error("ledger")
			w.log.Warn("could not renew the claims on the messages in flight; trying again", "messages", len(locs), "err", err)
			continue
		}
		cl.mu.Lock()
		for _, loc := range lost {
			h := cl.held[loc]
			if h == nil {
				continue // done meanwhile
			}
			delete(cl.held, loc)
			w.log.WarnContext(h.ctx, "claim on the message lost (its lease ran out); another daemon has it, this one stops working on it", "uid", loc.UID, "lease", w.cfg.Lease.String())
			close(h.lost)
			h.cancel()
		}
		cl.mu.Unlock()
	}
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
		loc     ledger.Loc
		keys    []string
		claimed bool
		err     error
	}
	var (
		busy     = map[string]bool{} // ordering keys of the messages in flight
		lost     = map[ledger.Loc]time.Time{}
		finished = make(chan result)
		running  int
		firstErr error
		nextList time.Time      // when to look for claimable messages again
		queue    []ledger.Entry // the last listing's messages not tried yet, in claimOrder
		full     bool           // the last listing was cut at its limit
		more     bool           // messages may be left to try
		poll     = w.claimPoll()
		lastIMAP = time.Now()
		offset   = ownerOffset(w.cfg.Owner)
	)
	stopped := func() bool { return firstErr != nil || ctx.Err() != nil }
	// start works on e unless its claim was just lost or a message
	// sharing its ordering keys is in flight here (a later listing has it).
	start := func(e ledger.Entry) {
		keys := orderKeys(e.Key, e.Sender)
		if _, ok := lost[e.Loc]; ok || slices.ContainsFunc(keys, func(k string) bool { return busy[k] }) {
			return
		}
		for _, k := range keys {
			busy[k] = true
		}
		running++
		go func() {
			claimed, err := w.helpOne(hard, c, b, e)
			finished <- result{e.Loc, keys, claimed, err}
		}()
	}
	for {
		empty := false
		if !stopped() && running < w.cfg.Concurrency && !time.Now().Before(nextList) {
			// The rest of the last listing first: a message another daemon
			// claimed since costs a claim that is refused, not a listing.
			for len(queue) > 0 && running < w.cfg.Concurrency {
				start(queue[0])
				queue = queue[1:]
			}
			if running < w.cfg.Concurrency {
				cands, err := w.cfg.Ledger.Claimable(hard, w.cfg.Account, w.cfg.Mailbox, b.uidValidity, 4*w.cfg.Concurrency)
				if err != nil {
					firstErr = w.ledgerErr(err)
				}
				for loc, at := range lost {
					if time.Since(at) >= poll {
						delete(lost, loc)
					}
				}
				order := claimOrder(cands, offset, func(e ledger.Entry, keys []string) bool {
					_, ok := lost[e.Loc]
					return ok || slices.ContainsFunc(keys, func(k string) bool { return busy[k] })
				})
				queue = queue[:0]
				for _, i := range order {
					queue = append(queue, cands[i])
				}
				for len(queue) > 0 && running < w.cfg.Concurrency {
					start(queue[0])
					queue = queue[1:]
				}
				empty = len(cands) == 0
				full = len(cands) == 4*w.cfg.Concurrency
			}
			more = len(queue) > 0 || full
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
			if !r.claimed && r.err == nil {
				lost[r.loc] = time.Now() // another daemon has it: not tried again before the next poll
			}
			if r.claimed || more {
				nextList = time.Time{} // there may be more: look again at once
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
// claimed it. It claims the message by its ledger row first and reads it
// over IMAP only once the claim is won: a claim another daemon wins costs
// one store transaction, not a fetch on the connection this watcher's
// workers share. A row without a key (nothing recorded its header) is
// read first, and claimed as the poller claims.
func (w *Watcher) helpOne(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry) (bool, error) {
	uid := imap.UID(e.UID)
	if e.Key == "" {
		m, err := w.peek(ctx, c, b, uid)
		if err != nil || m == nil {
			return false, w.gone(ctx, e.Loc, err)
		}
		return w.claimedBy(w.handle(ctx, c, b, m))
	}
	ctx, span := w.emailTrace(ctx, uid, e.Key, e.MessageID)
	defer span.End()
	claimed, err := w.claim(ctx, e)
	if errors.Is(err, ledger.ErrClaimed) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if claimed.State.Terminal() && claimed.IMAPDone {
		return false, nil // settled by another daemon since the listing
	}
	m, err := w.peek(ctx, c, b, uid)
	if err != nil || m == nil {
		if err != nil {
			// This session ends: the message goes back to the daemons at
			// once, not after the lease.
			if uerr := w.cfg.Ledger.Unclaim(context.WithoutCancel(ctx), e.Loc, w.cfg.Owner); uerr != nil {
				w.log.WarnContext(ctx, "could not hand the message back", "uid", e.UID, "err", uerr)
			}
		}
		return true, w.gone(ctx, e.Loc, err)
	}
	if m.id.Key != e.Key {
		// The header names another key than the row (a row recorded by
		// an older version, a server that rewrote the message): the claim
		// taken under the row's key is handed back, and the message is
		// claimed under the key its header names.
		if err := w.cfg.Ledger.Unclaim(context.WithoutCancel(ctx), e.Loc, w.cfg.Owner); err != nil {
			return true, w.ledgerErr(err)
		}
		return w.claimedBy(w.handle(ctx, c, b, m))
	}
	return true, w.run(ctx, c, b, m, claimed)
}

// gone ends the work on the message at loc that a peek did not find (err
// nil: no longer in the mailbox, so nothing to answer, and its row is
// deleted) or could not read (err, returned).
func (w *Watcher) gone(ctx context.Context, loc ledger.Loc, err error) error {
	if err != nil {
		return err
	}
	return w.ledgerErr(w.cfg.Ledger.Forget(context.WithoutCancel(ctx), loc, w.cfg.Owner))
}

// claimedBy is what handle's err says of the claim: false without error
// when another daemon had the message.
func (w *Watcher) claimedBy(err error) (bool, error) {
	if errors.Is(err, ledger.ErrClaimed) {
		return false, nil
	}
	return err == nil, err
}

// claimOrder is the order in which a daemon tries the claimable messages
// cands (oldest UID first), as indexes into cands: of the listed messages
// sharing an ordering key only the oldest may start (a sender's mail is
// answered in order), none that skip says to leave (its key busy here, its
// claim just lost), and the daemon starts at the offset-th of them,
// wrapping around, so that daemons listing the same messages at the same
// moment mostly claim different ones.
func claimOrder(cands []ledger.Entry, offset uint32, skip func(e ledger.Entry, keys []string) bool) []int {
	var firsts []int
	seen := map[string]bool{}
	for i, e := range cands {
		keys := orderKeys(e.Key, e.Sender)
		later := slices.ContainsFunc(keys, func(k string) bool { return seen[k] })
		for _, k := range keys {
			seen[k] = true
		}
		if !later && !skip(e, keys) {
			firsts = append(firsts, i)
		}
	}
	if len(firsts) == 0 {
		return nil
	}
	start := int(offset % uint32(len(firsts)))
	return slices.Concat(firsts[start:], firsts[:start])
}

// ownerOffset is where a daemon named owner starts in a listing of
// claimable messages (claimOrder): a hash of its name.
func ownerOffset(owner string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(owner))
	return h.Sum32()
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
