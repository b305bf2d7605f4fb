package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/emersion/go-message/charset"
	"github.com/spf13/cobra"

	"triage/internal/clip"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/settings"
	"triage/internal/store"
)

// newLedgerCmd lists what the watch ledger recorded, for a person looking
// into a complaint. It only reads the ledger.
func newLedgerCmd() *cobra.Command {
	var (
		path, config, state string
		storeURL, before    string
		limit               int
		asJSON, listReplies bool
		due                 bool
		table               settings.Table
	)
	cmd := &cobra.Command{
		Use:   "ledger [--ledger FILE | --store URL | --config FILE] [--state S] [--limit N] [--replies [--before TIME] | --due] [--json]",
		Short: "List recent messages of the watch ledger and what happened to them",
		Long: `Ledger lists the most recent messages triage watch has seen, newest first,
with their state (replied, drafted, skipped, failed, needs_human,
over_limit, processing; seen: recorded by the daemon polling a shared
store's inbox, not claimed yet), the reason, the reply's Message-ID and,
when tracing is on, the message's trace id (TRACE), for a person looking
into a complaint. --replies lists replies and drafts instead, with
their state (reply_pending, sent, needs_human; draft_pending, draft_stored)
and, for drafts, what a person did with them, newest first, --limit at a
time; --before TIME (as the listing's last line prints it) shows the page
before. --due lists the consumer complaints not answered on their merits
(the complaint clock), by time left: overdue ones first, marked OVERDUE,
then the soonest deadline. Neither listing reads reply bodies. 'triage ledger stats' sums
the drafts up per scenario. It only reads the ledger and may run
while triage watch is running.`,
		Example: `  triage ledger --ledger /var/lib/triage/ledger.db --state needs_human
  triage ledger --config /etc/triage/triage.yaml --limit 20 --json
  triage ledger --replies --state needs_human --before 2026-03-01T08:15:02.311Z
  triage ledger --config /etc/triage/triage.yaml --due`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := table.Resolve(cmd.Flags(), nil, nil); err != nil {
				return usageError(err)
			}
			if state != "" {
				valid, what := names(ledger.States), "message"
				if listReplies {
					valid, what = names(replies.ReplyStates), "reply"
				}
				if !slices.Contains(valid, state) {
					return usageErr("ledger: --state %q is not a %s state; valid: %s", state, what, strings.Join(valid, ", "))
				}
			}
			if due && (listReplies || state != "" || before != "") {
				return usageErr("ledger: --due lists the complaints not answered on their merits; it takes no --replies, --state or --before")
			}
			var beforeT time.Time
			if before != "" {
				if !listReplies {
					return usageErr("ledger: --before pages through --replies; messages are listed with --state and --limit")
				}
				t, err := time.Parse(time.RFC3339Nano, before)
				if err != nil {
					return usageErr("ledger: --before %q: want a time like 2026-03-01T08:15:02.311Z (RFC 3339)", before)
				}
				beforeT = t
			}
			path, _, err := ledgerPath(cmd, table, &path, &config, &storeURL)
			if err != nil {
				return err
			}
			l, err := openLedgerFile(cmd.Context(), path, "ledger")
			if err != nil {
				return err
			}
			defer l.Close()
			out := cmd.OutOrStdout()
			if due {
				es, err := l.Due(cmd.Context(), limit)
				if err != nil {
					return failure(err)
				}
				return printDue(out, es, time.Now(), asJSON)
			}
			if listReplies {
				rs, err := l.Replies().RepliesPage(cmd.Context(), replies.ReplyFilter{State: replies.ReplyState(state), Before: beforeT, Limit: limit})
				if err != nil {
					return failure(err)
				}
				if err := printReplies(out, rs, asJSON); err != nil {
					return err
				}
				if len(rs) >= limit && !asJSON {
					_, err = fmt.Fprintf(out, "\nolder replies: --before %s\n", rs[len(rs)-1].Created.UTC().Format(time.RFC3339Nano))
				}
				return err
			}
			es, err := l.Recent(cmd.Context(), limit, ledger.State(state))
			if err != nil {
				return failure(err)
			}
			counts, err := l.Counts(cmd.Context())
			if err != nil {
				return failure(err)
			}
			return printEntries(out, es, counts, asJSON)
		},
	}
	table = append(ledgerSettings(&path, &config, &storeURL),
		&settings.Setting{Flag: "state", Usage: "only this state", Var: settings.String(&state, "")},
		&settings.Setting{Flag: "limit", Usage: "at most this many messages (replies with --replies)", Var: settings.Int(&limit, 50, settings.AtLeast(1))},
		&settings.Setting{Flag: "before", Usage: "with --replies: only replies recorded before this time (RFC 3339), the next page", Var: settings.String(&before, "")},
		&settings.Setting{Flag: "json", Usage: "one JSON object per line", Var: settings.Bool(&asJSON, false)},
		&settings.Setting{Flag: "replies", Usage: "list replies instead of messages", Var: settings.Bool(&listReplies, false)},
		&settings.Setting{Flag: "due", Usage: "list the consumer complaints not answered on their merits, by time left (overdue first)", Var: settings.Bool(&due, false)})
	table.Register(cmd.Flags())
	cmd.AddCommand(newLedgerStatsCmd())
	return cmd
}

