package main

import "github.com/spf13/cobra"

func newProcessCmd() *cobra.Command { return &cobra.Command{Use: "process"} }
func newCheckCmd() *cobra.Command   { return &cobra.Command{Use: "check"} }
