package tickets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"triage/internal/clients/httpapi"
)

// HTTPConfig configures NewHTTP: BaseURL is required, Token is an optional
// bearer token, Client defaults to a new client and Timeout bounds each
// request (default 10s).
type HTTPConfig = httpapi.ClientConfig

// HTTP opens tickets on a remote service (see the package comment).
type HTTP struct {
	c *httpapi.Client
}

var _ Store = (*HTTP)(nil)

// NewHTTP checks cfg and applies defaults.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	c, err := httpapi.NewClient(cfg, "tickets")
	if err != nil {
		return nil, err
	}
	return &HTTP{c: c}, nil
}

// HTTPError is a failed request; Temporary says whether a retry may help.
type HTTPError = httpapi.ClientError

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

// state decodes a State answer; a 404 is ErrNotFound.
func (h *HTTP) state(ctx context.Context, method, path string, in any) (*State, error) {
	status, body, err := h.c.Do(ctx, method, path, in, nil)
	if status == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %s %s", ErrNotFound, method, path)
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, h.c.Errorf(status, "%s %s: decode response: %w", method, path, err)
	}
	if st.TicketID == "" {
		return nil, h.c.Errorf(status, "%s %s: response has no ticket_id", method, path)
	}
	if st.Status == "" {
		st.Status = StatusOpen
	}
	return &st, nil
}

func ticketPath(id, suffix string) (string, error) {
	if _, err := seqOf(id); err != nil {
		return "", err
	}
	return "/tickets/" + url.PathEscape(id) + suffix, nil
}

// maxFindIDs bounds the Message-IDs sent in one lookup (a References header
// can be long); the IDs come in the order of Answered, so the first are kept.
const maxFindIDs = 20

// Get reads the ticket's state: GET /tickets/{id}.
func (h *HTTP) Get(ctx context.Context, ticketID string) (*State, error) {
	p, err := ticketPath(ticketID, "")
	if err != nil {
		return nil, err
	}
	return h.state(ctx, http.MethodGet, p, nil)
}

// Find looks the customer's ticket up by Message-ID:
// GET /tickets?customer_email=...&message_id=...; a ticket the service
// answers that is not the customer's is not believed (ErrNotFound).
func (h *HTTP) Find(ctx context.Context, customer string, messageIDs []string) (*State, error) {
	q := url.Values{}
	for _, id := range messageIDs {
		if id = strings.TrimSpace(id); id != "" {
			q.Add("message_id", id)
		}
	}
	if ids := q["message_id"]; len(ids) > maxFindIDs {
		q["message_id"] = ids[:maxFindIDs]
	}
	if len(q) == 0 {
		return nil, ErrNotFound
	}
	if customer = strings.TrimSpace(customer); customer != "" {
		q.Set("customer_email", customer)
	}
	st, err := h.state(ctx, http.MethodGet, "/tickets?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if customer != "" && !st.Customer(customer) {
		return nil, fmt.Errorf("%w: the service answered %s, which is not %s's", ErrNotFound, st.TicketID, customer)
	}
	return st, nil
}

// AddNote posts the note: POST /tickets/{id}/notes, Idempotency-Key the
// note's Message-ID; 201 added, 200 already there.
func (h *HTTP) AddNote(ctx context.Context, ticketID string, n Note) (bool, error) {
	if n.MessageID == "" {
		return false, errors.New("tickets: note has no message_id")
	}
	p, err := ticketPath(ticketID, "/notes")
	if err != nil {
		return false, err
	}
	status, _, err := h.c.Do(ctx, http.MethodPost, p, n, http.Header{"Idempotency-Key": {n.MessageID}})
	if status == http.StatusNotFound {
		return false, fmt.Errorf("%w: %s", ErrNotFound, ticketID)
	}
	if err != nil {
		return false, err
	}
	return status == http.StatusCreated, nil
}

// AddMessage posts the message: POST /tickets/{id}/messages.
func (h *HTTP) AddMessage(ctx context.Context, ticketID string, m Message) error {
	if m.MessageID == "" {
		return errors.New("tickets: message has no message_id")
	}
	p, err := ticketPath(ticketID, "/messages")
	if err != nil {
		return err
	}
	status, _, err := h.c.Do(ctx, http.MethodPost, p, m, nil)
	if status == http.StatusNotFound {
		return fmt.Errorf("%w: %s", ErrNotFound, ticketID)
	}
	return err
}

type ownerBody struct {
	Owner string `json:"owner"`
}

// Takeover: POST /tickets/{id}/takeover.
func (h *HTTP) Takeover(ctx context.Context, ticketID, owner string) error {
	p, err := ticketPath(ticketID, "/takeover")
	if err != nil {
		return err
	}
	_, err = h.state(ctx, http.MethodPost, p, ownerBody{owner})
	return err
}

// Release: POST /tickets/{id}/release.
func (h *HTTP) Release(ctx context.Context, ticketID string) error {
	p, err := ticketPath(ticketID, "/release")
	if err != nil {
		return err
	}
	_, err = h.state(ctx, http.MethodPost, p, struct{}{})
	return err
}

// TakeoverByMessageID finds customer's ticket holding the Message-ID
// (GET /tickets?customer_email=...&message_id=...) and takes it over
// (POST /tickets/{id}/takeover): the customer filter is the service's own
// Find, so no service-side takeover by Message-ID alone is relied on.
func (h *HTTP) TakeoverByMessageID(ctx context.Context, messageID, customer, owner string) (string, error) {
	if strings.TrimSpace(messageID) == "" || strings.TrimSpace(customer) == "" {
		return "", ErrNotFound
	}
	st, err := h.Find(ctx, customer, []string{messageID})
	if err != nil {
		return "", err
	}
	if err := h.Takeover(ctx, st.TicketID, owner); err != nil {
		return "", err
	}
	return st.TicketID, nil
}
