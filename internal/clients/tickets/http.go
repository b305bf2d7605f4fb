package tickets

import (
	"context"
	"encoding/json"
	"net/http"

	"triage/internal/clients/httpjson"
)

// HTTPConfig configures NewHTTP: BaseURL is required, Token is an optional
// bearer token, Client defaults to a new client and Timeout bounds each
// request (default 10s).
type HTTPConfig = httpjson.Config

// HTTP opens tickets on a remote service (see the package comment).
type HTTP struct {
	c *httpjson.Client
}

var _ Creator = (*HTTP)(nil)

// NewHTTP checks cfg and applies defaults.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	c, err := httpjson.New(cfg, "tickets")
	if err != nil {
		return nil, err
	}
	return &HTTP{c: c}, nil
}

// HTTPError is a failed request; Temporary says whether a retry may help.
type HTTPError = httpjson.Error

// Create posts r; the service deduplicates on the Idempotency-Key header.
func (h *HTTP) Create(ctx context.Context, r Request) (Ticket, error) {
	if r.IdempotencyKey == "" {
		return Ticket{}, ErrNoKey
	}
	status, body, err := h.c.Do(ctx, http.MethodPost, "/tickets", r, http.Header{"Idempotency-Key": {r.IdempotencyKey}})
	if err != nil {
		return Ticket{}, err
	}
	if status != http.StatusOK && status != http.StatusCreated {
		return Ticket{}, h.c.Errorf(status, "POST /tickets: unexpected status %d", status)
	}
	var t Ticket
	if err := json.Unmarshal(body, &t); err != nil {
		return Ticket{}, h.c.Errorf(status, "decode response: %w", err)
	}
	if t.TicketID == "" {
		return Ticket{}, h.c.Errorf(status, "response has no ticket_id")
	}
	if t.Status == "" {
		t.Status = StatusCreated
	}
	return t, nil
}
