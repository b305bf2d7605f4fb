package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"triage/internal/settings"
	"triage/internal/store"
)

// checkStoreURL accepts no store or a PostgreSQL URL (the store setting's
// check).
func checkStoreURL(v string) error {
	if v != "" && !store.IsURL(v) {
		return fmt.Errorf("%q is not a postgres:// URL (the SQLite files are --ledger and --tickets-db)", store.Redact(v))
	}
	return nil
}

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store migrate --from-sqlite LEDGER TICKETS --store URL",
		Short: "Work on the shared PostgreSQL store",
	}
	cmd.AddCommand(newStoreMigrateCmd())
	return cmd
}

func newStoreMigrateCmd() *cobra.Command {
	var target string
	var fromSQLite bool
	var table settings.Table
	cmd := &cobra.Command{
		Use:   "migrate --from-sqlite LEDGER TICKETS --store URL",
		Short: "Create the store's schema, or copy an installation's SQLite files into it",
		Long: `Migrate brings the schema of the store (--store, $TRIAGE_STORE) up to date;
every command does that when it starts, so this is for preparing a store
ahead of time. With --from-sqlite it then copies an existing installation,
the ledger file LEDGER and the ticket file TICKETS, into it: every message
with its state, digest, failure detail, outcome, text and trace id, every
reply and draft with its fate, the Sent folder scan, the outbox indexes,
reply mode auto's modes and switches, every ticket under its own ID with
its messages and notes. The model budget is not copied (an installation
without a store keeps it in memory; the store's starts full). The store must
hold no ledger rows and no tickets yet; nothing is copied unless
everything is (one transaction). The SQLite files are brought up to date
first, as any triage command opening them would, and otherwise only read. Stop
triage watch first, and point it at the store afterwards (store: in its
configuration).`,
		Example: `  triage store migrate --store postgres://triage@db.example/triage
  triage store migrate --from-sqlite /var/lib/triage/ledger.db /var/lib/triage/tickets.db \
      --store postgres://triage@db.example/triage`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return usageErr("store migrate: %v", err)
			}
			if target == "" {
				return usageErr("store migrate: --store URL (or $TRIAGE_STORE) is required")
			}
			if err := table.Check(); err != nil {
				return usageErr("store migrate: %v", err)
			}
			switch {
			case fromSQLite && len(args) != 2:
				return usageErr("store migrate: --from-sqlite takes two files, the ledger and the ticket store (got %d)", len(args))
			case !fromSQLite && len(args) != 0:
				return usageErr("store migrate: files given without --from-sqlite")
			}
			ctx := cmd.Context()
			dst, err := store.Open(ctx, target, store.Options{})
			if err != nil {
				return failure(err)
			}
			defer dst.Close()
			if err := prepareStore(ctx, dst); err != nil {
				return failure(err)
			}
			out := cmd.OutOrStdout()
			if !fromSQLite {
				fmt.Fprintf(out, "store %s: schema up to date\n", dst.Name())
				return nil
			}
			for i, what := range []string{"ledger", "ticket store"} {
				if !fileExists(args[i]) {
					return usageErr("store migrate: %s %s: no such file", what, args[i])
				}
			}
			n, err := copyFromSQLite(ctx, dst, args[0], args[1])
			if err != nil {
				return failure(err)
			}
			fmt.Fprintf(out, "copied into %s: %d messages, %d replies, %d sent-folder scans, %d outbox index rows, "+
				"%d auto reply modes (%d switches), %d tickets (%d messages, %d notes)\n",
				dst.Name(), n.Messages, n.Replies, n.SentScans, n.OutboxIndex,
				n.AutoModes, n.Switches, n.Tickets, n.TicketMessages, n.TicketNotes)
			return nil
		},
	}
	table = settings.Table{
		storeSetting(&target),
		{Flag: "from-sqlite", Usage: "copy the SQLite ledger and ticket files given as arguments into the store",
			Var: settings.Bool(&fromSQLite, false)},
	}
	table.Register(cmd.Flags())
	return cmd
}
