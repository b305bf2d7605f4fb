package ledger

import (
	"context"
	"fmt"

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
	{SQLite: outboxSchema, Postgres: outboxSchema},
	{SQLite: reviewSchema, Postgres: reviewSchema},
	{SQLite: digestSchema, Postgres: digestSchema},
	{SQLite: detailSchema, Postgres: detailSchema},
	{SQLite: autonomySchema, Postgres: autonomySchema},
	{SQLite: flatCostSchema, Postgres: flatCostSchema},
	{SQLite: traceSchema, Postgres: traceSchema},
	{SQLite: outboxIndexSchema, Postgres: outboxIndexSchema},
	{SQLite: claimSchema, Postgres: claimSchema},
	{SQLite: contentDigestSchema, Postgres: contentDigestSchema},
	{SQLite: dropOutboxSchema, Postgres: dropOutboxSchema},
}

// dropOutboxSchema drops the first outbox index (outboxSchema), which
// outbox_index replaced before anything wrote to it.
const dropOutboxSchema = `DROP TABLE IF EXISTS outbox;`

// claimSchema lets several daemons share one store (claim.go): a message
// row carries its claim, the daemon working on it (claimant) and until when
// (lease_until, Unix milliseconds), renewed while it works. The look-ups of
// the claimable messages and of an inbox's pending replies use the indexes
// of the messages not settled (messages_unsettled) and of replies by state.
const claimSchema = `
ALTER TABLE messages ADD COLUMN claimant TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
`

// outboxIndexSchema is the outbox index of triage process --store: every
// reply, draft and staff notice an outbox directory holds, with what the
// reply-loop checks, the per-sender limit and the notice bounds count (its
// recipient, the sender of the message it answers, the customer a notice
// is about), each count an indexed look-up. Times are Unix milliseconds.
const outboxIndexSchema = `
CREATE TABLE IF NOT EXISTS outbox_index (
	message_id TEXT NOT NULL,
	kind       TEXT NOT NULL,
	path       TEXT NOT NULL,
	recipient  TEXT NOT NULL DEFAULT '',
	sender     TEXT NOT NULL DEFAULT '',
	customer   TEXT NOT NULL DEFAULT '',
	created    BIGINT NOT NULL,
	PRIMARY KEY (message_id, kind)
);
CREATE INDEX IF NOT EXISTS outbox_index_recipient ON outbox_index(recipient, created);
CREATE INDEX IF NOT EXISTS outbox_index_sender ON outbox_index(sender, created);
CREATE INDEX IF NOT EXISTS outbox_index_notices ON outbox_index(kind, customer, created);
`

