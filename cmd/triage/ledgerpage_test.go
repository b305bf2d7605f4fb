package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
)

// triage ledger --replies lists --limit replies, newest first, and its last
// line names the --before that shows the page before; paging that way
// lists every reply once, replies of one millisecond included.
func TestLedgerRepliesPages(t *testing.T) {
	noDefaultConfig(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	l, err := ledger.Open(ctx, ledger.Config{Path: path, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 7 {
		if i != 3 { // replies 3 and 4 share a millisecond
			now = now.Add(time.Second)
		}
		id := "<r" + string(rune('a'+i)) + "@example.com>"
		if err := l.Replies().PutPending(ctx, replies.Reply{Key: triage.Key("k" + string(rune('a'+i))), MessageID: id, To: "jan@example.com", Raw: []byte(strings.Repeat("x", 100))}); err != nil {
			t.Fatal(err)
		}
		want = append([]string{id}, want...)
	}
	l.Close()

	var got []string
	args := []string{"ledger", "--ledger", path, "--replies", "--limit", "3"}
	next := regexp.MustCompile(`older replies: --before (\S+)`)
	for page := 0; page < 5; page++ {
		code, stdout, stderr := runArgs(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, stderr)
		}
		for _, f := range strings.Fields(stdout) {
			if strings.HasPrefix(f, "<r") {
				got = append(got, f)
			}
		}
		m := next.FindStringSubmatch(stdout)
		if m == nil {
			break
		}
		args = []string{"ledger", "--ledger", path, "--replies", "--limit", "3", "--before", m[1]}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paged replies (-want +got):\n%s", diff)
	}

	// --json lists the page, without the rendered bytes.
	code, stdout, _ := runArgs(t, "ledger", "--ledger", path, "--replies", "--limit", "2", "--json")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("--json: exit %d, %d lines:\n%s", code, len(lines), stdout)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r["message_id"] != want[0] {
		t.Errorf("--json first line %s: %v", lines[0], err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--replies", "--before", "yesterday"}, `--before "yesterday": want a time like`},
		{[]string{"--before", "2026-03-01T08:00:00Z"}, "--before pages through --replies"},
		{[]string{"--replies", "--limit", "0"}, "--limit"},
	} {
		code, _, stderr := runArgs(t, append([]string{"ledger", "--ledger", path}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want usage error with %q", c.args, code, stderr, c.want)
		}
	}
}
