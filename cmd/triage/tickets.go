package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"triage/internal/clients/tickets"
	"triage/internal/clip"
	"triage/internal/settings"
)

// newTicketsCmd works on the local ticket store: list and show tickets and
// their conversations, and hand a conversation to a person (takeover) or
// back to triage (release).
func newTicketsCmd() *cobra.Command {
	var (
		path   string
		url    string
		asJSON bool
		limit  int
		config string
	)
	cmd := &cobra.Command{
		Use:   "tickets list|show ID|takeover ID|release ID",
		Short: "List tickets and their conversations; take a conversation over or give it back",
		Long: `Tickets works on the ticket store: the SQLite file --tickets-db, or the
shared store --store (a postgres:// URL); without either, the store of the
configuration --config (pipeline.tickets_db, or store:). list prints the
newest tickets first; show prints one ticket with its messages (the
customer's and our replies, by Message-ID) and notes. takeover hands the
conversation to a person: triage never answers it again, its follow-ups are
appended to the ticket and skipped with reason human_owner, and watch leaves
them for the person. A conversation another person owns is taken over only with --force.
release gives it back to triage. It may run while
triage watch is running.`,
		Example: `  triage tickets list --tickets-db /var/lib/triage/tickets.db
  triage tickets list --config /etc/triage/triage.yaml
  triage tickets show TKT-000123 --json
  triage tickets takeover TKT-000123 --owner anna
  triage tickets release TKT-000123`,
	}
	table := settings.Table{
		ticketsDBSetting(&path),
		storeSetting(&url),
		{Flag: "json", Usage: "print JSON", Var: settings.Bool(&asJSON, false)},
		configSetting(&config, "read pipeline.tickets_db (or store:) from this configuration"+configFound),
	}
	table.Register(cmd.PersistentFlags())
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := table.Resolve(cmd.Flags(), nil, nil); err != nil {
			return usageError(err)
		}
		if err := table.Check(); err != nil {
			return usageErr("tickets: %v", err)
		}
		return nil
	}

	open := func(cmd *cobra.Command) (*tickets.SQLite, error) {
		from := "--tickets-db"
		if url == "" && !table.Given(cmd.Flags(), "tickets-db", os.Getenv) {
			if cfg, how := findConfig(cmd.Flags(), config); cfg != "" {
				wo, file, err := loadWatchConfig(cfg)
				if err != nil {
					return nil, err
				}
				switch {
				case wo.Store != "":
					if err := checkStoreURL(wo.Store); err != nil {
						return nil, usageErr("%s: store %v", cfg, err)
					}
					url = wo.Store
				case file.Has("pipeline.tickets_db"):
					path, from = wo.TicketsDB, cfg+" (pipeline.tickets_db)"
				}
				if how != "--config" {
					fmt.Fprintf(cmd.ErrOrStderr(), "triage: tickets of the configuration %s (%s)\n", cfg, how)
				}
			}
		}
		if url != "" {
			s, err := tickets.Open(context.Background(), url)
			if err != nil {
				return nil, failure(err)
			}
			return s, nil
		}
		if _, err := os.Stat(path); err != nil {
			if from == "--tickets-db" {
				return nil, usageErr("tickets: --tickets-db: %v (name the store with --tickets-db FILE, or --config FILE to use its pipeline.tickets_db)", err)
			}
			return nil, usageErr("tickets: %s: %v", from, err)
		}
		s, err := tickets.OpenSQLite(path)
		if err != nil {
			return nil, failure(err)
		}
		return s, nil
	}
	notFound := func(err error) error {
		if errors.Is(err, tickets.ErrNotFound) {
			return usageErr("%v", err)
		}
		var ee *cmdError
		if errors.As(err, &ee) {
			return err
		}
		return failure(err)
	}

	// withStore runs f with the store open, closing it after.
	withStore := func(f func(cmd *cobra.Command, s *tickets.SQLite, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			s, err := open(cmd)
			if err != nil {
				return err
			}
			defer s.Close()
			return f(cmd, s, args)
		}
	}
	// change applies a takeover or release to ticket args[0] and prints it.
	change := func(apply func(s *tickets.SQLite, ctx context.Context, id string) error) func(*cobra.Command, []string) error {
		return withStore(func(cmd *cobra.Command, s *tickets.SQLite, args []string) error {
			if err := apply(s, cmd.Context(), args[0]); err != nil {
				return notFound(err)
			}
			st, err := s.Get(cmd.Context(), args[0])
			if err != nil {
				return notFound(err)
			}
			return printChange(cmd.OutOrStdout(), st, asJSON)
		})
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List the newest tickets",
		Args:  cobra.NoArgs,
		RunE: withStore(func(cmd *cobra.Command, s *tickets.SQLite, _ []string) error {
			ls, err := s.List(cmd.Context(), limit)
			if err != nil {
				return failure(err)
			}
			return printTickets(cmd.OutOrStdout(), ls, asJSON)
		}),
	}
	bindSettings(list, settings.Table{{Flag: "limit", Usage: "at most this many tickets (0: all)", Var: settings.Int(&limit, 50, settings.AtLeast(0))}})

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a ticket with its messages and notes",
		Args:  cobra.ExactArgs(1),
		RunE: withStore(func(cmd *cobra.Command, s *tickets.SQLite, args []string) error {
			st, err := s.Get(cmd.Context(), args[0])
			if err != nil {
				return notFound(err)
			}
			return printTicket(cmd.OutOrStdout(), st, asJSON)
		}),
	}

	var owner string
	var force bool
	takeover := &cobra.Command{
		Use:   "takeover ID",
		Short: "Hand the conversation to a person: triage no longer answers it",
		Args:  cobra.ExactArgs(1),
		RunE: change(func(s *tickets.SQLite, ctx context.Context, id string) error {
			st, err := s.Get(ctx, id)
			if err != nil {
				return err
			}
			if st.AgentDisabled && st.Owner != "" && st.Owner != owner && !force {
				return usageErr("tickets: %s is owned by %s; add --force to take it over as %s", id, st.Owner, owner)
			}
			return s.Takeover(ctx, id, owner)
		}),
	}
	bindSettings(takeover, settings.Table{
		{Flag: "owner", Env: "USER", Usage: "who takes the conversation over", Var: settings.String(&owner, "a person")},
		{Flag: "force", Usage: "take over a conversation another person owns", Var: settings.Bool(&force, false)},
	})

	release := &cobra.Command{
		Use:   "release ID",
		Short: "Give the conversation back to triage",
		Args:  cobra.ExactArgs(1),
		RunE: change(func(s *tickets.SQLite, ctx context.Context, id string) error {
			return s.Release(ctx, id)
		}),
	}
	cmd.AddCommand(list, show, takeover, release)
	return cmd
}

