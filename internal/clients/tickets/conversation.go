package tickets

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"triage/internal/clip"
	"triage/internal/store"
)

// ParseID is the sequence number of a ticket ID ("TKT-000123" -> 123).
func ParseID(id string) (int64, error) {
	n, ok := parseID(id)
	if !ok {
		return 0, fmt.Errorf("tickets: %s", notAnID(id))
	}
	return n, nil
}

func parseID(id string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.ToUpper(strings.TrimSpace(id)), "TKT-")
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, ok && err == nil && n > 0
}

// notAnID says an ID is not one, quoting at most maxShownID bytes of it.
func notAnID(id string) string {
	return fmt.Sprintf("%q is not a ticket ID (want TKT-000123)", clip.Bytes(id, maxShownID, clip.Ellipsis))
}

const maxShownID = 64

// seqOf is the sequence number of a ticket ID a caller names; an ID that is
// not one is ErrNotFound (no such ticket can exist).
func seqOf(id string) (int64, error) {
	n, ok := parseID(id)
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrNotFound, notAnID(id))
	}
	return n, nil
}

// Get returns the ticket's state, or ErrNotFound.
func (s *SQLite) Get(ctx context.Context, ticketID string) (*State, error) {
	seq, err := seqOf(ticketID)
	if err != nil {
		return nil, err
	}
	return s.get(ctx, s.db, seq)
}

// querier is a *store.DB or a *store.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *SQLite) get(ctx context.Context, q querier, seq int64) (*State, error) {
	st := &State{TicketID: FormatID(seq), Messages: []Message{}, Notes: []Note{}}
	var created string
	var disabled int
	err := q.QueryRowContext(ctx, `SELECT status, customer_email, serial_number, priority, summary,
		agent_disabled, owner, created_at FROM tickets WHERE seq = ?`, seq).
		Scan(&st.Status, &st.CustomerEmail, &st.SerialNumber, &st.Priority, &st.Summary, &disabled, &st.Owner, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, st.TicketID)
	}
	if err != nil {
		return nil, fmt.Errorf("tickets: sqlite: get %s: %w", st.TicketID, err)
	}
	st.AgentDisabled = disabled != 0
	st.CreatedAt = parseTime(created)

	rows, err := q.QueryContext(ctx, `SELECT message_id, direction, sender, subject, at
		FROM ticket_messages WHERE ticket_seq = ? ORDER BY at, rowid`, seq)
	if err != nil {
		return nil, fmt.Errorf("tickets: sqlite: get %s messages: %w", st.TicketID, err)
	}
	for rows.Next() {
		var m Message
		var at string
		if err := rows.Scan(&m.MessageID, &m.Direction, &m.From, &m.Subject, &at); err != nil {
			rows.Close()
			return nil, fmt.Errorf("tickets: sqlite: get %s messages: %w", st.TicketID, err)
		}
		m.At = parseTime(at)
		st.Messages = append(st.Messages, m)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT message_id, sender, subject, body, at
		FROM ticket_notes WHERE ticket_seq = ? ORDER BY id`, seq)
	if err != nil {
		return nil, fmt.Errorf("tickets: sqlite: get %s notes: %w", st.TicketID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var n Note
		var at string
		if err := rows.Scan(&n.MessageID, &n.From, &n.Subject, &n.Text, &at); err != nil {
			return nil, fmt.Errorf("tickets: sqlite: get %s notes: %w", st.TicketID, err)
		}
		n.At = parseTime(at)
		st.Notes = append(st.Notes, n)
	}
	return st, rows.Err()
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// Find returns the ticket of customer the message answers (see
// Conversations.Find), or ErrNotFound.
func (s *SQLite) Find(ctx context.Context, customer string, messageIDs []string) (*State, error) {
	seq, err := s.find(ctx, s.db, customer, messageIDs)
	if err != nil {
		return nil, err
	}
	return s.get(ctx, s.db, seq)
}

// find is the sequence number of the ticket of customer ("" : any) that
// holds the first of messageIDs; among several tickets holding it, the
// earliest.
func (s *SQLite) find(ctx context.Context, q querier, customer string, messageIDs []string) (int64, error) {
	var args []any
	for _, id := range messageIDs {
		if id = strings.TrimSpace(id); id != "" {
			args = append(args, id)
		}
	}
	if len(args) == 0 {
		return 0, ErrNotFound
	}
	query := `SELECT m.message_id, MIN(m.ticket_seq) FROM ticket_messages m
		WHERE m.message_id IN (?` + strings.Repeat(",?", len(args)-1) + `)`
	if customer = strings.TrimSpace(customer); customer != "" {
		// The customer of a ticket as State.Customer has it: its customer
		// email, or the sender of one of its inbound messages.
		query += ` AND (
			(SELECT lower(t.customer_email) FROM tickets t WHERE t.seq = m.ticket_seq) = lower(?)
			OR EXISTS (SELECT 1 FROM ticket_messages i WHERE i.ticket_seq = m.ticket_seq
				AND i.direction = '` + Inbound + `' AND lower(i.sender) = lower(?)))`
		args = append(args, customer, customer)
	}
	rows, err := q.QueryContext(ctx, query+` GROUP BY m.message_id`, args...)
	if err != nil {
		return 0, fmt.Errorf("tickets: sqlite: find: %w", err)
	}
	defer rows.Close()
	held := map[string]int64{}
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return 0, fmt.Errorf("tickets: sqlite: find: %w", err)
		}
		held[id] = seq
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("tickets: sqlite: find: %w", err)
	}
	for _, id := range messageIDs {
		if seq, ok := held[strings.TrimSpace(id)]; ok {
			return seq, nil
		}
	}
	return 0, ErrNotFound
}

// AddNote appends n once per Message-ID and records the message as inbound.
func (s *SQLite) AddNote(ctx context.Context, ticketID string, n Note) (bool, error) {
	if n.MessageID == "" {
		return false, errors.New("tickets: note has no message_id")
	}
	tx, seq, err := s.beginOn(ctx, ticketID)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	at := s.stamp(n.At)
	res, err := tx.ExecContext(ctx, `INSERT `+insertNote+onConflictIgnore,
		seq, n.MessageID, n.From, n.Subject, n.Text, at)
	if err != nil {
		return false, fmt.Errorf("tickets: sqlite: add note: %w", err)
	}
	added, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `INSERT `+insertMessage+onConflictIgnore,
		seq, n.MessageID, Inbound, n.From, n.Subject, at); err != nil {
		return false, fmt.Errorf("tickets: sqlite: add note message: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("tickets: sqlite: commit: %w", err)
	}
	return added > 0, nil
}

// AddMessage records a message of the conversation (idempotent).
func (s *SQLite) AddMessage(ctx context.Context, ticketID string, m Message) error {
	if m.MessageID == "" {
		return errors.New("tickets: message has no message_id")
	}
	if m.Direction != Inbound && m.Direction != Outbound {
		return fmt.Errorf("tickets: message direction %q: want %q or %q", m.Direction, Inbound, Outbound)
	}
	tx, seq, err := s.beginOn(ctx, ticketID)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT `+insertMessage+onConflictIgnore,
		seq, m.MessageID, m.Direction, m.From, m.Subject, s.stamp(m.At)); err != nil {
		return fmt.Errorf("tickets: sqlite: add message: %w", err)
	}
	return tx.Commit()
}

