package ledger_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/review"
	"triage/internal/store"
	"triage/internal/testkit/pgtest"
)

// The migration that adds the scenario and inbox to replies fills them in
// for the drafts already there, from their messages.
func TestAutonomyMigrationAttributes(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		db, err := store.Open(ctx, target, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		step := slices.IndexFunc(ledger.Migrations, func(m store.Migration) bool { return m.SQLite == ledger.AutonomySchema })
		if err := db.Migrate(ctx, ledger.Component, ledger.Migrations[:step]); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			// k1: handled twice (the first copy under an old UIDVALIDITY
			// has no scenario); k2: a draft recovered after a crash.
			`INSERT INTO messages (account, mailbox, uidvalidity, uid, key, state, scenario, created, updated) VALUES ('acc', 'INBOX', 1, 1, 'k1', 'drafted', 'missing-info', 1, 5)`,
			`INSERT INTO messages (account, mailbox, uidvalidity, uid, key, state, scenario, created, updated) VALUES ('acc', 'INBOX', 2, 1, 'k1', 'skipped', '', 6, 6)`,
			`INSERT INTO messages (account, mailbox, uidvalidity, uid, key, state, scenario, created, updated) VALUES ('acc', 'Support', 1, 2, 'k2', 'drafted', '', 1, 1)`,
			`INSERT INTO replies (key, message_id, recipient, raw, state, created, kind, outcome) VALUES ('k1', '<d1>', 'c@x', 'x', 'draft_stored', 1, 'draft', 'sent_as_is')`,
			`INSERT INTO replies (key, message_id, recipient, raw, state, created, kind, outcome) VALUES ('k2', '<d2>', 'c@x', 'x', 'draft_stored', 1, 'draft', 'rejected')`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		l, err := ledger.Open(ctx, ledger.Config{Store: db})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		stats, err := review.Of(l).DraftStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []review.DraftStat{
			{Scenario: "", Inbox: triage.Inbox{Account: "acc", Mailbox: "Support"}, Drafted: 1, Rejected: 1},
			{Scenario: "missing-info", Inbox: triage.Inbox{Account: "acc", Mailbox: "INBOX"}, Drafted: 1, SentAsIs: 1},
		}
		if diff := cmp.Diff(want, stats); diff != "" {
			t.Errorf("DraftStats after the migration (-want +got):\n%s", diff)
		}
	})
}
