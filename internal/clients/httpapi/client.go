package httpapi

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

// Limits of a Client.
const (
	MaxBody    = 1 << 20 // response bytes read at most; the rest is dropped
	snippetLen = 200     // response bytes quoted in a status error
)

// ClientConfig configures a Client; BaseURL is required.
type ClientConfig struct {
	BaseURL string        // http(s) URL; request paths are appended to it
	Token   string        // optional bearer token
	Client  *http.Client  // default: a new client
	Timeout time.Duration // per request, including reading the body; default DefaultTimeout
}

// Client calls a JSON-over-HTTP service with timeouts, bearer-token auth
// and a temporary/permanent classification of its errors. It carries the
// mechanics shared by the remote clients (warranty, tickets); what a
// response means stays with each client.
//
// Classification: 429, 5xx, timeouts and transport failures are temporary
// (a retry may help); a request cancelled by the caller, other non-2xx
// statuses and anything the caller rejects with [Client.Errorf] are
// permanent.
//
// A Client calls one service. It is safe for concurrent use.
type Client struct {
	name    string // error prefix, the calling package's name
	baseURL string // without a trailing slash
	token   string
	client  *http.Client
	timeout time.Duration
}

// NewClient checks cfg and applies defaults. name is the calling package's
// name ("warranty"); every error, including NewClient's own, starts with it.
func NewClient(cfg ClientConfig, name string) (*Client, error) {
	if name == "" {
		name = "httpapi"
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: BaseURL %q: want an http(s) URL", name, cfg.BaseURL)
	}
	c := &Client{name: name, baseURL: strings.TrimRight(cfg.BaseURL, "/"), token: cfg.Token, client: cfg.Client, timeout: cfg.Timeout}
	if c.client == nil {
		c.client = &http.Client{}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// ClientError is a failed call of a Client; Temporary says whether a retry
// may help. Its message reads "{name}: http: {Err}".
type ClientError struct {
	StatusCode int // 0 for transport errors
	Err        error
	name       string
	temporary  bool
}

func (e *ClientError) Error() string {
	name := e.name
	if name == "" {
		name = "httpapi"
	}
	return name + ": http: " + e.Err.Error()
}

func (e *ClientError) Unwrap() error   { return e.Err }
func (e *ClientError) Temporary() bool { return e.temporary }

// Errorf returns a permanent *ClientError named for c: for a response the caller
// rejects (bad JSON, a status it does not accept, a missing field).
func (c *Client) Errorf(status int, format string, a ...any) *ClientError {
	return &ClientError{StatusCode: status, Err: fmt.Errorf(format, a...), name: c.name}
}

// Do sends method {BaseURL}{path} (path already escaped) with Accept:
// application/json, the bearer token when set, and header (which overrides
// those). A non-nil in is sent as its JSON encoding with Content-Type:
// application/json. It returns the status and up to MaxBody bytes of the
// body. err is a *ClientError: for a transport failure (status 0), and for any
// non-2xx status, in which case status and body are returned as well, so
// the caller may still give a status such as 404 a meaning of its own.
func (c *Client) Do(ctx context.Context, method, path string, in any, header http.Header) (status int, body []byte, err error) {
	var reqBody io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return 0, nil, c.Errorf(0, "encode request: %w", err)
		}
		reqBody = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, reqBody)
	if err != nil {
		return 0, nil, &ClientError{Err: err, name: c.name}
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, vs := range header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, &ClientError{Err: err, name: c.name, temporary: transportTemporary(err)}
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return resp.StatusCode, nil, &ClientError{StatusCode: resp.StatusCode, Err: err, name: c.name, temporary: transportTemporary(err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, body, &ClientError{
			StatusCode: resp.StatusCode,
			Err:        fmt.Errorf("%s %s: %s: %s", method, req.URL.Path, resp.Status, Snippet(body)),
			name:       c.name,
			temporary:  resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
		}
	}
	return resp.StatusCode, body, nil
}

// transportTemporary: a transport failure (refused, reset, timeout) may
// clear up; a call cancelled by the caller is not retried.
func transportTemporary(err error) bool {
	return !errors.Is(err, context.Canceled)
}

// Snippet is the start of a response body (its first 200 bytes), for an
// error message.
func Snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > snippetLen {
		s = s[:snippetLen] + "..."
	}
	return s
}
