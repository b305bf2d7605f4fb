package replies

// The schema of the replies table and of the outbox index, step by step.
// They share the store with the ledger's tables, and the ledger's ordered
// migration (ledger.Migrate) runs each piece in its place among its own
// steps: the pieces are SQL text, forward only, never edited once released
// (a store that ran a step never runs it again).

// SQLiteTable creates the replies table of a new SQLite store, as the
// first release made it; SQLiteColumns and SQLiteIndexes bring it, and any
// older file, up to date.
const SQLiteTable = `CREATE TABLE IF NOT EXISTS replies (
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

// Column is a column of the replies table added to SQLite files after
// their first release: its name and its definition.
type Column struct{ Name, Def string }

// SQLiteColumns are the columns the migration adds to a SQLite replies
// table that lacks them, in order, before SQLiteIndexes.
var SQLiteColumns = []Column{
	{"sender", "TEXT NOT NULL DEFAULT ''"},
	{"kind", "TEXT NOT NULL DEFAULT 'reply'"}, // Kind
	{"outcome", "TEXT NOT NULL DEFAULT ''"},
	{"similarity", "REAL NOT NULL DEFAULT 0"},
	{"resolved_at", "INTEGER NOT NULL DEFAULT 0"},
	{"person_message_id", "TEXT NOT NULL DEFAULT ''"},
}

// SQLiteIndexes are the indexes over SQLiteColumns.
const SQLiteIndexes = `
CREATE INDEX IF NOT EXISTS replies_sender ON replies(sender, created);
CREATE INDEX IF NOT EXISTS replies_message_id ON replies(message_id);
CREATE INDEX IF NOT EXISTS replies_kind ON replies(kind, outcome);
`

// PostgresTable is SQLiteTable with SQLiteColumns and SQLiteIndexes in
// PostgreSQL types: times are Unix milliseconds, booleans 0 or 1, as in
// SQLite, so rows copy across as they are.
const PostgresTable = `CREATE TABLE replies (
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
`

// OutboxTable was the first outbox index, by Message-ID alone; a later
// step drops it (DropOutboxTable), the step stays so every store counts
// its steps alike.
const OutboxTable = `
CREATE TABLE IF NOT EXISTS outbox (
	message_id TEXT PRIMARY KEY,
	key        TEXT NOT NULL DEFAULT '',
	path       TEXT NOT NULL DEFAULT '',
	created    BIGINT NOT NULL
);
`

// AutonomyColumns give each reply and draft the scenario and inbox
// (account, mailbox) its message was handled in, so a scenario's last
// reviewed drafts in an inbox are one indexed query (LastOutcomes);
// existing rows take them from their messages. The types are the same in
// both dialects.
const AutonomyColumns = `
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
`

// StateIndexes index what runs on every watch pass and every listing, so
// its cost follows what it returns, not the store's history: replies by
// state (the pending replies and drafts a pass settles; the --replies
// listing) and the draft figures (drafts by scenario, inbox and outcome,
// in the order DraftCounts sums them), each index covering its query so
// no reply's bytes are read.
const StateIndexes = `
CREATE INDEX IF NOT EXISTS replies_state ON replies(state, created);
CREATE INDEX IF NOT EXISTS replies_drafts ON replies(kind, scenario, account, mailbox, outcome);
`

// OutboxIndexTable is the outbox index of triage process --store (the
// Store's Outbox methods): every reply, draft and staff notice an outbox
// directory holds, with what the reply-loop checks, the per-sender limit
// and the notice bounds count (its recipient, the sender of the message
// it answers, the customer a notice is about), each count an indexed
// look-up. Times are Unix milliseconds.
const OutboxIndexTable = `
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

// DropOutboxTable drops the first outbox index (OutboxTable), which
// OutboxIndexTable replaced before anything wrote to it.
const DropOutboxTable = `DROP TABLE IF EXISTS outbox;`

// PersonColumns record a person's replies sent from the console
// (KindPerson): who wrote each (author) and the key of the email it
// answers (answers, indexed: the console lists an email's replies by
// it); and composer_drafts keeps the reply a person is writing, one per
// email, until it is sent or dropped. The types are the same in both
// dialects.
const PersonColumns = `
ALTER TABLE replies ADD COLUMN author TEXT NOT NULL DEFAULT '';
ALTER TABLE replies ADD COLUMN answers TEXT NOT NULL DEFAULT '';
CREATE INDEX replies_answers ON replies(answers, created);
CREATE TABLE composer_drafts (
	key     TEXT PRIMARY KEY,
	person  TEXT NOT NULL,
	body    TEXT NOT NULL,
	updated BIGINT NOT NULL
);
`

// KindCreatedIndex bounds the counts the reply limits and the notice
// bounds make for every reply (the replies, or the notices, of the last
// hour): each reads the index entries of its window, not every reply of
// its kind. The other indexes led by kind (replies_kind, replies_drafts)
// order by outcome and scenario, so a count through them visited every
// row of the kind.
const KindCreatedIndex = `CREATE INDEX IF NOT EXISTS replies_kind_created ON replies(kind, created);`

// PassIndexes bound what every watch pass asks of the drafts, whatever
// the history: the rejected drafts whose copy is still in a Drafts folder
// (RejectedInDrafts) and the drafts without an outcome (DiscardStaleDrafts),
// each a partial index holding those rows only. Their queries write the
// same conditions, as SQLite and PostgreSQL use a partial index only for a
// query whose conditions imply the index's.
const PassIndexes = `CREATE INDEX IF NOT EXISTS replies_rejected_drafts ON replies(account, mailbox, created, key)
	WHERE kind = '` + string(KindDraft) + `' AND outcome = '` + DraftRejected + `' AND appended = 1;
CREATE INDEX IF NOT EXISTS replies_pending_drafts ON replies(account, mailbox, created)
	WHERE kind = '` + string(KindDraft) + `' AND outcome = '';
`

// KindOutcomeStatistics tells PostgreSQL's planner how kind and outcome go
// together (every reply has no outcome, a draft seldom keeps none): without
// it, it multiplies their shares as if they were independent, takes most
// drafts for drafts without an outcome, and reads every draft through
// replies_kind_created instead of the few without an outcome (through
// replies_pending_drafts or replies_kind, equal in its eyes).
const KindOutcomeStatistics = `CREATE STATISTICS IF NOT EXISTS replies_kind_outcome (mcv) ON kind, outcome FROM replies;
`
