package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/store"
	"triage/internal/watch"
)

// openWatchLedger opens the ledger. On SQLite it first takes the ledger
// lock (one watch per ledger file) and then ends the claims a killed
// predecessor left (nobody else can hold any). A PostgreSQL store needs no
// lock file: several daemons share it, and claims and the poll lock keep
// them apart. A dry run takes no lock and opens an existing ledger
// read-only (to skip what is already handled), or none at all: it writes
// nothing. The returned func releases both.
func openWatchLedger(ctx context.Context, o *watchOptions) (*ledger.Ledger, func(), error) {
	if o.DryRun {
		if o.Store == "" && !fileExists(o.Ledger) {
			return nil, func() {}, nil
		}
		led, err := ledger.Open(ctx, ledger.Config{Path: o.ledgerTarget(), ReadOnly: true})
		if err != nil {
			return nil, nil, &exitError{code: exitFailed, err: err}
		}
		return led, func() { led.Close() }, nil
	}
	if store.IsURL(o.ledgerTarget()) {
		led, err := ledger.Open(ctx, ledger.Config{Path: o.ledgerTarget()})
		if err != nil {
			return nil, nil, &exitError{code: exitFailed, err: err}
		}
		return led, func() { led.Close() }, nil
	}
	unlock, err := watch.Lock(o.Ledger + ".lock")
	if err != nil {
		var le *watch.LockedError
		if errors.As(err, &le) {
			return nil, nil, &exitError{code: exitLocked, err: fmt.Errorf("watch: another triage watch (pid %d) is already using %s; exiting without touching the mailbox", le.PID, o.Ledger)}
		}
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	led, err := ledger.Open(ctx, ledger.Config{Path: o.ledgerTarget()})
	if err == nil {
		err = led.ReleaseClaims(ctx)
	}
	if err != nil {
		if led != nil {
			led.Close()
		}
		unlock()
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	return led, func() { led.Close(); unlock() }, nil
}

// ledgerTarget is where the ledger lives: the --store URL when there is
// one, else the --ledger file (and its lock file beside it).
func (o *watchOptions) ledgerTarget() string {
	if o.Store != "" {
		return o.Store
	}
	return o.Ledger
}

// ledgerName is ledgerTarget for logs and messages: a URL without its
// password.
func (o *watchOptions) ledgerName() string {
	if o.Store != "" {
		return store.Redact(o.Store)
	}
	return o.Ledger
}

// noSMTP is the mail sender of a watch in draft mode without smtp: drafts
// need none, and a scenario that sends (reply_mode: send) fails, so its mail
// is left for a person.
type noSMTP struct{}

func (noSMTP) Send(context.Context, *mail.Reply) (triage.Receipt, error) {
	return triage.Receipt{}, errors.New("watch: this scenario sends its reply (reply_mode: send) but the configuration has no smtp; left for a person")
}

// personReplyHook is what watch does when a person replied in a thread it
// handled (seen in the Sent folder): the conversation's ticket is taken
// over, so the agent never answers it again.
func personReplyHook(store tickets.Creator, log *slog.Logger) func(context.Context, watch.PersonReply) error {
	conv, ok := store.(tickets.Conversations)
	if !ok {
		return nil
	}
	return func(ctx context.Context, r watch.PersonReply) error {
		for _, id := range []string{r.Thread.MessageID, r.Thread.Matched} {
			ticket, err := conv.TakeoverByMessageID(ctx, id, r.From)
			if errors.Is(err, tickets.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			log.Info("a person replied in the thread: conversation taken over", "ticket", ticket, "by", r.From, "reply", r.MessageID)
			if r.MessageID != "" {
				// The person's reply is part of the conversation: the
				// customer's answer to it finds the ticket.
				return conv.AddMessage(ctx, ticket, tickets.Message{MessageID: r.MessageID, Direction: tickets.Outbound, From: r.From, At: r.Date})
			}
			return nil
		}
		return nil
	}
}
