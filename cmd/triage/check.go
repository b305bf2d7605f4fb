package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"triage/internal/scenario"
)

func newCheckCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "check [--instructions DIR]",
		Short: "Validate the scenario files and print what each declares",
		Long: `Check loads main.md and every scenarios/*.md exactly as process and watch do
at start-up, and prints each scenario with its functions and detection
rules. A broken file is reported with its name and field; exit status 2.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := loadScenarios(dir)
			if err != nil {
				return err
			}
			printScenarios(cmd.OutOrStdout(), set)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "instructions", envOr("TRIAGE_INSTRUCTIONS", ""), "instructions directory (default: the built-in instructions)")
	return cmd
}

func printScenarios(w io.Writer, set *scenario.Set) {
	fmt.Fprintf(w, "main.md: %d characters of shared rules\n", len(set.Main))
	for _, sc := range set.Scenarios {
		fmt.Fprintf(w, "\n%s", sc.Name)
		if sc.Version != "" {
			fmt.Fprintf(w, " (version %s)", sc.Version)
		}
		fmt.Fprintf(w, "  [%s]\n", sc.File)
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(sc.Description))
		var tags []string
		if sc.Fallback {
			tags = append(tags, "fallback when the model is unavailable")
		}
		if sc.Escalate {
			tags = append(tags, "may mail staff addresses")
		}
		if len(tags) > 0 {
			fmt.Fprintf(w, "  %s\n", strings.Join(tags, "; "))
		}
		r := sc.Rules
		switch {
		case r.Serial == "" && len(r.Keywords) == 0:
			fmt.Fprintf(w, "  rules: none (chosen by the model)\n")
		default:
			serial := r.Serial
			if serial == "" {
				serial = "any"
			}
			fmt.Fprintf(w, "  rules: serial %s; keywords %d; priority %d\n", serial, len(r.Keywords), r.Priority)
		}
		fmt.Fprintf(w, "  functions:\n")
		for _, f := range sc.Functions {
			fmt.Fprintf(w, "    - %s(%s): %s\n", f.Name, paramList(f.Parameters), oneLine(f.Description))
		}
	}
}

// paramList renders "a, b?" from a JSON Schema object (? marks optional).
func paramList(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	req := map[string]bool{}
	if rs, ok := schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, n := range names {
		if !req[n] {
			names[i] = n + "?"
		}
	}
	return strings.Join(names, ", ")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 90 {
		return string(r[:90]) + "…"
	}
	return s
}

func sortStrings(s []string) { sort.Strings(s) }
