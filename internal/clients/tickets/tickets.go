// Package tickets keeps support tickets and their conversations: it opens
// tickets idempotently (the same idempotency key never opens a second
// ticket), remembers each ticket's messages (inbound Message-IDs and our
// replies' Message-IDs) and notes, finds the ticket a follow-up belongs to,
// and records when a person takes a conversation over. Backends: a local
// SQLite file and a remote HTTP JSON service.
//
// The remote service contract (HTTP):
//
//	POST {BaseURL}/tickets
//	Content-Type: application/json
//	Idempotency-Key: {Request.IdempotencyKey}
//	Authorization: Bearer {Token}            (when Token is set)
//
//	{"serial_number":"SN-1","customer_email":"a@b","priority":"normal",
//	 "summary":"...","idempotency_key":"...","message_id":"<inbound@id>"}
//
//	200 or 201 {"ticket_id":"TKT-000123","status":"created|existing"}
//
// Conversations (all answers are a State unless said otherwise):
//
//	GET  {BaseURL}/tickets?customer_email=<addr>&message_id=<id>&message_id=<id>...
//	     the ticket of that customer (its customer email or the sender of
//	     one of its inbound messages) holding the first of the Message-IDs,
//	     in the order given, that one of the customer's tickets holds (an
//	     inbound message or a reply we sent); without customer_email, any
//	     customer's; 404 when none does
//	GET  {BaseURL}/tickets/{id}                      the ticket's state; 404 unknown
//	POST {BaseURL}/tickets/{id}/notes                {"message_id","from","subject","text"}
//	     Idempotency-Key: {message_id}; appends the note and records the
//	     message as inbound; 201 added, 200 already there ({"added":false})
//	POST {BaseURL}/tickets/{id}/messages             {"message_id","direction":"in|out","from","subject"}
//	     records a message of the conversation (idempotent); 200/201/204
//	POST {BaseURL}/tickets/{id}/takeover             {"owner":"..."}: agent_disabled=true
//	POST {BaseURL}/tickets/{id}/release              agent_disabled=false
//
// A State is {"ticket_id","status","customer_email","serial_number",
// "priority","summary","agent_disabled":bool,"owner","created_at",
// "messages":[{"message_id","direction","from","subject","at"}],
// "notes":[{"message_id","from","subject","text","at"}]}.
//
//	429, 5xx, timeouts, transport failures: temporary errors
//	other statuses, bad JSON: permanent errors
package tickets

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Request asks for one ticket.
type Request struct {
	SerialNumber   string `json:"serial_number"`
	CustomerEmail  string `json:"customer_email"`
	Priority       string `json:"priority"`
	Summary        string `json:"summary,omitempty"`
	IdempotencyKey string `json:"idempotency_key"`
	// MessageID is the inbound message that opened the ticket; the store
	// records it as the conversation's first message.
	MessageID string `json:"message_id,omitempty"`
}

// Ticket is the created (or previously created) ticket; what the model sees.
type Ticket struct {
	TicketID string `json:"ticket_id"`
	Status   string `json:"status"` // "created", or "existing" when the key was seen before
}

// Ticket statuses.
const (
	StatusCreated  = "created"
	StatusExisting = "existing"
)

// Creator opens tickets.
type Creator interface {
	Create(ctx context.Context, r Request) (Ticket, error)
}

// ErrNoKey is returned for a Request without an IdempotencyKey.
var ErrNoKey = errors.New("tickets: idempotency key is required")

// ErrNotFound is returned for an unknown ticket.
var ErrNotFound = errors.New("tickets: no such ticket")

// Message directions.
const (
	Inbound  = "in"  // the customer wrote it
	Outbound = "out" // we sent it (our reply, or a person's reply in the thread)
)

// Message is one email of a conversation.
type Message struct {
	MessageID string    `json:"message_id"`
	Direction string    `json:"direction"` // Inbound or Outbound
	From      string    `json:"from,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	At        time.Time `json:"at"`
}

// Note is text appended to a ticket: a follow-up's new text, keyed by its
// Message-ID so the same message adds one note however often it is seen.
type Note struct {
	MessageID string    `json:"message_id"`
	From      string    `json:"from,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	Text      string    `json:"text"`
	At        time.Time `json:"at"`
}

// Ticket states (State.Status).
const (
	StatusOpen = "open"
)

