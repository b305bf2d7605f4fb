package ledger

import (
	"context"
	"fmt"

	"triage/internal/replies"
	"triage/internal/store"
)

// Component is the ledger's name in the store's schema_versions table.
const Component = "ledger"

// migrations are the ledger's schema, step by step, forward only (see
// store.Migrate). Step 1 on SQLite also brings a file written before the
// schema was versioned up to date.
var migrations = []store.Migration{
	{Func: func(ctx context.Context, tx *store.Tx) error {
		if tx.Dialect() == store.Postgres {
			_, err := tx.ExecContext(ctx, postgresSchema)
			return err
		}
		return upgradeSQLite(ctx, tx)
	}},
	{SQLite: replies.OutboxTable, Postgres: replies.OutboxTable},
	{SQLite: reviewSchema, Postgres: reviewSchema},
	{SQLite: digestSchema, Postgres: digestSchema},
	{SQLite: detailSchema, Postgres: detailSchema},
	{SQLite: autonomySchema, Postgres: autonomySchema},
	{SQLite: flatCostSchema, Postgres: flatCostSchema},
	{SQLite: traceSchema, Postgres: traceSchema},
	{SQLite: replies.OutboxIndexTable, Postgres: replies.OutboxIndexTable},
	{SQLite: claimSchema, Postgres: claimSchema},
	{SQLite: contentDigestSchema, Postgres: contentDigestSchema},
	{SQLite: replies.DropOutboxTable, Postgres: replies.DropOutboxTable},
	{SQLite: complaintSchema, Postgres: complaintSchema},
	{SQLite: resolutionSQLite, Postgres: resolutionPostgres},
	{SQLite: wakeSchema, Postgres: wakeSchema},
	{SQLite: usageSchema, Postgres: usageSchema},
	{SQLite: replies.PersonColumns, Postgres: replies.PersonColumns},
	{SQLite: replies.KindCreatedIndex, Postgres: replies.KindCreatedIndex},
	{SQLite: assigneeSchema, Postgres: assigneeSchema},
	{SQLite: passSchema, Postgres: passSchema + replies.KindOutcomeStatistics},
}

// passSchema bounds what a watch pass asks whatever the history: the
// drafts it settles (replies.PassIndexes) and the inbox's latest
// UIDVALIDITY a watcher compares at its first pass (LastUIDValidity), read
// from the newest row of the inbox instead of sorting all of its rows.
const passSchema = replies.PassIndexes + `CREATE INDEX IF NOT EXISTS messages_inbox_updated ON messages(account, mailbox, updated);
`

// usageSchema keeps what each message cost in model calls and tokens (the
// sums over its attempts, as the model reported them), the model that
// answered, and the month (UTC, 2026-11) of its latest attempt: ledger
// stats and the console's scenarios page sum them per scenario and month,
// and turn them into money with the configured prices.
const usageSchema = `
ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN usage_month TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN model_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN output_tokens BIGINT NOT NULL DEFAULT 0;
`

// claimSchema lets several daemons share one store (claim.go): a message
// row carries its claim, the daemon working on it (claimant) and until when
// (lease_until, Unix milliseconds), renewed while it works. The look-ups of
// the claimable messages and of an inbox's pending replies use the indexes
// of the messages not settled (messages_unsettled) and of replies by state.
const claimSchema = `
ALTER TABLE messages ADD COLUMN claimant TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
`

// autonomySchema is what reply mode auto decides from and records: each
// reply and draft carries the scenario and inbox its message was handled
// in (replies.AutonomyColumns); autonomy_modes holds the mode auto chose
// per scenario and inbox (no row: draft) and how many messages it has
// decided while sending; autonomy_switches every switch with the figures
// behind it. The types are the same in both dialects.
const autonomySchema = replies.AutonomyColumns + `CREATE TABLE autonomy_modes (
	scenario TEXT NOT NULL,
	account  TEXT NOT NULL,
	mailbox  TEXT NOT NULL,
	mode     TEXT NOT NULL,
	since    BIGINT NOT NULL,
	counted  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scenario, account, mailbox)
);
CREATE TABLE autonomy_switches (
	at             BIGINT NOT NULL,
	scenario       TEXT NOT NULL,
	account        TEXT NOT NULL,
	mailbox        TEXT NOT NULL,
	mode           TEXT NOT NULL,
	reviewed       INTEGER NOT NULL,
	sent_as_is     INTEGER NOT NULL,
	edited         INTEGER NOT NULL,
	rejected       INTEGER NOT NULL,
	discarded      INTEGER NOT NULL,
	min_reviewed   INTEGER NOT NULL,
	min_sent_as_is DOUBLE PRECISION NOT NULL,
	why            TEXT NOT NULL DEFAULT ''
);
CREATE INDEX autonomy_switches_at ON autonomy_switches(at);
`

// contentDigestSchema clears the digests that hash a message's bytes: a
// digest is triage.DigestOf what the author wrote, so a copy that reached
// the mailbox with other transport headers is still a copy. An entry without
// a digest counts a later message with its key as a copy.
const contentDigestSchema = `UPDATE messages SET digest = '';`

// traceSchema keeps each message's OpenTelemetry trace id (its latest
// attempt's), for triage ledger.
const traceSchema = `ALTER TABLE messages ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';`