func owner(agentDisabled bool, who string) string {
	if !agentDisabled {
		return "triage"
	}
	if who == "" {
		return "person"
	}
	return "person: " + who
}

func printTickets(w io.Writer, ls []tickets.Listed, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, l := range ls {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	}
	// A stranger's words never reach the terminal as control characters.
	tw := tabwriter.NewWriter(clip.NewEscapeWriter(w), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TICKET\tCREATED\tCUSTOMER\tSERIAL\tMESSAGES\tNOTES\tOWNER\tSUMMARY")
	for _, l := range ls {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", l.TicketID, stamp(l.CreatedAt), l.CustomerEmail,
			dash(l.SerialNumber), l.Messages, l.Notes, owner(l.AgentDisabled, l.Owner), clip.Line(l.Summary, 60))
	}
	return tw.Flush()
}

func printTicket(w io.Writer, st *tickets.State, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(st)
	}
	w = clip.NewEscapeWriter(w)
	fmt.Fprintf(w, "%s  %s  owner %s\n", st.TicketID, st.Status, owner(st.AgentDisabled, st.Owner))
	fmt.Fprintf(w, "  customer %s, serial %s, priority %s, created %s\n", st.CustomerEmail, dash(st.SerialNumber), dash(st.Priority), stamp(st.CreatedAt))
	fmt.Fprintf(w, "  summary  %s\n", clip.Line(st.Summary, 200))
	fmt.Fprintf(w, "messages (%d):\n", len(st.Messages))
	for _, m := range st.Messages {
		who := "customer " + m.From
		if m.Direction == tickets.Outbound {
			who = "us"
		}
		fmt.Fprintf(w, "  %s  %-3s %s  %s  %q\n", stamp(m.At), m.Direction, m.MessageID, who, clip.Line(m.Subject, 80))
	}
	fmt.Fprintf(w, "notes (%d):\n", len(st.Notes))
	for _, n := range st.Notes {
		fmt.Fprintf(w, "  %s  %s (%s):\n", stamp(n.At), n.From, n.MessageID)
		for _, line := range strings.Split(strings.TrimSpace(n.Text), "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	return nil
}

func printChange(w io.Writer, st *tickets.State, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"ticket_id": st.TicketID, "agent_disabled": st.AgentDisabled, "owner": st.Owner})
	}
	w = clip.NewEscapeWriter(w)
	if st.AgentDisabled {
		fmt.Fprintf(w, "%s taken over by %s: triage will not answer this conversation; follow-ups are appended to the ticket\n", st.TicketID, dash(st.Owner))
		return nil
	}
	fmt.Fprintf(w, "%s released: triage answers this conversation again\n", st.TicketID)
	return nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}
