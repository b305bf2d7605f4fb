// Package guard decides which inbound messages must never be answered
// automatically (RFC 3834, RFC 5230): auto-replies, mailing lists, bounces,
// system senders and our own mail.
package guard

import "triage/internal/message"

// Reason codes; each skip rule has its own.
const (
	ReasonBounce               = "bounce"                 // Return-Path: <>
	ReasonAutoSubmitted        = "auto_submitted"         // Auto-Submitted other than "no"
	ReasonList                 = "list"                   // List-Id / List-Unsubscribe / any List-*
	ReasonPrecedence           = "precedence"             // Precedence: bulk|list|junk
	ReasonAutoResponseSuppress = "auto_response_suppress" // X-Auto-Response-Suppress: All or OOF
	ReasonAutoreplyHeader      = "autoreply_header"       // X-Autoreply / X-Autorespond
	ReasonNoReplySender        = "no_reply_sender"        // mailer-daemon, no-reply, noreply, do-not-reply, *-request, owner-*, bounces
	ReasonOwnAddress           = "own_address"            // sent by one of our own addresses
)

// Config lists our own addresses (compared case-insensitively).
type Config struct {
	OwnAddresses []string
}

// Verdict says whether to skip a message and why.
type Verdict struct {
	Skip   bool
	Reason string // one of the Reason* codes when Skip
	Detail string // human-readable, e.g. `Auto-Submitted: auto-replied`
}

// Check applies every rule in a fixed order and returns the first match.
func Check(cfg Config, m *message.Message) Verdict {
	panic("TODO")
}