// Takeover marks the ticket as owned by a person.
func (s *SQLite) Takeover(ctx context.Context, ticketID, owner string) error {
	return s.setOwner(ctx, ticketID, true, owner)
}

// Release gives the ticket back to the agent.
func (s *SQLite) Release(ctx context.Context, ticketID string) error {
	return s.setOwner(ctx, ticketID, false, "")
}

func (s *SQLite) setOwner(ctx context.Context, ticketID string, disabled bool, owner string) error {
	seq, err := seqOf(ticketID)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE tickets SET agent_disabled = ?, owner = ? WHERE seq = ?`, boolInt(disabled), owner, seq)
	if err != nil {
		return fmt.Errorf("tickets: sqlite: update %s: %w", ticketID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, FormatID(seq))
	}
	return nil
}

// TakeoverByMessageID takes over customer's ticket the Message-ID belongs
// to ("" customer: none).
func (s *SQLite) TakeoverByMessageID(ctx context.Context, messageID, customer, owner string) (string, error) {
	if strings.TrimSpace(customer) == "" {
		return "", ErrNotFound
	}
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return "", fmt.Errorf("tickets: sqlite: begin: %w", err)
	}
	defer tx.Rollback()
	seq, err := s.find(ctx, tx, customer, []string{messageID})
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tickets SET agent_disabled = 1, owner = ? WHERE seq = ?`, owner, seq); err != nil {
		return "", fmt.Errorf("tickets: sqlite: takeover: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("tickets: sqlite: commit: %w", err)
	}
	return FormatID(seq), nil
}

