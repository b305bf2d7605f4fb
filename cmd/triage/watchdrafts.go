package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"slices"
	"strings"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/instructions"
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
			return nil, nil, failure(err)
		}
		return led, func() { led.Close() }, nil
	}
	if store.IsURL(o.ledgerTarget()) {
		led, err := ledger.Open(ctx, ledger.Config{Path: o.ledgerTarget()})
		if err != nil {
			return nil, nil, failure(err)
		}
		return led, func() { led.Close() }, nil
	}
	unlock, err := watch.Lock(o.Ledger + ".lock")
	if err != nil {
		var le *watch.LockedError
		if errors.As(err, &le) {
			return nil, nil, &cmdError{kind: errLocked, err: fmt.Errorf("watch: another triage watch (pid %d) is already using %s; exiting without touching the mailbox", le.PID, o.Ledger)}
		}
		return nil, nil, failure(err)
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
		return nil, nil, failure(err)
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
// handled (seen in the Sent folder). A reply that is triage's draft, sent
// as it was or edited (r.DraftOutcome), is a draft sent: it joins the
// conversation on its ticket (so the customer's answer finds it) and the
// conversation stays triage's. Only a reply a person wrote outside a draft
// takes the conversation over, so the agent never answers it again. The
// owner recorded is the person, never the bare shared address (see
// replier); ours are the addresses and display names the mailbox itself
// sends under (ourIdentity).
func personReplyHook(store tickets.Creator, ours []string, log *slog.Logger) func(context.Context, watch.PersonReply) error {
	conv, ok := store.(tickets.Conversations)
	if !ok {
		return nil
	}
	return func(ctx context.Context, r watch.PersonReply) error {
		who := replier(r, ours)
		// The ticket is the customer's the reply answers (the thread's
		// sender): a Message-ID is no secret, and a stranger's ticket
		// holding the same one must not take the reply instead.
		customer := r.Thread.Sender
		if customer == "" {
			return nil // no customer to match: no ticket is theirs
		}
		if r.DraftOutcome != "" {
			st, err := conv.Find(ctx, customer, []string{r.Thread.MessageID, r.Thread.Matched})
			if errors.Is(err, tickets.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			log.Info("triage's draft was sent by a person: the conversation stays triage's", "ticket", st.TicketID, "by", who, "outcome", r.DraftOutcome, "reply", r.MessageID)
			if r.MessageID == "" {
				return nil
			}
			return conv.AddMessage(ctx, st.TicketID, tickets.Message{MessageID: r.MessageID, Direction: tickets.Outbound, From: who, At: r.Date})
		}
		for _, id := range []string{r.Thread.MessageID, r.Thread.Matched} {
			ticket, err := conv.TakeoverByMessageID(ctx, id, customer, who)
			if errors.Is(err, tickets.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			log.Info("a person replied in the thread: conversation taken over", "ticket", ticket, "by", who, "reply", r.MessageID)
			if r.MessageID != "" {
				// The person's reply is part of the conversation: the
				// customer's answer to it finds the ticket.
				return conv.AddMessage(ctx, ticket, tickets.Message{MessageID: r.MessageID, Direction: tickets.Outbound, From: who, At: r.Date})
			}
			return nil
		}
		return nil
	}
}

// replier names who wrote a person's reply. From a mailbox of a person's
// own (its address is not one of ours): that address, with its display
// name. From the shared mailbox: the Sender header (the person sending for
// it), else the From display name when it is not one of ours, else "a
// person via" the mailbox's address. Names and addresses compare without
// case.
func replier(r watch.PersonReply, ours []string) string {
	isOurs := func(s string) bool {
		return slices.ContainsFunc(ours, func(o string) bool { return strings.EqualFold(o, s) })
	}
	named := func(name, addr string) string {
		if name = strings.Join(strings.Fields(name), " "); name != "" {
			return name + " <" + addr + ">"
		}
		return addr
	}
	name := strings.Join(strings.Fields(r.FromName), " ")
	switch s := r.Sender; {
	case !isOurs(r.From):
		return named(name, r.From)
	case s.Address != "" && !strings.EqualFold(s.Address, r.From):
		return named(s.Name, s.Address)
	case name != "" && !isOurs(name):
		return name + " via " + r.From
	}
	return "a person via " + r.From
}

// ourIdentity lists the addresses and display names triage's own mail goes
// out under (the From of the configuration, the reply styles of main.md):
// a reply from the mailbox under one of them says nothing of who wrote it.
func ourIdentity(from string, set *instructions.Scenarios) []string {
	var ours []string
	if a, err := netmail.ParseAddress(from); err == nil {
		ours = append(ours, a.Address)
		if a.Name != "" {
			ours = append(ours, a.Name)
		}
	}
	for _, st := range set.Replies {
		if st.FromName != "" {
			ours = append(ours, st.FromName)
		}
	}
	return ours
}
