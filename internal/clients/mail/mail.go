// Package mail renders and sends customer replies: complete RFC 5322 messages
// with threading and auto-reply headers, written to an outbox directory or
// submitted over SMTP.
package mail

import (
	"context"
	"time"
)

// Reply is one reply to an inbound message.
type Reply struct {
	From       string // our address, e.g. "Support <support@example.com>"
	To         string // bare address
	Subject    string
	Body       string   // plain text, UTF-8
	InReplyTo  string   // inbound Message-ID (with brackets), may be ""
	References []string // inbound References + inbound Message-ID
	MessageID  string   // with brackets; "" means generate (see MessageIDFor)
	Date       time.Time
	Key        string // inbound idempotency key, for senders that keep a ledger
}

// Receipt says what happened to a sent reply.
type Receipt struct {
	MessageID string `json:"message_id"`
	Path      string `json:"path,omitempty"` // outbox file, when written to disk
	Status    string `json:"status"`         // "sent"
}

// Sender delivers a rendered reply.
type Sender interface {
	Send(ctx context.Context, r *Reply) (Receipt, error)
}

// Render produces the full RFC 5322 message: From, To, Subject (RFC 2047
// encoded when not ASCII), Date, Message-ID, In-Reply-To, References,
// Auto-Submitted: auto-replied, X-Auto-Response-Suppress: All, MIME-Version,
// Content-Type text/plain; charset=utf-8, quoted-printable body. Uses
// go-message for header encoding.
func Render(r *Reply) ([]byte, error) { panic("TODO") }

// MessageIDFor derives a deterministic Message-ID from an inbound key and our
// domain: the same key always yields the same ID.
func MessageIDFor(key, domain string) string { panic("TODO") }
