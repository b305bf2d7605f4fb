// Package message turns raw RFC 5322 bytes into the parsed view the rest of
// triage works on: decoded sender, subject and threading headers, the new text
// set apart from quoted history, and the attachments listed but not read.
package message

import (
	"net/mail"
	"time"
)

// Message is one parsed inbound email. Parse never returns a nil Message
// together with a nil error.
type Message struct {
	// MessageID is the Message-ID header including angle brackets, or "".
	MessageID string
	// From is the decoded From address; From.Address is "" when the message
	// has no usable sender.
	From mail.Address
	// ReplyTo is the address a reply goes to: the first Reply-To address when
	// present and valid, else From.Address.
	ReplyTo string
	// To lists the bare addresses in To and Cc.
	To []string
	// Subject is the RFC 2047-decoded subject.
	Subject string
	// Date is the Date header; zero when missing or unparseable.
	Date time.Time
	// InReplyTo and References carry the thread, message IDs with brackets.
	InReplyTo  string
	References []string
	// Header holds every top-level header, keys in canonical MIME form
	// (textproto.CanonicalMIMEHeaderKey), values decoded (RFC 2047).
	Header map[string][]string
	// Text is the new text the sender wrote, as UTF-8 plain text (HTML is
	// converted; hidden elements dropped).
	Text string
	// Quoted is the quoted history (">"-lines, "On ... wrote:" blocks,
	// forwarded/original-message sections), as UTF-8 plain text.
	Quoted string
	// FromHTML is true when Text came from a text/html part.
	FromHTML bool
	// Attachments lists attachment parts; their content is never kept.
	Attachments []Attachment
	// Problems lists the malformations Parse worked around
	// (e.g. "multipart: missing closing boundary").
	Problems []string
	// Size is the length of the raw message in bytes.
	Size int
}

// Attachment describes one attachment part without its content.
type Attachment struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int    `json:"size"`
}

// Parse parses a raw RFC 5322 message. It degrades instead of failing on
// common malformations (missing closing boundary, lower-case header names,
// unknown charsets, no Date) and records them in Problems. It returns an
// error only when nothing usable can be read (e.g. no header block at all);
// the error starts with "message:".
func Parse(raw []byte) (*Message, error) {
	panic("TODO")
}

// Header returns the first value of the named header ("" if absent).
func (m *Message) HeaderValue(name string) string {
	panic("TODO")
}