// ledgerSettings are the settings of the ledger commands that say where the
// ledger is.
func ledgerSettings(path, config, storeURL *string) settings.Table {
	return settings.Table{
		withUsage(ledgerSetting(path, defaultLedger), "ledger file"),
		storeSetting(storeURL),
		configSetting(config, "read the ledger path from this watch configuration"+configFound),
	}
}

// ledgerPath is the ledger the ledger commands read: the store URL (--store
// or $TRIAGE_STORE) when given, else --ledger (or $TRIAGE_LEDGER) when
// given, else the store or ledger of the watch configuration found like
// watch finds it (--config, $TRIAGE_CONFIG, /etc/triage/triage.yaml; one
// found by convention is reported), else path's default. The configuration
// is returned when it was loaded for this, nil otherwise.
// The command's table is resolved (it filled path, config and storeURL).
func ledgerPath(cmd *cobra.Command, table settings.Table, path, config, storeURL *string) (string, *watchOptions, error) {
	if err := table.Check(); err != nil {
		return "", nil, usageErr("%v", err)
	}
	if *storeURL != "" {
		return *storeURL, nil, nil
	}
	cfg, how := findConfig(cmd.Flags(), *config)
	if table.Given(cmd.Flags(), "ledger", os.Getenv) || cfg == "" {
		return *path, nil, nil
	}
	wo, err := loadWatchFile(cfg)
	if err != nil {
		return "", nil, err
	}
	if how != "--config" {
		fmt.Fprintf(cmd.ErrOrStderr(), "triage: ledger of the configuration %s (%s)\n", cfg, how)
	}
	if wo.Store != "" {
		if err := checkStoreURL(wo.Store); err != nil {
			return "", nil, usageErr("%s: store %v", cfg, err)
		}
		return wo.Store, wo, nil
	}
	return wo.Ledger, wo, nil
}

// openLedgerFile opens the ledger at path (a file, or a store URL, read
// only) for the command named what ("ledger", "ledger stats"): a file that
// is not there is a usage error (opening would create an empty ledger), one
// that does not open a failure.
func openLedgerFile(ctx context.Context, path, what string) (*ledger.Ledger, error) {
	isURL := store.IsURL(path)
	if _, err := os.Stat(path); err != nil && !isURL {
		return nil, usageErr("%s: %v", what, err)
	}
	l, err := ledger.Open(ctx, ledger.Config{Path: path, ReadOnly: isURL})
	if err != nil {
		return nil, failure(err)
	}
	return l, nil
}

// openLedgerReadOnly is openLedgerFile for a reader that must change
// nothing, a SQLite file included: not its schema, not its journal mode.
func openLedgerReadOnly(ctx context.Context, path, what string) (*ledger.Ledger, error) {
	if _, err := os.Stat(path); err != nil && !store.IsURL(path) {
		return nil, usageErr("%s: %v", what, err)
	}
	l, err := ledger.Open(ctx, ledger.Config{Path: path, ReadOnly: true})
	if err != nil {
		return nil, failure(err)
	}
	return l, nil
}

// names spells the states --state accepts.
func names[S ~string](states []S) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}

// subjectDecoder decodes RFC 2047 words a stored subject may still hold
// (ISO-8859-2, windows-1250 and the other charsets go-message knows).
var subjectDecoder = &mime.WordDecoder{CharsetReader: charset.Reader}

// displaySubject is the subject as a person reads it: encoded words
// decoded; left as it is when they do not decode.
func displaySubject(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	d, err := subjectDecoder.DecodeHeader(s)
	if err != nil {
		return s
	}
	return d
}

func printEntries(w io.Writer, es []ledger.Entry, counts map[ledger.State]int, asJSON bool) error {
	for i := range es {
		es[i].Subject = displaySubject(es[i].Subject)
	}
	if asJSON {
		return writeJSONLines(w, es)
	}
	w = clip.NewEscapeWriter(w) // a stranger's subject never reaches the terminal as control characters
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "UPDATED\tSTATE\tREASON\tUID\tFROM\tSUBJECT\tMESSAGE-ID\tTRACE")
	for _, e := range es {
		subj := e.Subject
		if len([]rune(subj)) > 40 {
			subj = string([]rune(subj)[:39]) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Updated.Local().Format("2006-01-02 15:04:05"), e.State, dash(string(e.Reason)),
			strconv.FormatUint(uint64(e.UIDValidity), 10)+"/"+strconv.FormatUint(uint64(e.UID), 10), dash(e.Sender), dash(subj), dash(e.MessageID), dash(e.TraceID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	states := slices.Sorted(maps.Keys(counts))
	var parts []string
	for _, s := range states {
		parts = append(parts, fmt.Sprintf("%s=%d", s, counts[s]))
	}
	_, err := fmt.Fprintf(w, "\nall messages: %s\n", strings.Join(parts, " "))
	return err
}

func printReplies(w io.Writer, rs []replies.Reply, asJSON bool) error {
	if asJSON {
		return writeJSONLines(w, rs)
	}
	w = clip.NewEscapeWriter(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tKIND\tSTATE\tOUTCOME\tTO\tMESSAGE-ID\tINBOUND KEY")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Created.Local().Format("2006-01-02 15:04:05"), r.Kind, r.State, dash(r.Outcome), r.To, r.MessageID, r.Key)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeJSONLines writes one JSON object per line.
func writeJSONLines[T any](w io.Writer, vs []T) error {
	enc := json.NewEncoder(w)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}