// autonomySchema is what reply mode auto decides from and records. Each
// reply and draft carries the scenario and inbox (account, mailbox) its
// message was handled in, so a scenario's last reviewed drafts in an inbox
// are one indexed query (existing rows take them from their messages).
// autonomy_modes holds the mode auto chose per scenario and inbox (no row:
// draft) and how many messages it has decided while sending;
// autonomy_switches every switch with the figures behind it. The types are
// the same in both dialects.
const autonomySchema = `
ALTER TABLE replies ADD COLUMN scenario TEXT NOT NULL DEFAULT '';
ALTER TABLE replies ADD COLUMN account TEXT NOT NULL DEFAULT '';
ALTER TABLE replies ADD COLUMN mailbox TEXT NOT NULL DEFAULT '';
UPDATE replies SET
	scenario = COALESCE((SELECT m.scenario FROM messages m WHERE m.key = replies.key AND m.scenario <> '' ORDER BY m.updated DESC LIMIT 1), ''),
	account = COALESCE((SELECT m.account FROM messages m WHERE m.key = replies.key
		ORDER BY CASE WHEN m.scenario <> '' THEN 0 ELSE 1 END, m.updated DESC LIMIT 1), ''),
	mailbox = COALESCE((SELECT m.mailbox FROM messages m WHERE m.key = replies.key
		ORDER BY CASE WHEN m.scenario <> '' THEN 0 ELSE 1 END, m.updated DESC LIMIT 1), '');
CREATE INDEX replies_review ON replies(kind, scenario, account, mailbox, resolved_at, key);
CREATE TABLE autonomy_modes (
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
// so their cost follows what they return, not the ledger's history:
// replies by state (the pending replies and drafts a pass settles; the
// --replies listing), messages by state (retry requests, --state), the
// unsettled messages of a mailbox, and the draft figures (drafts by
// scenario, inbox and outcome, in the order they are summed), each index
// covering its query so no reply's bytes are read.
const flatCostSchema = `
CREATE INDEX IF NOT EXISTS replies_state ON replies(state, created);
CREATE INDEX IF NOT EXISTS replies_drafts ON replies(kind, scenario, account, mailbox, outcome);
CREATE INDEX IF NOT EXISTS messages_state ON messages(state, updated);
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
// they are.
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
CREATE TABLE replies (
	key               TEXT PRIMARY KEY,
	message_id        TEXT NOT NULL,
	recipient         TEXT NOT NULL,
	raw               BYTEA NOT NULL,
	state             TEXT NOT NULL,
	appended          INTEGER NOT NULL DEFAULT 0,
	created           BIGINT NOT NULL,
	sent_at           BIGINT NOT NULL DEFAULT 0,
	sender            TEXT NOT NULL DEFAULT '',
	kind              TEXT NOT NULL DEFAULT 'reply',
	outcome           TEXT NOT NULL DEFAULT '',
	similarity        DOUBLE PRECISION NOT NULL DEFAULT 0,
	resolved_at       BIGINT NOT NULL DEFAULT 0,
	person_message_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX replies_recipient ON replies(recipient, created);
CREATE INDEX replies_created ON replies(created);
CREATE INDEX replies_sender ON replies(sender, created);
CREATE INDEX replies_message_id ON replies(message_id);
CREATE INDEX replies_kind ON replies(kind, outcome);
CREATE TABLE sent_scan (
	account     TEXT NOT NULL,
	folder      TEXT NOT NULL,
	uidvalidity BIGINT NOT NULL,
	last_uid    BIGINT NOT NULL,
	PRIMARY KEY (account, folder)
);
`

// outboxSchema was the first outbox index, by Message-ID alone; a later
// step drops it (dropOutboxSchema), the step stays so every store counts
// its steps alike.
const outboxSchema = `
CREATE TABLE IF NOT EXISTS outbox (
	message_id TEXT PRIMARY KEY,
	key        TEXT NOT NULL DEFAULT '',
	path       TEXT NOT NULL DEFAULT '',
	created    BIGINT NOT NULL
);
`

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
CREATE TABLE IF NOT EXISTS replies (
	key        TEXT PRIMARY KEY,
	message_id TEXT NOT NULL,
	recipient  TEXT NOT NULL,
	raw        BLOB NOT NULL,
	state      TEXT NOT NULL,
	appended   INTEGER NOT NULL DEFAULT 0,
	created    INTEGER NOT NULL,
	sent_at    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS replies_recipient ON replies(recipient, created);
CREATE INDEX IF NOT EXISTS replies_created ON replies(created);
`

// columns added to SQLite ledger files after their first release:
// upgradeSQLite adds each one a file lacks, then runs afterColumns.
var columns = []struct{ table, name, def string }{
	{"replies", "sender", "TEXT NOT NULL DEFAULT ''"},
	{"replies", "kind", "TEXT NOT NULL DEFAULT 'reply'"}, // drafts.go
	{"replies", "outcome", "TEXT NOT NULL DEFAULT ''"},
	{"replies", "similarity", "REAL NOT NULL DEFAULT 0"},
	{"replies", "resolved_at", "INTEGER NOT NULL DEFAULT 0"},
	{"replies", "person_message_id", "TEXT NOT NULL DEFAULT ''"},
}

const afterColumns = `
CREATE INDEX IF NOT EXISTS replies_sender ON replies(sender, created);
CREATE INDEX IF NOT EXISTS replies_message_id ON replies(message_id);
CREATE INDEX IF NOT EXISTS replies_kind ON replies(kind, outcome);
CREATE INDEX IF NOT EXISTS messages_message_id ON messages(message_id);
CREATE TABLE IF NOT EXISTS sent_scan (
	account     TEXT NOT NULL,
	folder      TEXT NOT NULL,
	uidvalidity INTEGER NOT NULL,
	last_uid    INTEGER NOT NULL,
	PRIMARY KEY (account, folder)
);
`

// upgradeSQLite creates the tables of a new SQLite ledger and adds to an
// older file the columns and indexes it lacks.
func upgradeSQLite(ctx context.Context, db *store.Tx) error {
	if _, err := db.ExecContext(ctx, sqliteSchema); err != nil {
		return err
	}
	for _, c := range columns {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.name).Scan(&n); err != nil {
			return fmt.Errorf("inspect %s: %w", c.table, err)
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.name+` `+c.def); err != nil {
				return fmt.Errorf("add %s.%s: %w", c.table, c.name, err)
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
