package triage

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"triage/internal/message"
)

// Key is the idempotency key of an inbound message: the same message read
// twice (a retry, a copy after the server renumbered its mailbox) has the
// same Key. It seeds the reply's Message-ID and the ticket's idempotency key,
// and it is the ledger's key of the message.
type Key string

// KeyOf derives the Key of m, as parsed by package message: its Message-ID
// and lower-cased From address when it has a Message-ID, else a hash of raw,
// the bytes that stand for the message (its header block when read from a
// mailbox, its whole text otherwise). m may be nil (unparseable).
func KeyOf(m *message.Message, raw []byte) Key {
	if m != nil && m.MessageID != "" {
		return Key("msgid:" + m.MessageID + "|" + strings.ToLower(m.From.Address))
	}
	sum := sha256.Sum256(raw)
	return Key("sha256:" + hex.EncodeToString(sum[:]))
}

// Ref is a short, stable name of k that carries none of the customer's
// words (a Key holds their Message-ID and address): the review console
// addresses a conversation by it (/conversation/REF), and staff notices
// link there.
func (k Key) Ref() string {
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:10])
}

// DigestOf hashes what the author of m wrote (its date, subject and text):
// two messages with the same Key and another DigestOf are two messages, not
// two copies of one.
func DigestOf(m *message.Message) string {
	h := sha256.New()
	for _, part := range []string{m.Date.UTC().Format(time.RFC3339), m.Subject, m.Text, m.Quoted} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
