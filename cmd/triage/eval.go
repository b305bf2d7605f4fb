package main

import "github.com/spf13/cobra"

// newEvalCmd is replaced by the eval implementation.
func newEvalCmd() *cobra.Command {
	return &cobra.Command{Use: "eval", Short: "Run the eval suite (not implemented yet)", RunE: func(*cobra.Command, []string) error { return usageErr("eval: not implemented yet") }}
}