// flatCostSchema indexes what runs on every watch pass and every listing,
// so their cost follows what they return, not the ledger's history: the
// replies by state and the draft figures (replies.StateIndexes), messages
// by state (retry requests, --state) and the unsettled messages of a
// mailbox.
const flatCostSchema = replies.StateIndexes + `CREATE INDEX IF NOT EXISTS messages_state ON messages(state, updated);
CREATE INDEX IF NOT EXISTS messages_unsettled ON messages(account, mailbox, uidvalidity, imap_done, uid);
`

// digestSchema keeps each message's content digest (triage.DigestOf): a
// second message under the same key with other content is told apart from
// a redelivery of the first.
const digestSchema = `
ALTER TABLE messages ADD COLUMN digest TEXT NOT NULL DEFAULT '';
`

// detailSchema keeps why a message failed (the mail server's reply to a
// refused send), for triage ledger.
const detailSchema = `ALTER TABLE messages ADD COLUMN detail TEXT NOT NULL DEFAULT '';`

// reviewSchema keeps, for the review console, each message's outcome (the
// JSON record of what was decided and called) and the customer's text.
const reviewSchema = `
ALTER TABLE messages ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN body TEXT NOT NULL DEFAULT '';
`

// postgresSchema is the SQLite schema in PostgreSQL types: times are Unix
// milliseconds, booleans 0 or 1, as in SQLite, so rows copy across as
// they are. The replies table's is replies.PostgresTable.
const postgresSchema = `
CREATE TABLE messages (
	account     TEXT NOT NULL,
	mailbox     TEXT NOT NULL,
	uidvalidity BIGINT NOT NULL,
	uid         BIGINT NOT NULL,
	key         TEXT NOT NULL,
	message_id  TEXT NOT NULL DEFAULT '',
	sender      TEXT NOT NULL DEFAULT '',
	subject     TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL,
	reason      TEXT NOT NULL DEFAULT '',
	scenario    TEXT NOT NULL DEFAULT '',
	attempts    INTEGER NOT NULL DEFAULT 0,
	imap_done   INTEGER NOT NULL DEFAULT 0,
	created     BIGINT NOT NULL,
	updated     BIGINT NOT NULL,
	PRIMARY KEY (account, mailbox, uidvalidity, uid)
);
CREATE INDEX messages_key ON messages(key);
CREATE INDEX messages_updated ON messages(updated);
CREATE INDEX messages_message_id ON messages(message_id);
` + replies.PostgresTable + `CREATE TABLE sent_scan (
	account     TEXT NOT NULL,
	folder      TEXT NOT NULL,
	uidvalidity BIGINT NOT NULL,
	last_uid    BIGINT NOT NULL,
	PRIMARY KEY (account, folder)
);
`

// sqliteSchema creates the tables of a new SQLite ledger as their first
// release made them; the replies table's is replies.SQLiteTable.
const sqliteSchema = `
CREATE TABLE IF NOT EXISTS messages (
	account     TEXT NOT NULL,
	mailbox     TEXT NOT NULL,
	uidvalidity INTEGER NOT NULL,
	uid         INTEGER NOT NULL,
	key         TEXT NOT NULL,
	message_id  TEXT NOT NULL DEFAULT '',
	sender      TEXT NOT NULL DEFAULT '',
	subject     TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL,
	reason      TEXT NOT NULL DEFAULT '',
	scenario    TEXT NOT NULL DEFAULT '',
	attempts    INTEGER NOT NULL DEFAULT 0,
	imap_done   INTEGER NOT NULL DEFAULT 0,
	created     INTEGER NOT NULL,
	updated     INTEGER NOT NULL,
	PRIMARY KEY (account, mailbox, uidvalidity, uid)
);
CREATE INDEX IF NOT EXISTS messages_key ON messages(key);
CREATE INDEX IF NOT EXISTS messages_updated ON messages(updated);
` + replies.SQLiteTable

// afterColumns runs once upgradeSQLite added to a file the columns it
// lacks (replies.SQLiteColumns).
const afterColumns = replies.SQLiteIndexes + `CREATE INDEX IF NOT EXISTS messages_message_id ON messages(message_id);
CREATE TABLE IF NOT EXISTS sent_scan (
	account     TEXT NOT NULL,
	folder      TEXT NOT NULL,
	uidvalidity INTEGER NOT NULL,
	last_uid    INTEGER NOT NULL,
	PRIMARY KEY (account, folder)
);
`

// upgradeSQLite creates the tables of a new SQLite ledger and adds to an
// older file the columns and indexes it lacks: the columns the replies
// table gained after its first release, each one a file lacks, then
// afterColumns.
func upgradeSQLite(ctx context.Context, db *store.Tx) error {
	if _, err := db.ExecContext(ctx, sqliteSchema); err != nil {
		return err
	}
	const table = "replies"
	for _, c := range replies.SQLiteColumns {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, table, c.Name).Scan(&n); err != nil {
			return fmt.Errorf("inspect %s: %w", table, err)
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN `+c.Name+` `+c.Def); err != nil {
				return fmt.Errorf("add %s.%s: %w", table, c.Name, err)
			}
		}
	}
	if _, err := db.ExecContext(ctx, afterColumns); err != nil {
		return err
	}
	return nil
}

// Migrate brings the ledger tables of db up to date (Open does it too).
func Migrate(ctx context.Context, db *store.DB) error {
	return db.Migrate(ctx, Component, migrations)
}
