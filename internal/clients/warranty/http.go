package warranty

import (
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
	Timeout time.Duration // per lookup, default 10s
}

// HTTP calls a remote service: GET {BaseURL}/warranty/{serial} answering
// 200 with a Result JSON object (404 means not_found). Non-2xx other than
// 404, transport errors and timeouts are errors; 429/5xx/transport errors are
// temporary (the error has a Temporary() bool method returning true).
type HTTP struct {
	BaseURL string
	Token   string        // optional bearer token
	Client  *http.Client  // nil means http.DefaultClient
	Timeout time.Duration // per lookup; 0 means 10s
}

var _ Checker = (*HTTP)(nil)

// NewHTTP checks cfg and applies defaults.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("warranty: BaseURL %q: want an http(s) URL", cfg.BaseURL)
	}
	h := &HTTP{BaseURL: strings.TrimRight(cfg.BaseURL, "/"), Token: cfg.Token, Client: cfg.Client, Timeout: cfg.Timeout}
	if h.Client == nil {
		h.Client = &http.Client{}
	}
	if h.Timeout <= 0 {
		h.Timeout = 10 * time.Second
	}
	return h, nil
}

// HTTPError is a failed lookup; Temporary says whether a retry may help.
type HTTPError struct {
	StatusCode int // 0 for transport errors
	Err        error
	temporary  bool
}

func (e *HTTPError) Error() string   { return "warranty: http: " + e.Err.Error() }
func (e *HTTPError) Unwrap() error   { return e.Err }
func (e *HTTPError) Temporary() bool { return e.temporary }

// Check asks the service about serial.
func (h *HTTP) Check(ctx context.Context, serial string) (Result, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimRight(h.BaseURL, "/") + "/warranty/" + url.PathEscape(serial)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Result{}, &HTTPError{Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Result{}, &HTTPError{Err: err, temporary: transportTemporary(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Result{}, &HTTPError{StatusCode: resp.StatusCode, Err: err, temporary: transportTemporary(err)}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return Result{SerialNumber: serial, Status: StatusNotFound}, nil
	case resp.StatusCode != http.StatusOK:
		return Result{}, &HTTPError{
			StatusCode: resp.StatusCode,
			Err:        fmt.Errorf("GET %s: %s: %s", req.URL.Path, resp.Status, snippet(body)),
			temporary:  resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
		}
	}
	var res Result
	if err := json.Unmarshal(body, &res); err != nil {
		return Result{}, &HTTPError{StatusCode: resp.StatusCode, Err: fmt.Errorf("decode response: %w", err)}
	}
	switch res.Status {
	case StatusValid, StatusExpired, StatusNotFound:
	default:
		return Result{}, &HTTPError{StatusCode: resp.StatusCode, Err: fmt.Errorf("response status %q: want valid, expired or not_found", res.Status)}
	}
	if res.SerialNumber == "" {
		res.SerialNumber = serial
	}
	return res, nil
}

// transportTemporary: a transport failure (refused, reset, timeout) may
// clear up; a lookup cancelled by the caller is not retried.
func transportTemporary(err error) bool {
	return !errors.Is(err, context.Canceled)
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