// State is a ticket and its conversation.
type State struct {
	TicketID      string    `json:"ticket_id"`
	Status        string    `json:"status"`
	CustomerEmail string    `json:"customer_email"`
	SerialNumber  string    `json:"serial_number,omitempty"`
	Priority      string    `json:"priority,omitempty"`
	Summary       string    `json:"summary,omitempty"`
	AgentDisabled bool      `json:"agent_disabled"` // a person owns the conversation
	Owner         string    `json:"owner,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	Messages      []Message `json:"messages"`
	Notes         []Note    `json:"notes"`
}

// Inbound counts the customer's messages on the ticket.
func (s *State) Inbound() int {
	n := 0
	for _, m := range s.Messages {
		if m.Direction == Inbound {
			n++
		}
	}
	return n
}

// Has reports whether the Message-ID is one of the conversation's messages.
func (s *State) Has(messageID string) bool {
	for _, m := range s.Messages {
		if m.MessageID == messageID {
			return true
		}
	}
	return false
}

// Customer reports whether addr is the ticket's customer: its customer
// email or the sender of one of its inbound messages (case-insensitive).
func (s *State) Customer(addr string) bool {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return false
	}
	if strings.EqualFold(addr, s.CustomerEmail) {
		return true
	}
	for _, m := range s.Messages {
		if m.Direction == Inbound && strings.EqualFold(addr, m.From) {
			return true
		}
	}
	return false
}

// Conversations keeps tickets' messages and notes and who owns them.
type Conversations interface {
	// Get returns the ticket's state, or ErrNotFound.
	Get(ctx context.Context, ticketID string) (*State, error)
	// Find returns the ticket a message from customer answers: the ticket
	// of the first of messageIDs (in the order given; see Answered) that
	// belongs to one of customer's tickets, or ErrNotFound. A Message-ID is
	// no secret, so another customer's ticket never matches. With customer
	// "" every ticket can match (the thread's ticket, whoever's it is).
	Find(ctx context.Context, customer string, messageIDs []string) (*State, error)
	// AddNote appends n (idempotent on n.MessageID) and records the message
	// as inbound; added is false when the note was already there.
	AddNote(ctx context.Context, ticketID string, n Note) (added bool, err error)
	// AddMessage records a message of the conversation (idempotent).
	AddMessage(ctx context.Context, ticketID string, m Message) error
	// Takeover hands the conversation to a person: it is no longer answered
	// automatically.
	Takeover(ctx context.Context, ticketID, owner string) error
	// Release gives the conversation back to the agent.
	Release(ctx context.Context, ticketID string) error
	// TakeoverByMessageID takes over customer's ticket the Message-ID
	// belongs to (the ticket Find returns for them) and returns its ID, or
	// ErrNotFound; an empty customer matches none. watch calls it when a
	// person replies to customer in a thread triage handled (seen in the
	// Sent folder): a Message-ID is no secret, so a stranger's ticket that
	// holds the same one is never taken over instead.
	TakeoverByMessageID(ctx context.Context, messageID, customer, owner string) (ticketID string, err error)
}

// Store is a full ticket backend.
type Store interface {
	Creator
	Conversations
}

// Answered orders the Message-IDs a message names by how directly it answers
// them: In-Reply-To first, then References from the last (the newest) to the
// first. Empty and repeated IDs are dropped.
func Answered(inReplyTo string, references []string) []string {
	ids := make([]string, 0, 1+len(references))
	add := func(id string) {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	add(inReplyTo)
	for i := len(references) - 1; i >= 0; i-- {
		add(references[i])
	}
	return ids
}

// tagRE finds our ticket tag in a subject: [TKT-000123].
var tagRE = regexp.MustCompile(`\[(TKT-\d{6,})\]`)

// Tag is the subject tag of a ticket: "[TKT-000123]".
func Tag(ticketID string) string { return "[" + ticketID + "]" }

// TagInSubject returns the ticket ID tagged in subject ("" when none).
func TagInSubject(subject string) string {
	m := tagRE.FindStringSubmatch(subject)
	if m == nil {
		return ""
	}
	return m[1]
}

// WithTag returns subject carrying exactly the ticket's tag: tags of other
// tickets (a forged or stale tag the customer wrote) are removed, and the
// ticket's own is appended when missing. With ticketID "" it only removes.
func WithTag(subject, ticketID string) string {
	subject = tagRE.ReplaceAllStringFunc(subject, func(tag string) string {
		if ticketID != "" && tag == Tag(ticketID) {
			return tag
		}
		return ""
	})
	subject = strings.Join(strings.Fields(subject), " ")
	if ticketID == "" || strings.Contains(subject, Tag(ticketID)) {
		return subject
	}
	if subject == "" {
		return Tag(ticketID)
	}
	return subject + " " + Tag(ticketID)
}
