package main

import (
	"context"
	"errors"
	"os"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
)

// errDryRun is what the stand-ins below answer. The dispatcher never lets an
// effect tool reach them in a dry run; they make sure nothing could change
// even if something did.
var errDryRun = errors.New("dry run: nothing with an effect is done")

// dryRunSender stands in for the outbox, SMTP and the Drafts folder in a dry
// run: nothing is written or sent.
type dryRunSender struct{}

func (dryRunSender) Send(context.Context, *mail.Reply) (triage.Receipt, error) {
	return triage.Receipt{}, errDryRun
}

// dryRunTickets stands in for a local ticket store that does not exist yet:
// a dry run does not create it.
type dryRunTickets struct{}

func (dryRunTickets) Create(context.Context, tickets.Request) (tickets.Ticket, error) {
	return tickets.Ticket{}, errDryRun
}

// No store means no conversation: lookups find nothing.
func (dryRunTickets) Get(context.Context, string) (*tickets.State, error) {
	return nil, tickets.ErrNotFound
}

func (dryRunTickets) Find(context.Context, string, []string) (*tickets.State, error) {
	return nil, tickets.ErrNotFound
}

func (dryRunTickets) AddNote(context.Context, string, tickets.Note) (bool, error) {
	return false, errDryRun
}

func (dryRunTickets) AddMessage(context.Context, string, tickets.Message) error { return errDryRun }

func (dryRunTickets) Takeover(context.Context, string, string) error { return errDryRun }

func (dryRunTickets) Release(context.Context, string) error { return errDryRun }

func (dryRunTickets) TakeoverByMessageID(context.Context, string, string, string) (string, error) {
	return "", errDryRun
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
