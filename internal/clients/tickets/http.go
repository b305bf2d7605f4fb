package tickets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPConfig configures an HTTP client; BaseURL is required.
type HTTPConfig struct {
	BaseURL string
	Token   string        // optional bearer token
	Client  *http.Client  // default: a new client
	Timeout time.Duration // per request, default 10s
}

// HTTP opens tickets on a remote service (see the package comment).
type HTTP struct {
	baseURL string
	token   string
	client  *http.Client
	timeout time.Duration
}

var _ Creator = (*HTTP)(nil)

// NewHTTP checks cfg and applies defaults.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tickets: BaseURL %q: want an http(s) URL", cfg.BaseURL)
	}
	h := &HTTP{baseURL: strings.TrimRight(cfg.BaseURL, "/"), token: cfg.Token, client: cfg.Client, timeout: cfg.Timeout}
	if h.client == nil {
		h.client = &http.Client{}
	}
	if h.timeout <= 0 {
		h.timeout = 10 * time.Second
	}
	return h, nil
}

// HTTPError is a failed request; Temporary says whether a retry may help.
type HTTPError struct {
	StatusCode int // 0 for transport errors
	Err        error
	temporary  bool
}

func (e *HTTPError) Error() string   { return "tickets: http: " + e.Err.Error() }
func (e *HTTPError) Unwrap() error   { return e.Err }
func (e *HTTPError) Temporary() bool { return e.temporary }

// Create posts r; the service deduplicates on the Idempotency-Key header.
func (h *HTTP) Create(ctx context.Context, r Request) (Ticket, error) {
	if r.IdempotencyKey == "" {
		return Ticket{}, ErrNoKey
	}
	body, err := json.Marshal(r)
	if err != nil {
		return Ticket{}, fmt.Errorf("tickets: http: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.baseURL+"/tickets", bytes.NewReader(body))
	if err != nil {
		return Ticket{}, &HTTPError{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return Ticket{}, &HTTPError{Err: err, temporary: !errors.Is(err, context.Canceled)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Ticket{}, &HTTPError{StatusCode: resp.StatusCode, Err: err, temporary: !errors.Is(err, context.Canceled)}
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		s := strings.TrimSpace(string(data))
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		return Ticket{}, &HTTPError{
			StatusCode: resp.StatusCode,
			Err:        fmt.Errorf("POST /tickets: %s: %s", resp.Status, s),
			temporary:  resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
		}
	}
	var t Ticket
	if err := json.Unmarshal(data, &t); err != nil {
		return Ticket{}, &HTTPError{StatusCode: resp.StatusCode, Err: fmt.Errorf("decode response: %w", err)}
	}
	if t.TicketID == "" {
		return Ticket{}, &HTTPError{StatusCode: resp.StatusCode, Err: errors.New("response has no ticket_id")}
	}
	if t.Status == "" {
		t.Status = StatusCreated
	}
	return t, nil
}
