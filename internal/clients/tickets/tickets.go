// Package tickets opens support tickets, idempotently: the same idempotency
// key never opens a second ticket. Backends: a local SQLite file and a remote
// HTTP JSON service.
//
// The remote service contract (HTTP):
//
//	POST {BaseURL}/tickets
//	Content-Type: application/json
//	Idempotency-Key: {Request.IdempotencyKey}
//	Authorization: Bearer {Token}            (when Token is set)
//
//	{"serial_number":"SN-1","customer_email":"a@b","priority":"normal",
//	 "summary":"...","idempotency_key":"..."}
//
//	200 or 201 {"ticket_id":"TKT-000123","status":"created|existing"}
//	429, 5xx, timeouts, transport failures: temporary errors
//	other statuses, bad JSON: permanent errors
package tickets

import (
	"context"
	"errors"
)

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