// Listed is one row of List: a ticket without its messages and notes.
type Listed struct {
	TicketID      string    `json:"ticket_id"`
	Status        string    `json:"status"`
	CustomerEmail string    `json:"customer_email"`
	SerialNumber  string    `json:"serial_number,omitempty"`
	Summary       string    `json:"summary,omitempty"`
	AgentDisabled bool      `json:"agent_disabled"`
	Owner         string    `json:"owner,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	Messages      int       `json:"messages"`
	Notes         int       `json:"notes"`
}

// List returns the newest tickets first, at most limit (all when limit <= 0).
func (s *SQLite) List(ctx context.Context, limit int) ([]Listed, error) {
	limitClause, args := "", []any{}
	if limit > 0 {
		limitClause, args = " LIMIT ?", []any{limit}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.seq, t.status, t.customer_email, t.serial_number,
		t.summary, t.agent_disabled, t.owner, t.created_at,
		(SELECT COUNT(*) FROM ticket_messages m WHERE m.ticket_seq = t.seq),
		(SELECT COUNT(*) FROM ticket_notes n WHERE n.ticket_seq = t.seq)
		FROM tickets t ORDER BY t.seq DESC`+limitClause, args...)
	if err != nil {
		return nil, fmt.Errorf("tickets: sqlite: list: %w", err)
	}
	defer rows.Close()
	out := []Listed{}
	for rows.Next() {
		var l Listed
		var seq int64
		var disabled int
		var created string
		if err := rows.Scan(&seq, &l.Status, &l.CustomerEmail, &l.SerialNumber, &l.Summary,
			&disabled, &l.Owner, &created, &l.Messages, &l.Notes); err != nil {
			return nil, fmt.Errorf("tickets: sqlite: list: %w", err)
		}
		l.TicketID, l.AgentDisabled, l.CreatedAt = FormatID(seq), disabled != 0, parseTime(created)
		out = append(out, l)
	}
	return out, rows.Err()
}

// The columns every insert into ticket_messages and ticket_notes fills, in
// the order of the arguments.
const (
	insertMessage = `INTO ticket_messages (ticket_seq, message_id, direction, sender, subject, at) VALUES (?, ?, ?, ?, ?, ?)`
	insertNote    = `INTO ticket_notes (ticket_seq, message_id, sender, subject, body, at) VALUES (?, ?, ?, ?, ?, ?)`
	// onConflictIgnore makes an insert of a row already there a no-op.
	onConflictIgnore = ` ON CONFLICT DO NOTHING`
)

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// beginOn starts a transaction on the ticket, which must exist; the caller
// rolls it back (a no-op after Commit).
func (s *SQLite) beginOn(ctx context.Context, ticketID string) (*store.Tx, int64, error) {
	seq, err := seqOf(ticketID)
	if err != nil {
		return nil, 0, err
	}
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("tickets: sqlite: begin: %w", err)
	}
	if err := exists(ctx, tx, seq); err != nil {
		tx.Rollback()
		return nil, 0, err
	}
	return tx, seq, nil
}

func exists(ctx context.Context, tx *store.Tx, seq int64) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM tickets WHERE seq = ?`, seq).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s", ErrNotFound, FormatID(seq))
	}
	if err != nil {
		return fmt.Errorf("tickets: sqlite: %w", err)
	}
	return nil
}

func (s *SQLite) stamp(t time.Time) string {
	if t.IsZero() {
		t = s.now()
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Restore writes st into the store as it is: the ticket under its own ID
// (TKT-000123 becomes sequence 123), its ownership, messages and notes. It
// is how a conversation kept elsewhere is brought in (and how eval cases
// set up an existing conversation); a ticket already under that ID is an
// error.
func (s *SQLite) Restore(ctx context.Context, st State) error {
	seq, err := ParseID(st.TicketID)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("tickets: sqlite: begin: %w", err)
	}
	defer tx.Rollback()
	created := s.stamp(st.CreatedAt)
	if _, err := tx.ExecContext(ctx, `INSERT INTO tickets
		(seq, idempotency_key, serial_number, customer_email, priority, summary, created_at, status, agent_disabled, owner)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		seq, "restored:"+FormatID(seq), st.SerialNumber, st.CustomerEmail, st.Priority, st.Summary, created,
		cmp.Or(st.Status, StatusOpen), boolInt(st.AgentDisabled), st.Owner); err != nil {
		return fmt.Errorf("tickets: sqlite: restore %s: %w", FormatID(seq), err)
	}
	for _, m := range st.Messages {
		if _, err := tx.ExecContext(ctx, `INSERT `+insertMessage,
			seq, m.MessageID, m.Direction, m.From, m.Subject, s.stamp(m.At)); err != nil {
			return fmt.Errorf("tickets: sqlite: restore %s message %s: %w", FormatID(seq), m.MessageID, err)
		}
	}
	for _, n := range st.Notes {
		if _, err := tx.ExecContext(ctx, `INSERT `+insertNote,
			seq, n.MessageID, n.From, n.Subject, n.Text, s.stamp(n.At)); err != nil {
			return fmt.Errorf("tickets: sqlite: restore %s note %s: %w", FormatID(seq), n.MessageID, err)
		}
	}
	if err := SyncSeq(ctx, tx); err != nil {
		return fmt.Errorf("tickets: sqlite: restore %s: %w", FormatID(seq), err)
	}
	return tx.Commit()
}
