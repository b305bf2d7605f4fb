package warranty

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"triage/internal/clients/httpapi"
)

// HTTPConfig configures NewHTTP: BaseURL is required, Token is an optional
// bearer token, Client defaults to a new client and Timeout bounds each
// lookup (default 10s).
type HTTPConfig = httpapi.ClientConfig

// HTTP calls a remote service: GET {BaseURL}/warranty/{serial} answering
// 200 with a Result JSON object (404 means not_found). Non-2xx other than
// 404, transport errors and timeouts are errors; 429/5xx/transport errors are
// temporary (the error has a Temporary() bool method returning true).
type HTTP struct {
	c *httpapi.Client
}

var _ Checker = (*HTTP)(nil)

// NewHTTP checks cfg and applies defaults.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	c, err := httpapi.NewClient(cfg, "warranty")
	if err != nil {
		return nil, err
	}
	return &HTTP{c: c}, nil
}

// HTTPError is a failed lookup; Temporary says whether a retry may help.
type HTTPError = httpapi.ClientError

// Check asks the service about serial.
func (h *HTTP) Check(ctx context.Context, serial string) (Result, error) {
	path := "/warranty/" + url.PathEscape(serial)
	status, body, err := h.c.Do(ctx, http.MethodGet, path, nil, nil)
	switch {
	case status == http.StatusNotFound:
		return Result{SerialNumber: serial, Status: StatusNotFound}, nil
	case err != nil:
		return Result{}, err
	case status != http.StatusOK:
		return Result{}, h.c.Errorf(status, "GET %s: unexpected status %d", path, status)
	}
	var res Result
	if err := json.Unmarshal(body, &res); err != nil {
		return Result{}, h.c.Errorf(status, "decode response: %w", err)
	}
	switch res.Status {
	case StatusValid, StatusExpired, StatusNotFound:
	default:
		return Result{}, h.c.Errorf(status, "response status %q: want valid, expired or not_found", res.Status)
	}
	if res.SerialNumber == "" {
		res.SerialNumber = serial
	}
	res.knownOnly()
	return res, nil
}
