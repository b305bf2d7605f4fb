package replies

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"triage"
)

// A person's replies sent from the console (KindPerson) and the reply a
// person is writing (a composition): a sent reply is a row of the replies
// table under its own key, so it passes the same memory and limits as
// triage's replies and a loop check finds it; watch files it in the Sent
// folder (Unfiled, MarkAppended).

// PersonKey is a fresh key for a person's reply to the email of key: one
// email may be answered by people several times.
func PersonKey(key triage.Key) triage.Key {
	return triage.Key("person:" + strings.ToLower(rand.Text()) + "|" + string(key))
}

// PersonReplies lists the replies people sent to the email of key, oldest
// first, without their rendered bytes.
func (s *Store) PersonReplies(ctx context.Context, key triage.Key) ([]Reply, error) {
	return s.listReplies(ctx, `SELECT `+replyListCols+` FROM replies WHERE answers=? AND kind=? ORDER BY created, key LIMIT ?`, key, KindPerson, MaxInState)
}

// PersonAnswered returns, of keys, those a person answered from the
// console (a reply recorded sent, or perhaps sent).
func (s *Store) PersonAnswered(ctx context.Context, keys []triage.Key) (map[triage.Key]bool, error) {
	out := map[triage.Key]bool{}
	for i := 0; i < len(keys); i += 500 {
		chunk := keys[i:min(i+500, len(keys))]
		args := []any{KindPerson}
		for _, k := range chunk {
			args = append(args, k)
		}
		ks, err := queryAll(ctx, s, "person answered", func(sc scanner) (triage.Key, error) {
			var k triage.Key
			return k, sc.Scan(&k)
		}, `SELECT DISTINCT answers FROM replies WHERE kind=? AND answers IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			out[k] = true
		}
	}
	return out, nil
}

// Unfiled lists an inbox's replies of people sent and not yet filed in
// the Sent folder, oldest first, at most MaxInState, without their bytes.
func (s *Store) Unfiled(ctx context.Context, account, mailbox string) ([]Reply, error) {
	return s.listReplies(ctx, `SELECT `+replyListCols+` FROM replies WHERE kind=? AND state=? AND appended=0 AND account=? AND mailbox=?
		ORDER BY created, key LIMIT ?`, KindPerson, ReplySent, account, mailbox, MaxInState)
}

// MaxComposition bounds the text of a composition.
const MaxComposition = 20000

// Composition is the reply a person is writing to an email, saved.
type Composition struct {
	Key     triage.Key
	Person  string
	Body    string
	Updated time.Time
}

// SaveComposition keeps what person wrote to the email of key (replacing
// what was saved before).
func (s *Store) SaveComposition(ctx context.Context, key triage.Key, person, body string) error {
	if len(body) > MaxComposition {
		return fmt.Errorf("replies: save composition: %d bytes, at most %d", len(body), MaxComposition)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO composer_drafts (key, person, body, updated) VALUES (?,?,?,?)
		ON CONFLICT (key) DO UPDATE SET person=excluded.person, body=excluded.body, updated=excluded.updated`,
		key, person, body, unix(s.now()))
	if err != nil {
		return fmt.Errorf("replies: save composition: %w", err)
	}
	return nil
}

// Composition returns the saved composition of key, or ErrNotFound.
func (s *Store) Composition(ctx context.Context, key triage.Key) (Composition, error) {
	c := Composition{Key: key}
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT person, body, updated FROM composer_drafts WHERE key=?`, key).Scan(&c.Person, &c.Body, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Composition{}, ErrNotFound
	}
	if err != nil {
		return Composition{}, fmt.Errorf("replies: composition: %w", err)
	}
	c.Updated = fromUnix(at)
	return c, nil
}

// DropComposition forgets the composition of key (it was sent).
func (s *Store) DropComposition(ctx context.Context, key triage.Key) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM composer_drafts WHERE key=?`, key); err != nil {
		return fmt.Errorf("replies: drop composition: %w", err)
	}
	return nil
}
