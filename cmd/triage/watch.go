package main

import "github.com/spf13/cobra"

// newWatchCmd is replaced by the IMAP watcher implementation.
func newWatchCmd() *cobra.Command {
	return &cobra.Command{Use: "watch", Short: "Watch an IMAP inbox (not implemented yet)", RunE: func(*cobra.Command, []string) error { return usageErr("watch: not implemented yet") }}
}

// newLedgerCmd is replaced by the ledger implementation.
func newLedgerCmd() *cobra.Command {
	return &cobra.Command{Use: "ledger", Short: "Show the watch ledger (not implemented yet)", RunE: func(*cobra.Command, []string) error { return usageErr("ledger: not implemented yet") }}
}
