package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	netmail "net/mail"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/settings"
)

func newCheckCmd() *cobra.Command {
	var (
		dir, config, envFile string
		asJSON               bool
		table                settings.Table
	)
	cmd := &cobra.Command{
		Use:   "check [--instructions DIR] [--config FILE [--env-file FILE]] [--json]",
		Short: "Validate the instructions (and a watch configuration) without starting anything",
		Long: `Check loads main.md, every scenarios/*.md and tools.yaml exactly as process,
watch and eval do at start-up (the same function), and prints each scenario
with its functions and detection rules, and every tool with its binding and
policies. Every problem of every file is reported in one run, each with its
file and field; exit status 2.

With a watch configuration (--config FILE, else $TRIAGE_CONFIG, else
/etc/triage/triage.yaml when it exists) it first runs exactly the start-up
validation of triage watch (triage watch --check): every section, path, URL,
secret and the model credentials, without connecting or creating anything.
--env-file loads the secrets the way watch --env-file does. For an oauth2
block it then obtains one access token from the token endpoint and says for
which account and how long it is valid (never the token itself); a rotated
refresh token is saved as watch saves it. When the configuration's ledger
exists (its SQLite file, or its store), check reads its complaint clocks,
read only, and warns about every consumer complaint whose deadline passed
without an answer on its merits (triage ledger --due lists them).

--json prints one JSON object instead: valid (true or false), problems and
warnings (lists of lines), config (path, how it was found), instructions
(source: built-in or the directory; tools: the tools.yaml read, or that the
built-in bindings apply), scenarios (name, version, file, functions),
tools (name, spec, effect, final, grounded, max_calls, declared_by),
mcp_servers, complaints (open, overdue: the complaint clocks of the
configuration's ledger), and oauth2 (setting, account, token_url, grant, expires,
valid_for_seconds, shared_with; never the token). The exit status is the
same as without it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return usageError(err)
			}
			c := checkRun{dir: dir, config: config, envFile: envFile}
			if !asJSON {
				return c.run(cmd, cmd.OutOrStdout(), nil)
			}
			r := &checkReport{Valid: true}
			return r.write(cmd.OutOrStdout(), c.run(cmd, io.Discard, r))
		},
	}
	table = settings.Table{
		withUsage(instructionsSetting(&dir), "instructions directory (default: the built-in instructions)"),
		{Flag: "json", Usage: "print one JSON object: valid, problems, warnings, the configuration, the instructions' source, scenarios, tools, MCP servers and the OAuth2 tokens obtained (account, grant, expiry; never the token)",
			Var: settings.Bool(&asJSON, false)},
		envFileSetting(&envFile),
		configSetting(&config, "also validate this triage watch configuration, exactly as watch does at start, without connecting"+configFound),
	}
	table.Register(cmd.Flags())
	return cmd
}

// checkRun is one triage check: its resolved settings.
type checkRun struct {
	dir, config, envFile string
}

// run checks, printing to out; with r it fills the JSON report too.
func (c *checkRun) run(cmd *cobra.Command, out io.Writer, r *checkReport) error {
	if err := loadEnvFile(c.envFile); err != nil {
		return err
	}
	dir, jurisdiction := c.dir, ""
	if path, _ := findConfig(cmd.Flags(), c.config); path != "" {
		if r != nil {
			r.Config = &checkConfig{Path: path}
		}
		// The watch start-up validation, exactly: the same function.
		args := []string{"--config", path, "--check"}
		if cmd.Flags().Changed("instructions") {
			args = append(args, "--instructions", dir)
		}
		wcmd, wo := watchCommand()
		if err := wcmd.ParseFlags(args); err != nil {
			return usageErr("check: %v", err)
		}
		ws, err := loadWatch(wcmd.Flags(), wo)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: configuration valid (%s; nothing was created or connected)\n", wo.Config, ws.foundText())
		warnings := fromWarnings(wo)
		for _, w := range warnings {
			fmt.Fprintln(out, "warning: "+w)
		}
		if r != nil {
			r.Config.Found, r.Warnings = ws.foundText(), append(r.Warnings, warnings...)
		}
		// OAuth2: one token from each endpoint proves the client,
		// secret, grant and scopes (the mail servers are not contacted).
		tokens, err := checkOAuth2(out, ws)
		if r != nil {
			r.OAuth2 = tokens
		}
		if err != nil {
			return err
		}
		if w := checkComplaintClocks(cmd.Context(), out, wo, r); w != "" {
			fmt.Fprintln(out, "warning: "+w)
			if r != nil {
				r.Warnings = append(r.Warnings, w)
			}
		}
		fmt.Fprintln(out)
		dir, jurisdiction = wo.Instructions, wo.Jurisdiction
	}
	ins, err := loadInstructions(dir)
	if err != nil {
		return err
	}
	if ins.Policy, err = ins.Policy.Select(jurisdiction); err != nil {
		return usageErr("pipeline.jurisdiction: %v", err)
	}
	printScenarios(out, ins.Scenarios)
	printTools(out, ins.Tools, ins.Scenarios)
	printPolicy(out, ins.Policy)
	fmt.Fprintf(out, "\n%s: a reply's words are read for %s\n", instructions.LexiconFile, ins.Lexicon)
	if r != nil {
		r.addInstructions(dir, ins)
	}
	// MCP tools: start their servers and check every declaration
	// against the server's inputSchema; an unreachable server fails.
	bk, err := startBackends(cmd.Context(), ins.Scenarios, ins.Tools, true, nil)
	if err != nil {
		return err
	}
	if n := bk.Servers(); n > 0 {
		fmt.Fprintf(out, "\nMCP servers: %d reachable; every declaration fits its tool's inputSchema\n", n)
		if r != nil {
			r.MCPServers = n
		}
	}
	return bk.Close()
}

func printScenarios(w io.Writer, set *instructions.Scenarios) {
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
			tags = append(tags, "escalates: notify_staff before the reply, then a person takes the conversation over")
		}
		if sc.FollowUp {
			tags = append(tags, "answers follow-ups of an existing ticket (never chosen for a new email)")
		}
		if len(tags) > 0 {
			fmt.Fprintf(w, "  %s\n", strings.Join(tags, "; "))
		}
		r := sc.Rules
		switch {
		case sc.FollowUp:
			fmt.Fprintf(w, "  rules: none (chosen by the pipeline for follow-ups)\n")
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

// printPolicy prints the jurisdictions of policy.yaml and the one that
// applies.
func printPolicy(w io.Writer, p *decision.Policy) {
	if p == nil {
		return
	}
	code, j := p.Jurisdiction()
	codes := slices.Sorted(maps.Keys(p.Jurisdictions))
	fmt.Fprintf(w, "\n%s: decisions under %s (%s); jurisdictions: %s\n", instructions.PolicyFile, code, j.Name, strings.Join(codes, ", "))
}

// printTools prints every binding of tools.yaml with how it runs, its
// policies and the scenarios that declare it. Header values and expanded
// ${VAR}s are never printed.
func printTools(w io.Writer, ts *instructions.Tools, set *instructions.Scenarios) {
	fmt.Fprintf(w, "\n%s: %d tools\n", ts.File, len(ts.Tools))
	for _, name := range ts.Names() {
		t := ts.Get(name)
		fmt.Fprintf(w, "\n%s  [%s]\n", name, t.Spec)
		var tags []string
		if t.Effect {
			tags = append(tags, "effect (skipped in dry runs; the same call repeated returns the first result)")
		}
		if t.Final {
			tags = append(tags, "final (its success means the email is handled)")
		}
		if t.Grounded {
			tags = append(tags, "grounded (every fact the reply states must be backed, else ungrounded_claim)")
		}
		if t.Parallel {
			tags = append(tags, "parallel (runs at once with the other look-ups of a turn that asks only for parallel tools)")
		}
		if t.Prefetch {
			tags = append(tags, fmt.Sprintf("prefetch (runs before the first model turn, once per serial found in the message, at most %d; the first user turn holds its results)", dispatcher.MaxPrefetchSerials))
		}
		if t.MaxCalls > 0 {
			tags = append(tags, fmt.Sprintf("max_calls %d per email", t.MaxCalls))
		} else if t.Effect {
			tags = append(tags, "max_calls 1 per email (default for an effect)")
		}
		for _, tag := range tags {
			fmt.Fprintf(w, "  %s\n", tag)
		}
		for _, a := range slices.Sorted(maps.Keys(t.Args)) {
			fmt.Fprintf(w, "  args.%s: %s\n", a, argPolicy(t.Args[a]))
		}
		for _, r := range t.Requires {
			req := "requires an earlier successful " + r.Call
			if len(r.Result) > 0 {
				b, _ := json.Marshal(r.Result)
				req += " with result " + string(b)
			}
			if len(r.ResultOneOf) > 0 {
				alts := make([]string, len(r.ResultOneOf))
				for i, alt := range r.ResultOneOf {
					b, _ := json.Marshal(alt)
					alts[i] = string(b)
				}
				req += " with a result matching one of " + strings.Join(alts, " or ")
			}
			if len(r.Same) > 0 {
				req += ", same " + strings.Join(r.Same, ", ")
			}
			if r.IfDeclared {
				req += " (in scenarios that declare " + r.Call + ")"
			}
			fmt.Fprintf(w, "  %s\n", req)
		}
		var users []string
		for _, sc := range set.Scenarios {
			if sc.Function(name) != nil {
				users = append(users, sc.Name)
			}
		}
		if len(users) == 0 {
			users = []string{"none"}
		}
		fmt.Fprintf(w, "  declared by: %s\n", strings.Join(users, ", "))
	}
}

func argPolicy(p *instructions.Arg) string {
	var parts []string
	if p.From != "" {
		parts = append(parts, "from "+p.From)
	}
	if len(p.Enum) > 0 {
		parts = append(parts, "one of "+strings.Join(p.Enum, ", "))
	}
	if p.Pattern != "" {
		parts = append(parts, "matches "+p.Pattern)
	}
	if p.MaxLength > 0 {
		parts = append(parts, fmt.Sprintf("at most %d characters", p.MaxLength))
	}
	return strings.Join(parts, "; ")
}

// fromWarnings says when replies would go out under an address nobody
// chose (pipeline.from unset: the example default) or one that is not the
// account triage logs in as (servers refuse or rewrite a From the account
// may not send as: Microsoft 365 needs Send As, Gmail a verified alias).
func fromWarnings(o *watchOptions) []string {
	from := o.From
	if s := o.table.Lookup("from"); s != nil && s.Source() == "" {
		return []string{fmt.Sprintf("pipeline.from is not set: replies go out as %q; set it to the support address", from)}
	}
	a, err := netmail.ParseAddress(from)
	if err != nil {
		return nil // loadWatch reports it
	}
	login := o.SMTP.User
	if login == "" {
		login = o.IMAP.User
	}
	if !strings.Contains(login, "@") || strings.EqualFold(login, a.Address) {
		return nil
	}
	return []string{fmt.Sprintf("pipeline.from %s is not the login account %s: the server may refuse or rewrite it unless %s may send as %s", a.Address, login, login, a.Address)}
}
