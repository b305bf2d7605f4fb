// Package tickets opens support tickets, idempotently: the same idempotency
// key never opens a second ticket. Backends: a local SQLite file and a remote
// HTTP JSON service.
package tickets

import "context"

// Request asks for one ticket.
type Request struct {
	SerialNumber   string `json:"serial_number"`
	CustomerEmail  string `json:"customer_email"`
	Priority       string `json:"priority"`
	Summary        string `json:"summary,omitempty"`
	IdempotencyKey string `json:"idempotency_key"`
}

// Ticket is the created (or previously created) ticket; what the model sees.
type Ticket struct {
	TicketID string `json:"ticket_id"`
	Status   string `json:"status"` // "created", or "existing" when the key was seen before
}

// Creator opens tickets.
type Creator interface {
	Create(ctx context.Context, r Request) (Ticket, error)
}
